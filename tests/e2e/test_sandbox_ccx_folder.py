"""A sandboxed command cannot plant code a later, unsandboxed ccx would run: ccx's own
settings (hooks) and its start-up caches (compiled dataclass methods) stay as they were
when ccx's folder lies where commands may write (here the tests' CCX_CONFIG_DIR, under
the temp folder; for a user, a project at ~). Judged by the files, and by a later run."""

from __future__ import annotations

import json
import sys

import pytest

from tests.e2e.conftest import Ccx
from tests.tools.sandbox_helpers import require_backend
from tui.fake_api import text_reply, tool_reply


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_a_sandboxed_command_cannot_change_what_a_later_ccx_runs(ccx: Ccx, backend: str) -> None:
    require_backend(backend)
    ccx.env["CCX_SANDBOX_BACKEND"] = backend
    table = ccx.config / "cache" / f"dataclass-code-headless.{sys.implementation.cache_tag}.marshal"
    settings = ccx.config / "settings.json"
    marker = ccx.repo.parent / "planted-hook-ran"
    bypass = ("--permission-mode", "bypassPermissions")  # the sandbox is the judge
    # A first run with a command: the table then holds all a command's run compiles, so
    # the attack's run has nothing new to keep and leaves the file to the sandbox alone.
    ccx.api.add(tool_reply(("Bash", {"command": "echo hi"})), text_reply("One."))
    assert ccx.run("-p", "first", *bypass).returncode == 0
    kept = table.read_bytes()
    hooks = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]}}  # fmt: skip
    command = (
        f"printf junk > {table}; rm -f {table}; "
        f"echo '{json.dumps(hooks)}' > {settings}; echo attempted"
    )
    ccx.api.add(tool_reply(("Bash", {"command": command})), text_reply("Done."), text_reply("Two."))
    run = ccx.run("-p", "go", *bypass)
    assert run.returncode == 0, run.stderr
    assert "attempted" in ccx.api.requests[-1].last_user_text()  # the command did run
    assert table.read_bytes() == kept
    assert not settings.exists()
    assert ccx.run("-p", "again").returncode == 0
    assert not marker.exists()
