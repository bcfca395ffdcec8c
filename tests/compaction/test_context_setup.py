"""The session's context manager: wired to the session's own parts, not the process's."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.events import Event
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions


def test_tool_paths_resolve_against_the_session_directory(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.chdir(tmp_path)  # `ccx --cwd repo` started elsewhere
    events: list[Event] = []
    runtime = assemble_runtime(RunOptions(cwd=repo, watch_files=False), events.append)
    try:
        services = runtime.context.services
        assert services.resolve_path("src/app.py") == str(repo.resolve() / "src" / "app.py")
        assert services.resolve_path(str(tmp_path / "x.py")) == str(tmp_path / "x.py")
    finally:
        runtime.close()


@pytest.mark.parametrize(
    ("setting", "env", "on"),
    [(None, None, False), (True, None, True), (True, "0", False), (False, "true", True)],
)
def test_server_context_editing_from_settings_and_environment(
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    setting: bool | None,
    env: str | None,
    on: bool,
) -> None:
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("CCX_SERVER_CONTEXT_EDITING", raising=False)
    if env is not None:
        monkeypatch.setenv("CCX_SERVER_CONTEXT_EDITING", env)
    if setting is not None:
        (repo / ".claude").mkdir()
        (repo / ".claude" / "settings.json").write_text(
            f'{{"serverContextEditing": {str(setting).lower()}}}'
        )
    runtime = assemble_runtime(RunOptions(cwd=repo, watch_files=False), lambda event: None)
    try:
        assert runtime.context.server_editing is on
    finally:
        runtime.close()
