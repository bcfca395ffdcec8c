"""The key /login stores: its shape check, a 0600 file replaced whole, the provider that reads
it per request, and where the session's credential comes from (env, helper, stored key)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from agent.model.api_key_helper import ApiKeyHelper, ApiKeyHelperError
from agent.model.stored_key import (
    StoredKey,
    key_shape_problem,
    read_stored_key,
    remove_stored_key,
    store_key,
    stored_key_path,
)
from agent.permissions.settings import Settings
from tui.session.credentials import check_credentials, key_provider_for, key_source

KEY = "sk-ant-api03-" + "a1_-" * 10


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
                 "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)


def test_shape() -> None:
    assert key_shape_problem(KEY) is None
    for bad, words in [("", "No key"), ("sk-ant-short", "cut short"), ("abc" * 20, "sk-ant-"),
                       (KEY + " x", "spaces"), (KEY + "é", "characters")]:  # fmt: skip
        problem = key_shape_problem(bad)
        assert problem is not None and words in problem, (bad, problem)


def test_stored_0600_in_a_private_folder_and_replaced_whole(tmp_path: Path) -> None:
    path = store_key(KEY)
    assert path == stored_key_path() and read_stored_key() == KEY
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    path.chmod(0o644)  # loosened by someone: a new key tightens it again
    second = "sk-ant-api03-" + "b" * 40
    store_key(second)
    assert read_stored_key() == second and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["credentials.json"]  # no temp left
    assert json.loads(path.read_text()) == {"apiKey": second}
    assert remove_stored_key() and not path.exists() and not remove_stored_key()


def test_a_damaged_file_is_no_key() -> None:
    path = stored_key_path()
    path.parent.mkdir(parents=True)
    for text in ["{", json.dumps({"apiKey": "nope"}), json.dumps(["x"])]:
        path.write_text(text)
        assert read_stored_key() is None


async def test_the_provider_reads_the_file_for_each_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider = StoredKey()
    with pytest.raises(ApiKeyHelperError, match="/login"):
        await provider.key()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ccx-local-endpoint")
    assert await provider.key() == "ccx-local-endpoint"
    store_key(KEY)
    assert await provider.key() == KEY  # a /login in the middle of a session counts
    remove_stored_key()
    assert await provider.key() == "ccx-local-endpoint"


def test_which_credential_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes: list[str] = []
    notify = lambda text, level="warning": notes.append(text)  # noqa: E731
    helper_settings = {"apiKeyHelper": "echo sk-from-helper"}

    def settings(data: dict[str, object]) -> Settings:
        from agent.permissions.settings import load_settings

        folder = tmp_path / "p"
        (folder / ".claude").mkdir(parents=True, exist_ok=True)
        (folder / ".claude" / "settings.json").write_text(json.dumps(data))
        return load_settings(folder)

    assert isinstance(key_provider_for(settings({}), tmp_path, notify), StoredKey)
    assert isinstance(key_provider_for(settings(helper_settings), tmp_path, notify), ApiKeyHelper)
    assert key_source().startswith("none")
    assert check_credentials(tmp_path, {}) is not None  # nothing at all
    store_key(KEY)
    assert check_credentials(tmp_path, {}) is None
    assert "stored by /login" in key_source() and KEY not in key_source()
    assert key_source("settings.json") == "apiKeyHelper in settings.json"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert key_provider_for(settings({}), tmp_path, notify) is None
    assert key_source() == "ANTHROPIC_API_KEY (environment)"
