"""What the first frame shows of the model, read before the session is assembled."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.fullscreen.first_frame import first_frame_model, flag_value


def test_raw_arguments_are_read_as_the_parser_reads_them() -> None:
    assert flag_value(["--model", "haiku", "hi"], "--model") == "haiku"
    assert flag_value(["--model=opus", "--model", "sonnet"], "--model") == "sonnet"
    assert flag_value(["--model"], "--model") is None
    assert flag_value(["--effort", "low"], "--model") is None


def test_flags_come_before_settings_and_models_without_effort_show_none(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.delenv("ANTHROPIC_MODEL", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_EFFORT_LEVEL", raising=False)
    argv = ["--model=haiku", "--effort", "low"]
    assert first_frame_model(repo, None, None, argv) == ("claude-haiku-5-5", "low")
    assert first_frame_model(repo, "claude-sonnet-4-5", None) == ("claude-sonnet-4-5", None)
    assert first_frame_model(repo, None, None) == ("claude-opus-5-5", "medium")
