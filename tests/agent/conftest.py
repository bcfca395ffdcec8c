"""Fixtures for the agent tests: an isolated ccx config folder and a project folder."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """CCX_CONFIG_DIR and HOME under tmp_path (the session tests use it for every test)."""
    root = tmp_path / "config"
    monkeypatch.setenv("CCX_CONFIG_DIR", str(root))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "my project"
    path.mkdir()
    return path
