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
# Every ccx a test starts inherits this process's signal dispositions, and keeps a stop
# signal it was started with ignored (as `nohup ccx -p` rightly keeps SIGHUP ignored). The
# tests that stop a ccx by a signal expect it to act on it, however the suite was started:
# under `nohup` (SIGHUP ignored), or as a background job of a script (`.ci/run &`: the
# shell starts it with SIGINT and SIGQUIT ignored). So the suite puts them back.
STOP_SIGNALS = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM)


def _as_default(number: signal.Signals) -> None:
    """Python's own default: SIGINT raises KeyboardInterrupt, the others act as the OS's."""
    signal.signal(number, signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL)


for _number in STOP_SIGNALS:
    if signal.getsignal(_number) is signal.SIG_IGN:
        _as_default(_number)

E2E_DIR = Path(__file__).resolve().parent / "e2e"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(E2E_DIR):
            item.add_marker(pytest.mark.e2e)


def _changed_stop_signals() -> dict[str, str]:
    """The stop signals this process ignores or blocks, with which."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    changed = {}
    for number in STOP_SIGNALS:
        if number in blocked:
            changed[number.name] = "blocked"
        elif signal.getsignal(number) is signal.SIG_IGN:
            changed[number.name] = "ignored"
    return changed


def _stop_signals_as_default() -> None:
    for number in STOP_SIGNALS:
        if signal.getsignal(number) is signal.SIG_IGN:
            _as_default(number)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@pytest.fixture(autouse=True)
def stop_signals_left_as_they_were(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test (or code it runs in this process) that left a stop signal ignored or blocked
    would make a later test's signal reach no ccx. Each test starts with them as the suite
    set them; a change is undone and named as a warning."""
    if changed := _changed_stop_signals():
        _stop_signals_as_default()
        warnings.warn(f"before {request.node.nodeid}: {changed}; reset", stacklevel=1)
    yield
    if changed := _changed_stop_signals():
        _stop_signals_as_default()
        warnings.warn(f"{request.node.nodeid} left {changed}; reset", stacklevel=1)


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
