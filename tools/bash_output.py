"""Bash's captured output: a bounded head and tail of what a command printed, the middle counted.

The full output of a long command is also written to a spill file (under the
session folder) as it arrives, so the model can Read or Grep the part that
was cut; colour codes and carriage-return progress lines are cleaned away.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

MAX_OUTPUT_CHARS = 30_000
_HALF = MAX_OUTPUT_CHARS // 2
# A UTF-8 character is at most 4 bytes: this many bytes always decode to >= _HALF characters.
_KEEP_BYTES = 4 * _HALF
_SNAP_CHARS = 2_000  # how far a cut may move to land on a line boundary
_UTF8_CONTINUATION = bytes(range(0x80, 0xC0))
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


@dataclass
class CapturedOutput:
    head: str  # the whole output when nothing was cut
    tail: str = ""
    cut: bool = False
    chars_cut: int = 0
    lines_cut: int = 0
    total_lines: int = 0
    full_output_path: Path | None = None

    def render(self) -> str:
        if not self.cut:
            return self.head.rstrip()
        lines = f" in {self.lines_cut} lines" if self.lines_cut else ""
        note = f"... [{self.chars_cut} characters{lines} cut] ..."
        return f"{self.head.rstrip()}\n\n{note}\n\n{self.tail.rstrip()}"

    def render_for_display(self) -> str:
        """What the user can expand to: the same head and tail, the cut told in the user's words."""
        if not self.cut:
            return self.head.rstrip()
        where = f"; all of it is in {self.full_output_path}" if self.full_output_path else ""
        note = (
            f"… {self.lines_cut:,} lines not kept for display (only the first and last "
            f"{_HALF // 1000} K characters are{where}) …"
        )
        return f"{self.head.rstrip()}\n{note}\n{self.tail.rstrip()}"


class OutputCapture:
    """Streams output into a bounded head and tail; the middle is only counted.

    Once the output is too large to keep, everything is also written to
    ``spill_path`` as it arrives, so the model can read the part that was cut.
    """

    def __init__(self, spill_path: Path | None) -> None:
        self.spill_path = spill_path
        self.head = bytearray()
        self.tail = bytearray()
        self.total_chars = 0  # approximate for invalid UTF-8
        self.total_newlines = 0
        self.dropped = False  # bytes between head and tail were discarded
        self._spill: BinaryIO | None = None

    def feed(self, chunk: bytes) -> None:
        self.total_chars += len(chunk.translate(None, _UTF8_CONTINUATION))
        self.total_newlines += chunk.count(b"\n")
        if self._spill is not None:
            self._write_spill(chunk)
        room = _KEEP_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        if len(self.tail) > _KEEP_BYTES:
            if not self.dropped:
                self._open_spill()  # head + tail still hold everything so far
            del self.tail[: len(self.tail) - _KEEP_BYTES]
            self.dropped = True

    def finish(self) -> CapturedOutput:
        """Close the spill file and build what the model sees."""
        if self.dropped:
            head = _clean(_decode(self.head))[:_HALF]
            tail = _clean(_decode(self.tail))[-_HALF:]
            chars, newlines = self.total_chars, self.total_newlines
        else:
            text = _clean(_decode(self.head + self.tail))
            if len(text) <= MAX_OUTPUT_CHARS:
                self.close()
                self._discard_spill()
                return CapturedOutput(text, total_lines=text.count("\n") + 1)
            self._open_spill()
            head, tail = text[:_HALF], text[-_HALF:]
            chars, newlines = len(text), text.count("\n")
        self.close()
        head, tail = _snap(head, tail)
        return CapturedOutput(
            head,
            tail,
            cut=True,
            chars_cut=max(0, chars - len(head) - len(tail)),
            lines_cut=max(0, newlines - head.count("\n") - tail.count("\n")),
            total_lines=newlines + 1,
            full_output_path=self.spill_path,
        )

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def _open_spill(self) -> None:
        if self.spill_path is None or self._spill is not None:
            return
        try:
            self.spill_path.parent.mkdir(parents=True, exist_ok=True)
            self._spill = self.spill_path.open("wb")
        except OSError:
            self.spill_path = None
            return
        self._write_spill(self.head + self.tail)

    def _write_spill(self, data: bytes | bytearray) -> None:
        assert self._spill is not None
        try:
            self._spill.write(data)
        except OSError:  # disk full: keep going without the full copy
            self.close()
            self._discard_spill()

    def _discard_spill(self) -> None:
        if self.spill_path is not None:
            with contextlib.suppress(OSError):
                self.spill_path.unlink(missing_ok=True)
        self.spill_path = None


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _clean(text: str) -> str:
    """Drop terminal colour codes and progress lines overwritten with carriage returns."""
    if "\x1b" in text:
        text = _ANSI_ESCAPE.sub("", text)
    if "\r" in text:
        lines = text.replace("\r\n", "\n").split("\n")
        text = "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)
    return text


def _snap(head: str, tail: str) -> tuple[str, str]:
    """Move the cut points to line boundaries when one is near."""
    end = head.rfind("\n", max(0, len(head) - _SNAP_CHARS))
    if end > 0:
        head = head[: end + 1]
    start = tail.find("\n", 0, _SNAP_CHARS)
    if 0 <= start < len(tail) - 1:
        tail = tail[start + 1 :]
    return head, tail
