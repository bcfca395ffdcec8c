"""Agent (alias Task): hand a self-contained task to a subagent and get its final report back.

The tool itself only validates the call and describes the agents on offer;
running a subagent (its own loop, context and tools) is the session's job,
handed in as ``launch`` by the composition root, so this module needs
nothing from ``agent/``. The description lists the available agent types,
read from ``listing`` each time the tool list is sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import Field

from tools.base import CURRENT_TOOL_USE, StrPath, Tool, ToolContext, ToolParams, ToolResult

GENERAL_PURPOSE = "general-purpose"


class AgentParams(ToolParams):
    description: str = Field(description="Three to five words naming the task, for the user")
    prompt: str = Field(
        description="The agent's complete brief: what to do, what is known, what to report"
    )
    subagent_type: str | None = Field(
        default=None,
        description="Which of the agent types listed above to run (general-purpose if omitted)",
    )
    model: Literal["sonnet", "opus", "haiku"] | None = Field(
        default=None,
        description="Model override; otherwise the agent type's model, or else yours.",
    )
    run_in_background: bool | None = Field(
        default=None,
        description=(
            "Run in the background: returns at once with the agent's id and output file; you "
            "are told when it finishes. By default the call waits for the report."
        ),
    )


# (params, the Agent call's tool_use id) -> the subagent's report as the tool result
Launch = Callable[[AgentParams, str], Awaitable[ToolResult]]


class AgentTool(Tool[AgentParams]):
    name = "Agent"
    aliases = ("Task",)
    # Safe to run beside other calls: each subagent has its own conversation, and its own
    # tool calls pass the permission gate one by one.
    is_mutating = False

    def __init__(self, launch: Launch, listing: Callable[[], str]) -> None:
        self.launch = launch
        self.listing = listing

    def to_api(self) -> dict[str, Any]:  # type: ignore[override]  # per instance: the listing
        listing = self.listing()
        description = self.description()
        if listing:
            description += "\n\n" + listing
        return {"name": self.name, "description": description, "input_schema": self.input_schema()}

    def label(self, params: AgentParams, cwd: StrPath | None = None) -> str:
        kind = params.subagent_type or GENERAL_PURPOSE
        return f"Agent {kind}: {params.description}"

    async def run(self, params: AgentParams, ctx: ToolContext) -> ToolResult:
        if not params.prompt.strip():
            return ToolResult.error("Agent needs a non-empty prompt: the task for the agent.")
        return await self.launch(params, CURRENT_TOOL_USE.get() or "")
