"""The scripted model of `ccx demo`: a fake-API responder that reads the request and answers.

It is stateless: everything it needs is in the request. The tour's progress
is the number of tool-calling assistant messages since the latest summary,
plus the count that summary recorded ("Tour progress: N steps done, automatic
compaction at step M"), so the tour carries on across compactions, interrupts
and `continue`. The tour looks around, reads files until the context has been
compacted (the last reading step, a long `git log -p`, pushes a 24K window
over its threshold even after microcompact has cleared old results), then
fixes the planted bug. It answers:

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

from agent.fake_api import RecordedRequest, Reply, text_reply, tool_reply
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from tui.demo.sample_repo import BUGGY_LINE, FIXED_LINE

DEMO_PROMPT = (
    "Give me a tour of this project: look around, read the main files one by one, "
    "and fix the bug in the monthly report if you find one."
)
INSTRUCTIONS_MARK = "The user gave these instructions for this summary"
PROGRESS = re.compile(
    r"Tour progress: (\d+) steps? done, automatic compaction at step (\d+|pending)"
)
FILES_READ = re.compile(r"Files read so far: (.*?)\.$", re.MULTILINE)
USER_REQUEST = re.compile(r"<user-request>\n(.*?)\n</user-request>", re.DOTALL)
CONTINUE_WORDS = re.compile(r"^\s*(continue|go on|resume|keep going|next)\b", re.IGNORECASE)
MACHINERY = (
    "<system-reminder>",
    "[Request interrupted",
    "Your last response was cut off",
    "Contents of ",
    "The current plan, from",
    "Background tasks still running",
    "[Summarize ",
)
NOMINAL_TOKENS_PER_S = 25.0
SUMMARY_SPEEDUP = 5.0
CHUNK_CHARS = 6

INTRO = (
    "Hi! This is the ccx demo: I am a scripted model running inside ccx — no API calls, "
    "nothing leaves this machine. I'll tour this sample project the way a real session "
    "would. Keep an eye on the context meter: the demo uses a tiny window, so it fills "
    "within a minute and ccx compacts it on its own.\n\nFirst, the layout:"
)
AFTER_COMPACTION = (
    "(The conversation was just compacted: ccx replaced it with a summary and re-attached "
    "the files I read last. I carry on from the summary.) "
)
# Only an automatic compaction's summary message tells the model to go straight on.
AUTO_COMPACTION_MARK = "Continue the work from where it stopped"


@dataclass(frozen=True)
class Step:
    text: str
    tool: str
    input: dict[str, Any]
    git: bool = False  # skipped when the sample repository has no git history
    nogit: bool = False  # taken only when it has none


@dataclass(frozen=True)
class Tour:
    """Three phases: look around; read files until the context compacts; fix the bug."""

    opening: list[Step]
    reading: list[Step]
    fixing: list[Step]


def tour(root: Path, has_git: bool = True) -> Tour:
    def read(path: str, text: str) -> Step:
        return Step(text, "Read", {"file_path": str(root / path)})

    def bash(
        command: str, description: str, text: str, git: bool = False, nogit: bool = False
    ) -> Step:
        return Step(text, "Bash", {"command": command, "description": description}, git, nogit)

    opening = [
        bash("ls -R", "List the project's files", INTRO),
        bash(
            "git log --oneline",
            "Show the history",
            "A Python package, tests, sample data and docs. The history:",
            git=True,
        ),
        read("README.md", "The README says what it is for:"),
    ]
    reading = [
        read(
            "data/expenses.csv",
            "An expense tracker working in integer cents. The data it reads is a good chunk "
            "of tokens (watch the meter):",
        ),
        read(
            "ledger/models.py",
            "Two hundred expenses over six months, travel in foreign currencies. The records:",
        ),
        read(
            "ledger/parse.py",
            "`Expense` is a frozen dataclass; unknown categories become OTHER. The CSV parser:",
        ),
        read(
            "ledger/currency.py",
            '`parse_amount` turns "12.5" into 1250 cents, and errors name the line. '
            "Currency conversion:",
        ),
        read(
            "ledger/cli.py",
            "Monthly average rates as Decimal, rounded half-even back to cents. The command line:",
        ),
        read("tests/test_parse.py", "Two subcommands, report and categories. The parser's tests:"),
        bash(
            'grep -rn "format_amount" ledger tests',
            "Find the amount formatting",
            "Those cover the amount parsing. Where are amounts formatted?",
        ),
        read("tests/test_report.py", "In the report module, with tests of its own:"),
        bash(
            "git log -p --reverse",
            "Show the history with diffs",
            "One of them checks small cents. When did the formatting change? The whole "
            "history with diffs (a big output):",
            git=True,
        ),
        bash(
            "cat ledger/*.py tests/*.py data/expenses.csv",
            "Show all the sources",
            "One of them checks small cents. All the sources in one go (a big output):",
            nogit=True,
        ),
    ]
    fixing = [
        read("ledger/report.py", "Now the monthly report, where the bug should be:"),
        Step(
            f"Found it: `{BUGGY_LINE}` drops the leading zero of cents below ten, so 12.05 "
            'prints as 12.5 — and `test_format_amount_pads_small_cents` expects "12.05". The '
            "fix pads the cents to two digits. This edit needs your permission:",
            "Edit",
            {
                "file_path": str(root / "ledger/report.py"),
                "old_string": BUGGY_LINE,
                "new_string": FIXED_LINE,
            },
        ),
        bash("git diff", "Show the change", "Done. The change:", git=True),
    ]

    def keep(steps: list[Step]) -> list[Step]:
        return [
            step
            for step in steps
            if (step.git and has_git)
            or (step.nogit and not has_git)
            or not (step.git or step.nogit)
        ]

    return Tour(keep(opening), keep(reading), keep(fixing))


FINAL_FIXED = """\
That's the tour. What I found:

