"""The Bash sandbox, with each backend for real: where commands may write, the protected
paths, hidden files, the network switch, dangerouslyDisableSandbox and the off switch."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tools.sandbox_helpers import (
    context,
    make_project,
    require_backend,
    run,
    scratch_base,
)
from tools.bash import BashTool
from tools.sandbox import SandboxPolicy, choose_backend

BACKENDS = ("landlock", "bwrap")


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
    return BashTool(sandbox=SandboxPolicy(project_dirs=(project,), backend=backend, **kw))  # type: ignore[arg-type]


async def test_writes_inside_the_project_and_temp_work(project: Path, backend: str) -> None:
    tool = sandboxed(project, backend)
    result = await run(
        tool, context(project), "mkdir -p src && echo hi > src/new.txt && mv src/new.txt moved.txt "
        "&& f=$(mktemp) && echo t > $f && rm $f && echo > /dev/null && cat moved.txt",
    )  # fmt: skip
    assert not result.is_error, result.output
    assert result.output_text().strip() == "hi"
    assert result.meta["sandbox"] == backend
    assert (project / "moved.txt").read_text() == "hi\n"


async def test_writes_outside_are_refused_and_explained(
    project: Path, outside: Path, backend: str
) -> None:
    tool = sandboxed(project, backend)
    target = outside / "escaped.txt"
    result = await run(tool, context(project), f"echo x > {target}")
    assert result.is_error
    assert not target.exists()
    text = result.output_text()
    assert "ccx's sandbox" in text and "dangerouslyDisableSandbox: true" in text
    assert str(project) in text  # says where writing is allowed
    # ccx itself is not restricted by what its child entered
    target.write_text("ccx may still write here\n")


async def test_protected_paths_cannot_be_changed(project: Path, backend: str) -> None:
    tool = sandboxed(project, backend)
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file() and ".git" in p.parts}
    before_claude = (project / ".claude" / "settings.json").read_bytes()
    command = (
        "echo '[core]\n\tfsmonitor = touch PWN' >> .git/config; "
        "printf '#!/bin/sh\\ntouch PWN\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
        "rm -f .git/hooks/pre-commit.sample; "
        """echo '{"permissions": {"allow": ["Bash"]}}' > .claude/settings.json; """
        """echo '{"permissions": {"allow": ["Bash"]}}' > .claude/settings.local.json; true"""
    )
    result = await run(tool, context(project), command)
    assert (project / ".git" / "config").read_bytes() == before[project / ".git" / "config"]
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert (project / ".git" / "hooks" / "pre-commit.sample").exists()
    assert (project / ".claude" / "settings.json").read_bytes() == before_claude
    assert not (project / ".claude" / "settings.local.json").exists()
    assert "dangerouslyDisableSandbox" in result.output_text()


async def test_moving_git_away_does_not_escape_protection(project: Path, backend: str) -> None:
    tool = sandboxed(project, backend)
    config = (project / ".git" / "config").read_text()
    await run(
        tool, context(project),
        "mv .git .git-old; mkdir -p .git/hooks; echo '[core]\n\tfsmonitor = x' > .git/config; "
        "mv .claude .claude-old; ln -s .claude-old .claude; true",
    )  # fmt: skip
    assert (project / ".git").is_dir() and not (project / ".git").is_symlink()
    assert (project / ".git" / "config").read_text() == config
    assert (project / ".git" / "hooks" / "pre-commit.sample").exists()
    assert (project / ".claude").is_dir() and not (project / ".claude").is_symlink()
    assert (project / ".claude" / "settings.json").exists()


async def test_creating_claude_settings_where_there_were_none(project: Path, backend: str) -> None:
    for name in ("settings.json",):
        (project / ".claude" / name).unlink()
    (project / ".claude").rmdir()
    tool = sandboxed(project, backend)
    result = await run(
        tool, context(project),
        """mkdir .claude && echo '{"permissions": {"allow": ["Bash"]}}' > .claude/settings.local.json""",
    )  # fmt: skip
    assert not (project / ".claude").exists()
    assert "removed" in result.output_text()


async def test_git_init_in_a_new_folder_keeps_working(base: Path, backend: str) -> None:
    fresh = base / "fresh"
    fresh.mkdir()
    tool = sandboxed(fresh, backend)
    result = await run(
        tool, context(fresh),
        "git init -q . && git -c user.email=a@b -c user.name=n commit -q --allow-empty -m first "
        "&& echo evil > .git/hooks/post-commit && git log --oneline | wc -l",
    )  # fmt: skip
    assert not result.is_error, result.output
    assert result.output_text().splitlines()[0].strip() == "1"
    assert (fresh / ".git" / "config").exists()
    assert not (fresh / ".git" / "hooks" / "post-commit").exists()  # only git's samples stay


async def test_commits_work_in_a_protected_repository(project: Path, backend: str) -> None:
    (project / ".git").rename(project / ".git-fixture")  # a real repository instead
    tool = BashTool()
    await run(tool, context(project), "git init -q . && rm -rf .git-fixture")
    result = await run(
        sandboxed(project, backend), context(project),
        "echo code > a.txt && git add a.txt && "
        "git -c user.email=a@b -c user.name=n commit -q -m 'add a' && git log --oneline | wc -l",
    )  # fmt: skip
    assert not result.is_error, result.output
    assert result.output_text().strip() == "1"


async def test_denied_file_is_hidden_under_bwrap(project: Path) -> None:
    require_backend("bwrap")
    (project / "sub").mkdir()
    (project / "sub" / ".env").write_text("NESTED=sk-nested-456\n")
    (project / "secrets").mkdir()
    (project / "secrets" / "key.pem").write_text("sk-pem-789\n")
    (project / "envlink").symlink_to(project / ".env")
    policy = SandboxPolicy(
        project_dirs=(project,),
        backend="bwrap",
        denied_reads=(project / "secrets",),
        deny_read=lambda path: os.path.basename(path) == ".env",
    )
    tool = BashTool(sandbox=policy)
    result = await run(
        tool, context(project),
        "cat sub/.env; cat envlink; echo files=$(ls secrets | wc -l); cat secrets/key.pem; "
        "echo readable > ok.txt && cat ok.txt; cat .env",
    )  # fmt: skip
    text = result.output_text()
    for secret in ("sk-secret-123", "sk-nested-456", "sk-pem-789"):
        assert secret not in text
    assert "files=0" in text
    assert "readable" in text
    assert "Read deny rules" in text


async def test_landlock_does_not_hide_reads(project: Path) -> None:
    """Documented limit: under Landlock a denied file is left to the permission rules."""
    require_backend("landlock")
    policy = SandboxPolicy(
        project_dirs=(project,), backend="landlock", denied_reads=(project / ".env",)
    )
    result = await run(BashTool(sandbox=policy), context(project), "cat .env")
    assert "sk-secret-123" in result.output_text()


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


async def test_network_switch(project: Path, backend: str, listener: int) -> None:
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && echo connected"
    allowed = await run(sandboxed(project, backend), context(project), connect)
    assert allowed.output_text().strip() == "connected", allowed.output
    refused = await run(sandboxed(project, backend, network=False), context(project), connect)
    assert refused.is_error and "connected" not in refused.output_text().replace("connect:", "")
    assert "the network is off" in refused.output_text()


async def test_dangerously_disable_sandbox_runs_unsandboxed(
    project: Path, outside: Path, backend: str
) -> None:
    tool = sandboxed(project, backend)
    target = outside / "allowed.txt"
    result = await run(tool, context(project), f"echo x > {target}", dangerouslyDisableSandbox=True)
    assert not result.is_error, result.output
    assert target.read_text() == "x\n"
    assert result.meta["sandbox"] is None
    hook = project / ".git" / "hooks" / "pre-commit"
    await run(tool, context(project), f"echo x > {hook}", dangerouslyDisableSandbox=True)
    assert hook.exists()  # the user approved an unsandboxed call: nothing is reverted
    again = await run(tool, context(project), f"echo y > {outside / 'again.txt'}")
    assert again.is_error and not (outside / "again.txt").exists()  # only that one call


async def test_off_switch(project: Path, outside: Path) -> None:
    tool = BashTool(sandbox=SandboxPolicy(enabled=False, project_dirs=(project,)))
    assert tool.sandbox is None
    result = await run(tool, context(project), f"echo x > {outside / 'free.txt'}")
    assert not result.is_error and result.meta["sandbox"] is None
    assert choose_backend(SandboxPolicy(enabled=False)) == (None, "the sandbox is turned off")


async def test_background_process_and_timeout_under_the_sandbox(
    project: Path, backend: str
) -> None:
    tool = sandboxed(project, backend)
    # What a sandboxed command leaves running ends with it, whether or not it left the
    # group or the session (under bubblewrap its pids are the namespace's: look by name).
    marker = f"ccx-left-{backend}"
    result = await run(
        tool, context(project),
        f"(exec -a {marker}-a sleep 30) & setsid bash -c 'exec -a {marker}-b sleep 30' & "
        "nohup setsid sh -c 'sleep 1; echo late > late.txt' >/dev/null 2>&1 & echo started",
    )  # fmt: skip
    assert result.output_text().startswith("started"), result.output_text()
    assert _pids_named(marker) == []
    await asyncio.sleep(1.5)
    assert not (project / "late.txt").exists()
    timed = await run(
        tool, context(project), f"(exec -a {marker}-c sleep 30) & sleep 30", timeout=300
    )
    assert timed.meta["timed_out"]
    assert _pids_named(marker) == []


async def test_cwd_persists_and_protected_paths_follow_the_project(
    project: Path, backend: str
) -> None:
    tool = sandboxed(project, backend)
    ctx = context(project)
    (project / "pkg").mkdir()
    await run(tool, ctx, "cd pkg")
    result = await run(tool, ctx, "pwd && echo x > here.txt && echo evil >> ../.git/config")
    assert result.output_text().splitlines()[0] == str(project / "pkg")
    assert (project / "pkg" / "here.txt").exists()
    assert "evil" not in (project / ".git" / "config").read_text()


def _pids_named(prefix: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if cmdline.startswith(prefix.encode()) and state != "Z":
            found.append(int(name))
    return found


async def test_git_works_in_a_worktree_whose_hooks_stay_protected(base: Path, backend: str) -> None:
    main, tree = base / "main", base / "tree"
    main.mkdir()
    git = "git -c user.email=a@b -c user.name=n"
    setup = await run(
        BashTool(), context(main),
        f"git init -q . && {git} commit -q --allow-empty -m first && git worktree add -q {tree}",
    )  # fmt: skip
    assert not setup.is_error, setup.output
    result = await run(
        sandboxed(tree, backend), context(tree),
        f"echo a > a.txt && git add a.txt && {git} commit -q -m 'add a' && "
        f"echo evil > {main}/.git/hooks/pre-commit; echo evil >> {main}/.git/config; "
        "git log --oneline | wc -l",
    )  # fmt: skip
    assert "2" in [line.strip() for line in result.output_text().splitlines()], result.output
    assert not (main / ".git" / "hooks" / "pre-commit").exists()
    assert "evil" not in (main / ".git" / "config").read_text()


async def test_commands_get_no_capabilities_even_as_root(project: Path, backend: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root has capabilities to lose")
    result = await run(
        sandboxed(project, backend), context(project), "grep CapEff /proc/self/status"
    )
    assert result.output_text().split() == ["CapEff:", "0000000000000000"]
    unsandboxed = await run(BashTool(), context(project), "grep CapEff /proc/self/status")
    assert unsandboxed.output_text().split()[1] != "0000000000000000"


async def test_symlinks_put_over_protected_paths_are_undone(
    project: Path, outside: Path, backend: str
) -> None:
    evil_hooks = outside / "hooks"
    evil_hooks.mkdir()
    (evil_hooks / "pre-commit").write_text("#!/bin/sh\ntouch PWN\n")
    target = outside / "target.txt"
    target.write_text("outside file\n")
    config = (project / ".git" / "config").read_text()
    await run(
        sandboxed(project, backend), context(project),
        f"rm -rf .git/hooks; ln -s {evil_hooks} .git/hooks; rm -f .git/config; "
        f"ln -s {target} .git/config; true",
    )  # fmt: skip
    hooks = project / ".git" / "hooks"
    assert hooks.is_dir() and not hooks.is_symlink()
    assert [p.name for p in hooks.iterdir()] == ["pre-commit.sample"]
    assert not (project / ".git" / "config").is_symlink()
    assert (project / ".git" / "config").read_text() == config
    assert target.read_text() == "outside file\n"  # nothing written through the link
    assert (evil_hooks / "pre-commit").exists()  # nor anything removed through it
