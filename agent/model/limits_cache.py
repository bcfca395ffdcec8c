"""A small on-disk cache of model limits read from the Models API, so each run need not ask.

Limits change rarely; a day-old answer is good enough. A failed lookup is kept
too, for an hour: a gateway that does not serve the Models API (or hangs on
it) then costs one lookup an hour, not one per `ccx -p` or resume (a resumed
conversation near its window waits for its model's figures before its first request).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from agent.model.catalog import ModelLimits
from tools.atomic_file import atomic_write

TTL_S = 24 * 3600
FAILURE_TTL_S = 3600


def _path(config_dir: Path) -> Path:
    return config_dir / "cache" / "model-limits.json"


def _key(model: str) -> str:
    return f"{os.environ.get('ANTHROPIC_BASE_URL', 'default')}|{model}"


def _entry(config_dir: Path, model: str) -> dict | None:
    try:
        entry = json.loads(_path(config_dir).read_text(encoding="utf-8"))[_key(model)]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return entry if isinstance(entry, dict) else None


def load(config_dir: Path, model: str, now: float | None = None) -> ModelLimits | None:
    entry = _entry(config_dir, model)
    if entry is None or entry.get("failed"):
        return None
    if (now or time.time()) - entry.get("at", 0) > TTL_S:
        return None
    try:
        return ModelLimits(int(entry["context_window"]), int(entry["max_output"]))
    except (KeyError, TypeError, ValueError):
        return None


def failed_recently(config_dir: Path, model: str, now: float | None = None) -> bool:
    """Whether the last lookup of ``model`` at this endpoint failed less than an hour ago."""
    entry = _entry(config_dir, model)
    if entry is None or not entry.get("failed"):
        return False
    return (now or time.time()) - entry.get("at", 0) <= FAILURE_TTL_S


def store(config_dir: Path, model: str, limits: ModelLimits) -> None:
    _write(
        config_dir,
        model,
        {"context_window": limits.context_window, "max_output": limits.max_output},
    )


def store_failure(config_dir: Path, model: str) -> None:
    """The lookup failed: the table's figures serve until the next try, an hour on."""
    _write(config_dir, model, {"failed": True})


def _write(config_dir: Path, model: str, entry: dict) -> None:
    path = _path(config_dir)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(entries, dict):
            entries = {}
    except (OSError, ValueError):
        entries = {}
    entries[_key(model)] = {**entry, "at": time.time()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(entries).encode())
    except OSError:
        pass  # a cache that cannot be written only costs a lookup next time
