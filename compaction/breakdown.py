"""Where the context's tokens go, for /context.

Each part (system prompt, tools, memory files, skills, messages, the model's
thinking sent back, tool results by tool) is estimated, then all are scaled so they sum to the counter's
figure, which is anchored on what the API reported; the rest of the window is
free space and the buffer kept back for auto-compaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent.core.messages import Message
from agent.core.thinking import is_thinking
from compaction.thresholds import ContextLimits, format_tokens
from compaction.tokens import CHARS_PER_TOKEN, estimate_block, estimate_system, estimate_tools

FREE_SPACE = "Free space"
THINKING = "Thinking"
AUTO_COMPACT_BUFFER = "Auto-compact buffer"
MCP_TOOLS = "MCP tools"
MCP_PREFIX = "mcp__"


@dataclass(frozen=True)
class Category:
    name: str
    tokens: int


@dataclass(frozen=True)
class Breakdown:
    categories: list[Category]
    used: int
    window: int
    auto_compact: int
    keep_preview: dict[str, str] | None = None
    deferred_tools: int = 0  # tools behind ToolSearch: only their names are sent

    def tokens(self, name: str) -> int:
        return next((c.tokens for c in self.categories if c.name == name), 0)

    def percent(self, tokens: int) -> float:
        """``tokens`` as a share of the window, in percent."""
        return tokens * 100 / self.window if self.window > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "categories": [{"name": c.name, "tokens": c.tokens} for c in self.categories],
            "used": self.used,
            "window": self.window,
            "auto_compact_at": self.auto_compact,
            "keep_preview": self.keep_preview,
            "deferred_tools": self.deferred_tools,
        }


def _text_tokens(text: str) -> float:
    return len(text) / CHARS_PER_TOKEN


def _system_text(system_blocks: Iterable[Mapping[str, Any]]) -> str:
    return "\n".join(str(b.get("text", "")) for b in system_blocks if b.get("type") == "text")


def _message_parts(messages: Sequence[Message]) -> tuple[float, float, dict[str, float]]:
    """Tokens of everything but thinking and tool results, of the thinking blocks, and of
    tool results by the name of their tool."""
    names = {
        block.get("id"): str(block.get("name", "unknown"))
        for message in messages
        if message.role == "assistant"
        for block in message.content
        if block.get("type") == "tool_use"
    }
    other = thinking = 0.0
    results: dict[str, float] = {}
    for message in messages:
        for block in message.content:
            tokens = estimate_block(block)
            if block.get("type") == "tool_result":
                name = names.get(block.get("tool_use_id"), "unknown")
                results[name] = results.get(name, 0.0) + tokens
            elif is_thinking(block):
                thinking += tokens
            else:
                other += tokens
    return other, thinking, results


def _scaled(estimates: list[float], total: int) -> list[int]:
    """Integers proportional to ``estimates`` that sum to ``total`` (largest remainder)."""
    whole = sum(estimates)
    if whole <= 0 or total <= 0:
        return [round(e) for e in estimates]
    exact = [e * total / whole for e in estimates]
    floors = [int(x) for x in exact]
    order = sorted(range(len(exact)), key=lambda i: exact[i] - floors[i], reverse=True)
    for i in order[: total - sum(floors)]:
        floors[i] += 1
    return floors


def context_breakdown(
    *,
    system_blocks: Sequence[Mapping[str, Any]],
    memory_texts: list[str],
    skills_text: str,
    tools_api: list[dict[str, Any]],
    messages: Sequence[Message],
    limits: ContextLimits,
    used: int,
    keep_preview: dict[str, str] | None = None,
    deferred_tools: int = 0,
) -> Breakdown:
    """Where ``used`` tokens go. Memory and skills text found inside the system blocks
    is counted under its own category, not the system prompt's; MCP tool definitions
    (``mcp__`` names) under "MCP tools" when a request carries any."""
    system_text = _system_text(system_blocks)
    memory = sum(_text_tokens(t) for t in memory_texts)
    skills = _text_tokens(skills_text)
    inside = sum(_text_tokens(t) for t in [*memory_texts, skills_text] if t and t in system_text)
    system = max(0.0, estimate_system(system_blocks) - inside)
    other, thinking, results = _message_parts(messages)
    by_tool = sorted(results.items(), key=lambda item: item[1], reverse=True)
    names = ["System prompt", "Tools", "Memory files", "Skills", "Messages"]
    mcp = [t for t in tools_api if str(t.get("name", "")).startswith(MCP_PREFIX)]
    builtin = [t for t in tools_api if t not in mcp]
    estimates = [system, estimate_tools(builtin), memory, skills, other]
    if mcp:
        names.insert(2, MCP_TOOLS)
        estimates.insert(2, estimate_tools(mcp))
    if thinking:  # its own line only in a session that thinks
        names.append(THINKING)
        estimates.append(thinking)
    names += [f"Tool results: {name}" for name, _ in by_tool]
    estimates += [tokens for _, tokens in by_tool]
    categories = [Category(n, t) for n, t in zip(names, _scaled(estimates, used), strict=True)]
    buffer = max(0, limits.window - limits.auto_compact)
    categories.append(Category(FREE_SPACE, max(0, limits.window - used - buffer)))
    categories.append(Category(AUTO_COMPACT_BUFFER, buffer))
    return Breakdown(
        categories, used, limits.window, limits.auto_compact, keep_preview, deferred_tools
    )


def bar_cells(tokens: int, window: int, width: int) -> int:
    """How many of a bar's ``width`` cells ``tokens`` of the window fill; a small part still
    shows as one."""
    filled = round(tokens * width / window) if window > 0 else 0
    if tokens > 0:
        filled = max(1, filled)
    return min(width, filled)


def _bar(tokens: int, window: int, width: int) -> str:
    filled = bar_cells(tokens, window, width)
    return "█" * filled + "░" * (width - filled)


def render_breakdown(breakdown: Breakdown, width: int = 40) -> str:
    """A text table: one bar per category, its tokens and its share of the window."""
    name_width = max(len(c.name) for c in breakdown.categories)
    window = breakdown.window
    lines = []
    for category in breakdown.categories:
        lines.append(
            f"{category.name:<{name_width}}  {_bar(category.tokens, window, width)}  "
            f"{format_tokens(category.tokens):>6}  {breakdown.percent(category.tokens):5.1f}%"
        )
    used_percent = breakdown.percent(breakdown.used)
    lines.append("")
    lines.append(
        f"{format_tokens(breakdown.used)} / {format_tokens(window)} ({used_percent:.1f}%) "
        f"— auto-compact at {format_tokens(breakdown.auto_compact)}"
    )
    if breakdown.deferred_tools:
        lines.append(
            f"{breakdown.deferred_tools} tools deferred behind ToolSearch "
            "(only their names are in the context until loaded)"
        )
    if breakdown.keep_preview:
        lines.append("")
        lines.append("A compaction now would keep:")
        lines.extend(f"  {key}: {value}" for key, value in breakdown.keep_preview.items())
    return "\n".join(lines)
