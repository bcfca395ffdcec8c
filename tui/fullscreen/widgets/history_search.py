"""ctrl+r's reverse search over the prompts sent before: the query and the match it shows.

Incremental: each typed character narrows the search from the match shown;
another ctrl+r looks further back for the same query. Case does not matter.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class HistorySearch:
    prompts: list[str]  # oldest first
    draft: str  # the prompt's text before the search, back on a cancel
    query: str = ""
    found: int | None = None  # index in prompts of the match shown
    failed: bool = False  # the last look found nothing (the previous match stays shown)

    @property
    def match(self) -> str | None:
        return None if self.found is None else self.prompts[self.found]

    def type(self, text: str) -> None:
        self.query += text
        self._look(self.found + 1 if self.found is not None else len(self.prompts))

    def erase(self) -> None:
        self.query = self.query[:-1]
        self.found = None
        self._look(len(self.prompts))

    def older(self) -> None:
        self._look(self.found if self.found is not None else len(self.prompts))

    def _look(self, before: int) -> None:
        """The newest prompt before index ``before`` holding the query."""
        if not self.query:
            self.failed = False
            return
        wanted = self.query.casefold()
        for index in range(before - 1, -1, -1):
            if wanted in self.prompts[index].casefold():
                self.found, self.failed = index, False
                return
        self.failed = True
