"""A small on-disk cache of model limits read from the Models API, so each run need not ask.

Limits change rarely; a day-old answer is good enough, and a gateway that
does not serve the Models API (or hangs on it) then costs one lookup a day,
not one per `ccx -p`.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from agent.model.catalog import ModelLimits
from tools.atomic_file import atomic_write

TTL_S = 24 * 3600


def _path(config_dir: Path) -> Path:
    return config_dir / "cache" / "model-limits.json"


def _key(model: str) -> str:
    return f"{os.environ.get('ANTHROPIC_BASE_URL', 'default')}|{model}"


def load(config_dir: Path, model: str, now: float | None = None) -> ModelLimits | None:
    try:
        entries = json.loads(_path(config_dir).read_text(encoding="utf-8"))
        entry = entries[_key(model)]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (now or time.time()) - entry.get("at", 0) > TTL_S:
        return None
    try:
        return ModelLimits(int(entry["context_window"]), int(entry["max_output"]))
    except (KeyError, TypeError, ValueError):
        return None


def store(config_dir: Path, model: str, limits: ModelLimits) -> None:
    path = _path(config_dir)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(entries, dict):
            entries = {}
    except (OSError, ValueError):
        entries = {}
    entries[_key(model)] = {
        "context_window": limits.context_window,
        "max_output": limits.max_output,
        "at": time.time(),
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(entries).encode())
    except OSError:
        pass  # a cache that cannot be written only costs a lookup next time
