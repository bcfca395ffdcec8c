"""Which runs go through the warm worker (agent/app/warm.py), and what its socket's name keys on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent.app import warm


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


def test_the_socket_name_follows_the_installed_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert warm.socket_path().parent == tmp_path / f"ccx-warm-{os.getuid()}"
    install = tmp_path / "install"
    (install / "agent" / "app").mkdir(parents=True)
    source = install / "agent" / "app" / "headless.py"
    source.write_text("x = 1\n")
    (install / "agent" / "prompt.md").write_text("Be brief.\n")
    before = warm.fingerprint(install)
    assert warm.fingerprint(install) == before
    stat = source.stat()
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert warm.fingerprint(install) != before
    touched = warm.fingerprint(install)
    (install / "agent" / "prompt.md").write_text("Be very brief.\n")  # data files count too
    assert warm.fingerprint(install) != touched


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
