"""What `ccx demo`'s scripted model does and says: the tour's steps and its canned replies.

The tour has three phases: look around; read files until the context has been
compacted (the last reading step, a long `git log -p`, pushes a 20K window
over its threshold even after microcompact has cleared old results); then fix
the planted bug, with one Edit that asks permission on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.demo.sample_sources import BUGGY_LINE, FIXED_LINE

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
