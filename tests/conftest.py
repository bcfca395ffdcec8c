"""Shared test setup: requests that break the API's rules raise instead of being repaired."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def strict_invariants(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CCX_STRICT_INVARIANTS", "1")
