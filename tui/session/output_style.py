"""The session's output style: from the ``outputStyle`` setting at start, from /output-style after.

/output-style NAME switches the style for the session and, as Claude Code
does, saves it as ``outputStyle`` in the project's ``.claude/settings.local.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.instructions.output_styles import (
    DEFAULT_STYLE,
    OutputStyle,
    OutputStyles,
    discover_output_styles,
)
from agent.permissions.settings import project_root, set_setting
from tui.session.notify import Notify


class OutputStyleChoice:
    """Every style there is, and the one the session uses (``switch`` changes it)."""

    def __init__(self, styles: OutputStyles, current: OutputStyle, cwd: Path) -> None:
        self.styles = styles
        self.current = current
        self.cwd = cwd

    def switch(self, name: str) -> str:
        """Use the style ``name`` from now on and save the choice; the words to show.
        ValueError (saying which styles exist) for an unknown name."""
        style = self.styles.find(name)
        if style is None:
            raise ValueError(
                f"Unknown output style {name!r}. Styles: {', '.join(self.styles.names)}"
            )
        self.current = style
        target = project_root(self.cwd) / ".claude" / "settings.local.json"
        try:
            set_setting(target, "outputStyle", style.name)
        except (OSError, ValueError) as exc:
            return f"Output style set to {style.name} for this session (not saved: {exc})."
        return f"Output style set to {style.name} (saved in {target})."


def load_output_styles(
    cwd: Path, trusted: bool, wanted: Any, notify: Notify, include_user: bool = True
) -> OutputStyleChoice:
    """Every style there is, and the one the setting ``wanted`` names (the default when it is
    unknown, with a note)."""
    styles = discover_output_styles(cwd, include_project=trusted, include_user=include_user)
    for warning in styles.warnings:
        notify(warning)
    chosen = styles.find(wanted if isinstance(wanted, str) else None)
    if chosen is None:
        if wanted not in (None, "", DEFAULT_STYLE):
            untrusted = "" if trusted else "; the project's own styles need a trusted folder"
            notify(
                f"Unknown outputStyle {wanted!r} in the settings (there are: "
                f"{', '.join(styles.names)}{untrusted}); using the default style"
            )
        chosen = styles.styles[0]
    return OutputStyleChoice(styles, chosen, cwd)
