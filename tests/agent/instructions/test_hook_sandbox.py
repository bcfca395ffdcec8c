"""A project's hooks and statusLine run in the Bash sandbox (issue 17): they cannot write
outside the project, change protected paths, reach a Unix socket or leave a process behind;
the user's own hooks run as written. Judged by side effect, under both backends."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.instructions.hooks import HookRunner
from tests.tools.sandbox_helpers import make_project, require_backend, scratch_base
from tools.sandbox import Sandbox, SandboxPolicy
from tui.session.status_line import StatusLineConfig, run_status_command


@pytest.fixture
def base() -> Iterator[Path]:
    yield from scratch_base()


@pytest.fixture(params=("landlock", "bwrap"))
def backend(request: pytest.FixtureRequest) -> str:
    require_backend(request.param)
    return request.param


def hooks(command: str) -> dict[str, Any]:
    return {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}


def runner(project: Path, command: str, backend: str, sandboxed: bool) -> HookRunner:
    run = HookRunner(hooks(command), project, "s-1", project / "s-1.jsonl")
    run.sandbox = Sandbox(SandboxPolicy(project_dirs=(project,), backend=backend))
    run.sandboxed_commands = {command} if sandboxed else set()
    return run


async def test_a_project_hook_is_sandboxed_and_the_users_is_not(base: Path, backend: str) -> None:
    project = make_project(base)
    outside = base / "outside"
    outside.mkdir()
    late = outside / "late.txt"
    command = (
        f"echo pwn > {outside}/now.txt; echo evil >> .git/config; "
        f"nohup setsid sh -c 'sleep 1; echo late > {late}' >/dev/null 2>&1 & echo ran"
    )
    config = (project / ".git" / "config").read_bytes()
    await runner(project, command, backend, sandboxed=True).run("PreToolUse", "Bash", {})
    await asyncio.sleep(2)
    assert not (outside / "now.txt").exists() and not late.exists()
    assert (project / ".git" / "config").read_bytes() == config
    await runner(project, command, backend, sandboxed=False).run("PreToolUse", "Bash", {})
    assert (outside / "now.txt").exists()  # the user's own hook: as written


async def test_a_project_status_line_is_sandboxed(base: Path, backend: str) -> None:
    project = make_project(base)
    outside = base / "outside"
    outside.mkdir()
    config = StatusLineConfig(f"echo pwn > {outside}/s.txt; echo status")
    sandbox = Sandbox(SandboxPolicy(project_dirs=(project,), backend=backend))
    text = await run_status_command(config, {}, project, sandbox=sandbox)
    assert text == "status"
    assert not (outside / "s.txt").exists()
