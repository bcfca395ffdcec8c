"""Which runs go through the warm worker (tui/warm/policy.py), where its socket lives and what
its name keys on, its environment, its staleness check and its peer checks (warm_peer.py)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui.warm import peer as warm_peer
from tui.warm import policy as warm
from tui.warm.worker import ImportedFiles


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "ccx"))
    monkeypatch.delenv("CCX_WARM", raising=False)
    return tmp_path / "ccx"


@pytest.mark.parametrize(
    ("argv", "taken"),
    [
        (["-p", "hi"], True),
        (["--print", "hi", "--output-format", "json"], True),
        (["--output-format", "stream-json", "--input-format", "stream-json"], True),
        (["--input-format=stream-json"], True),
        (["hi"], False),  # interactive
        (["--input-format", "text"], False),
        (["--", "-p"], False),  # a prompt that reads "-p"
        (["explain -p"], False),
    ],
)
def test_headless_runs_are_the_ones_taken(argv: list[str], taken: bool) -> None:
    assert warm.headless(argv) is taken


def test_on_by_default_off_by_env_or_user_setting(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert warm.enabled(["-p", "hi"])
    monkeypatch.setenv("CCX_WARM", "0")
    assert not warm.enabled(["-p", "hi"])
    monkeypatch.delenv("CCX_WARM")
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"warmWorker": False}))
    assert not warm.enabled(["-p", "hi"])
    monkeypatch.setenv("CCX_WARM", "1")  # the environment wins over the setting
    assert warm.enabled(["-p", "hi"])
    monkeypatch.delenv("CCX_WARM")
    (config / "settings.json").write_text("{not json")  # a broken file: the default
    assert warm.enabled(["-p", "hi"])


@pytest.fixture
def outside_temp() -> Iterator[Path]:
    """A private folder outside the temp folders (pytest's own are all in /tmp)."""
    parent = Path.home() / ".cache"
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="ccxw", dir=parent))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_socket_folder_is_never_in_a_temp_folder(
    config: Path, outside_temp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(outside_temp))
    assert warm.socket_folder() == outside_temp / "ccx-warm"
    assert warm.socket_path().parent == outside_temp / "ccx-warm"  # type: ignore[union-attr]
    outside_temp.chmod(0o755)  # a runtime folder others may enter: not the user's own
    assert warm.socket_folder() == config / "run"
    assert warm.socket_path() is None  # the config folder is in /tmp here: no worker
    outside_temp.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # private, but in /tmp
    assert warm.socket_folder() == config / "run" and warm.socket_path() is None
    monkeypatch.setenv("CCX_CONFIG_DIR", str(outside_temp / "config"))
    assert warm.socket_path().parent == outside_temp / "config" / "run"  # type: ignore[union-attr]
    monkeypatch.setenv("TMPDIR", str(outside_temp))  # the user's temp folder counts too
    assert warm.socket_path() is None


def test_the_socket_name_keys_on_the_context_of_the_run() -> None:
    mine = warm_peer.own()
    assert mine is not None  # the tests run unconfined
    assert warm.fingerprint(mine) == warm.fingerprint(mine)
    other = mine._replace(confinement=(*mine.confinement[:-1], ("cgroup", "0::/elsewhere")))
    assert warm.fingerprint(other) != warm.fingerprint(mine)


def test_the_worker_environment_is_a_few_of_the_clients_variables() -> None:
    started = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "XDG_RUNTIME_DIR": "/run/user/1000",
        "CCX_WARM_IDLE_S": "60",
        "ANTHROPIC_API_KEY": "sk-secret",
        "PYTHONPATH": "/repo/site",
        "LD_PRELOAD": "/repo/evil.so",
        "MARK": "from-settings",
    }
    assert warm.worker_environment(started) == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "XDG_RUNTIME_DIR": "/run/user/1000",
        "CCX_WARM_IDLE_S": "60",
    }
    assert warm.worker_command()[1:] == ["-I", "-m", "tui.warm.worker"]


def test_an_imported_file_changed_in_place_or_replaced_is_seen(tmp_path: Path) -> None:
    edited, replaced, kept = (tmp_path / f"{name}.py" for name in ("edited", "replaced", "kept"))
    for path in (edited, replaced, kept):
        path.write_text("x = 1\n")
    files = ImportedFiles.of(str(p) for p in (edited, replaced, kept, tmp_path / "gone.py"))
    assert not files.changed()
    with edited.open("r+") as file:  # same size, same inode: mtime and ctime move
        file.write("y")
    assert files.changed()
    edited.write_text("x = 1\n")
    files = ImportedFiles.of(str(p) for p in (edited, replaced, kept))
    new = tmp_path / "new.py"
    new.write_text("x = 1\n")
    stat = replaced.stat()
    os.utime(new, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    new.replace(replaced)  # the same size and mtime, another inode
    assert files.changed()


def test_the_peer_checks_see_the_process_and_its_confinement(tmp_path: Path) -> None:
    mine = warm_peer.own()
    assert mine is not None
    left, right = socket.socketpair()
    with left, right:
        peer = warm_peer.peer_of(left, identity=True)
    assert peer is not None and peer.pid == os.getpid()
    assert warm_peer.same_confinement(peer, mine)
    assert peer.exe == os.path.realpath(sys.executable) and peer.token == ""
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s"))
        server.listen(1)
        script = (
            "import ctypes, socket, sys, time\n"
            "assert ctypes.CDLL(None).prctl(38, 1, 0, 0, 0) == 0\n"  # NoNewPrivs, as a sandbox
            "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(30)"
        )
        child = subprocess.Popen([sys.executable, "-c", script, server.getsockname()])
        try:
            conn, _ = server.accept()
            with conn:
                confined = warm_peer.peer_of(conn, identity=False)
            assert confined is not None and confined.pid == child.pid
            assert dict(confined.confinement)["NoNewPrivs"] == "1"
            assert not warm_peer.same_confinement(confined, mine)
        finally:
            child.kill()
            child.wait()


def test_only_a_private_folder_of_ones_own_is_trusted(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir(mode=0o700)
    assert warm.private_folder(folder)
    folder.chmod(0o755)
    assert not warm.private_folder(folder)
    link = tmp_path / "link"
    link.symlink_to(folder)
    folder.chmod(0o700)
    assert not warm.private_folder(link)
    assert not warm.private_folder(tmp_path / "missing")
