"""The session's output style: from the ``outputStyle`` setting at start, from /output-style after.

/output-style NAME switches the style for the session and, as Claude Code
does, saves it as ``outputStyle`` in the project's ``.claude/settings.local.json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.instructions.output_styles import (
    DEFAULT_STYLE,
    OutputStyle,
    OutputStyles,
    discover_output_styles,
)
from agent.permissions.settings import project_root, set_setting

if TYPE_CHECKING:
    from tui.session.runtime import Runtime


def load_output_styles(runtime: Runtime) -> tuple[OutputStyles, OutputStyle]:
    """Every style there is, and the one the settings name (default when unknown, with a note)."""
    styles = discover_output_styles(runtime.cwd, include_project=runtime.options.project_trusted)
    for warning in styles.warnings:
        runtime.emit_notice(warning)
    wanted = runtime.settings.get("outputStyle")
    chosen = styles.find(wanted if isinstance(wanted, str) else None)
    if chosen is None:
        if wanted not in (None, "", DEFAULT_STYLE):
            untrusted = (
                ""
                if runtime.options.project_trusted
                else ("; the project's own styles need a trusted folder")
            )
            runtime.emit_notice(
                f"Unknown outputStyle {wanted!r} in the settings (there are: "
                f"{', '.join(styles.names)}{untrusted}); using the default style"
            )
        chosen = styles.styles[0]
    return styles, chosen


def switch_output_style(runtime: Runtime, name: str) -> str:
    """Use the style ``name`` from now on and save the choice; the words to show.
    ValueError (saying which styles exist) for an unknown name."""
    style = runtime.output_styles.find(name)
    if style is None:
        raise ValueError(
            f"Unknown output style {name!r}. Styles: {', '.join(runtime.output_styles.names)}"
        )
    runtime.output_style = style
    runtime.rebuild_system_prompt()
    target = project_root(runtime.cwd) / ".claude" / "settings.local.json"
    try:
        set_setting(target, "outputStyle", style.name)
    except (OSError, ValueError) as exc:
        return f"Output style set to {style.name} for this session (not saved: {exc})."
    return f"Output style set to {style.name} (saved in {target})."
