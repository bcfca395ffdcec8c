"""Shared test setup: requests that break the API's rules raise instead of being repaired."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def strict_invariants(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CCX_STRICT_INVARIANTS", "1")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A tiny sample project: a README and src/app.py with RETRY_LIMIT = 3."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# Sample\n\nA sample project.\n")
    (root / "src" / "app.py").write_text(
        "RETRY_LIMIT = 3\n\n\ndef main():\n    return RETRY_LIMIT\n"
    )
    (root / ".git").mkdir()
    (tmp_path / "home").mkdir()
    return root
