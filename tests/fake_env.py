"""Point ccx at a fake Messages API server, isolated from the user's own setup."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.fake_api import FakeApi

# Variables from the developer's shell that would change what the tests see.
USER_VARIABLES = (
    "ANTHROPIC_MODEL",
    "ANTHROPIC_AUTH_TOKEN",
    "CCX_AUTO_COMPACT_WINDOW",
    "CCX_SERVER_CONTEXT_EDITING",
    "MAX_THINKING_TOKENS",
    "CLAUDE_CODE_EFFORT_LEVEL",
    "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
    "CLAUDE_CODE_DISABLE_THINKING",
)


def use_fake_api(
    server: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, models_api: bool = False
) -> None:
    """Send every call to ``server``; config and home under ``tmp_path``; fast retries.

    With ``models_api`` false, model limits come from the built-in table instead
    of a Models API call (which the fake server also answers).
    """
    for name in USER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # No machine's managed policy: a test writes one here when it wants one.
    monkeypatch.setenv("CCX_MANAGED_SETTINGS_FILE", str(tmp_path / "managed-settings.json"))
    monkeypatch.setenv("CCX_RETRY_BASE_DELAY_MS", "5")
    if models_api:
        monkeypatch.delenv("CCX_SKIP_MODELS_API", raising=False)
    else:
        monkeypatch.setenv("CCX_SKIP_MODELS_API", "1")
