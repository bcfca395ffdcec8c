"""The warm worker (tui/warm/policy.py): headless runs through it stay the client's own runs.

One worker per module, started as the first `ccx -p` starts it (``python -I -m
tui.warm.worker``, a clean environment) with a private XDG_RUNTIME_DIR,
stopped at the end. A run proves it went through the worker with a Bash call
that prints $CCX_WARM_CHILD. The attacks on it are in test_warm_worker_attacks.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import warm_helpers as helpers
from tests.e2e.conftest import CCX, Ccx
from tests.e2e.warm_helpers import (
    MARK,
    marked,
    runtime_dir,
    stop,
    wait_for_worker,
    warm_env,
    worker_pid,
    worker_socket,
)
from tests.host_pids import new_tag, pids_tagged, tagged_sleep, wait_tagged_gone
from tests.tools.test_bash import wait_dead
from tui.fake_api import FakeApi, Fault, text_reply, tool_reply
from tui.warm import policy as warm_module

STARTED: list[subprocess.Popen[bytes]] = []


def start_worker(runtime: Path, **env: str) -> subprocess.Popen[bytes]:
    proc = helpers.start_worker(runtime, **env)
    STARTED.append(proc)
    return proc


@pytest.fixture(autouse=True, scope="module")
def no_worker_left() -> Iterator[None]:
    """Whatever fails, every worker a test started is stopped."""
    yield
    for proc in STARTED:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def warm_runtime() -> Iterator[Path]:
    with runtime_dir() as runtime:
        worker = start_worker(runtime)
        yield runtime
        stop(worker)
        assert list((runtime / "ccx-warm").glob("*")) == []  # neither socket nor lock left


@pytest.fixture
def warm(ccx: Ccx, warm_runtime: Path) -> Ccx:
    return warm_env(ccx, warm_runtime)


def test_a_warm_run_takes_the_clients_cwd_env_and_exit_code(warm: Ccx, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    warm.repo = other
    warm.env["MARK"] = "from-the-client"
    seen = marked(warm, warm.api)
    assert "warm=1" in seen and str(other) in seen and "mark=from-the-client" in seen
    assert warm.run("-p", "x", "--session-id", "nope").returncode == 2  # a usage error
    warm.api.add(Fault(400))
    assert warm.run("-p", "fails").returncode == 1


def test_a_settings_change_between_two_runs_is_seen(warm: Ccx) -> None:
    settings = warm.config / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    for mark in ("one", "two"):
        settings.write_text(json.dumps({"env": {"MARK": mark}}))
        seen = marked(warm, warm.api)
        assert "warm=1" in seen and f"mark={mark}" in seen
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash"]}}))
    seen = marked(warm, warm.api)
    assert "warm=" not in seen and "denied" in seen.lower()


def test_another_home_gets_its_own_files(warm: Ccx, tmp_path: Path) -> None:
    del warm.env["CCX_CONFIG_DIR"]  # ~/.ccx, from HOME
    for name in ("first", "second"):
        home = tmp_path / name
        home.mkdir()
        warm.env["HOME"] = str(home)
        seen = marked(warm, warm.api)
        assert "warm=1" in seen and f"home={home}" in seen
        assert len(list((home / ".ccx" / "projects").glob("*/*.jsonl"))) == 1


def test_stream_json_input_streams_turn_by_turn(warm: Ccx, warm_runtime: Path) -> None:
    worker = worker_pid(warm_runtime)
    warm.api.add(text_reply("one"), text_reply("two"))
    proc = subprocess.Popen(
        [CCX, "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"],
        cwd=warm.repo,
        env=warm.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    results, forked = [], []
    try:
        for text in ("first", "second"):  # the second is written only after the first's result
            line = {"type": "user", "message": {"role": "user", "content": text}}
            proc.stdin.write(json.dumps(line) + "\n")
            proc.stdin.flush()
            while (event := json.loads(proc.stdout.readline()))["type"] != "result":
                pass
            results.append(event["result"])
            forked.append(Path(f"/proc/{worker}/task/{worker}/children").read_text().split())
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert results == ["one", "two"]
    assert forked[0] and forked[0] == forked[1]  # one child of the worker ran both turns


def popen_ignoring(
    ccx: Ccx, ignoring: tuple[signal.Signals, ...], *args: str
) -> subprocess.Popen[str]:
    """``ccx ARGS`` started with the signals ``ignoring`` ignored, as `nohup` or a script's
    `&` start it (the shell's `trap '' SIG` ignores it; exec keeps it ignored, and the pid)."""
    traps = " ".join(number.name.removeprefix("SIG") for number in ignoring)
    return subprocess.Popen(
        ["sh", "-c", f'trap "" {traps}; exec "$@"', "sh", CCX, *args],
        cwd=ccx.repo,
        env=ccx.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_until_sleeping(
    ccx: Ccx, ignoring: tuple[signal.Signals, ...] = ()
) -> tuple[subprocess.Popen[str], str]:
    """A run whose Bash command sleeps, started with the signals ``ignoring`` ignored; the
    client process and the sleep's tag (its pid in a sandbox's PID namespace is not the one
    seen here)."""
    tag = new_tag()
    ccx.api.add(tool_reply(("Bash", {"command": tagged_sleep(tag)})), text_reply("done"))
    proc = popen_ignoring(ccx, ignoring, "-p", "sleep", "--permission-mode", "bypassPermissions")
    deadline = time.monotonic() + 30
    while not pids_tagged(tag):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the Bash command did not start"
        time.sleep(0.05)
    return proc, tag


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_ends_a_warm_run_as_it_ends_a_cold_one(warm: Ccx, sig: signal.Signals) -> None:
    codes = {}
    for mode in ("0", "1"):
        with FakeApi() as api:  # each run its own script: the cold one leaves a reply unread
            warm.api, warm.env["ANTHROPIC_BASE_URL"] = api, api.url
            warm.env["CCX_WARM"] = mode
            proc, sleeper = run_until_sleeping(warm)
            time.sleep(0.3)
            proc.send_signal(sig)
            codes[mode] = proc.wait(timeout=30)
            proc.communicate()
            assert wait_tagged_gone(sleeper, within=10) == []
    assert codes["1"] == codes["0"] != 0


def test_a_signal_ccx_was_started_ignoring_is_ignored_warm_or_cold(warm: Ccx) -> None:
    """A script's background job starts with SIGINT ignored, `nohup` with SIGHUP: neither
    stops the run, cold or warm; SIGTERM still does, with the same status."""
    codes = {}
    for mode in ("0", "1"):
        with FakeApi() as api:
            warm.api, warm.env["ANTHROPIC_BASE_URL"] = api, api.url
            warm.env["CCX_WARM"] = mode
            proc, sleeper = run_until_sleeping(warm, ignoring=(signal.SIGINT, signal.SIGHUP))
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
            proc.send_signal(signal.SIGHUP)
            time.sleep(1.5)
            assert proc.poll() is None, (mode, proc.communicate())
            assert pids_tagged(sleeper), mode  # the Bash command was not stopped either
            proc.send_signal(signal.SIGTERM)
            codes[mode] = proc.wait(timeout=30)
            proc.communicate()
            assert wait_tagged_gone(sleeper, within=10) == []
    assert codes["1"] == codes["0"] == 128 + signal.SIGTERM


def test_the_runs_commands_ignore_what_ccx_ignores_warm_or_cold(warm: Ccx) -> None:
    """The run's commands inherit the signals its client was started ignoring, whatever
    the worker was started with, as a cold run's do."""
    ignored = {}
    for mode in ("0", "1"):
        warm.env["CCX_WARM"] = mode
        command = "echo warm=${CCX_WARM_CHILD:-no}; grep SigIgn /proc/self/status"
        warm.api.add(tool_reply(("Bash", {"command": command})), text_reply("done"))
        both = (signal.SIGINT, signal.SIGHUP)
        proc = popen_ignoring(warm, both, "-p", "x", "--allowedTools", "Bash")
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        seen = json.dumps(warm.api.requests[-1].messages[-1])
        assert f"warm={'1' if mode == '1' else 'no'}" in seen
        found = re.search(r"SigIgn:(?:\\t)*([0-9a-f]{16})", seen)
        assert found, seen
        ignored[mode] = int(found.group(1), 16)
    wanted = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGHUP - 1))
    assert ignored["0"] & wanted == wanted
    assert ignored["1"] == ignored["0"]


