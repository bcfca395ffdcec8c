"""The session's system prompt: ccx's instructions for the model in use, the memory files (CLAUDE.md
and the rest), ``--system-prompt`` / ``--append-system-prompt``, the output style, the skills listing.

Rebuilt as a new list whenever one of them changes (a new model, another
output style, the memory files read again after /clear): the context manager
caches by the list's identity.
"""

from __future__ import annotations

from pathlib import Path

from agent.core.messages import TextBlock, text_block
from agent.instructions.memory import MemoryFile, MemoryFiles
from agent.instructions.output_styles import style_section
from agent.instructions.system_prompt import build_system_prompt
from agent.mcp.tool_search import deferred_tools_text, defers_builtins
from agent.permissions.settings import Settings
from tui.session.notify import Notify
from tui.session.output_style import OutputStyleChoice
from tui.session.session_model import SessionModel


class SystemPrompt:
    """The blocks sent as ``system``, and the memory files they hold."""

    def __init__(
        self,
        cwd: Path,
        memory: MemoryFiles,
        skills_text: str,
        models: SessionModel,
        styles: OutputStyleChoice,
        replaced: str | None,
        appended: str | None,
        notify: Notify,
        commit_trailer: str | None = None,
    ) -> None:
        """``replaced``: ``--system-prompt`` (it replaces ccx's instructions, not the context);
        ``appended``: ``--append-system-prompt``; ``commit_trailer``: the co-author line
        commits end with (``commit_trailer`` of the settings)."""
        self.commit_trailer = commit_trailer
        self.cwd = cwd
        self.memory = memory
        self.skills_text = skills_text
        self.models = models
        self.styles = styles
        self.replaced = replaced
        self.appended = appended
        self.notify = notify
        self.memory_files: list[MemoryFile] = []
        # built-in tools sent only by name while tool search is on (McpToolList defers them)
        self.deferred_tools: list[str] = []
        self.blocks: list[TextBlock] = []

    @property
    def memory_texts(self) -> list[str]:
        return [m.content for m in self.memory_files]

    def load_memory(self) -> None:
        """Read the memory files (again), saying which were skipped."""
        self.memory_files = self.memory.load()
        self.emit_memory_warnings()

    def emit_memory_warnings(self) -> None:
        """Memory files skipped or unreadable since the last call (each shown once)."""
        warnings = list(self.memory.warnings)
        self.memory.warnings.clear()
        for warning in warnings:
            self.notify(warning)

    def rebuild(self) -> list[TextBlock]:
        """The prompt for the current model, memory files and style, as a new list."""
        system = build_system_prompt(
            self.cwd, self.models.current, self.memory_files, commit_trailer=self.commit_trailer
        )
        if self.replaced is not None:
            custom = self.replaced.strip()
            system = ([text_block(custom)] if custom else []) + system[1:]
        if self.appended:
            system[-1] = {**system[-1], "text": system[-1]["text"] + "\n\n" + self.appended}
        if section := style_section(self.styles.current):
            system[-1] = {**system[-1], "text": system[-1]["text"] + "\n\n" + section}
        if self.skills_text:
            system[-1] = {**system[-1], "text": system[-1]["text"] + "\n\n" + self.skills_text}
        if self.deferred_tools and defers_builtins(self.models.current):
            section = deferred_tools_text(self.deferred_tools)
            system[-1] = {**system[-1], "text": system[-1]["text"] + "\n\n" + section}
        self.blocks = system
        return system


CO_AUTHOR = "Co-Authored-By: Claude <noreply@anthropic.com>"


def commit_trailer(settings: Settings) -> str | None:
    """The line commits end with: ``attribution.commit`` when set ("" for none), else the
    co-author line unless ``includeCoAuthoredBy`` is false (Claude Code's keys)."""
    attribution = settings.get("attribution")
    if isinstance(attribution, dict) and isinstance(attribution.get("commit"), str):
        return str(attribution["commit"]).strip() or None
    if settings.get("includeCoAuthoredBy") is False:
        return None
    return CO_AUTHOR
