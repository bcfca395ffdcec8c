"""An MCP server's tool as a ccx tool: ``mcp__<server>__<tool>`` with the server's schema.

Its name is the one ``agent.mcp.names`` gives it (Claude Code's spelling, cut to the
API's 64 characters with a stable hash where needed); the tool keeps the server's real
name for the call. A call goes through the permission gate like
any tool that changes things (ask by default; ``mcp__server`` and
``mcp__server__tool`` rules apply); plan mode denies it unless the server
annotates it ``readOnlyHint``. The result's text, images, embedded
resources and structured content become the tool result (``agent.mcp.content``:
blank text left out, what the API cannot take saved and described), cut at the same
30,000 characters as Bash and Grep output (``MAX_MCP_OUTPUT_TOKENS`` sets the
limit, as in Claude Code); the whole text of a cut result is saved in the
session's ``tool-outputs`` folder and the note names the file.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict

from agent.mcp.content import content_blocks
from agent.mcp.names import aliases, normalize_name, wire_names
from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.result_content import TextBlock, ToolResultPart, text_block

if TYPE_CHECKING:
    from agent.mcp.connection import ServerConnection

MAX_OUTPUT_CHARS = 30_000
MAX_DESCRIPTION_CHARS = 2_048


class McpParams(ToolParams):
    """Whatever the server's schema allows: the server validates its own input."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool[McpParams]):
    is_mutating = True  # an MCP tool may do anything: ask unless a rule allows it

    def __init__(self, connection: ServerConnection, spec: Any, name: str | None = None) -> None:
        """``name``: the tool's name in requests (``agent.mcp.names.wire_names`` of the whole
        list, so it is unique); by default the one it has alone."""
        self.connection = connection
        self.server = connection.name
        self.tool = str(spec.name)
        pair = (self.server, self.tool)
        # Tool.name is a class variable; each MCP tool has a name of its own.
        self.name = name or wire_names([pair])[pair]  # type: ignore[misc]
        self.rule_aliases = aliases(self.server, self.tool, self.name)
        self._description = (spec.description or "").strip()[:MAX_DESCRIPTION_CHARS]
        hints = getattr(spec, "annotations", None)
        # As Claude Code: readOnlyHint lets plan mode run it (asking still applies).
        self.declares_read_only = getattr(hints, "read_only_hint", None) is True
        schema = spec.input_schema
        self._schema = (
            schema
            if isinstance(schema, dict) and schema.get("type") == "object"
            else {
                "type": "object",
                "properties": {},
            }
        )

    def to_api(self) -> dict[str, Any]:  # type: ignore[override]  # per instance: its schema
        return {
            "name": self.name,
            "description": self._description or f"{self.tool} from the MCP server {self.server}",
            "input_schema": self._schema,
        }

    def label(self, params: McpParams, cwd: StrPath | None = None) -> str:
        arguments = ", ".join(
            f"{k}: {json.dumps(v)}" for k, v in (params.model_extra or {}).items()
        )
        return one_line(f"{self.server} - {self.tool} (MCP)({arguments})", 120)

    async def run(self, params: McpParams, ctx: ToolContext) -> ToolResult:
        from agent.mcp.connection import McpCallError

        try:
            restarted = await self.connection.revive()
            result = await self.connection.call_tool(self.tool, dict(params.model_extra or {}))
        except McpCallError as exc:
            return ToolResult.error(str(exc))
        spill = spill_path(ctx.session_dir, self.server, self.tool)
        converted = convert_result(result, spill, server=self.server, folder=ctx.session_dir)
        return with_restart_note(converted, self.server) if restarted else converted


def with_restart_note(result: ToolResult, server: str) -> ToolResult:
    """The result of a call that first had to start its stopped server again, saying so."""
    note = f"(The MCP server {server} had stopped; ccx started it again for this call.)"
    display = f"{note}\n{result.display}" if result.display else note
    if isinstance(result.output, str):
        return ToolResult(f"{note}\n{result.output}", display, result.is_error)
    return ToolResult([text_block(note), *result.output], display, result.is_error)


