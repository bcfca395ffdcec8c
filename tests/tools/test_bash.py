"""The Bash tool: exit codes, merged output, a persistent cwd, capped output, timeouts, Esc."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import time
import tracemalloc
from pathlib import Path

import pytest

from tests.tools.helpers import assert_schema_matches_snapshot
from tools.base import ToolContext, ToolResult
from tools.bash import MAX_TIMEOUT_MS, BashParams, BashTool
from tools.file_state import FileStateCache


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work, file_state=FileStateCache(), session_dir=tmp_path / "session")


@pytest.fixture
def bash() -> BashTool:
    return BashTool()


async def run(tool: BashTool, ctx: ToolContext, command: str, **kw: object) -> ToolResult:
    params = tool.parse({"command": command, **kw})
    assert isinstance(params, BashParams), params
    return await tool.run(params, ctx)


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie nobody has reaped yet."""
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.exists() and Path("/proc/self").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (FileNotFoundError, ProcessLookupError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_dead(pids: list[int], within: float = 2.0) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return []
        time.sleep(0.02)
    return [p for p in pids if alive(p)]


async def test_output_and_meta(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, "echo hi", description="Say hi")
    assert result.output == "hi"
    assert not result.is_error
    assert result.meta["exit_code"] == 0
    assert result.meta["command"] == "echo hi"
    assert result.meta["cut"] is False
    assert result.meta["full_output_path"] is None
    assert result.display == "hi"  # the user's copy, kept out of meta (no second copy)
    assert "display" not in result.meta
    assert 0 <= result.meta["duration_s"] < 5


async def test_non_zero_exit_is_an_error_with_the_code(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, "echo oops; exit 3")
    assert result.is_error
    assert result.output == "oops\nExit code 3"
    assert result.meta["exit_code"] == 3


async def test_syntax_error_reports_line_one(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, "if then")
    assert result.is_error
    assert "line 1" in result.output
    assert result.output.endswith("Exit code 2")


async def test_stderr_is_merged_in_order(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, "echo one; echo two >&2; echo three")
    assert result.output == "one\ntwo\nthree"


async def test_empty_output(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, "true")
    assert result.output == "(no output)"
    assert not result.is_error


async def test_invalid_utf8_is_replaced(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, r"printf '\xff\xfe ok\n'")
    assert result.output == "\ufffd\ufffd ok"


async def test_colour_codes_are_stripped(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, r"printf '\033[31mred\033[0m done\n'")
    assert result.output == "red done"


async def test_progress_bar_redraws_keep_the_last_state(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, r"printf 'load 10%%\rload 100%%\r\ndone\n'")
    assert result.output == "load 100%\ndone"


async def test_empty_command(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, "")
    assert result.output == "(no output)"
    assert not result.is_error


async def test_stdin_is_empty_and_pagers_are_off(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, 'read -r line; echo "got:$line"; echo $PAGER $GIT_PAGER')
    assert result.output == "got:\ncat cat"
    result = await run(bash, ctx, "echo $GIT_TERMINAL_PROMPT")
    assert result.output == "0"


async def test_cwd_persists_between_calls(bash: BashTool, ctx: ToolContext) -> None:
    sub = ctx.cwd / "sub dir"
    sub.mkdir()
    assert (await run(bash, ctx, 'cd "sub dir"')).output == "(no output)"
    result = await run(bash, ctx, "pwd")
    assert Path(result.output).resolve() == sub.resolve()
    assert bash.cwd is not None and bash.cwd.resolve() == sub.resolve()
    # a failing command keeps the directory it reached, like a real shell
    await run(bash, ctx, "cd .. && false")
    assert Path((await run(bash, ctx, "pwd")).output).resolve() == ctx.cwd.resolve()


async def test_cwd_removed_by_the_command_falls_back(bash: BashTool, ctx: ToolContext) -> None:
    await run(bash, ctx, "mkdir gone && cd gone")
    result = await run(bash, ctx, 'rmdir "$(pwd)"')
    assert "no longer exists" in result.output
    assert bash.cwd == ctx.cwd


async def test_cwd_removed_between_calls_falls_back(bash: BashTool, ctx: ToolContext) -> None:
    await run(bash, ctx, "mkdir gone && cd gone")
    shutil.rmtree(ctx.cwd / "gone")
    result = await run(bash, ctx, "pwd")
    assert "no longer exists" in result.output
    assert result.output.startswith(str(ctx.cwd.resolve()))


async def test_huge_output_is_capped_streamed_and_saved(bash: BashTool, ctx: ToolContext) -> None:
    tracemalloc.start()  # how fast this runs is measured by bench/speed_targets.py
    try:
        result = await run(bash, ctx, "yes | head -c 50000000")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024, f"peak Python allocation {peak} bytes"
    text = result.output_text()
    assert not result.is_error
    assert len(text) < 31_000
    assert text.startswith("y\ny\ny\n")
    match = re.search(r"\n\n\.\.\. \[(\d+) characters in (\d+) lines cut\] \.\.\.\n\ny\n", text)
    assert match, text[14_900:15_200]
    shown = 2 * text.count("y")  # each line is "y\n"
    assert abs(int(match.group(1)) + shown - 50_000_000) < 10
    assert int(match.group(2)) > 24_000_000
    assert result.meta["cut"] is True
    full = Path(result.meta["full_output_path"])
    assert full.parent == ctx.session_dir / "tool-outputs"  # type: ignore[operator]
    assert full.stat().st_size == 50_000_000
    assert str(full) in text
    tail = text[match.end() :].split("\n[The full output")[0]
    assert set(tail.split("\n")) == {"y"}
    # The user's copy is capped the same way and says so, in its own words.
    assert len(result.display) < 31_000
    note = re.search(r"\n… ([\d,]+) lines not kept for display \(.*15 K.*\) …\n", result.display)
    assert note and int(note.group(1).replace(",", "")) > 24_000_000, result.display[14_900:15_200]
    assert str(full) in note.group(0)


async def test_long_line_cut_without_session_dir(bash: BashTool, ctx: ToolContext) -> None:
    ctx.session_dir = None
    result = await run(bash, ctx, "head -c 40000 /dev/zero | tr '\\0' x; echo; echo end")
    text = result.output_text()
    assert "... [10005 characters cut] ..." in text  # 40,005 characters less 2 x 15,000
    assert text.endswith("x\nend")
    assert result.meta["full_output_path"] is None
    assert "saved" not in text


async def test_output_under_the_cap_is_whole(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, "seq 1 5000")
    assert result.output == "\n".join(str(i) for i in range(1, 5001))
    assert result.display == result.output  # every line kept for the user to expand to
    assert not (ctx.session_dir / "tool-outputs").exists()  # type: ignore[operator]


async def test_timeout_kills_the_whole_group(bash: BashTool, ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await run(bash, ctx, "sleep 30 & echo $!; echo $$; sleep 30", timeout=500)
    assert time.monotonic() - started < 3
    assert result.is_error
    assert result.meta["timed_out"] is True
    text = result.output_text()
    assert text.endswith("Command timed out after 0.5 s")
    pids = [int(p) for p in text.splitlines()[:2]]
    assert wait_dead(pids) == []


async def test_timeout_above_max_is_clamped(bash: BashTool, ctx: ToolContext) -> None:
    result = await run(bash, ctx, "echo ok", timeout=900_000)
    assert not result.is_error
    assert result.meta["timeout_ms"] == MAX_TIMEOUT_MS
    assert "above the maximum" in result.output_text()
    assert (await run(bash, ctx, "echo ok")).meta["timeout_ms"] == 120_000


async def test_cancellation_kills_the_group(bash: BashTool, ctx: ToolContext) -> None:
    pid_file = ctx.cwd / "pids"
    task = asyncio.create_task(
        run(bash, ctx, f"sleep 30 & echo $! > {pid_file}; echo $$ >> {pid_file}; sleep 30")
    )
    for _ in range(200):
        if pid_file.exists() and len(pid_file.read_text().split()) == 2:
            break
        await asyncio.sleep(0.01)
    pids = [int(p) for p in pid_file.read_text().split()]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_dead(pids) == []


async def test_background_process_does_not_block(bash: BashTool, ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await run(bash, ctx, "sleep 30 & echo $!")
    assert time.monotonic() - started < 2
    pid = int(result.output_text().splitlines()[0])
    assert "Background processes" in result.output_text()
    assert alive(pid)
    bash.kill_background()
    assert wait_dead([pid]) == []


def test_schema_and_labels(bash: BashTool) -> None:
    schema = BashTool.input_schema()
    assert schema["required"] == ["command"]
    assert set(schema["properties"]) == {
        "command",
        "timeout",
        "description",
        "run_in_background",
        "dangerouslyDisableSandbox",
    }  # Claude Code 2.1.328's properties, exactly
    assert schema["properties"]["dangerouslyDisableSandbox"]["type"] == "boolean"
    assert schema["properties"]["run_in_background"]["type"] == "boolean"
    assert_schema_matches_snapshot(BashTool)
    assert "Read" in BashTool.description()
    params = BashParams(command="npm test -- --watch=false")
    assert bash.label(params) == "npm test -- --watch=false"
    assert bash.label(BashParams(command="x", description="Run tests")) == "x"
    assert BashTool.is_mutating
    assert isinstance(bash.parse({"command": "ls", "timeout": 0}), ToolResult)
