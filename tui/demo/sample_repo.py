"""Writing the sample project of `ccx demo` into a directory: its files, data and history.

Written fresh into a temporary directory for each demo (a git repository with
a few commits when git is on PATH). The files' text is ``tui.demo.sample_sources``;
``data/expenses.csv`` is generated, and rewritten by the last commit, so
`git log -p` is long enough to push a small context window over its
auto-compact threshold.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

from tui.demo.sample_sources import FILES

SHOPS = {
    "groceries": ["Corner market", "Organic store", "Bakery", "Supermarket", "Farmers market"],
    "restaurants": ["Pizzeria", "Ramen bar", "Cafe", "Thai kitchen", "Lunch canteen"],
    "transport": ["Metro card", "Taxi", "Bike repair", "Train ticket", "Fuel"],
    "utilities": ["Electricity", "Internet", "Water", "Phone plan"],
    "health": ["Pharmacy", "Dentist", "Gym membership"],
    "travel": ["Hotel", "Flight", "Museum tickets", "Car rental"],
    "other": ["Bookshop", "Gift", "Hardware store", "Cinema"],
}
FOREIGN = ["USD", "GBP", "CHF", "SEK"]


def expenses_csv(rows: int = 200, seed: int = 11, normalized: bool = True) -> str:
    """The sample data; before the "normalize" commit the shop names were lower case."""
    rng = random.Random(seed)
    lines = ["date,description,category,amount,currency"]
    for index in range(rows):
        month = 1 + index * 6 // rows
        day = rng.randint(1, 28)
        if index % 30 == 0:
            lines.append(f"2024-{month:02d}-01,Monthly rent,rent,950.00,EUR")
            continue
        category = rng.choice(list(SHOPS))
        shop = rng.choice(SHOPS[category])
        shop = shop if normalized else shop.lower()
        currency = rng.choice(FOREIGN) if category == "travel" else "EUR"
        amount = rng.randint(150, 12000 if category in ("travel", "utilities") else 6000)
        lines.append(
            f"2024-{month:02d}-{day:02d},{shop},{category},{amount // 100}.{amount % 100:02d},"
            f"{currency}"
        )
    return "\n".join(lines) + "\n"


COMMITS = [
    ("First version: parse the CSV, print totals", ["pyproject.toml", "ledger/__init__.py",
     "ledger/models.py", "ledger/parse.py", "tests/test_parse.py"]),
    ("Monthly report sorted by amount; errors name the line", ["ledger/report.py",
     "tests/test_report.py", "ledger/cli.py"]),
    ("Convert foreign currencies at monthly rates", ["ledger/currency.py"]),
    ("Sample data, README and changelog for 0.3.0", ["README.md", "docs/CHANGELOG.md",
     "data/expenses.csv"]),
    ("Normalize shop names in the sample data", ["data/expenses.csv"]),
]  # fmt: skip
DATA = "data/expenses.csv"


def make_demo_repo(root: Path) -> Path:
    """Write tinyledger into ``root`` (created) and commit it when git is available."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in {**FILES, DATA: expenses_csv(normalized=False)}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    has_git = shutil.which("git") is not None and _commit_history(root, COMMITS[:-1])
    (root / DATA).write_text(expenses_csv(), encoding="utf-8")
    if has_git:
        _commit_history(root, COMMITS[-1:], init=False)
    return root


def _commit_history(root: Path, commits: list[tuple[str, list[str]]], init: bool = True) -> bool:
    git = [
        "git",
        "-c", "user.name=Ada Ledger",
        "-c", "user.email=ada@example.com",
        "-c", "commit.gpgsign=false",
        "-c", "init.defaultBranch=main",
    ]  # fmt: skip
    try:
        if init:
            subprocess.run([*git, "init", "-q"], cwd=root, check=True, capture_output=True)
        for message, paths in commits:
            subprocess.run([*git, "add", *paths], cwd=root, check=True, capture_output=True)
            subprocess.run(
                [*git, "commit", "-q", "-m", message], cwd=root, check=True, capture_output=True
            )
    except (OSError, subprocess.CalledProcessError):
        return False  # the tour skips the history when there is none
    return True
