"""/history TEXT: search the whole session for a text, the parts compactions summarized included.

The transcript keeps every message, so what a compaction took out of the context
can still be found: the search streams the file (``agent.sessions.earlier``) and
lists the latest matches, each with how many compactions ago it was summarized.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from agent.sessions.earlier import Found, search_transcript
from tui.commands.registry import CommandResult, command
from tui.words import age

if TYPE_CHECKING:
    from tui.session.runtime import Runtime

SHOWN = 20
SNIPPET_WIDTH = 100
KINDS = {"prompt": "you", "response": "ccx", "tool_result": "tool result", "summary": "summary"}


@command("history", "/history TEXT", "Search the whole session, compacted parts included")
async def _history(runtime: Runtime, args: str) -> CommandResult:
    text = args.strip()
    if not text:
        return CommandResult("Usage: /history TEXT (searches every message of this session)", True)
    try:
        found, total = search_transcript(runtime.session.path, text, limit=SHOWN)
    except OSError as exc:
        return CommandResult(f"Cannot read the session transcript: {exc.strerror or exc}", True)
    shown = history_text(text, found, total, time.time(), scrolls=not runtime.options.headless)
    return CommandResult(shown, data={"found": total})


def history_text(text: str, found: list[Found], total: int, now: float, scrolls: bool) -> str:
    """The listing; ``scrolls``: a front end whose transcript loads the compacted parts."""
    if not total:
        return f'No message of this session holds "{text}".'
    earlier = sum(1 for hit in found if hit.compactions_since)
    lines = [f'{total} message(s) hold "{text}"' + (f"; the latest {len(found)}:" if total > len(found) else ":")]  # fmt: skip
    for hit in found:
        where = (
            "in the conversation now"
            if not hit.compactions_since
            else f"summarized {hit.compactions_since} compaction(s) ago"
        )
        who = KINDS.get(hit.kind, hit.kind)
        lines.append(f"  · {who}, {age(now - hit.timestamp)}, {where}")
        lines.append(f"    {hit.snippet[:SNIPPET_WIDTH]}")
    if earlier and scrolls:
        lines.append("The full-screen app reads the compacted parts back as you scroll to the top.")
    return "\n".join(lines)
