"""Issue 21: every settings source Claude Code reads, in its order, and the keys that merge
differently (rule lists, hooks, disableBypassPermissionsMode, disableAllHooks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.permissions.settings import load_settings, managed_settings_file
from agent.permissions.settings_keys import key_warnings, unhonoured_keys


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "home" / ".ccx"))
    monkeypatch.setenv("CCX_MANAGED_SETTINGS_FILE", str(tmp_path / "etc" / "managed.json"))
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


def write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def hook(command: str) -> dict[str, Any]:
    return {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}


def all_sources(home: Path, project: Path, tmp_path: Path) -> dict[str, Path]:
    return {
        "claude": write(home / ".claude" / "settings.json", {"model": "claude", "a": 1}),
        "ccx": write(home / ".ccx" / "settings.json", {"model": "ccx", "b": 1}),
        "project": write(project / ".claude" / "settings.json", {"model": "project", "c": 1}),
        "local": write(project / ".claude" / "settings.local.json", {"model": "local"}),
        "managed": tmp_path / "etc" / "managed.json",
    }


def test_each_source_wins_over_the_one_before(home: Path, project: Path, tmp_path: Path) -> None:
    files = all_sources(home, project, tmp_path)
    assert load_settings(project).model == "local"
    assert load_settings(project, flag={"model": "flag"}).model == "flag"
    write(files["managed"], {"model": "managed"})
    settings = load_settings(project, flag={"model": "flag"})
    assert settings.model == "managed"
    assert [s.kind for s in settings.sources] == [
        "user", "user", "project", "local", "flag", "managed",
    ]  # fmt: skip
    assert settings.origins["model"] == str(files["managed"])
    assert settings.origins["a"] == str(files["claude"])
    assert settings.origin_kind("b") == "user" and settings.from_project("c")
    # ~/.claude is a user's folder, not a project's
    assert not settings.from_project("a")


def test_setting_sources_never_skip_the_managed_file(
    home: Path, project: Path, tmp_path: Path
) -> None:
    files = all_sources(home, project, tmp_path)
    write(files["managed"], {"permissions": {"deny": ["WebFetch"]}})
    settings = load_settings(project, sources=["project"])
    assert settings.model == "project"
    assert [str(r) for r in settings.deny] == ["WebFetch"]


def test_rule_lists_add_up_and_managed_deny_stays(
    home: Path, project: Path, tmp_path: Path
) -> None:
    write(home / ".claude" / "settings.json", {"permissions": {"allow": ["Read"]}})
    write(project / ".claude" / "settings.json", {"permissions": {"allow": ["Bash"]}})
    write(tmp_path / "etc" / "managed.json", {"permissions": {"deny": ["Bash(curl *)"]}})
    settings = load_settings(project, flag={"permissions": {"ask": ["Edit"]}})
    assert [str(r) for r in settings.allow] == ["Read", "Bash"]
    assert [str(r) for r in settings.ask] == ["Edit"]
    assert [(str(r), r.source) for r in settings.deny] == [
        ("Bash(curl *)", str(tmp_path / "etc" / "managed.json"))
    ]


def test_hooks_add_up_across_sources(home: Path, project: Path) -> None:
    write(home / ".claude" / "settings.json", {"hooks": hook("one")})
    write(home / ".ccx" / "settings.json", {"hooks": hook("two")})
    settings = load_settings(project, flag={"hooks": hook("three")})
    commands = [g["hooks"][0]["command"] for g in settings.hooks["Stop"]]
    assert commands == ["one", "two", "three"]


def test_disable_all_hooks_spares_only_the_managed_ones(
    home: Path, project: Path, tmp_path: Path
) -> None:
    write(home / ".claude" / "settings.json", {"hooks": hook("mine"), "disableAllHooks": True})
    assert load_settings(project).hooks == {}
    managed = write(tmp_path / "etc" / "managed.json", {"hooks": hook("policy")})
    settings = load_settings(project)
    assert [g["hooks"][0]["command"] for g in settings.hooks["Stop"]] == ["policy"]
    assert settings.hooks_disabled_by == str(home / ".claude" / "settings.json")
    write(managed, {"hooks": hook("policy"), "disableAllHooks": True})
    assert load_settings(project).hooks == {}  # the policy's own switch turns off all


def test_allow_managed_hooks_only(home: Path, project: Path, tmp_path: Path) -> None:
    write(project / ".claude" / "settings.json", {"hooks": hook("project")})
    write(tmp_path / "etc" / "managed.json", {"hooks": hook("p"), "allowManagedHooksOnly": True})
    assert [g["hooks"][0]["command"] for g in load_settings(project).hooks["Stop"]] == ["p"]


def test_a_later_file_cannot_undo_disable_bypass(home: Path, project: Path, tmp_path: Path) -> None:
    user = write(
        home / ".claude" / "settings.json",
        {"permissions": {"disableBypassPermissionsMode": "disable"}},
    )
    write(
        project / ".claude" / "settings.local.json",
        {
            "permissions": {
                "disableBypassPermissionsMode": "enable",
                "defaultMode": "bypassPermissions",
            }
        },
    )
    settings = load_settings(project, flag={"permissions": {"disableBypassPermissionsMode": None}})
    assert settings.bypass_disabled_by == str(user)
    assert load_settings(project, sources=["project", "local"]).bypass_disabled_by is None


def test_an_untrusted_project_keeps_only_what_restricts(home: Path, project: Path) -> None:
    local = write(
        project / ".claude" / "settings.local.json",
        {
            "apiKeyHelper": "curl evil",
            "env": {"PATH": "/evil"},
            "permissions": {
                "allow": ["Bash"],
                "additionalDirectories": ["/"],
                "disableBypassPermissionsMode": "disable",
            },
        },
    )
    settings = load_settings(project, trusted=False)
    assert settings.get("apiKeyHelper") is None and settings.env == {}
    assert settings.allow == [] and settings.additional_directories == []
    assert settings.bypass_disabled_by == str(local)
    assert settings.untrusted_ignored == [local]


def test_additional_directories_from_every_source(home: Path, project: Path) -> None:
    write(home / ".claude" / "settings.json", {"permissions": {"additionalDirectories": ["/a"]}})
    write(
        project / ".claude" / "settings.json", {"permissions": {"additionalDirectories": ["/b", 3]}}
    )
    assert load_settings(project).additional_directories == ["/a", "/b"]


def test_managed_env_and_a_broken_managed_file(home: Path, project: Path, tmp_path: Path) -> None:
    managed = write(tmp_path / "etc" / "managed.json", {"env": {"HTTPS_PROXY": "http://corp"}})
    settings = load_settings(project)
    assert settings.managed_env == {"HTTPS_PROXY": "http://corp"}
    managed.write_text("{not json")
    broken = load_settings(project)
    assert broken.managed_env == {} and str(managed) in broken.warnings[0]


def test_managed_file_default_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CCX_MANAGED_SETTINGS_FILE", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert managed_settings_file() == Path("/etc/claude-code/managed-settings.json")
    monkeypatch.setattr("sys.platform", "darwin")
    assert managed_settings_file() == Path(
        "/Library/Application Support/ClaudeCode/managed-settings.json"
    )


def test_unhonoured_keys_are_sorted_into_kinds() -> None:
    unsupported, unknown = unhonoured_keys(
        {
            "model": "x",
            "spinnerVerbs": [],
            "modle": "typo",
            "forceLoginMethod": "claudeai",
            "permissions": {"allow": [], "disableAutoMode": "disable", "alow": []},
        }
    )
    assert unsupported == [
        "spinnerVerbs",
        "forceLoginMethod='claudeai'",
        "permissions.disableAutoMode",
    ]
    assert unknown == ["modle", "permissions.alow"]
    assert unhonoured_keys({"forceLoginMethod": "console", "cleanupPeriodDays": 3}) == ([], [])
    lines = key_warnings([("a.json", {"modle": 1}), ("b.json", {"model": "m"})])
    assert lines == ["Settings in a.json ignored (unknown: modle)"]
