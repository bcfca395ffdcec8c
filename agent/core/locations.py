"""Where ccx keeps the user's files: one answer for settings, sessions, memory and skills."""

from __future__ import annotations

import os
from pathlib import Path


def config_dir(home: Path | None = None) -> Path:
    """``$CCX_CONFIG_DIR`` if set, else ``.ccx`` in ``home`` (default: the user's home)."""
    configured = os.environ.get("CCX_CONFIG_DIR")
    if configured:
        return Path(configured).expanduser()
    return (home if home is not None else Path.home()) / ".ccx"
