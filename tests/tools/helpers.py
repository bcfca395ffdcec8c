"""Plain helpers shared by the file-tool tests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tools.base import Tool

SCHEMAS = Path(__file__).with_name("schemas")


def assert_schema_matches_snapshot(tool: type[Tool]) -> None:
    """Pin a tool's input schema; UPDATE_SCHEMAS=1 (or a missing file) writes the snapshot."""
    path = SCHEMAS / f"{tool.name}.json"
    actual = tool.input_schema()
    if os.environ.get("UPDATE_SCHEMAS") or not path.exists():
        path.write_text(json.dumps(actual, indent=2) + "\n", encoding="utf-8")
        if not os.environ.get("UPDATE_SCHEMAS"):
            pytest.fail(f"wrote a new schema snapshot {path.name}; check it and rerun")
    assert actual == json.loads(path.read_text(encoding="utf-8"))


def bump_mtime(path: Path, seconds: float = 5.0) -> None:
    """Move a file's mtime forward, as an external edit would, whatever the clock resolution."""
    st = path.stat()
    os.utime(path, (st.st_atime, st.st_mtime + seconds))
