"""The text of the sample project `ccx demo` works in: "tinyledger", a small expense tracker.

Its package, tests, README and changelog, as they are written into the demo's
directory (``tui.demo.sample_repo`` writes them, with generated data and a git
history). ``report.format_amount`` has a planted bug — cents below ten lose
their leading zero — that the scripted model finds and offers to fix.
"""

from __future__ import annotations

BUGGY_LINE = 'return f"{sign}{cents // 100}.{cents % 100}"'
FIXED_LINE = 'return f"{sign}{cents // 100}.{cents % 100:02d}"'

README = """\
# tinyledger

A small command-line expense tracker. Expenses live in a CSV file; tinyledger
parses them, converts foreign currencies to euros and prints monthly reports.

```sh
python -m ledger.cli report data/expenses.csv --month 2024-03
python -m ledger.cli categories data/expenses.csv
```

## Layout

- `ledger/models.py`: the `Expense` record and the categories
- `ledger/parse.py`: reading the CSV, with line numbers in every error
- `ledger/currency.py`: exchange rates and conversion to euro cents
- `ledger/report.py`: monthly totals and their formatting
- `ledger/cli.py`: the command line
- `tests/`: pytest tests

Amounts are integer cents everywhere; floats only appear when a rate is
applied, and the result is rounded half-even back to cents.
"""

PYPROJECT = """\
[project]
name = "tinyledger"
version = "0.3.0"
requires-python = ">=3.10"

[project.scripts]
tinyledger = "ledger.cli:main"
"""

INIT = '''\
"""tinyledger: parse expenses, convert currencies, report monthly totals."""

__version__ = "0.3.0"
'''

MODELS = '''\
"""The records tinyledger works with."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import Enum


class Category(str, Enum):
    GROCERIES = "groceries"
    RENT = "rent"
    TRANSPORT = "transport"
    RESTAURANTS = "restaurants"
    UTILITIES = "utilities"
    HEALTH = "health"
    TRAVEL = "travel"
    OTHER = "other"

    @classmethod
    def parse(cls, text: str) -> Category:
        """A category from its name; unknown names become OTHER."""
        try:
            return cls(text.strip().lower())
        except ValueError:
            return cls.OTHER


@dataclass(frozen=True)
class Expense:
    """One line of the ledger. ``cents`` is in ``currency``; see currency.to_euro_cents."""

    day: dt.date
    description: str
    category: Category
    cents: int
    currency: str = "EUR"

    @property
    def month(self) -> str:
        return f"{self.day.year:04d}-{self.day.month:02d}"

    def is_foreign(self) -> bool:
        return self.currency != "EUR"
'''

PARSE = '''\
"""Reading the expenses CSV: date, description, category, amount, currency."""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterator
from pathlib import Path

from ledger.models import Category, Expense

COLUMNS = ("date", "description", "category", "amount", "currency")


class LedgerError(ValueError):
    """A line of the ledger that cannot be read; the message names the line."""


def parse_amount(text: str) -> int:
    """ "12.5" -> 1250, "-3.07" -> -307, "1,234.00" -> 123400 (integer cents)."""
    cleaned = text.strip().replace(",", "")
    if not cleaned:
        raise ValueError("empty amount")
    negative = cleaned.startswith("-")
    whole, _, frac = cleaned.lstrip("+-").partition(".")
    if len(frac) > 2 or not (whole or frac).isdigit():
        raise ValueError(f"not an amount: {text!r}")
    cents = int(whole or "0") * 100 + int((frac + "00")[:2])
    return -cents if negative else cents


def read_expenses(path: Path) -> Iterator[Expense]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = set(COLUMNS) - set(reader.fieldnames or ())
        if missing:
            raise LedgerError(f"{path}: missing columns {sorted(missing)}")
        for number, row in enumerate(reader, start=2):
            try:
                yield Expense(
                    day=dt.date.fromisoformat(row["date"]),
                    description=row["description"].strip(),
                    category=Category.parse(row["category"]),
                    cents=parse_amount(row["amount"]),
                    currency=(row["currency"] or "EUR").strip().upper(),
                )
            except ValueError as error:
                raise LedgerError(f"{path}:{number}: {error}") from error
'''

CURRENCY = '''\
"""Exchange rates (euros per unit, monthly averages) and conversion to euro cents."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from ledger.models import Expense

# Monthly average rates, euros per one unit of the currency.
RATES: dict[str, dict[str, Decimal]] = {
    "USD": {
        "2024-01": Decimal("0.9150"), "2024-02": Decimal("0.9262"),
        "2024-03": Decimal("0.9189"), "2024-04": Decimal("0.9318"),
        "2024-05": Decimal("0.9241"), "2024-06": Decimal("0.9289"),
    },
    "GBP": {
        "2024-01": Decimal("1.1628"), "2024-02": Decimal("1.1690"),
        "2024-03": Decimal("1.1686"), "2024-04": Decimal("1.1660"),
        "2024-05": Decimal("1.1677"), "2024-06": Decimal("1.1835"),
    },
    "CHF": {
        "2024-01": Decimal("1.0671"), "2024-02": Decimal("1.0539"),
        "2024-03": Decimal("1.0326"), "2024-04": Decimal("1.0228"),
        "2024-05": Decimal("1.0132"), "2024-06": Decimal("1.0411"),
    },
    "SEK": {
        "2024-01": Decimal("0.0889"), "2024-02": Decimal("0.0888"),
        "2024-03": Decimal("0.0889"), "2024-04": Decimal("0.0863"),
        "2024-05": Decimal("0.0866"), "2024-06": Decimal("0.0884"),
    },
}  # fmt: skip


class UnknownRate(LookupError):
    pass


def rate(currency: str, month: str) -> Decimal:
    """Euros per unit of ``currency`` in ``month``; the latest known month if missing."""
    if currency == "EUR":
        return Decimal(1)
    table = RATES.get(currency)
    if not table:
        raise UnknownRate(f"no rates for {currency}")
    if month in table:
        return table[month]
    earlier = [m for m in table if m <= month]
    if not earlier:
        raise UnknownRate(f"no {currency} rate on or before {month}")
    return table[max(earlier)]


def to_euro_cents(expense: Expense) -> int:
    """The expense in euro cents, rounded half-even (banker's rounding)."""
    if not expense.is_foreign():
        return expense.cents
    euros = Decimal(expense.cents) * rate(expense.currency, expense.month)
    return int(euros.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
'''

