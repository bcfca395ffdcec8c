"""Read-only views of a running session, as the driver hands them to front ends.

Each is a frozen snapshot taken when asked for: a front end reads it and
renders it, and nothing it does to one reaches the session. The footer's and
toolbar's ``StatusSnapshot``, what the session offers a client
(``SessionInventory``: stream-json's ``system/init``, the Agent SDK's
``initialize``) and where the context's tokens go (``ContextUsage``: the SDK's
``get_context_usage``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent.core.context_state import ContextState
from agent.mcp.servers import ServerStatus
from compaction.breakdown import Breakdown


@dataclass(frozen=True)
class StatusSnapshot:
    """What a footer or toolbar shows about the session, as of one moment."""

    model: str
    mode: str
    context: ContextState | None
    cost_usd: float = 0.0
    effort: str | None = None  # the model's effort level, where it takes one

    @property
    def model_label(self) -> str:
        """The model and its effort, as footers show it: "claude-opus-5-5 · medium"."""
        return f"{self.model} · {self.effort}" if self.effort else self.model


@dataclass(frozen=True)
class AgentSummary:
    """A subagent the model can launch: its name and what it is for."""

    name: str
    description: str


@dataclass(frozen=True)
class SessionInventory:
    """What the session has to offer, as of one moment (MCP servers connect meanwhile)."""

    tools: tuple[str, ...]  # the names of the tools the model is sent
    mcp_prompts: tuple[str, ...]  # connected servers' prompts, as slash command names
    skills: tuple[str, ...]
    agents: tuple[AgentSummary, ...]  # none when the session runs without subagents
    given_agents: tuple[str, ...]  # the names of those given as JSON (--agents, the SDK's)
    output_style: str
    output_styles: tuple[str, ...]
    mcp_servers: tuple[ServerStatus, ...]
    plugins: tuple[PluginSummary, ...] = ()
    api_key_source: str = "none"  # Claude Code's words: ANTHROPIC_API_KEY, apiKeyHelper, ...


@dataclass(frozen=True)
class PluginSummary:
    """A plugin the session loaded, as ``system/init`` lists it."""

    name: str
    path: str
    source: str  # name@marketplace, or name@inline (--plugin-dir)
    version: str | None

    def entry(self) -> dict[str, str]:
        """As ``system/init``'s ``plugins`` lists it (no version when the plugin has none)."""
        entry = {"name": self.name, "path": self.path, "source": self.source}
        return entry | ({"version": self.version} if self.version else {})


@dataclass(frozen=True)
class MemoryFileSize:
    """A memory file the system prompt carries, and how much of it."""

    path: Path
    kind: str
    chars: int


@dataclass(frozen=True)
class ContextUsage:
    """Where the context's tokens go now (``breakdown``) and how full it is (``state``)."""

    model: str
    state: ContextState
    breakdown: Breakdown
    memory_files: tuple[MemoryFileSize, ...]
