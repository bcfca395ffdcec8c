"""The catalogue of hostile attempts (issue 8): every attempt the issue names and variants of
each family, with the rules in force that both clients read from the project's
``.claude/settings.json``."""

from __future__ import annotations

from collections.abc import Iterable

from tests.e2e.hostile.attempt import MODES, Attempt
from tests.e2e.hostile.families_exec import exec_attempts
from tests.e2e.hostile.families_read import read_attempts
from tests.e2e.hostile.families_write import write_attempts

RULES = {
    "allow": ["Bash(git status)", "Bash(ls *)", "Bash(npm test *)", "Bash(git log *)"],
    "deny": ["Read(./.env)", "Bash(rm *)", "Bash(curl *)"],
}

ATTEMPTS: tuple[Attempt, ...] = (*exec_attempts(), *read_attempts(), *write_attempts())

# Families in the order the benchmark table lists them.
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(a.family for a in ATTEMPTS))


def _check(attempts: Iterable[Attempt]) -> dict[str, Attempt]:
    by_id: dict[str, Attempt] = {}
    for attempt in attempts:
        if attempt.id in by_id:
            raise ValueError(f"two attempts have the id {attempt.id!r}")
        by_id[attempt.id] = attempt
    return by_id


BY_ID = _check(ATTEMPTS)


def in_mode(mode: str) -> list[Attempt]:
    """The attempts of one permission mode, in catalogue order."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    return [a for a in ATTEMPTS if a.mode == mode]
