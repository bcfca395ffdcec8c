"""The read-state rule: which file-state entries a compaction keeps, from the messages it keeps."""

from __future__ import annotations

import itertools
from typing import Any

from agent.core.messages import Message
from compaction.markers import CLEARED_PREFIX
from compaction.read_state import kept_reads, latest_reads, reread_notice, settle_resumed
from compaction.restore import restore_files, restored_file_paths
from tools.file_state import FileState, FileStateCache, normalize_path
from tools.read import UNCHANGED_STUB_PREFIX

_ids = itertools.count()


def call(name: str, path: str, result: Any = "1\tx", *, error: bool = False) -> list[Message]:
    """One tool call and its result, as the loop records them."""
    tool_id = f"toolu_{next(_ids)}"
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": result}
    if error:
        block["is_error"] = True
    use = {"type": "tool_use", "id": tool_id, "name": name, "input": {"file_path": path}}
    return [
        Message(role="assistant", content=[use], kind="response"),  # type: ignore[list-item]
        Message(role="user", content=[block], kind="tool_result"),  # type: ignore[list-item]
    ]


def state(content: str = "x", at: float = 1.0, **changes: Any) -> FileState:
    return FileState(content=content, mtime=5.0, read_at=at, **changes)


def test_a_read_in_the_kept_messages_keeps_its_entry_as_it_was() -> None:
    old, new = call("Read", "/r/a.py"), call("Read", "/r/b.py")
    partial = state("x", 2.0, offset=10, limit=5, is_partial_view=True)
    snapshot = {"/r/a.py": state(at=1.0), "/r/b.py": partial}
    reads = kept_reads([*old, *new], new, snapshot)
    assert reads.kept == {"/r/b.py": partial}  # a slice stays a slice: same content, mtime, view
    assert reads.dropped == ["/r/a.py"]


def test_only_the_latest_read_of_a_file_counts() -> None:
    # A partial compaction keeping the older part: the file was edited in the part summarized.
    read, edit = call("Read", "/r/a.py"), call("Edit", "/r/a.py")
    reads = kept_reads([*read, *edit], read, {"/r/a.py": state()})
    assert reads.kept == {} and reads.dropped == ["/r/a.py"]
    # Kept the other way round, the edit keeps it: Edit and Write leave an entry as Read does.
    assert kept_reads([*read, *edit], edit, {"/r/a.py": state()}).kept == {"/r/a.py": state()}


def test_an_unchanged_stub_or_a_failed_read_is_not_a_read() -> None:
    full = call("Read", "/r/a.py")
    stub = call("Read", "/r/a.py", f"{UNCHANGED_STUB_PREFIX} (at 10:00:00, 1m ago)")
    failed = call("Read", "/r/a.py", "no such file", error=True)
    snapshot = {"/r/a.py": state()}
    # The stub points at a result that was summarized away: the content is not in context.
    assert kept_reads([*full, *stub], stub, snapshot).kept == {}
    assert kept_reads([*full, *stub, *failed], [*stub, *failed], snapshot).kept == {}
    # With the full result kept, the stub and the failure after it change nothing.
    assert kept_reads([*full, *stub, *failed], [*full, *stub, *failed], snapshot).kept == snapshot
    assert latest_reads(full) == {"/r/a.py": full[1].content[0]["tool_use_id"]}  # type: ignore[typeddict-item]


def test_a_cleared_read_still_counts_as_before_the_compaction() -> None:
    cleared = call("Read", "/r/a.py", f"{CLEARED_PREFIX}: this Read; unchanged.]")
    snapshot = {"/r/a.py": state(in_context=False)}
    assert kept_reads(cleared, cleared, snapshot).kept == snapshot


def test_files_restored_by_an_earlier_compaction_count_while_their_attachment_is_kept(
    tmp_path,
) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    (item,) = restore_files([str(path)], lambda p: ("x = 1\n", 5.0))
    attachment = Message(
        role="user", content=[{"type": "text", "text": item.text}], kind="attachment"
    )
    assert restored_file_paths(attachment) == [str(path)]
    snapshot = {str(path): state()}
    assert kept_reads([attachment], [attachment], snapshot).kept == snapshot
    assert kept_reads([attachment], [], snapshot).dropped == [str(path)]
    # The same words typed by the user are not a restored file.
    typed = Message(role="user", content=[{"type": "text", "text": item.text}], kind="prompt")
    assert restored_file_paths(typed) == []


def test_relative_paths_resolve_as_the_cache_keys_them() -> None:
    read = call("Read", "a.py")
    reads = kept_reads(read, read, {"/r/a.py": state()}, resolve=lambda p: f"/r/{p}")
    assert reads.kept == {"/r/a.py": state()}


def test_an_entry_without_a_read_in_the_conversation_is_dropped_newest_first() -> None:
    # e.g. read before a resume: nothing in this conversation justifies it.
    snapshot = {"/r/old.py": state(at=1.0), "/r/new.py": state(at=9.0)}
    assert kept_reads([], [], snapshot).dropped == ["/r/new.py", "/r/old.py"]


def test_the_notice_names_the_files_once_in_one_short_line() -> None:
    assert reread_notice([]) is None
    line = reread_notice([f"/r/m{i}.py" for i in range(10)], shown=3)
    assert line is not None and "\n" not in line
    assert "/r/m0.py, /r/m1.py, /r/m2.py and 7 more" in line and "/r/m3.py" not in line


def test_a_resume_keeps_what_the_loaded_conversation_justifies() -> None:
    cache = FileStateCache()
    kept = call("Read", "/r/kept.py")  # read before the last compaction, kept by it
    cache.set("/r/kept.py", state(in_context=False))
    cache.set("/r/gone.py", state(in_context=False))  # read before it, summarized away
    cache.set("/r/new.py", state(in_context=True))  # read since
    assert settle_resumed(cache, kept) == [normalize_path("/r/gone.py")]
    assert cache.paths() == [normalize_path("/r/kept.py"), normalize_path("/r/new.py")]
    assert cache.was_summarized("/r/gone.py")