def test_a_client_killed_mid_run_takes_its_run_along(warm: Ccx) -> None:
    proc, sleeper = run_until_sleeping(warm)
    proc.kill()  # SIGKILL: the client forwards nothing, the worker sees the socket close
    proc.wait()
    proc.communicate()
    assert wait_tagged_gone(sleeper, within=15) == []


def test_the_user_setting_turns_it_off(warm: Ccx) -> None:
    settings = warm.config / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"warmWorker": False}))
    warm.env["CCX_WARM"] = ""  # the default: the setting decides
    assert "warm=no" in marked(warm, warm.api)
    settings.write_text("{}")
    assert "warm=1" in marked(warm, warm.api)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another user")
def test_another_user_is_never_served(warm: Ccx, warm_runtime: Path) -> None:
    path = worker_socket(warm_runtime)
    assert path is not None
    with runtime_dir(Path("/run/user")) as public:  # a folder another user may pass through
        public.chmod(0o755)
        link = public / "s"
        os.link(path, link)  # the worker's own socket, by another name
        path.chmod(0o666)  # let another user reach it: the worker must still refuse
        try:
            probe = (
                "import os, socket, sys; os.setgid(65534); os.setuid(65534)\n"
                "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
                "try:\n"
                "    socket.send_fds(s, [b'\\0\\0\\0\\2{}'], [0, 1, 2]); s.settimeout(10)\n"
                "    print('closed' if s.recv(16) == b'' else 'served')\n"
                "except (ConnectionResetError, BrokenPipeError):\n"
                "    print('closed')"
            )
            out = subprocess.run(
                [sys.executable, "-c", probe, str(link)], capture_output=True, text=True, timeout=30
            )
            assert out.stdout.strip() == "closed", out.stderr  # closed without a fork
        finally:
            path.chmod(0o600)
    assert "warm=1" in marked(warm, warm.api)


