"""Shared test setup: requests that break the API's rules raise instead of being repaired.

Every test under tests/e2e/ is marked ``e2e`` (it runs the real `ccx` command
as a subprocess, ~3 s each), so ``pytest -m "not e2e"`` is the fast inner loop.

A test during which a fake Messages API refused a request fails with the
refusal unless it is marked ``refusal_expected`` (tests/fake_api/accounting_plugin.py).
"""

from __future__ import annotations

import os
import signal
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["tests.fake_api.accounting_plugin"]

# Headless `ccx` runs start a warm worker by default (tui/warm/policy.py). Every ccx a test
# starts inherits this, so none is left behind; the tests about the worker turn it on.
os.environ["CCX_WARM"] = "0"
# The tests that hang up on a ccx expect it to die of it: under `nohup` the suite (and every
# ccx it starts) would inherit SIGHUP ignored, as a user's `nohup ccx -p` rightly does.
if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)

E2E_DIR = Path(__file__).resolve().parent / "e2e"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(E2E_DIR):
            item.add_marker(pytest.mark.e2e)


HANGUP = signal.SIGHUP


def _hangup_state() -> tuple[object, bool]:
    return signal.getsignal(HANGUP), HANGUP in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def _hang_up_as_default() -> None:
    signal.signal(HANGUP, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [HANGUP])


@pytest.fixture(autouse=True)
def hangup_left_as_it_was(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every ccx a test starts inherits this process's SIGHUP disposition and signal mask: a
    test (or code it runs in this process) that left SIGHUP ignored or blocked would make a
    later test's hang-up reach nobody. Each test starts with SIGHUP as the suite set it;
    a change is undone and named as a warning."""
    state = _hangup_state()
    if state[0] is signal.SIG_IGN or state[1]:
        _hang_up_as_default()
        warnings.warn(f"before {request.node.nodeid}: SIGHUP was {state}; reset", stacklevel=1)
    yield
    state = _hangup_state()
    if state[0] is signal.SIG_IGN or state[1]:
        _hang_up_as_default()
        warnings.warn(f"{request.node.nodeid} left SIGHUP {state}; reset", stacklevel=1)


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
