"""The user's copy of a tool's output: whole, or both ends of it with the middle counted.

The front ends expand a tool's block to this copy (ToolFinished.output_preview);
what the model is sent is never changed by it.
"""

from __future__ import annotations

SHOWN_OUTPUT_CHARS = 16_000  # characters kept at each end


def shown_output(text: str, keep: int = SHOWN_OUTPUT_CHARS) -> str:
    """The user's copy of a result (the front ends expand to it): whole, or its first and last
    ``keep`` characters with a note saying how much of the middle is left out."""
    if len(text) <= 2 * keep:
        return text
    middle = text[keep:-keep]
    return (
        f"{text[:keep]}\n… {middle.count(chr(10)) + 1:,} lines ({len(middle):,} characters) "
        f"not kept for display …\n{text[-keep:]}"
    )
