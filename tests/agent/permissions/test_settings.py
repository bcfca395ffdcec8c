"""Settings files: where they are, how they merge, broken files, and saving rules."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from agent.core.locations import config_dir
from agent.permissions.gate import Rule
from agent.permissions.settings import add_permission_rule, load_settings, project_root


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config"
    monkeypatch.setenv("CCX_CONFIG_DIR", str(path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "a" / "b").mkdir(parents=True)
    return root


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_config_dir(user_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert config_dir() == user_dir
    monkeypatch.delenv("CCX_CONFIG_DIR")
    assert config_dir() == tmp_path / "home" / ".ccx"


def test_project_root(project: Path, tmp_path: Path, user_dir: Path) -> None:
    assert project_root(project / "a" / "b") == project.resolve()
    (project / "a" / ".claude").mkdir()
    assert project_root(project / "a" / "b") == (project / "a").resolve()
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    assert project_root(lonely) == lonely.resolve()


def test_home_claude_dir_is_not_a_project(tmp_path: Path, user_dir: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / "scratch").mkdir()
    assert project_root(home / "scratch") == (home / "scratch").resolve()


def test_merge_and_priority(project: Path, user_dir: Path) -> None:
    write(
        user_dir / "settings.json",
        {
            "model": "user-model",
            "fallbackModel": "haiku",
            "permissions": {"allow": ["Bash(ls *)"], "defaultMode": "plan"},
            "env": {"A": "1", "B": "1"},
            "hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": "one"}]}]},
            "statusLine": {"type": "command", "command": "x", "padding": 1},
        },
    )
    project_file = write(
        project / ".claude" / "settings.json",
        {
            "model": "project-model",
            "permissions": {"allow": ["Edit"], "ask": ["Bash(git push *)"]},
            "env": {"B": "2", "C": 3},
            "hooks": {
                "PreCompact": [{"hooks": [{"type": "command", "command": "two"}]}],
                "SessionStart": [{"matcher": "compact", "hooks": []}],
            },
            "statusLine": {"command": "y"},
        },
    )
    local_file = write(
        project / ".claude" / "settings.local.json",
        {
            "model": "local-model",
            "permissions": {"deny": ["Bash(rm *)"], "defaultMode": "acceptEdits"},
            "autoCompactWindow": 100_000,
        },
    )
    settings = load_settings(project / "a" / "b")
    assert settings.warnings == []
    assert settings.files == [user_dir / "settings.json", project_file, local_file]
    assert settings.model == "local-model"
    assert settings.get("model") == "local-model"
    assert settings.fallback_model == "haiku"
    assert settings.permission_mode == "acceptEdits"
    assert settings.allow == [
        Rule("Bash", "ls *", str(user_dir / "settings.json")),
        Rule("Edit", None, str(project_file)),
    ]
    assert settings.ask == [Rule("Bash", "git push *", str(project_file))]
    assert settings.deny == [Rule("Bash", "rm *", str(local_file))]
    assert settings.raw["permissions"]["allow"] == ["Bash(ls *)", "Edit"]
    assert settings.env == {"A": "1", "B": "2", "C": "3"}
    commands = [h["hooks"][0]["command"] for h in settings.hooks["PreCompact"]]
    assert commands == ["one", "two"]
    assert settings.hooks["SessionStart"] == [{"matcher": "compact", "hooks": []}]
    assert settings.raw["statusLine"] == {"type": "command", "command": "y", "padding": 1}
    assert settings.auto_compact_window == 100_000
    assert settings.get("missing", 7) == 7


def test_explicit_config_dir_wins(project: Path, user_dir: Path, tmp_path: Path) -> None:
    write(user_dir / "settings.json", {"model": "from-env"})
    other = tmp_path / "other"
    write(other / "settings.json", {"model": "explicit"})
    assert load_settings(project, config_dir=other).model == "explicit"
    assert load_settings(project).model == "from-env"


def test_no_files_at_all(project: Path, user_dir: Path) -> None:
    settings = load_settings(project)
    assert settings.raw == {} and settings.warnings == [] and settings.files == []
    assert settings.model is None and settings.permission_mode is None
    assert settings.allow == settings.ask == settings.deny == []
    assert settings.hooks == {} and settings.env == {} and settings.auto_compact_window is None


def test_broken_files_warn_and_are_skipped(project: Path, user_dir: Path) -> None:
    write(user_dir / "settings.json", {"model": "user-model", "permissions": {"allow": ["Read"]}})
    broken = write(project / ".claude" / "settings.json", '{"model": "half",')
    write(project / ".claude" / "settings.local.json", "[1, 2]")
    settings = load_settings(project)
    assert settings.model == "user-model"
    assert settings.allow == [Rule("Read", None, str(user_dir / "settings.json"))]
    assert len(settings.warnings) == 2
    assert str(broken) in settings.warnings[0] and "not valid JSON" in settings.warnings[0]
    assert "JSON object" in settings.warnings[1]


def test_bad_values_warn(project: Path, user_dir: Path) -> None:
    write(user_dir / "settings.json", {"permissions": {"defaultMode": "plan"}})
    write(
        project / ".claude" / "settings.json",
        {
            "permissions": {"defaultMode": "yolo", "allow": ["Bash(ls", 42, "Glob"], "deny": "rm"},
            "hooks": {"PreCompact": "not a list"},
            "autoCompactWindow": "50000",
            "env": {"FLAG": True},
        },
    )
    settings = load_settings(project)
    assert settings.permission_mode == "plan"  # the bad value did not replace the good one
    assert [str(r) for r in settings.allow] == ["Glob"]
    assert settings.deny == []
    assert len(settings.warnings) == 5
    assert settings.hooks == {}
    assert settings.auto_compact_window == "50000"  # as written: resolve_window parses it
    assert settings.env == {"FLAG": "1"}


def test_add_permission_rule_creates_and_preserves(tmp_path: Path) -> None:
    target = tmp_path / "proj" / ".claude" / "settings.local.json"
    add_permission_rule(target, "allow", "Bash(npm test *)")
    assert json.loads(target.read_text()) == {"permissions": {"allow": ["Bash(npm test *)"]}}
    write(target, {"model": "m", "permissions": {"allow": ["Read"], "defaultMode": "plan"}})
    os.chmod(target, 0o600)
    add_permission_rule(target, "allow", "Bash(npm test *)")
    add_permission_rule(target, "allow", "Bash(npm test *)")
    add_permission_rule(target, "deny", "Edit(./.env)")
    data = json.loads(target.read_text())
    assert data == {
        "model": "m",
        "permissions": {
            "allow": ["Read", "Bash(npm test *)"],
            "defaultMode": "plan",
            "deny": ["Edit(./.env)"],
        },
    }
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["settings.local.json"]


def test_add_permission_rule_refuses_bad_input(tmp_path: Path) -> None:
    target = write(tmp_path / "settings.json", '{"broken": ')
    with pytest.raises(ValueError):
        add_permission_rule(target, "allow", "Read")
    assert target.read_text() == '{"broken": '
    with pytest.raises(ValueError):
        add_permission_rule(tmp_path / "new.json", "maybe", "Read")
    with pytest.raises(ValueError):
        add_permission_rule(tmp_path / "new.json", "allow", "Bash(oops")


def test_add_permission_rule_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = write(tmp_path / "settings.json", {"permissions": {"allow": ["Read"]}})
    before = target.read_text()

    def fail(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        add_permission_rule(target, "allow", "Edit")
    assert target.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no temp file left


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    target = tmp_path / ".claude" / "settings.local.json"
    rules = [f"Bash(tool{i} *)" for i in range(24)]
    threads = [
        threading.Thread(
            target=lambda chunk=rules[i::6]: [
                add_permission_rule(target, "allow", r) for r in chunk
            ]
        )
        for i in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(json.loads(target.read_text())["permissions"]["allow"]) == sorted(rules)