- **tinyledger** reads `data/expenses.csv` (`ledger/parse.py`), converts foreign \
currencies at monthly rates (`ledger/currency.py`) and prints monthly totals per category \
(`ledger/report.py`).
- **The bug:** `format_amount` printed 12.05 as `12.5`. It now pads the cents to two digits, \
which is what `tests/test_report.py` expects.

While this ran, the context meter filled up and turned yellow; ccx first cleared old tool \
results (no model call), then the big `git log -p` pushed it over the threshold and ccx \
compacted the conversation by itself: a summary replaced the old turns and the files read \
last came back.

Things to try now:
- `/context` — where the tokens go, and what a compaction would keep
- `/compact keep the bug fix details` — compact by hand, with instructions
- `/undo-compact` — bring back the conversation from before the last compaction
- `/cost` — tokens used (nothing was billed: this was a scripted demo)
- type anything: the scripted model will explain what it can and cannot do
"""

FINAL_DENIED = """\
OK, I left `ledger/report.py` unchanged since you declined the edit. The fix would be \
`{fixed}` (pad the cents to two digits), which `tests/test_report.py` expects.

While this ran, the context meter filled up and turned yellow, and ccx compacted the \
conversation by itself.

Things to try now: `/context`, `/compact keep the bug fix details`, `/undo-compact`, `/cost`, \
or type anything — this is a scripted demo, so the model will explain what it can do.
"""

TOUR_OVER = """\
The tour is over. This is a scripted demo, so there is nothing more I can do for real. \
Try `/context`, `/compact`, `/undo-compact` or `/cost`; `/exit` leaves. To use ccx on your \
own code, set ANTHROPIC_API_KEY and run `ccx` in your repository.
"""

CANNED = """\
This is ccx's offline demo, so I am a short script inside ccx, not Claude: I can't really \
work on "{prompt}". Things to try here:
- `/context` — where the context's tokens go
- `/compact [instructions]` — summarize the conversation now (watch the meter drop)
- `/undo-compact` — bring back the conversation from before the last compaction
- `/cost` — tokens so far (nothing is billed)
- `continue` — resume the tour
To use ccx for real, set ANTHROPIC_API_KEY and run `ccx` in your own repository.
"""


# -- reading the request ------------------------------------------------------------------


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"] for b in content if b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def is_summary_request(request: RecordedRequest) -> bool:
    return SUMMARY_MARK in request.last_user_text()


def latest_prompt(messages: list[dict[str, Any]]) -> str | None:
    """What the user last typed (from a summary's <user-request> after a compaction)."""
    for message in reversed(messages):
        if message.get("role") != "user" or _blocks(message, "tool_result"):
            continue
        for text in _texts(message):
            if "<summary>" in text:
                found = USER_REQUEST.search(text)
                return found.group(1) if found else None
            if (
                text.strip()
                and not text.lstrip().startswith(MACHINERY)
                and SUMMARY_MARK not in text
            ):
                return text
    return None


@dataclass(frozen=True)
class Progress:
    done: int  # tool-calling tour steps so far
    compacted_at: int | None  # steps done at the first automatic compaction
    fresh: bool  # a summary was just put in place and nothing has been said since


def tour_progress(messages: list[dict[str, Any]]) -> Progress:
    """Steps recorded by the latest summary plus the tool calls made after it.

    A manual /compact does not end the reading phase: the tour goes on until
    the context fills and compacts by itself.
    """
    start, base, compacted_at, summarized = 0, 0, None, False
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") != "user":
            continue
        for text in _texts(messages[index]):
            if found := PROGRESS.search(text):
                start, base, summarized = index, int(found.group(1)), True
                if found.group(2) != "pending":
                    compacted_at = int(found.group(2))
                elif AUTO_COMPACTION_MARK in text:  # this summary is the automatic compaction
                    compacted_at = base
                break
        if summarized:
            break
    later = [m for m in messages[start:] if m.get("role") == "assistant"]
    calls = sum(1 for message in later if _blocks(message, "tool_use"))
    return Progress(base + calls, compacted_at, summarized and not later)


def _answered_since_last_call(messages: list[dict[str, Any]]) -> bool:
    """True when a text-only assistant reply follows the last tool-calling one."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return not _blocks(message, "tool_use")
    return False


def _tool_result_of(messages: list[dict[str, Any]], tool: str) -> dict[str, Any] | None:
    ids = {
        block.get("id")
        for message in messages
        if message.get("role") == "assistant"
        for block in _blocks(message, "tool_use")
        if block.get("name") == tool
    }
    for message in reversed(messages):
        for block in _blocks(message, "tool_result"):
            if block.get("tool_use_id") in ids:
                return block
    return None


# -- the model ----------------------------------------------------------------------------


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
        if _answered_since_last_call(messages):
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
        result = _tool_result_of(messages, "Edit")
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
            for text in _texts(message):
                if found := FILES_READ.search(text):
                    files += [f for f in found.group(1).split(", ") if f and f != "none"]
            for block in _blocks(message, "tool_use"):
                path = block.get("input", {}).get("file_path")
                if block.get("name") == "Read" and isinstance(path, str):
                    files.append(self._relative(path))
        return list(dict.fromkeys(files))


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
