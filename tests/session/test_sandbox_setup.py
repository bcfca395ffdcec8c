"""Turning the Bash sandbox on and off: flag, environment, settings; and what the policy holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import Event
from agent.permissions.gate import PermissionGate, Rule
from agent.permissions.settings import load_settings
from tools.bash import BashTool
from tools.sandbox import SandboxPolicy, choose_backend
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions
from tui.session.sandbox_setup import SandboxSetup, build_sandbox


def setup(
    tmp_path: Path,
    user: Any = None,
    env: dict[str, str] | None = None,
    gate: PermissionGate | None = None,
    project: Any = None,
    **flags: Any,
) -> SandboxSetup:
    """Build the sandbox from a user settings file and a project one holding these objects."""
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    if user is not None:
        (config / "settings.json").write_text(json.dumps({"sandbox": user}))
    if project is not None:
        (tmp_path / ".claude").mkdir(exist_ok=True)
        (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"sandbox": project}))
    settings = load_settings(tmp_path, config)
    options = RunOptions(cwd=tmp_path, **flags)
    return build_sandbox(
        options, settings, gate, tmp_path, env=env or {}, user_settings=config / "settings.json"
    )


def test_default_is_on_with_the_network(tmp_path: Path) -> None:
    result = setup(tmp_path)
    assert result.policy.enabled and result.policy.network
    assert not result.requested
    assert result.policy.project_dirs == (tmp_path,)


@pytest.mark.parametrize(
    ("flag", "env", "sandbox", "expected"),
    [
        (False, "1", {"enabled": True}, False),  # the flag wins
        (True, "0", {"enabled": False}, True),
        (None, "0", {"enabled": True}, False),  # then the environment
        (None, "off", None, False),
        (None, "1", {"enabled": False}, True),
        (None, "", {"enabled": False}, False),  # then settings
        (None, "maybe", {"enabled": False}, False),  # a bad value is skipped, with a warning
    ],
)
def test_switch_precedence(
    tmp_path: Path, flag: bool | None, env: str, sandbox: Any, expected: bool
) -> None:
    result = setup(tmp_path, sandbox, {"CCX_SANDBOX": env}, sandbox=flag)
    assert result.policy.enabled is expected
    assert any("CCX_SANDBOX='maybe'" in text for text, _ in result.notices) == (env == "maybe")


def test_a_project_may_tighten_the_sandbox_but_not_loosen_it(tmp_path: Path) -> None:
    off = setup(tmp_path, project={"enabled": False, "filesystem": {"allowWrite": ["//etc"]}})
    assert off.policy.enabled and off.policy.extra_writable == ()
    texts = [text for text, _ in off.notices]
    assert any("cannot turn the Bash sandbox off" in t for t in texts)
    assert any("cannot add writable paths" in t for t in texts)
    assert not setup(tmp_path, project={"allowNetwork": False}).policy.network
    assert not setup(
        tmp_path, {"allowNetwork": False}, project={"allowNetwork": True}
    ).policy.network
    both = setup(
        tmp_path,
        {"filesystem": {"denyRead": ["//user/secret"]}},
        project={"filesystem": {"denyRead": ["//project/secret"]}},
    )
    assert both.policy.denied_reads == (Path("/user/secret"), Path("/project/secret"))
    assert setup(tmp_path, {"enabled": False}).policy.enabled is False  # the user's own file may


def test_network_switch(tmp_path: Path) -> None:
    assert not setup(tmp_path, {"allowNetwork": False}).policy.network
    assert setup(tmp_path, {"allowNetwork": False}, {"CCX_SANDBOX_NETWORK": "1"}).policy.network
    assert not setup(tmp_path, None, sandbox_network=False).policy.network


def test_bad_settings_are_warnings(tmp_path: Path) -> None:
    texts = [text for text, _ in setup(tmp_path, "yes").notices]
    assert any('"sandbox"' in text for text in texts)
    texts = [text for text, _ in setup(tmp_path, {"enabled": "yes"}).notices]
    assert any("sandbox.enabled='yes'" in text for text in texts)
    texts = [text for text, _ in setup(tmp_path, {"filesystem": {"allowWrite": "x"}}).notices]
    assert any("allowWrite" in text for text in texts)


def test_filesystem_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    filesystem = {
        "allowWrite": ["//opt/cache", "~/.npm", "build", "/srv/out"],
        "denyRead": ["~/.ssh"],
    }
    policy = setup(tmp_path, {"filesystem": filesystem}).policy
    assert policy.extra_writable == (
        Path("/opt/cache"),
        tmp_path / "home" / ".npm",
        tmp_path / "build",
        Path("/srv/out"),
    )
    assert policy.denied_reads == (tmp_path / "home" / ".ssh",)


def test_read_deny_rules_become_hidden_paths(tmp_path: Path) -> None:
    gate = PermissionGate("default", [], [Rule.parse("Read(./.env)")], [], cwd=tmp_path)
    deny_read = setup(tmp_path, gate=gate).policy.deny_read
    assert deny_read is not None
    assert deny_read(str(tmp_path / ".env")) and deny_read(str(tmp_path / "sub" / ".env"))
    assert not deny_read(str(tmp_path / "README.md"))
    everything = PermissionGate("default", [], [Rule.parse("Read")], [], cwd=tmp_path)
    whole_tool = setup(tmp_path, gate=everything).policy.deny_read
    assert whole_tool is not None and not whole_tool(str(tmp_path / "README.md"))


def test_no_notice_when_a_backend_works(tmp_path: Path) -> None:
    backend, reason = choose_backend(SandboxPolicy())
    if backend is None:
        pytest.skip(f"no sandbox backend here: {reason}")
    assert setup(tmp_path, {"enabled": True}).notices == []


def test_runtime_gives_bash_the_policy(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("CCX_SANDBOX", raising=False)
    events: list[Event] = []

    def bash_of(**flags: Any) -> BashTool:
        runtime = assemble_runtime(RunOptions(cwd=repo, watch_files=False, **flags), events.append)
        runtime.close()
        return next(t for t in runtime.tools if isinstance(t, BashTool))

    on = bash_of()
    assert on.sandbox is not None and on.sandbox.policy.roots() == [repo.resolve()]
    assert bash_of(sandbox=False).sandbox is None
    monkeypatch.setenv("CCX_SANDBOX", "0")
    assert bash_of().sandbox is None


def test_a_projects_env_cannot_turn_the_sandbox_off(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    for name in ("CCX_SANDBOX", "CCX_SANDBOX_NETWORK", "CCX_SANDBOX_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    (repo / ".claude").mkdir(exist_ok=True)
    env = {"CCX_SANDBOX": "0", "CCX_SANDBOX_NETWORK": "1", "CCX_CONFIG_DIR": str(repo / "x")}
    (repo / ".claude" / "settings.json").write_text(json.dumps({"env": env}))
    events: list[Event] = []
    runtime = assemble_runtime(RunOptions(cwd=repo, watch_files=False), events.append)
    runtime.close()
    bash = next(t for t in runtime.tools if isinstance(t, BashTool))
    assert bash.sandbox is not None and bash.sandbox.policy.enabled
    import os

    assert os.environ.get("CCX_SANDBOX") is None
    assert os.environ.get("CCX_CONFIG_DIR") == str(tmp_path / "config")
    notices = " ".join(str(e) for e in events)
    assert "Ignoring env.CCX_SANDBOX in the settings" in notices
    assert "Ignoring env.CCX_CONFIG_DIR in the settings" in notices


def test_socket_keys_count_from_the_user_only(tmp_path: Path) -> None:
    sock = "/run/user/1000/docker.sock"
    user = setup(tmp_path, user={"network": {"allowUnixSockets": [sock]}})
    assert user.policy.allowed_sockets == (Path(sock),) and not user.policy.all_sockets
    (tmp_path / "p").mkdir()
    project = setup(tmp_path / "p", project={"network": {"allowAllUnixSockets": True}})
    assert not project.policy.all_sockets
    assert any("open Unix sockets" in text for text, _ in project.notices)


def test_backend_from_the_environment_and_hooks_path_protected(tmp_path: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "config", "core.hooksPath", ".husky"], check=True)
    result = setup(tmp_path, env={"CCX_SANDBOX_BACKEND": "landlock"})
    assert result.policy.backend == "landlock"
    assert result.policy.extra_protected[0] == tmp_path / ".husky"
    bad = setup(tmp_path, env={"CCX_SANDBOX_BACKEND": "docker"})
    assert bad.policy.backend is None
    assert any("CCX_SANDBOX_BACKEND" in text for text, _ in bad.notices)


def test_the_runtime_sandboxes_a_projects_hooks_only(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    monkeypatch.setenv("CCX_CONFIG_DIR", str(config))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("CCX_SANDBOX", raising=False)

    def hooks(command: str) -> dict[str, Any]:
        entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
        return {"hooks": {"PreToolUse": [entry]}}

    (config / "settings.json").write_text(json.dumps(hooks("echo mine")))
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps(hooks("echo theirs")))
    runtime = assemble_runtime(RunOptions(cwd=repo, watch_files=False), lambda _event: None)
    runtime.close()
    assert runtime.hooks.sandbox is not None
    assert runtime.hooks.sandboxed_commands == {"echo theirs"}


def test_ccx_own_code_is_protected_where_a_command_may_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project at ~ (or CCX_CONFIG_DIR inside one): the settings and start-up caches a
    later ccx runs unsandboxed are read-only to sandboxed commands."""
    own = tmp_path / ".ccx"
    monkeypatch.setenv("CCX_CONFIG_DIR", str(own))
    policy = setup(tmp_path).policy
    protected = policy.protected_paths()
    assert own / "settings.json" in protected and own / "cache" / "tool-schemas.json" in protected
    tables = {p.name for p in protected if p.name.startswith("dataclass-code")}
    assert len(tables) == 2  # the app's and the headless runs'
    assert own / "cache" not in protected  # ccx writes the model's limits there meanwhile
