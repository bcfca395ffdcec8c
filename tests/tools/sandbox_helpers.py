"""Shared by the sandbox tests: a project and an "outside" directory that are not under
any temp directory (the policy lets sandboxed commands write in temp), and the backends."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.base import ToolContext, ToolResult
from tools.bash import BashParams, BashTool
from tools.file_state import FileStateCache
from tools.sandbox import SandboxPolicy, choose_backend
from tools.sandbox.policy import temp_dirs

REPO = Path(__file__).resolve().parents[2]


def _outside_temp(path: Path) -> bool:
    real = Path(os.path.realpath(path))
    return not any(real.is_relative_to(os.path.realpath(t)) for t in temp_dirs())


def scratch_base() -> Iterator[Path]:
    """A fresh directory outside every temp directory, removed afterwards."""
    for parent in (REPO, Path.home(), Path("/var/lib")):
        if parent.is_dir() and os.access(parent, os.W_OK) and _outside_temp(parent):
            base = parent / f".ccx-sandbox-test-{uuid.uuid4().hex[:8]}"
            base.mkdir()
            try:
                yield base
            finally:
                shutil.rmtree(base, ignore_errors=True)
            return
    pytest.skip("no writable directory outside the temp directories")


def require_backend(name: str) -> None:
    backend, reason = choose_backend(SandboxPolicy(backend=name))
    if backend != name:
        pytest.skip(f"the {name} backend is unavailable here: {reason}")


def make_project(base: Path) -> Path:
    """A project with a .git (config, a hook), .claude/settings.json and a secret .env."""
    project = base / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (project / ".git" / "hooks" / "pre-commit.sample").write_text("#!/bin/sh\n")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text('{"permissions": {}}\n')
    (project / ".env").write_text("API_TOKEN=sk-secret-123\n")
    return project


async def run(tool: BashTool, ctx: ToolContext, command: str, **kw: object) -> ToolResult:
    params = tool.parse({"command": command, **kw})
    assert isinstance(params, BashParams), params
    return await tool.run(params, ctx)


def context(cwd: Path, session: Path | None = None) -> ToolContext:
    return ToolContext(cwd=cwd, file_state=FileStateCache(), session_dir=session)
