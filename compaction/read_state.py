"""Which reads a compaction keeps: the file-state entries whose justification is still in context.

Edit and Write refuse a file the model has not read (``tools.write``), and the
file-state cache is what they ask. A compaction keeps some messages verbatim
(session memory and a partial compaction keep a part, every kind keeps the
restored files), so the cache must follow the messages: a file whose latest
read (or write) is among the kept messages stays editable, with the content and
mtime it had then, so a change on disk since is still caught; a file whose
latest read was summarized away needs a new Read.

A file's latest read is the last of these in the conversation before the
compaction, as the cache's rules make them: a Read that returned the file (a
slice counts, and the entry stays the partial view it was; a result that
clearing later replaced by a marker still counts, as it did before the
compaction), an Edit or Write that succeeded, or a restored file in an earlier
compaction's attachment. A Read answered with the "unchanged" stub points back
to an earlier result and is not a read of its own; a failed call is none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from agent.core.messages import Message
from compaction.restore import restored_file_paths
from compaction.result_index import is_unchanged_stub
from tools.file_state import FileState, FileStateCache, normalize_path

# How the line naming the files to read again opens (the demo's scripted model skips it).
REREAD_OPENING = "Earlier reads of these files were summarized away"
# The tools whose successful result leaves a file-state entry behind.
READING_TOOLS = frozenset({"Read", "Edit", "Write"})


@dataclass
class KeptReads:
    """What the cache holds after a compaction, before the restored files are added."""

    kept: dict[str, FileState] = field(default_factory=dict)  # least recently used first
    dropped: list[str] = field(default_factory=list)  # summarized away, most recent first


def latest_reads(
    messages: Iterable[Message], resolve: Callable[[str], str] = normalize_path
) -> dict[str, str]:
    """Each file's latest read in ``messages``, as cache key -> a token naming that read
    (a tool_use id, or an attachment's uuid and the path for a restored file)."""
    calls: dict[str, tuple[str, str]] = {}
    latest: dict[str, str] = {}
    keys: dict[str, str] = {}  # each path resolved once: a long session names few files often
    for message in messages:
        if message.kind == "attachment":
            for restored in restored_file_paths(message):
                key = keys.get(restored) or keys.setdefault(restored, resolve(restored))
                latest[key] = f"{message.uuid}:{key}"
        for block in message.content:
            if block["type"] == "tool_use" and block["name"] in READING_TOOLS:
                path = (block.get("input") or {}).get("file_path")
                if isinstance(path, str):
                    calls[block["id"]] = (block["name"], path)
            elif block["type"] == "tool_result" and block["tool_use_id"] in calls:
                name, path = calls[block["tool_use_id"]]
                if block.get("is_error") or (name == "Read" and is_unchanged_stub(block)):
                    continue
                key = keys.get(path) or keys.setdefault(path, resolve(path))
                latest[key] = block["tool_use_id"]
    return latest


def kept_reads(
    previous: list[Message],
    kept: list[Message],
    snapshot: dict[str, FileState],
    resolve: Callable[[str], str] = normalize_path,
) -> KeptReads:
    """The cache entries (``snapshot``, LRU order) a compaction that keeps ``kept`` of
    ``previous`` keeps, and the files whose reads it summarizes away.

    An entry stays when its file's latest read in ``previous`` is among ``kept``;
    every other entry is dropped (a file read only by something outside this
    conversation, e.g. before a resume, has no read here and is dropped too).
    """
    latest = latest_reads(previous, resolve)
    in_kept = set(latest_reads(kept, resolve).values())
    result = KeptReads()
    for key, state in snapshot.items():
        token = latest.get(key)
        if token is not None and token in in_kept:
            result.kept[key] = state
    dropped = [(state.read_at, key) for key, state in snapshot.items() if key not in result.kept]
    result.dropped = [key for _at, key in sorted(dropped, reverse=True)]
    return result


def reread_notice(paths: list[str], shown: int = 8) -> str | None:
    """The one line that tells the model which files need a new Read before an Edit."""
    if not paths:
        return None
    names = ", ".join(paths[:shown])
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return f"{REREAD_OPENING}, so Read a file again before editing it: {names}{more}."


def settle_resumed(
    cache: FileStateCache, messages: list[Message], resolve: Callable[[str], str] = normalize_path
) -> list[str]:
    """After a resume, the same rule: an entry recorded before the last compaction stays only
    if its latest read is in the loaded conversation (kept by that compaction or restored by
    it); the others are marked summarized away. Returns those, oldest first.

    ``rebuild_file_state`` marks an entry recorded before the last boundary as out of
    context; an entry read since is in the conversation by definition.
    """
    shown = latest_reads(messages, resolve)
    entries = cache.snapshot().items()
    dropped = {k: state for k, state in entries if not state.in_context and k not in shown}
    for key in dropped:
        cache.delete(key)
    cache.mark_summarized(dropped)
    return list(dropped)
