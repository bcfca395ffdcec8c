"""Running the tool calls of one assistant response: permissions, ordering, one result each.

Read-only calls that sit next to each other run concurrently; a mutating call
runs alone, in the order the model wrote it. Every tool_use gets exactly one
tool_result: a bad input, an unknown tool, a denial or a crash in the tool
all become an is_error result, and the loop answers whatever an interrupt
left unfinished.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from agent.core.events import (
    EventSink,
    PermissionDenied,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from agent.core.messages import ToolResultBlock, ToolResultPart, ToolUseBlock, tool_result_block
from agent.core.sendable import tool_result_content
from agent.loop.tool_hooks import PreToolVerdict, ToolHooks, check_gate
from agent.permissions.gate import PermissionGate
from agent.permissions.rules import Decision, Rule
from tools.base import CURRENT_TOOL_USE, Tool, ToolContext, ToolParams, ToolResult
from tools.shown_output import shown_output
from tools.surrogates import escape_text, escape_value

log = logging.getLogger(__name__)

Choice = Literal["allow", "always", "deny"]


@dataclass(frozen=True)
class Reply:
    """A richer answer (the Agent SDK's can_use_tool): the input to run with, or why not."""

    behavior: Choice
    updated_input: dict[str, Any] | None = None  # allow: run with this input instead
    message: str = ""  # deny: the tool error the model reads
    interrupt: bool = False  # deny: and end the turn


Answer = Choice | Reply


@dataclass
class PermissionRequest:
    tool_use_id: str
    tool_name: str
    tool_input: dict[str, Any]
    summary: str
    reason: str
    suggestion: Rule


AskPermission = Callable[[PermissionRequest], Awaitable[Answer]]
RememberRule = Callable[[Rule], None]

HEADLESS_DENIAL = (
    "Permission to use {tool} was denied: ccx is running non-interactively and there is no one "
    "to approve it ({reason}). Do not retry it; continue without it, or tell the user which "
    "permission to grant (--allowedTools '{rule}' or --permission-mode)."
)
USER_DENIAL = (
    "The user denied permission to use {tool}. Do not retry it; ask the user how to proceed."
)
STOPPED_AT_PROMPT = (
    "The user stopped the turn at the permission prompt for this call (Esc): it did not run. "
    "Wait for the user to say what to do instead."
)
AFTER_STOP = "Not run: the user stopped the turn at an earlier permission prompt."


@dataclass
class ToolCall:
    use: ToolUseBlock
    tool: Tool[Any] | None

    @property
    def id(self) -> str:
        return self.use["id"]

    @property
    def concurrent(self) -> bool:
        return self.tool is not None and not self.tool.is_mutating


class ToolRunner:
    def __init__(
        self,
        tools: list[Tool],
        ctx: ToolContext,
        gate: PermissionGate,
        emit: EventSink,
        ask: AskPermission | None = None,
        remember: RememberRule | None = None,
        hooks: ToolHooks | None = None,
    ) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.aliases = {alias: tool for tool in tools for alias in tool.aliases}
        self.ctx = ctx
        self.gate = gate
        self.emit = emit
        self.ask = ask
        self.remember = remember
        self.hooks = hooks
        self.stop_turn: str | None = None  # a denial that ends the turn (Reply.interrupt)
        self._asking: set[str] = set()  # calls whose permission prompt is open
        self.before_run: Callable[[Tool, ToolParams], None] | None = None  # e.g. checkpoints
        if ctx.on_output_lines is None:
            ctx.on_output_lines = lambda tool_use_id, lines: emit(ToolProgress(tool_use_id, lines))

    def api_tools(self) -> list[dict[str, Any]]:
        return [tool.to_api() for tool in self.tools.values()]

    def tool_named(self, name: str) -> Tool | None:
        """The tool called ``name``, or the one that has it as an alias."""
        return self.tools.get(name) or self.aliases.get(name)

    async def run(
        self,
        uses: list[ToolUseBlock],
        invalid_inputs: dict[str, str],
        results: dict[str, ToolResultBlock],
    ) -> None:
        """Fill ``results`` (tool_use id -> tool_result block) as each call finishes."""
        calls = [ToolCall(use, self.tool_named(use["name"])) for use in uses]
        for batch in _batches(calls):
            if len(batch) == 1:
                await self._run_one(batch[0], invalid_inputs, results)
            else:
                await asyncio.gather(*(self._run_one(c, invalid_inputs, results) for c in batch))

    async def _run_one(
        self, call: ToolCall, invalid_inputs: dict[str, str], results: dict[str, ToolResultBlock]
    ) -> None:
        params = self._parse(call, invalid_inputs.get(call.id))
        label = self._label(call, params)
        self.emit(ToolStarted(call.id, call.use["name"], call.use.get("input", {}), label))
        started = time.perf_counter()
        token = CURRENT_TOOL_USE.set(call.id)
        try:
            result = escape_result(await self._execute(call, params, label))
        except asyncio.CancelledError:
            if call.id in self._asking:  # interrupted at its prompt: the model learns it never ran
                results[call.id] = tool_result_block(call.id, STOPPED_AT_PROMPT, True)
            raise
        finally:
            self._asking.discard(call.id)
            CURRENT_TOOL_USE.reset(token)
        content = _api_content(result)
        results[call.id] = tool_result_block(call.id, content, result.is_error)
        meta = dict(result.meta, duration_s=round(time.perf_counter() - started, 4))
        preview = shown_output(result.output_text())
        self.emit(
            ToolFinished(
                call.id, call.use["name"], result.is_error, result.display, preview, meta, content
            )
        )

    def _parse(self, call: ToolCall, invalid_raw: str | None) -> ToolParams | ToolResult:
        if call.tool is None:
            known = ", ".join(self.tools)
            return ToolResult.error(
                f"No tool named {call.use['name']!r}. Available tools: {known}."
            )
        raw = invalid_raw if invalid_raw is not None else call.use.get("input", {})
        return call.tool.parse(raw)

    def _label(self, call: ToolCall, params: ToolParams | ToolResult) -> str:
        """The tool's own label for the call; its name when there is no tool or no valid input."""
        if call.tool is None or isinstance(params, ToolResult):
            return call.use["name"]
        try:
            return call.tool.label(params, self.ctx.cwd)
        except Exception:  # a bug in a label must not end the session
            log.exception("tool %s could not label its call", call.tool.name)
            return call.tool.name

    async def _execute(
        self, call: ToolCall, params: ToolParams | ToolResult, label: str
    ) -> ToolResult:
        if isinstance(params, ToolResult):
            return params
        assert call.tool is not None  # _parse gives params only for a tool it knows
        if self.stop_turn is not None:  # a prompt before this one stopped the turn: ask no more
            return ToolResult.error(AFTER_STOP)
        verdict = PreToolVerdict(params)
        if self.hooks is not None:
            checked = await self.hooks.before(call.tool, call.use, params)
            if isinstance(checked, ToolResult):
                self.emit(PermissionDenied(call.id, call.tool.name, checked.output_text()))
                return checked
            verdict = checked
        denial = await self._authorize(call, verdict, label)
        if denial is not None:
            return denial
        if self.before_run is not None:
            self.before_run(call.tool, verdict.params)
        started = time.perf_counter()
        result = await self._run_tool(call.tool, verdict.params)
        if self.hooks is not None:
            took_ms = round((time.perf_counter() - started) * 1000)
            await self.hooks.after(call.tool, call.use, verdict.params, result, took_ms)
        return result

    def _precheck(self, tool: Tool, params: ToolParams) -> ToolResult | None:
        try:
            return tool.precheck(params, self.ctx)
        except Exception:  # a bug in a check must not stop the call: run decides then
            log.exception("tool %s could not check its call", tool.name)
            return None

    async def _run_tool(self, tool: Tool, params: ToolParams) -> ToolResult:
        try:
            return await tool.run(params, self.ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool must not end the session
            log.exception("tool %s crashed", tool.name)
            return ToolResult.error(
                f"{tool.name} failed with an internal error: {type(exc).__name__}: {exc}"
            )

    async def _authorize(
        self, call: ToolCall, verdict: PreToolVerdict, label: str
    ) -> ToolResult | None:
        assert call.tool is not None
        tool_input = verdict.params.model_dump(by_alias=True, exclude_none=True)
        try:
            decision: Decision = check_gate(self.gate, call.tool, tool_input, verdict)
        except (ValueError, OSError) as exc:  # e.g. a NUL byte in a path: refuse, do not crash
            return ToolResult.error(
                f"{call.tool.name} cannot run on this input: {_input_problem(exc)}"
            )
        if decision.behavior == "allow":
            return None
        if decision.behavior == "ask" and (doomed := self._precheck(call.tool, verdict.params)):
            return doomed  # it would fail anyway: nobody is asked to allow it
        suggestion = self.gate.suggest_rule(call.tool.name, tool_input)
        if decision.behavior == "ask" and self.ask is not None:
            request = PermissionRequest(
                call.id,
                call.tool.name,
                tool_input,
                label,
                decision.reason,
                suggestion,
            )
            self._asking.add(call.id)
            answer = await self.ask(request)
            self._asking.discard(call.id)
            reply = answer if isinstance(answer, Reply) else Reply(answer)
            if reply.behavior == "always":
                self.gate.allow_always(suggestion)
                if self.remember is not None:
                    self.remember(suggestion)
            if reply.behavior in ("allow", "always"):
                return self._rewrite(call, verdict, reply.updated_input)
            message = reply.message or USER_DENIAL.format(tool=call.tool.name)
            if reply.interrupt:
                self.stop_turn = message
        elif decision.behavior == "ask":
            message = HEADLESS_DENIAL.format(
                tool=call.tool.name, reason=decision.reason, rule=_rule_text(suggestion)
            )
        else:
            message = f"Permission to use {call.tool.name} was denied: {decision.reason}"
        self.emit(PermissionDenied(call.id, call.tool.name, message))
        return ToolResult.error(message)

    def _rewrite(
        self, call: ToolCall, verdict: PreToolVerdict, updated: dict[str, Any] | None
    ) -> ToolResult | None:
        """Approved with a new input: the call runs with it, once it is valid."""
        assert call.tool is not None
        if updated is None or updated == verdict.params.model_dump(
            by_alias=True, exclude_none=True
        ):
            return None
        parsed = call.tool.parse(updated)
        if isinstance(parsed, ToolResult):
            return ToolResult.error(
                f"The approved {call.tool.name} input is not valid: {parsed.output_text()}"
            )
        verdict.params = parsed
        return None

    def take_stop(self) -> str | None:
        out, self.stop_turn = self.stop_turn, None
        return out


def _input_problem(exc: ValueError | OSError) -> str:
    """What is wrong with a path the OS refused, in words for the model."""
    if isinstance(exc, ValueError) and "null" in str(exc).lower():
        return "the path contains a NUL byte"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def _rule_text(rule: Rule) -> str:
    return rule.tool if rule.specifier is None else f"{rule.tool}({rule.specifier})"


def _batches(calls: list[ToolCall]) -> list[list[ToolCall]]:
    batches: list[list[ToolCall]] = []
    for call in calls:
        if call.concurrent and batches and batches[-1][0].concurrent:
            batches[-1].append(call)
        else:
            batches.append([call])
    return batches


def escape_result(result: ToolResult) -> ToolResult:
    """The result with text that is not valid UTF-8 escaped, for the model and the user alike."""
    output, display, meta = (
        escape_value(result.output),
        escape_text(result.display),
        escape_value(result.meta),
    )
    if output is result.output and display is result.display and meta is result.meta:
        return result
    return replace(result, output=output, display=display, meta=meta)


def _api_content(result: ToolResult) -> str | list[ToolResultPart]:
    """What the model gets: blank text left out, "(no output)" for nothing (the API refuses
    empty text, in a tool result too)."""
    return tool_result_content(result.output)
