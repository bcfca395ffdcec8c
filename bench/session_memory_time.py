"""Session-memory compaction at compaction time, and the notes check before each request.

On the ~200K-token, ~1,000-message synthetic conversation of
``bench/accounting.py`` (a 200K window, so compaction is due), with notes
that cover all but the last 40 messages and five recently read files on disk
to restore, this times:

- the whole session-memory compaction as the manager runs it: the keep-index,
  the new conversation worked out, the files re-read, the estimate, and the
  commit (the transcript records written to a file); target <= 10 ms;
- ``SessionNotes.observe``, what session memory adds to the between-turns
  decision on every request (the growth sample, the notes check, the
  uncovered tokens, the policy); it must stay well inside the 1 ms budget.

    .venv/bin/python bench/session_memory_time.py [--runs 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.core.events import CompactionFinished, Event
from agent.core.messages import Message
from bench.accounting import sized_conversation
from bench.between_turns import Host
from compaction.manager import ContextManager
from compaction.notes import Notes, NotesStore
from compaction.notes_writer import SessionNotes
from compaction.services import CompactionServices
from compaction.thresholds import ContextLimits, WindowConfig
from tools.file_state import FileState, FileStateCache

LIMITS = ContextLimits(200_000, 64_000)
UNCOVERED = 40  # messages after the notes


class FileLog:
    """A transcript that writes JSON lines to a file, as a session does."""

    def __init__(self, path: Path) -> None:
        self.handle = path.open("a", encoding="utf-8")

    def append_message(self, message: Message) -> None:
        self.append_record({"type": "message", **message.to_record()})

    def append_record(self, record: dict[str, Any]) -> None:
        self.handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self.handle.flush()


def recent_files(folder: Path) -> FileStateCache:
    cache = FileStateCache()
    for index in range(5):
        path = folder / f"recent{index}.py"
        text = f"RECENT_{index} = {index}\n" + "line = 1\n" * 1_000
        path.write_text(text)
        cache.set(str(path), FileState(text, path.stat().st_mtime, read_at=float(index)))
    return cache


def one_run(base: list[Message], folder: Path, loop: asyncio.AbstractEventLoop) -> float:
    host = Host(list(base))
    host.conversation.transcript = FileLog(folder / "transcript.jsonl")
    covered = len(base) - 1 - UNCOVERED
    while base[covered].role != "user":
        covered -= 1
    notes = SessionNotes(NotesStore(None))
    notes.notes = Notes("1. Goal: the synthetic audit.\n" * 100, covered, base[covered].uuid, 0)
    events: list[Event] = []
    manager = ContextManager(
        limits_for=lambda model: LIMITS,
        window=WindowConfig(LIMITS.window, True, True, "model"),
        services=CompactionServices(file_state=recent_files(folder)),
        emit=events.append,
        session_memory=notes,
    )
    started = time.perf_counter()
    done = loop.run_until_complete(manager._session_memory_compact(host))
    elapsed = time.perf_counter() - started
    finished = [e for e in events if isinstance(e, CompactionFinished)]
    assert done and finished and finished[0].record.method == "session_memory", "not compacted"
    return elapsed


def observe_times(base: list[Message], runs: int) -> list[float]:
    host = Host(list(base))
    covered = len(base) - 1 - UNCOVERED
    notes = SessionNotes(NotesStore(None))
    notes.notes = Notes("notes", covered, base[covered].uuid, 0)
    times = []
    for index in range(runs):
        used = 162_000 + index  # within the lead: the check runs to the end every time
        started = time.perf_counter()
        notes.observe(host, used, LIMITS)
        times.append(time.perf_counter() - started)
        assert not notes.updating, "an update started: the bench wants the check alone"
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    base = sized_conversation()
    if base[-1].role == "assistant":
        base.pop()
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory() as tmp:
        one_run(base, Path(tmp), loop)  # warm the estimate memo, as a session's counting has
        times = [one_run(base, Path(tmp), loop) for _ in range(args.runs)]
    loop.close()
    observed = observe_times(base, 200)
    report = {
        "messages": len(base),
        "session_memory_compaction_median_ms": round(statistics.median(times) * 1000, 2),
        "session_memory_compaction_max_ms": round(max(times) * 1000, 2),
        "notes_observe_median_ms": round(statistics.median(observed) * 1000, 4),
        "notes_observe_p95_ms": round(sorted(observed)[int(len(observed) * 0.95)] * 1000, 4),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
