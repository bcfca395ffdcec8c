"""``@path`` in what is sent: the file's text goes with the message, as Claude Code attaches it.

Both a prompt and a custom command's body attach the files their ``@path`` words
name: a file the permission gate lets the model read (inside the project, no deny
rule), at most ``MAX_ATTACHED_BYTES`` (the rest left to Read), never a binary or
non-UTF-8 one. A word that names no file (``@someone``, an MCP resource) stays
plain text; a file that cannot be attached is named in a note saying why.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent.core.messages import UserBlock, text_block
from agent.instructions.custom_commands import file_references

if TYPE_CHECKING:
    from tui.session.runtime import Runtime

MAX_ATTACHED_BYTES = 100_000


def attached_files(
    runtime: Runtime, text: str, *, label: str, notes: list[str], note_prefix: str = ""
) -> list[UserBlock]:
    """A text block for each ``@path`` of ``text`` that names a readable file; ``label`` says
    where the mention came from ("attached by /name")."""
    blocks: list[UserBlock] = []
    for reference in file_references(text):
        path = runtime.tool_context.resolve(reference)
        if not path.is_file():
            continue  # "@someone" or a path that is not there: plain text, as in Claude Code
        decision = runtime.gate.check("Read", {"file_path": str(path)}, False)
        if decision.behavior != "allow":
            notes.append(f"{note_prefix}@{reference} not attached ({decision.reason})")
            continue
        content, why_not = attachable_text(path)
        if content is None:
            notes.append(f"{note_prefix}@{reference} not attached ({why_not})")
            continue
        blocks.append(
            text_block(
                f"<system-reminder>\nContents of {reference} ({label}):\n"
                f"{content}\n</system-reminder>"
            )
        )
    return blocks


def attachable_text(path: Path) -> tuple[str | None, str]:
    """The file's text, cut at MAX_ATTACHED_BYTES; or None and why it cannot be attached."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_ATTACHED_BYTES + 1)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    if b"\0" in data[:8192]:
        return None, "a binary file"
    cut = len(data) > MAX_ATTACHED_BYTES
    try:
        text = data[:MAX_ATTACHED_BYTES].decode("utf-8", errors="strict" if not cut else "ignore")
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    if cut:
        text += f"\n[cut at {MAX_ATTACHED_BYTES:,} bytes; Read the file for the rest]"
    return text, ""
