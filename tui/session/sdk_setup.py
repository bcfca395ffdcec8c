"""The Agent SDK's options applied to a runtime as it is built (see tui.cli.sdk_flags).

- ``--tools``: the built-in tools the model gets (MCP tools are not affected);
- ``--json-schema``: the StructuredOutput tool; a valid call ends the turn and its
  input becomes the result's ``structured_output``; a turn that ends without it is
  nudged to call it (a few times, then the result says the retries ran out);
- ``--betas``: the anthropic-beta header of every request (``--effort``,
  ``--thinking`` and ``--max-thinking-tokens`` are read with the environment and
  settings in tui.session.model_setup);
- ``--max-budget-usd``: the loop sends no request once the session spent it;
- ``--include-hook-events`` and ``--include-partial-messages``: the events stream-json needs;
- ``CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING`` (the SDK's ``enable_file_checkpointing``):
  file checkpoints for ``rewind_files``.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from agent.core.request import with_beta
from tools.base import Tool, ToolParams
from tools.file_checkpoints import FileCheckpoints
from tools.structured_output import NUDGE, StructuredOutputTool
from tui.session.options import StartupError

if TYPE_CHECKING:
    from tui.session.runtime import Runtime

STRUCTURED_NUDGES = 3  # then the turn ends without it: error_max_structured_output_retries
CHECKPOINTING_ENV = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"


def shape_tools(runtime: Runtime) -> None:
    """After the tools are built, before the agent: --tools and --json-schema."""
    options = runtime.options
    runtime.structured = None
    if options.json_schema is not None:
        try:
            tool = StructuredOutputTool(options.json_schema)
        except Exception as exc:  # jsonschema.SchemaError: the schema itself is not valid
            raise StartupError(f"Bad --json-schema: {getattr(exc, 'message', exc)}") from exc
        runtime.tools.append(tool)
        runtime.structured = tool
    runtime.builtin_tools = list(runtime.tools)  # what MCP's refresh_tools starts from
    if options.tools is None:
        runtime.runner.tools = {tool.name: tool for tool in runtime.tools}
        return
    known = {tool.name for tool in runtime.tools}
    for name in options.tools:
        if name not in known:
            runtime.emit_notice(f"--tools: ccx has no tool named {name}; left out")
    keep = set(options.tools) | ({"StructuredOutput"} if runtime.structured else set())
    runtime.tools = runtime.builtin_tools = [t for t in runtime.tools if t.name in keep]
    runtime.runner.tools = {tool.name: tool for tool in runtime.tools}


def configure_agent(runtime: Runtime) -> None:
    """After the agent is built: request extras, the budget, structured output, raw events."""
    options, agent = runtime.options, runtime.agent
    extra: dict[str, Any] = dict(agent.config.request_extra)
    for beta in options.betas:
        extra = with_beta(extra, beta)
    agent.config.request_extra = extra
    agent.config.max_budget_usd = options.max_budget_usd
    agent.client.raw_events = options.stream_events
    if options.include_hook_events:
        runtime.hooks.on_event = runtime.emit
    if runtime.structured is not None:
        _require_structured_output(runtime, runtime.structured)
    runtime.checkpoints = None
    if os.environ.get(CHECKPOINTING_ENV, "").lower() in ("1", "true", "yes"):
        runtime.checkpoints = _checkpoint_edits(runtime)


def prompt_uuids(runtime: Runtime) -> list[str]:
    """The uuids of the conversation's prompts, oldest first."""
    return [m.uuid for m in runtime.agent.messages if m.kind == "prompt"]


def _checkpoint_edits(runtime: Runtime) -> FileCheckpoints:
    checkpoints = FileCheckpoints()

    def before_run(tool: Tool, params: ToolParams) -> None:
        path = getattr(params, "file_path", None)
        prompts = prompt_uuids(runtime)
        if tool.is_mutating and isinstance(path, str) and prompts:
            checkpoints.before_write(prompts[-1], runtime.tool_context.resolve(path))

    runtime.runner.before_run = before_run
    return checkpoints


def _require_structured_output(runtime: Runtime, tool: StructuredOutputTool) -> None:
    nudges = 0

    def finish() -> str | None:
        nonlocal nudges
        if tool.value is None:
            return None
        nudges = 0
        return json.dumps(tool.value, ensure_ascii=False)

    def nudge() -> str | None:
        nonlocal nudges
        if tool.value is not None or nudges >= STRUCTURED_NUDGES:
            nudges = 0
            return None
        nudges += 1
        return NUDGE

    runtime.agent.finish_after_tools = finish
    runtime.agent.nudge_before_end = nudge
