"""A simple command while the walker collects it (see ``agent.shell.walker``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.shell.words import Findings, Word


@dataclass
class Draft:
    start: int
    end: int
    words: list[Word] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    found: Findings = field(default_factory=Findings)
    reason: str = ""  # opaque for a reason other than a substitution

    def opaque(self, reason: str) -> None:
        self.reason = self.reason or reason