def convert_result(
    result: Any,
    spill: Path | None = None,
    *,
    server: str = "the server",
    folder: Path | None = None,
) -> ToolResult:
    """A CallToolResult as what the model sees; isError becomes is_error. Text over the limit
    is cut, saved whole to ``spill`` first; what the model cannot be shown (an SVG, audio...)
    is saved in the session ``folder`` and described (``agent.mcp.content``)."""
    blocks = content_blocks(getattr(result, "content", None), server, folder)
    structured = getattr(result, "structured_content", None)
    is_error = bool(getattr(result, "is_error", False))
    # As Claude Code: structured content stands for text-only content (the JSON is exact)
    # and goes as one string, as an error's text does; any other result keeps its blocks
    # (the list the Agent SDK's ToolResultBlock then holds).
    as_text = is_error
    if structured is not None and all(b["type"] == "text" for b in blocks):
        blocks = [text_block(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))]
        as_text = True
    blocks = _cap(blocks, spill)
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    display = "\n".join(texts) or ("(image)" if blocks else "(no output)")
    if not blocks or (as_text and all(b["type"] == "text" for b in blocks)):
        return ToolResult(output="\n".join(texts), display=display, is_error=is_error)
    return ToolResult(output=blocks, display=display, is_error=is_error)


def output_limit() -> int:
    """The characters an MCP result may hold: ``MAX_MCP_OUTPUT_TOKENS`` (Claude Code's setting,
    at 4 characters a token) when set, else ccx's 30,000 (the cap of Bash and Grep output)."""
    try:
        tokens = int(os.environ.get("MAX_MCP_OUTPUT_TOKENS", ""))
    except ValueError:
        return MAX_OUTPUT_CHARS
    return tokens * 4 if tokens > 0 else MAX_OUTPUT_CHARS


def _cap(blocks: list[ToolResultPart], spill: Path | None) -> list[ToolResultPart]:
    """Text beyond the limit in all is cut, with a note saying so; the whole text is saved to
    ``spill`` first (when given and writable), and the note names the file."""
    limit = output_limit()
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    total = sum(len(t) for t in texts)
    if total <= limit:
        return blocks
    saved = _save("\n".join(texts), spill)
    left = limit
    out: list[ToolResultPart] = []
    kept: list[TextBlock] = []  # the text blocks of ``out``
    for block in blocks:
        if block["type"] != "text":
            out.append(block)
        elif left > 0:
            kept.append(text_block(block["text"][:left]))
            out.append(kept[-1])
            left -= len(kept[-1]["text"])
    where = (
        f" The whole output is in {saved}: Read it in parts (offset, limit) or Grep it."
        if saved
        else ""
    )
    note = (
        f"\n(Output cut: {total - limit:,} more characters not shown; MCP output is limited to "
        f"{limit:,} characters, MAX_MCP_OUTPUT_TOKENS sets it in tokens.{where})"
    )
    kept[-1]["text"] += note
    return out


def cap_text(text: str, spill: Path | None) -> str:
    """One text under the MCP output limit (see ``_cap``)."""
    (capped,) = _cap([text_block(text)], spill)
    assert capped["type"] == "text"  # one text block in, that block (cut) out
    return capped["text"]


def spill_path(folder: Path | str | None, *parts: str) -> Path | None:
    """Where a cut MCP output is saved whole: the session's ``tool-outputs`` folder."""
    if folder is None:
        return None
    name = "-".join(normalize_name(p)[:60] for p in parts)  # a file name has 255 bytes
    return Path(folder) / "tool-outputs" / f"mcp-{name}-{uuid.uuid4()}.txt"


def _save(text: str, spill: Path | None) -> Path | None:
    if spill is None:
        return None
    from tools.atomic_file import atomic_write

    try:
        spill.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(spill, text.encode("utf-8", "replace"))
    except OSError:
        return None
    return spill