def test_no_client_trusts_a_folder_others_may_enter(warm: Ccx, warm_runtime: Path) -> None:
    folder = warm_runtime / "ccx-warm"
    folder.chmod(0o711)
    try:
        assert "warm=no" in marked(warm, warm.api)
    finally:
        folder.chmod(0o700)
    assert "warm=1" in marked(warm, warm.api)


def test_two_workers_of_one_install_make_one() -> None:
    with runtime_dir() as runtime:
        first = start_worker(runtime)
        environ = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
        second = subprocess.run(
            warm_module.worker_command(),
            cwd="/",
            env=warm_module.worker_environment(environ),
            timeout=60,
        )
        assert second.returncode == 0 and worker_pid(runtime) == first.pid
        stop(first)


def test_a_worker_leaves_when_idle() -> None:
    with runtime_dir() as runtime:
        idle = start_worker(runtime, CCX_WARM_IDLE_S="1")
        assert idle.wait(timeout=30) == 0
        assert list((runtime / "ccx-warm").glob("*")) == []


def test_the_agent_sdk_runs_through_the_worker(warm: Ccx) -> None:
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, SystemMessage, query

    warm.api.add(tool_reply(("Bash", {"command": MARK})), text_reply("done"))
    options = ClaudeAgentOptions(
        cli_path=CCX, cwd=str(warm.repo), env=dict(warm.env), permission_mode="bypassPermissions"
    )

    async def collect() -> list[object]:
        return [m async for m in query(prompt="mark", options=options)]

    messages = asyncio.run(collect())
    assert isinstance(messages[0], SystemMessage) and messages[0].subtype == "init"
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert result.result == "done"
    assert "warm=1" in json.dumps(warm.api.requests[-1].messages[-1])


def test_the_first_run_runs_in_process_and_leaves_a_worker_for_the_next(ccx: Ccx) -> None:
    with runtime_dir() as runtime:
        warm_env(ccx, runtime)
        try:
            assert "warm=no" in marked(ccx, ccx.api)  # no worker yet: in-process, output whole
            pid = wait_for_worker(runtime)
            assert "warm=1" in marked(ccx, ccx.api)
            os.kill(pid, signal.SIGTERM)
            assert wait_dead([pid], within=10) == []
            assert list((runtime / "ccx-warm").glob("*")) == []
        finally:
            if (pid := worker_pid(runtime)) is not None:
                os.kill(pid, signal.SIGKILL)
