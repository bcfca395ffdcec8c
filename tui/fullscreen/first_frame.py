"""The model and effort the footer shows in the first frame, before the session is assembled.

The session decides (tui/session/session_model.py); this reads the same sources the same
way — ``--model`` / ``--effort`` (parsed options, or the raw arguments the fast path paints
before parsing), the settings' ``model`` and ``effortLevel``, ``ANTHROPIC_MODEL`` and the
effort variables — so the first frame does not show one model and then another. It is
only a picture: anything it cannot read falls back to the default, and the session's
status replaces it once the session is up.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent.model.catalog import ModelName
from agent.model.thinking import ThinkingError, choose, request_settings
from agent.permissions.settings import load_settings, project_root
from agent.permissions.trust import is_trusted


def flag_value(argv: list[str], flag: str) -> str | None:
    """``--flag VALUE`` or ``--flag=VALUE`` in raw arguments (the last one wins)."""
    value = None
    for index, arg in enumerate(argv):
        if arg == flag and index + 1 < len(argv):
            value = argv[index + 1]
        elif arg.startswith(flag + "="):
            value = arg.split("=", 1)[1]
    return value


def first_frame_model(
    cwd: Path, model: str | None, effort: str | None, argv: list[str] | None = None
) -> tuple[str, str | None]:
    """(the model id, its effort or None) the session will most likely start with."""
    if argv is not None:
        model = model or flag_value(argv, "--model")
        effort = effort or flag_value(argv, "--effort")
    try:
        settings = load_settings(cwd, trusted=is_trusted(project_root(cwd)))
        typed = model or settings.model or os.environ.get("ANTHROPIC_MODEL")
        name = ModelName.parse(typed)
        choice = choose(
            env=os.environ,
            always_thinking=settings.get("alwaysThinkingEnabled"),
            effort_setting=settings.get("effortLevel"),
            flag_effort=effort,
        )
    except (ThinkingError, OSError, ValueError):
        return ModelName.parse(model).id, None
    return name.id, request_settings(name.id, choice).effort
