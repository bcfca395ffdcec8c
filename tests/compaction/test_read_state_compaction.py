"""The file-state cache after a compaction, in a real loop against the fake API: reads kept
stay editable, reads summarized away need a new Read and are named once, undo brings them back."""

from __future__ import annotations

import os
from typing import Any

from compaction.microcompact import MicrocompactConfig
from compaction.undo import Snapshot
from tests.compaction.manager_harness import Setup
from tools.file_state import normalize_path
from tui.fake_api import text_reply, tool_reply

NOTICE = "Earlier reads of these files were summarized away"


def edit(setup: Setup, index: int) -> Any:
    path = str(setup.repo / f"m{index:02d}.py")
    return tool_reply(("Edit", {"file_path": path, "old_string": f"FACT_{index} =", "new_string": f"FACT_{index}: int ="}))  # fmt: skip


def last_result(setup: Setup) -> dict[str, Any]:
    return setup.api.requests[-1].messages[-1]["content"][0]


async def read_eight(setup: Setup) -> None:
    setup.manager.config = MicrocompactConfig(keep_recent_files=100, read_budget=1.0)
    setup.api.add(*setup.read_script(8), text_reply("read eight"))
    await setup.agent.submit("read eight modules")


async def test_a_read_kept_by_a_partial_compaction_stays_editable_and_the_rest_are_named(
    api, tmp_path
) -> None:
    setup = Setup(api, tmp_path)
    await read_eight(setup)
    key = normalize_path(setup.repo / "m07.py")
    before = setup.file_state.peek(key)
    api.add(text_reply("<summary>read m00 to m06</summary>"))
    record = await setup.manager.compact(setup.agent, partial="up_to", keep_rounds=2)
    assert record.kind == "partial_up_to"
    # m07's read is kept: its entry is the one it was, content and mtime included.
    assert setup.file_state.peek(key) == before
    # Five are re-read (m02..m06); m00 and m01 were summarized away and are named once.
    assert record.restored["files"] == [normalize_path(setup.repo / f"m{i:02d}.py") for i in range(6, 1, -1)]  # fmt: skip
    attachment = setup.agent.messages[-1]
    (notice,) = [b["text"] for b in attachment.content if NOTICE in b["text"]]  # type: ignore[typeddict-item]
    assert "m00.py" in notice and "m01.py" in notice and "m02.py" not in notice
    assert setup.file_state.was_summarized(setup.repo / "m00.py")

    api.add(edit(setup, 7), edit(setup, 0), text_reply("tried"))
    await setup.agent.submit("annotate m07 and m00")
    results = [m["content"][0] for m in api.requests[-1].messages[-3::2]]
    assert not results[0].get("is_error"), results[0]
    assert "FACT_7: int =" in (setup.repo / "m07.py").read_text()
    assert results[1].get("is_error") and "summarized away" in results[1]["content"]
    assert str(setup.repo / "m00.py") in results[1]["content"]
    assert "FACT_0 = 0" in (setup.repo / "m00.py").read_text()
    # Told once: the line is in the one attachment, not added to later requests.
    assert api.requests[-1].all_text().count(NOTICE) == 1
    assert api.errors == []


async def test_a_kept_read_of_a_file_changed_on_disk_since_is_still_caught(api, tmp_path) -> None:
    setup = Setup(api, tmp_path)
    await read_eight(setup)
    api.add(text_reply("<summary>read them</summary>"))
    await setup.manager.compact(setup.agent, partial="up_to", keep_rounds=2)
    path = setup.repo / "m07.py"
    path.write_text(path.read_text().replace("value = 1", "value = 2", 1))
    stat = path.stat()
    os.utime(path, (stat.st_atime, stat.st_mtime + 5))
    api.add(edit(setup, 7), text_reply("tried"))
    await setup.agent.submit("annotate m07")
    result = last_result(setup)
    assert result.get("is_error") and "modified on disk" in result["content"]


async def test_undo_brings_back_the_reads_a_full_compaction_summarized_away(api, tmp_path) -> None:
    setup = Setup(api, tmp_path)
    await read_eight(setup)
    key = normalize_path(setup.repo / "m00.py")
    before = setup.file_state.snapshot()
    api.add(text_reply("<summary>read them</summary>"))
    record = await setup.manager.compact(setup.agent)
    assert record.kind == "full" and len(record.restored["files"]) == 5
    assert setup.file_state.peek(key) is None and setup.file_state.was_summarized(key)
    assert setup.manager.undo(setup.agent)
    assert setup.file_state.peek(key) == before[key] and setup.file_state.summarized() == {}
    api.add(edit(setup, 0), text_reply("done"))
    await setup.agent.submit("annotate m00")
    assert not last_result(setup).get("is_error"), last_result(setup)
    assert "FACT_0: int =" in (setup.repo / "m00.py").read_text()
    assert api.errors == []


async def test_undo_from_the_transcript_brings_the_reads_back_from_their_marks(
    api, tmp_path
) -> None:
    setup = Setup(api, tmp_path)
    await read_eight(setup)
    key = normalize_path(setup.repo / "m00.py")
    mtime = setup.file_state.peek(key).mtime  # type: ignore[union-attr]
    api.add(text_reply("<summary>read them</summary>"))
    await setup.manager.compact(setup.agent)
    # A resumed session's snapshot comes from the transcript, which holds no cache.
    history = setup.manager.compactor.history
    last = history.last()
    assert last is not None
    history.pop()
    history.push(Snapshot(last.messages, last.last_uuid, last.replaced_count))
    assert setup.manager.undo(setup.agent)
    back = setup.file_state.peek(key)
    assert back is not None and back.mtime == mtime and back.is_partial_view
    api.add(edit(setup, 0), text_reply("done"))
    await setup.agent.submit("annotate m00")
    assert not last_result(setup).get("is_error"), last_result(setup)
    assert "FACT_0: int =" in (setup.repo / "m00.py").read_text()
