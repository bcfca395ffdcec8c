"""A sandboxed command cannot plant code a later, unsandboxed ccx would run: ccx's own
settings (hooks) and its start-up caches (compiled modules and dataclass methods) stay as
they were when ccx's folder lies where commands may write (here the tests' CCX_CONFIG_DIR,
under the temp folder; for a user, a project at ~). Judged by the files, and by a later
run."""

from __future__ import annotations

import json
import marshal
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.core import code_bundle
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


def evil_bundle(bundle: Path, marker: Path) -> bytes:
    """A bundle in the format ccx reads, whose one module (the session's driver, imported by
    every run) also creates ``marker``: what an attacker would plant."""
    import tui.session.driver as driver

    origin = driver.__file__
    source = Path(origin).read_text(encoding="utf-8") + f"\nopen({str(marker)!r}, 'w').close()\n"
    code = marshal.dumps(compile(source, origin, "exec", dont_inherit=True))
    info = os.stat(origin)
    entry = (origin, False, info.st_mtime_ns, info.st_size, len(code_bundle.HEADER), len(code))
    folder = os.path.dirname(origin)
    index = marshal.dumps(
        {
            "modules": {"tui.session.driver": entry},
            "path": [],
            "folders": {folder: os.stat(folder).st_mtime_ns},
        }
    )
    return code_bundle.HEADER + code + index + len(index).to_bytes(8, "little")


STAMP = (
    "import json, os, sys; s = os.stat(sys.argv[1]); "
    "open(sys.argv[1] + '.stamp', 'w').write(json.dumps("
    "[s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns]))"
)


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_a_sandboxed_command_cannot_plant_code_in_the_module_bundle(ccx: Ccx, backend: str) -> None:
    """The bundle (~10 MB) is too big for the guard to keep a copy of, so under Landlock the
    command's file stays; its stamp, small and protected, is put back, and a bundle that
    does not match it is not read. The control at the end shows the planted bundle would
    run had its stamp been left."""
    require_backend(backend)
    ccx.env["CCX_SANDBOX_BACKEND"] = backend
    bundle = ccx.config / "cache" / f"code-bundle-headless.{sys.implementation.cache_tag}.bin"
    marker = ccx.repo.parent / "planted-module-ran"
    evil = ccx.repo.parent / "evil.bin"
    evil.write_bytes(evil_bundle(bundle, marker))
    bypass = ("--permission-mode", "bypassPermissions")  # the sandbox is the judge
    ccx.api.add(tool_reply(("Bash", {"command": "echo hi"})), text_reply("One."))
    assert ccx.run("-p", "first", *bypass).returncode == 0
    assert bundle.read_bytes().startswith(code_bundle.HEADER)

    plant = f"cp {evil} {bundle}; {sys.executable} -c {shlex.quote(STAMP)} {bundle}; echo attempted"
    ccx.api.add(tool_reply(("Bash", {"command": plant})), text_reply("Done."), text_reply("Two."))
    run = ccx.run("-p", "go", *bypass)
    assert run.returncode == 0, run.stderr
    assert "attempted" in ccx.api.requests[-1].last_user_text()  # the command did run
    assert ccx.run("-p", "again").returncode == 0
    assert not marker.exists()

    # Control: the same bundle with a stamp that matches it (as if nothing guarded it) runs.
    shutil.copyfile(evil, bundle)
    subprocess.run([sys.executable, "-c", STAMP, str(bundle)], check=True)
    ccx.api.add(text_reply("Three."))
    assert ccx.run("-p", "control").returncode == 0
    assert marker.exists()
