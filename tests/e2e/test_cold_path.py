"""What a cold `ccx -p` imports: what its prompt does not use stays unloaded (issue 22's cold
start), and what the model's calls use loads when they come."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.e2e.conftest import CCX, Ccx, Run
from tui.fake_api import text_reply, tool_reply

# Loaded only by what a plain prompt answered with text never does: help or a usage error
# (typer), a slash command (the table), a statusLine setting, a rewind, the driver's views
# (the app's footer, stream-json's init, /context), a shell command, an edit's diff or a
# missing path's close matches (difflib), a plugin (its manifest and marketplaces); and
# trio, which a ccx process never runs on (tui.cli.asyncio_only: the SDK's HTTP client would
# import it where installed; the log lists the refused attempt as "trio", a real import
# loads trio._core).
NOT_FOR_A_PROMPT = (
    "typer",
    "tui.cli.typer_app",
    "tui.commands.builtin",
    "tui.session.status_line",
    "tui.session.rewind",
    "tui.session.views",
    "agent.permissions.bash",
    "agent.shell",
    "difflib",
    "agent.plugins.manifest",
    "agent.plugins.marketplaces",
    "trio._core",
)


def run_logged(ccx: Ccx, python_flags: list[str], *args: str) -> Run:
    """Run ccx cold under Python with ``python_flags`` (an import log on stderr)."""
    proc = subprocess.run(
        [sys.executable, *python_flags, CCX, *args],
        cwd=ccx.repo,
        env=ccx.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def imported(ccx: Ccx, *args: str) -> tuple[Run, set[str]]:
    """Run ccx cold with Python's import log; the modules the process imported."""
    run = run_logged(ccx, ["-X", "importtime"], *args)
    names = set(re.findall(r"^import time:.*\|\s*([\w.]+)$", run.stderr, re.MULTILINE))
    return run, names


def loaded(names: set[str], module: str) -> bool:
    return any(name == module or name.startswith(module + ".") for name in names)


def test_a_prompt_answered_with_text_loads_none_of_it(ccx: Ccx) -> None:
    ccx.api.add(text_reply("Hello."))
    run, names = imported(ccx, "-p", "Say hello.", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Hello."
    assert "tui.session.driver" in names  # the log is read right
    assert [m for m in NOT_FOR_A_PROMPT if loaded(names, m)] == []


def test_what_the_turn_needs_loads_when_it_comes(ccx: Ccx) -> None:
    # A shell command to check, then a slash command: their modules load on the way.
    ccx.api.add(tool_reply(("Bash", {"command": "echo checked"})), text_reply("Done."))
    run, names = imported(ccx, "-p", "run it", "--allowedTools", "Bash(echo *)")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Done."
    assert loaded(names, "agent.permissions.bash") and loaded(names, "agent.shell")
    assert "checked" in ccx.api.requests[-1].last_user_text()

    run, names = imported(ccx, "-p", "/help")
    assert run.returncode == 0, run.stderr
    assert "/history" in run.stdout and "/config" in run.stdout
    assert "tui.commands.builtin" in names


def test_a_second_run_takes_what_the_first_compiled_and_generated(ccx: Ccx) -> None:
    """The dataclasses' compiled methods and the tools' schemas (tui.session.start_up_caches):
    kept by the first run, read by the second, which has nothing new to keep and sends the
    same tools; a damaged table is compiled over."""
    cache = ccx.config / "cache"
    table = cache / f"dataclass-code-headless.{sys.implementation.cache_tag}.marshal"
    schemas = cache / "tool-schemas.json"
    ccx.api.add(text_reply("One."), text_reply("Two."), text_reply("Three."))

    assert ccx.run("-p", "first").stdout.strip() == "One."
    assert table.stat().st_size > 10_000 and schemas.exists()
    kept = (table.stat().st_mtime_ns, schemas.stat().st_mtime_ns)

    assert ccx.run("-p", "second").stdout.strip() == "Two."
    assert (table.stat().st_mtime_ns, schemas.stat().st_mtime_ns) == kept  # nothing new
    first, second = [r.body for r in ccx.api.requests if r.path == "/v1/messages"][:2]
    assert second["tools"] == first["tools"] and second["system"] == first["system"]
    assert "first" in str(first["messages"]) and "second" in str(second["messages"])

    table.write_bytes(table.read_bytes()[:100])  # torn
    assert ccx.run("-p", "third").stdout.strip() == "Three."
    assert table.stat().st_size > 10_000  # compiled again and kept whole


def test_a_second_run_imports_its_modules_from_the_bundle(ccx: Ccx) -> None:
    """The modules' code (agent.core.code_bundle): the first run reads each module's .pyc
    (or compiles its source), which Python's -v log shows as "code object from"; the second
    is served from the file the first kept, and answers the same."""
    bundle = ccx.config / "cache" / f"code-bundle-headless.{sys.implementation.cache_tag}.bin"
    ccx.api.add(text_reply("One."), text_reply("Two."))

    def run_verbose(prompt: str) -> tuple[Run, int, set[str]]:
        run = run_logged(ccx, ["-v"], "-p", prompt)
        read = len(re.findall(r"^# code object from ", run.stderr, re.MULTILINE))
        sdk = set(re.findall(r"^import '(anthropic[\w.]*)'", run.stderr, re.MULTILINE))
        return run, read, sdk

    first, read_first, sdk_first = run_verbose("first")
    assert first.returncode == 0 and first.stdout.strip() == "One.", first.stderr[-2000:]
    assert bundle.stat().st_mode & 0o777 == 0o600 and bundle.stat().st_size > 100_000
    second, read_second, sdk_second = run_verbose("second")
    assert second.returncode == 0 and second.stdout.strip() == "Two.", second.stderr[-2000:]
    assert read_first > 500
    assert read_second < read_first / 10
    # the SDK is entered as lazily with the bundle as without: a fraction of it, neither the
    # beta APIs nor the error classes (agent/model/sdk_import.py)
    for sdk in (sdk_first, sdk_second):
        assert 300 < len(sdk) < 1200
        assert "anthropic.resources.beta" not in sdk
        assert "anthropic.types.file_expired_error" not in sdk
