"""Output styles: how the model should respond, picked with ``outputStyle`` or ``/output-style``.

A style is a name, a description and instructions. Built in: ``default`` (no
extra instructions), ``Explanatory`` and ``Learning``. More come from Markdown
files in the project's ``.claude/output-styles/``, ``$CCX_CONFIG_DIR/output-styles/``
(default ``~/.ccx/output-styles/``) and ``~/.claude/output-styles/``: frontmatter
``name`` (else the file's name) and ``description``, the body the instructions.
On a name clash the first found wins, built-in ones first; names match without
regard to case (agent.instructions.definition_files finds and reads the files).
As in Claude Code, the chosen style's instructions go into the system prompt
under "# Output Style: NAME", after the environment, so the first, fixed block
of the prompt (and its cache entry) stays the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agent.instructions.definition_files import (
    DefinitionFile,
    DefinitionKind,
    Scope,
    load_definitions,
    markdown_files,
    read_frontmatter,
)

DEFAULT_STYLE = "default"
MAX_STYLE_FILE_BYTES = 64 * 1024


@dataclass(frozen=True)
class OutputStyle:
    name: str
    description: str
    instructions: str = ""
    source: Scope | Literal["built-in"] = "built-in"
    path: Path | None = None


EXPLANATORY = """\
Do the software engineering work as usual, and teach along the way. The user wants to understand \
the codebase and the choices you make in it, not only to get the change.

Before and after writing code, add a short insight about what you just did or are about to do: \
why this approach fits this codebase, a convention you followed, a trade-off you weighed. Set it \
off like this:

`✦ Insight ─────────────────────────────────`
2-3 short points, specific to this code
`───────────────────────────────────────────`

Insights belong in the conversation, never in the code or its comments. Prefer what is particular \
to this project over general programming lessons; a longer answer is fine when it teaches \
something, but keep the work itself moving."""

LEARNING = """\
Work with the user as a pair-programming mentor: they want to get better by writing some of the \
code themselves.

Do the scaffolding, the plumbing and anything tedious yourself. When a change has a small, \
meaningful piece that shapes the design (a function body of 2-10 lines, a condition, a data \
structure choice), leave it to the user: write the surrounding code, put a `TODO(human)` marker \
where their part goes, and stop with a short request that says what to write, where, and what \
to think about (the trade-offs, the edge cases). Ask for one such piece at a time, and look at \
what they wrote before going on.

Explain your own choices briefly as you go, in the conversation rather than in code comments, \
with a short insight set off by `✦ Insight ───` lines when something is worth learning."""

BUILTIN_STYLES = (
    OutputStyle(DEFAULT_STYLE, "ccx's own way: concise, focused on the work"),
    OutputStyle("Explanatory", "Explains its choices and the codebase while it works", EXPLANATORY),
    OutputStyle("Learning", "Pair programming: asks you to write small pieces yourself", LEARNING),
)


@dataclass
class OutputStyles:
    """Every style found, in precedence order, and what was skipped and why."""

    styles: list[OutputStyle] = field(default_factory=lambda: list(BUILTIN_STYLES))
    warnings: list[str] = field(default_factory=list)

    def find(self, name: str | None) -> OutputStyle | None:
        if not name:
            return None
        wanted = name.strip().lower()
        return next((s for s in self.styles if s.name.lower() == wanted), None)

    @property
    def names(self) -> list[str]:
        return [style.name for style in self.styles]


def discover_output_styles(
    cwd: Path,
    home: Path | None = None,
    config_dir: Path | None = None,
    include_project: bool = True,
    include_user: bool = True,
) -> OutputStyles:
    """The built-in styles and every readable style file; a broken file is a warning.
    ``include_project`` false: no style from the project's folder (it is not trusted)."""
    found = load_definitions(
        STYLES, cwd, home, config_dir, include_project, BUILTIN_STYLES, include_user
    )
    return OutputStyles(found.entries, found.warnings)


def style_from(file: DefinitionFile) -> OutputStyle:
    """A style file's style: frontmatter ``name`` (else the file's name) and ``description``."""
    given = file.meta.get("name")
    name = " ".join(str(given).split()) if given is not None else ""
    description = " ".join(str(file.meta.get("description") or "").split())
    return OutputStyle(
        name or file.path.stem, description, file.body.strip(), file.scope, file.path
    )


STYLES = DefinitionKind[OutputStyle](
    folder="output-styles",
    noun="output style",
    plural="output styles",
    max_bytes=MAX_STYLE_FILE_BYTES,
    files=markdown_files,
    read_meta=read_frontmatter,
    entry=style_from,
    key=lambda style: style.name.lower(),
)


def style_section(style: OutputStyle | None) -> str:
    """The system prompt's part for ``style``; "" for the default one."""
    if style is None or not style.instructions.strip():
        return ""
    return (
        f"# Output Style: {style.name}\n"
        "The user chose this output style. Follow it in how you respond, on top of the "
        f"instructions above.\n\n{style.instructions.strip()}"
    )
