"""One change at a time to a file: Edit waits for a change in progress, then sees it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import bump_mtime
from tools.base import ToolContext
from tools.change_lock import ChangeLockTimeout, changing, lock_path
from tools.edit import EditTool
from tools.read import ReadTool
from tools.write import WriteTool


async def test_an_edit_waits_for_a_change_in_progress_and_then_sees_it(
    ctx: ToolContext, call: Call
) -> None:
    path = ctx.cwd / "shared.txt"
    path.write_text("alpha\n")
    await call(ReadTool(), file_path="shared.txt")
    async with changing(path):
        edit = asyncio.ensure_future(
            call(EditTool(), file_path="shared.txt", old_string="alpha", new_string="beta")
        )
        await asyncio.sleep(0.2)
        assert not edit.done()  # held back while another change is in progress
        path.write_text("alpha, changed by another session\n")  # that other change lands
        bump_mtime(path)
    result = await edit
    assert result.is_error and "modified on disk" in result.output
    assert path.read_text() == "alpha, changed by another session\n"  # nothing lost


async def test_a_stuck_lock_gives_a_clear_error(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "stuck.txt"
    path.write_text("x\n")
    await call(ReadTool(), file_path="stuck.txt")
    async with changing(path):
        with pytest.raises(ChangeLockTimeout, match="in progress"):
            async with changing(path, wait_s=0.1):
                pass
    done = await call(WriteTool(), file_path="stuck.txt", content="y\n")
    assert not done.is_error and path.read_text() == "y\n"  # the lock was let go


def test_the_lock_is_shared_by_processes_and_names_the_real_path(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert lock_path(link) == lock_path(target)
    holder = textwrap.dedent(
        f"""
        import asyncio, sys
        from pathlib import Path
        from tools.change_lock import changing
        async def main():
            async with changing(Path({str(target)!r})):
                print("held", flush=True)
                sys.stdin.readline()
        asyncio.run(main())
        """
    )
    other = subprocess.Popen(
        [sys.executable, "-c", holder],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"

        async def try_briefly() -> None:
            async with changing(link, wait_s=0.2):
                pass

        with pytest.raises(ChangeLockTimeout):
            asyncio.run(try_briefly())
    finally:
        assert other.stdin is not None
        other.stdin.write("\n")
        other.stdin.close()
        other.wait(timeout=30)


async def test_a_planted_lock_folder_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    target = tmp_path / "f.txt"
    folder = lock_path(target).parent
    folder.parent.mkdir(exist_ok=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder.symlink_to(elsewhere)  # someone else's link where the lock folder goes
    async with changing(target):
        pass  # the change goes ahead unlocked
    assert list(elsewhere.iterdir()) == []  # and nothing was created through the link
