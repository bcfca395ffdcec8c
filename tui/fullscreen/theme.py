"""The full-screen app's colours: the user's ``theme`` setting, read before the first paint.

``"theme"`` in the user's settings (``~/.ccx/settings.json``): ``dark`` (the default),
``light`` for a light terminal, or ``terminal-dark`` / ``terminal-light`` to draw with the
terminal's own colours. Code blocks in replies follow it (a dark code theme on a light
background paints stripes). A project's settings do not choose it: it is the user's
terminal, not the repository's.
"""

from __future__ import annotations

import json
from pathlib import Path

THEMES = {
    "dark": "textual-dark",
    "light": "textual-light",
    "terminal-dark": "ansi-dark",
    "terminal-light": "ansi-light",
}
DEFAULT = "dark"
CODE_THEMES = {True: "monokai", False: "default"}  # by whether the theme is dark


def theme_setting(config: Path) -> tuple[str, str | None]:
    """(the theme's name, a warning or None) from the user's settings file in ``config``."""
    path = config / "settings.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return DEFAULT, None  # a missing or broken file is reported where settings are read
    value = data.get("theme", DEFAULT) if isinstance(data, dict) else DEFAULT
    if value in THEMES:
        return value, None
    choices = ", ".join(THEMES)
    return DEFAULT, f'The setting "theme" in {path} is {value!r}; use one of {choices}.'
