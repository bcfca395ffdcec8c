"""The Agent SDK's options, made into a session's parts as it is assembled (see tui.cli.sdk_flags).

- ``--tools``: the built-in tools the model gets (MCP tools are not affected);
- ``--json-schema``: the StructuredOutput tool; a valid call ends the turn and its
  input becomes the result's ``structured_output``; a turn that ends without it is
  nudged to call it (a few times, then the result says the retries ran out);
- ``--betas``: the anthropic-beta header of every request (``--effort``,
  ``--thinking`` and ``--max-thinking-tokens`` are read with the environment and
  settings in tui.session.session_model);
- ``--max-budget-usd``: the loop sends no request once the session spent it;
- ``--include-hook-events`` and ``--include-partial-messages``: the events stream-json needs;
- ``CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING`` (the SDK's ``enable_file_checkpointing``):
  file checkpoints for ``rewind_files``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.core.messages import Message
from agent.core.request import with_beta
from agent.loop.agent import TurnCheck
from tools.base import Tool, ToolParams
from tools.file_checkpoints import FileCheckpoints
from tools.structured_output import NUDGE, StructuredOutputTool
from tui.session.notify import Notify
from tui.session.options import StartupError

STRUCTURED_NUDGES = 3  # then the turn ends without it: error_max_structured_output_retries
CHECKPOINTING_ENV = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"

BeforeRun = Callable[[Tool[Any], ToolParams], None]


@dataclass(frozen=True)
class ShapedTools:
    """The built-in tools the model gets, and the StructuredOutput tool among them, if any."""

    tools: list[Tool[Any]]
    structured: StructuredOutputTool | None


def shape_tools(
    tools: list[Tool[Any]],
    json_schema: dict[str, Any] | None,
    wanted: list[str] | None,
    notify: Notify,
) -> ShapedTools:
    """--json-schema adds the StructuredOutput tool; --tools (``wanted``) keeps the tools it
    names (StructuredOutput too)."""
    shaped = list(tools)
    structured: StructuredOutputTool | None = None
    if json_schema is not None:
        try:
            structured = StructuredOutputTool(json_schema)
        except Exception as exc:  # jsonschema.SchemaError: the schema itself is not valid
            raise StartupError(f"Bad --json-schema: {getattr(exc, 'message', exc)}") from exc
        shaped.append(structured)
    if wanted is None:
        return ShapedTools(shaped, structured)
    known = {tool.name for tool in shaped}
    for name in wanted:
        if name not in known:
            notify(f"--tools: ccx has no tool named {name}; left out")
    keep = set(wanted) | ({"StructuredOutput"} if structured else set())
    return ShapedTools([t for t in shaped if t.name in keep], structured)


def request_extra(betas: list[str]) -> dict[str, Any]:
    """What every request adds: --betas in its anthropic-beta header."""
    extra: dict[str, Any] = {}
    for beta in betas:
        extra = with_beta(extra, beta)
    return extra


def prompt_uuids(messages: Iterable[Message]) -> list[str]:
    """The uuids of the conversation's prompts, oldest first."""
    return [m.uuid for m in messages if m.kind == "prompt"]


def checkpoint_edits(
    resolve: Callable[[str], Path], prompts: Callable[[], list[str]], interactive: bool = False
) -> tuple[FileCheckpoints, BeforeRun] | None:
    """In an interactive session (its rewind can put files back), or with
    ``CHECKPOINTING_ENV`` set: the checkpoints, and what the runner calls before each tool
    (a file tool's target saved under the latest prompt, for ``rewind_files``)."""
    wanted = os.environ.get(CHECKPOINTING_ENV, "").lower() in ("1", "true", "yes")
    if not (interactive or wanted):
        return None
    checkpoints = FileCheckpoints()

    def before_run(tool: Tool[Any], params: ToolParams) -> None:
        path = getattr(params, "file_path", None) or getattr(params, "notebook_path", None)
        uuids = prompts()
        if tool.is_mutating and isinstance(path, str) and uuids:
            checkpoints.before_write(uuids[-1], resolve(path))

    return checkpoints, before_run


def structured_output_checks(tool: StructuredOutputTool) -> tuple[TurnCheck, TurnCheck]:
    """The loop's two checks for --json-schema: end the turn once the tool was called (its
    input is the result), and nudge a turn ending without it (a few times)."""
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

    return finish, nudge