REPORT = f'''\
"""Monthly reports: totals per category, in euros, as text."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from ledger.currency import to_euro_cents
from ledger.models import Category, Expense


def format_amount(cents: int) -> str:
    """1234 -> "12.34", -5 -> "-0.05"."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    {BUGGY_LINE}


def totals_by_category(expenses: Iterable[Expense], month: str) -> dict[Category, int]:
    totals: dict[Category, int] = defaultdict(int)
    for expense in expenses:
        if expense.month == month:
            totals[expense.category] += to_euro_cents(expense)
    return dict(totals)


def monthly_report(expenses: Iterable[Expense], month: str) -> str:
    totals = totals_by_category(expenses, month)
    if not totals:
        return f"No expenses in {{month}}."
    width = max(len(c.value) for c in totals)
    lines = [f"Expenses in {{month}} (EUR)", ""]
    for category, cents in sorted(totals.items(), key=lambda item: -item[1]):
        lines.append(f"  {{category.value.ljust(width)}}  {{format_amount(cents):>10}}")
    lines += ["", f"  {{'total'.ljust(width)}}  {{format_amount(sum(totals.values())):>10}}"]
    return "\\n".join(lines)
'''

CLI = '''\
"""The command line: `tinyledger report FILE --month YYYY-MM`, `tinyledger categories FILE`."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from ledger.parse import LedgerError, read_expenses
from ledger.report import monthly_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tinyledger")
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="totals per category for one month")
    report.add_argument("file", type=Path)
    report.add_argument("--month", required=True, help="YYYY-MM")
    categories = commands.add_parser("categories", help="how many expenses per category")
    categories.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    try:
        expenses = list(read_expenses(args.file))
    except (OSError, LedgerError) as error:
        print(f"tinyledger: {error}", file=sys.stderr)
        return 1
    if args.command == "report":
        print(monthly_report(expenses, args.month))
    else:
        for category, count in Counter(e.category for e in expenses).most_common():
            print(f"{category.value:12} {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

TEST_REPORT = """\
import datetime as dt

from ledger.models import Category, Expense
from ledger.report import format_amount, monthly_report, totals_by_category


def expense(day: str, cents: int, category: Category = Category.GROCERIES) -> Expense:
    return Expense(dt.date.fromisoformat(day), "test", category, cents)


def test_format_amount() -> None:
    assert format_amount(1234) == "12.34"
    assert format_amount(-250) == "-2.50"


def test_format_amount_pads_small_cents() -> None:
    assert format_amount(1205) == "12.05"
    assert format_amount(-5) == "-0.05"


def test_totals_only_count_the_month() -> None:
    expenses = [expense("2024-03-01", 500), expense("2024-04-01", 700)]
    assert totals_by_category(expenses, "2024-03") == {Category.GROCERIES: 500}


def test_empty_month() -> None:
    assert monthly_report([], "2024-03") == "No expenses in 2024-03."
"""

TEST_PARSE = """\
import pytest

from ledger.parse import parse_amount


@pytest.mark.parametrize(
    ("text", "cents"),
    [("12.5", 1250), ("-3.07", -307), ("1,234.00", 123400), ("0.9", 90), ("7", 700)],
)
def test_parse_amount(text: str, cents: int) -> None:
    assert parse_amount(text) == cents


@pytest.mark.parametrize("text", ["", "abc", "1.234", "--2"])
def test_parse_amount_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_amount(text)
"""

CHANGELOG = """\
# Changelog

## 0.3.0
- Foreign currencies (USD, GBP, CHF, SEK) converted at monthly average rates.
- `categories` command.
- Amounts are integer cents end to end.

## 0.2.0
- Monthly report sorted by amount, largest first.
- Errors name the CSV line they come from.

## 0.1.0
- First version: parse the CSV, print totals per category.
"""


FILES: dict[str, str] = {
    "README.md": README,
    "pyproject.toml": PYPROJECT,
    "ledger/__init__.py": INIT,
    "ledger/models.py": MODELS,
    "ledger/parse.py": PARSE,
    "ledger/currency.py": CURRENCY,
    "ledger/report.py": REPORT,
    "ledger/cli.py": CLI,
    "tests/test_report.py": TEST_REPORT,
    "tests/test_parse.py": TEST_PARSE,
    "docs/CHANGELOG.md": CHANGELOG,
}
