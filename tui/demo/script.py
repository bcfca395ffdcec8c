"""The scripted model of `ccx demo`: a fake-API responder that reads the request and answers.

It is stateless: where the tour stands comes from the request
(``tui.demo.progress``), and the steps and words from ``tui.demo.steps``. It
answers:

- summary requests (they contain "This turn is only for writing a summary")
  with an analysis and a nine-section summary built from the request;
- the demo's own first prompt (or `continue`) with the next tour step: short
  commentary and one tool call (Bash `ls`/`git log`/`grep`/`git diff`, Read,
  and one Edit that asks permission on purpose), then a final answer;
- anything else the user types with a short note that this is a scripted
  demo, and what to try.

Replies stream at a human-watchable pace (``pace`` 1.0 ≈ 25 tokens/s; 0 is
instant, for tests).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.demo.progress import (
    Progress,
    answered_since_last_call,
    is_summary_request,
    latest_prompt,
    message_blocks,
    message_texts,
    tool_result_of,
    tour_progress,
)
from tui.demo.sample_sources import BUGGY_LINE, FIXED_LINE
from tui.demo.steps import (
    AFTER_COMPACTION,
    CANNED,
    FINAL_DENIED,
    FINAL_FIXED,
    TOUR_OVER,
    Step,
    Tour,
    tour,
)
from tui.fake_api import RecordedRequest, Reply, text_reply, tool_reply

DEMO_PROMPT = (
    "Give me a tour of this project: look around, read the main files one by one, "
    "and fix the bug in the monthly report if you find one."
)
INSTRUCTIONS_MARK = "The user gave these instructions for this summary"
FILES_READ = re.compile(r"Files read so far: (.*?)\.$", re.MULTILINE)
CONTINUE_WORDS = re.compile(r"^\s*(continue|go on|resume|keep going|next)\b", re.IGNORECASE)
NOMINAL_TOKENS_PER_S = 25.0
SUMMARY_SPEEDUP = 5.0
CHUNK_CHARS = 6


@dataclass
class DemoModel:
    """Route every request of the demo's fake API here: ``api.on(model.matches, model)``."""

    root: Path
    pace: float = 1.0
    has_git: bool = True
    tour: Tour = field(init=False)

    def __post_init__(self) -> None:
        self.tour = tour(self.root, self.has_git)

    @staticmethod
    def matches(_request: RecordedRequest) -> bool:
        return True

    def __call__(self, request: RecordedRequest) -> Reply:
        if is_summary_request(request):
            return self.summary(request)
        messages = request.messages
        prompt = latest_prompt(messages)
        if prompt is None or not (prompt.strip() == DEMO_PROMPT or CONTINUE_WORDS.match(prompt)):
            return self._text(CANNED.format(prompt=_short(prompt or "")))
        progress = tour_progress(messages)
        step = self.next_step(progress)
        if step is not None and not (step.git and self._edit_refused(messages)):
            text = (AFTER_COMPACTION if progress.fresh else "") + step.text
            return tool_reply((step.tool, step.input), text=text, **self._pacing())
        if answered_since_last_call(messages):
            return self._text(TOUR_OVER)
        if self._edit_refused(messages):
            return self._text(FINAL_DENIED.format(fixed=FIXED_LINE))
        return self._text(FINAL_FIXED)

    def remaining(self, progress: Progress) -> list[Step]:
        """The steps still to take: the rest of the phase, then the fix once compacted."""
        tour, done = self.tour, progress.done
        if done < len(tour.opening):
            later = tour.reading if progress.compacted_at is None else []
            return tour.opening[done:] + later + tour.fixing
        if progress.compacted_at is None:
            read = done - len(tour.opening)
            if read < len(tour.reading):
                return tour.reading[read:] + tour.fixing
            fixed = read - len(tour.reading)
        else:
            fixed = done - max(progress.compacted_at, len(tour.opening))
        return tour.fixing[fixed:]

    def next_step(self, progress: Progress) -> Step | None:
        remaining = self.remaining(progress)
        return remaining[0] if remaining else None

    def _edit_refused(self, messages: list[dict[str, Any]]) -> bool:
        result = tool_result_of(messages, "Edit")
        return result is not None and bool(result.get("is_error"))

    # -- replies ----------------------------------------------------------------------------

    def _pacing(self, speedup: float = 1.0) -> dict[str, Any]:
        if self.pace <= 0:
            return {}
        rate = NOMINAL_TOKENS_PER_S * self.pace * speedup
        return {"tokens_per_s": rate, "chunk_chars": CHUNK_CHARS}

    def _text(self, text: str, speedup: float = 1.0) -> Reply:
        return text_reply(text, **self._pacing(speedup))

    def summary(self, request: RecordedRequest) -> Reply:
        """An analysis and a nine-section summary of the tour so far, with its progress."""
        messages = request.messages
        progress = tour_progress(messages)
        compacted_at = progress.compacted_at
        # Whether this compaction is the automatic one shows only in the message that follows.
        assumed = Progress(progress.done, compacted_at or progress.done, fresh=True)
        remaining = self.remaining(assumed)
        next_step = self._describe(remaining[0]) if remaining else "the final answer"
        files = self._files_read(messages)
        prompt = latest_prompt(messages) or DEMO_PROMPT
        last = request.last_user_text()
        instructions = ""
        if INSTRUCTIONS_MARK in last:
            instructions = last.split(INSTRUCTIONS_MARK, 1)[1].split("\n", 1)[-1].strip()
        lines = [
            "<analysis>The user asked for a tour of the tinyledger sample project. "
            f"{progress.done} tour steps are done; next: {next_step}.</analysis>",
            "<summary>",
            f"1. Primary request and intent: {prompt}",
            "2. Key technical concepts: Python 3.10+, amounts in integer cents, Decimal rates "
            "rounded half-even, argparse, pytest.",
            "3. Files and code sections: "
            + (", ".join(files) or "none read yet")
            + f". `ledger/report.py` format_amount: `{BUGGY_LINE}`.",
            "4. Errors and fixes: format_amount drops the leading zero of cents below ten "
            "(12.05 prints as 12.5).",
            "5. Problem solving: the bug is located; the fix pads the cents with :02d.",
            f"6. All user messages: {prompt}",
            "7. Pending tasks: " + (", ".join(self._describe(s) for s in remaining) or "none"),
            "8. Current work: reading the project file by file.",
            f"9. Next step: {next_step}.",
        ]
        if instructions:
            lines.append(f"Instructions for this summary: {instructions}")
        lines += [
            f"Files read so far: {', '.join(files) or 'none'}.",
            f"Tour progress: {progress.done} steps done, automatic compaction at step "
            f"{'pending' if compacted_at is None else compacted_at}.",
            "</summary>",
        ]
        return self._text("\n".join(lines), speedup=SUMMARY_SPEEDUP)

    def _describe(self, step: Step) -> str:
        if step.tool == "Bash":
            return f"Bash `{step.input['command']}`"
        return f"{step.tool} {self._relative(step.input['file_path'])}"

    def _relative(self, path: str) -> str:
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            return path

    def _files_read(self, messages: list[dict[str, Any]]) -> list[str]:
        files: list[str] = []
        for message in messages:
            for text in message_texts(message):
                if found := FILES_READ.search(text):
                    files += [f for f in found.group(1).split(", ") if f and f != "none"]
            for block in message_blocks(message, "tool_use"):
                path = block.get("input", {}).get("file_path")
                if block.get("name") == "Read" and isinstance(path, str):
                    files.append(self._relative(path))
        return list(dict.fromkeys(files))


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
