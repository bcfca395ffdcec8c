"""The tools' JSON schemas kept on disk between runs of ccx (the app and `-p` alike), so that
start-up does not ask pydantic for them: the meter's first figure and the first request count
the tools, and generating their schemas took ~10 ms of either (plus building the models'
validators, which now wait for a first call).

A schema is fixed by the code that defines its model and by pydantic. The file holds a
fingerprint of both — every source file of ccx's packages by path, size and modification time,
pydantic's version and Python's — and is used only while it still matches; a schema the file
lacks is generated as before. The file is written when the session is up (before its first
figure is shown), and only when this run generated a schema it did not hold and no source
file changed while the app started.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

CACHE_FILE = Path("cache") / "tool-schemas.json"  # in ccx's config folder
PACKAGES = ("tools", "agent", "compaction", "tui")  # ccx's own, side by side in one folder
SOURCE_ROOT = Path(__file__).resolve().parents[2]
FORMAT = 1


def code_fingerprint(root: Path = SOURCE_ROOT, packages: tuple[str, ...] = PACKAGES) -> str:
    """What the schemas depend on: ccx's source files (path, size, mtime) and the versions."""
    from pydantic.version import VERSION as pydantic_version

    entries: list[str] = []
    for package in packages:
        _source_files(root / package, entries)
    entries.sort()
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{FORMAT}\0{sys.version}\0{pydantic_version}\0{root}\0".encode())
    digest.update("\0".join(entries).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _source_files(folder: Path, entries: list[str]) -> None:
    try:
        found = list(os.scandir(folder))
    except OSError:
        entries.append(f"{folder} missing")
        return
    for entry in found:
        if entry.is_dir(follow_symlinks=False):
            if entry.name != "__pycache__":
                _source_files(Path(entry.path), entries)
        elif entry.name.endswith(".py"):
            try:
                stat = entry.stat()
            except OSError:  # gone since the listing: that is a change too
                entries.append(f"{entry.path} gone")
                continue
            entries.append(f"{entry.path}:{stat.st_size}:{stat.st_mtime_ns}")


def load_schemas(path: Path, fingerprint: str) -> dict[str, dict[str, Any]]:
    """The schemas saved under ``fingerprint``; empty when there are none, they were saved for
    other code, or the file is unreadable or not what this module writes."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(saved, dict) or saved.get("fingerprint") != fingerprint:
        return {}
    schemas = saved.get("schemas")
    if not isinstance(schemas, dict):
        return {}
    return {
        key: schema
        for key, schema in schemas.items()
        if isinstance(key, str) and isinstance(schema, dict)
    }


def save_schemas(path: Path, fingerprint: str, schemas: dict[str, dict[str, Any]]) -> None:
    """Keep ``schemas`` for the next run (atomically; a failure only costs that run ~10 ms)."""
    from tools.atomic_file import atomic_write

    data = json.dumps({"fingerprint": fingerprint, "schemas": schemas}, sort_keys=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data.encode("utf-8"))
    except OSError:
        pass


class ToolSchemaCache:
    """One app's use of the file: ``use`` before the session's tools are built, ``keep`` once
    they are."""

    def __init__(self, config: Path) -> None:
        self.path = config / CACHE_FILE
        self.fingerprint: str | None = None
        self.loaded: dict[str, dict[str, Any]] = {}

    def use(self) -> None:
        """Hand the saved schemas that match this code to the tools (once)."""
        from tools.base import know_schemas

        if self.fingerprint is not None:
            return
        self.fingerprint = code_fingerprint()
        self.loaded = load_schemas(self.path, self.fingerprint)
        know_schemas(self.loaded)

    def keep(self) -> bool:
        """Save what this run generated, if anything new and the code is still the code that
        was fingerprinted; True when the file was written."""
        from tools.base import generated_schemas

        if self.fingerprint is None:
            return False
        schemas = {**self.loaded, **generated_schemas()}
        if schemas == self.loaded or code_fingerprint() != self.fingerprint:
            return False
        save_schemas(self.path, self.fingerprint, schemas)
        self.loaded = schemas
        return True
