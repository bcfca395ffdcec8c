"""What the real Messages API rejects, checked on every request the fake server receives.

Each check returns a `Rejection` carrying the HTTP status, the API's error type
and a message in the real API's wording, or None when the request is fine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent.fake_api.models import ModelCatalog, ModelSpec
from agent.fake_api.script import prompt_too_long_message

MAX_CACHE_BREAKPOINTS = 4
# The documented limit (Claude Code shortens MCP names to fit it): 64 characters.
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Rejection:
    status: int
    error_type: str
    message: str


def _invalid(message: str) -> Rejection:
    return Rejection(400, "invalid_request_error", message)


# The anthropic-beta values the fake API knows (the real one's, as clients send them).
KNOWN_BETAS = frozenset(
    {
        "advanced-tool-use-2025-11-20",
        "claude-code-20250219",
        "code-execution-2025-08-25",
        "context-1m-2025-08-07",
        "context-management-2025-06-27",
        "effort-2025-11-24",
        "extended-cache-ttl-2025-04-11",
        "files-api-2025-04-14",
        "fine-grained-tool-streaming-2025-05-14",
        "interleaved-thinking-2025-05-14",
        "mcp-client-2025-11-20",
        "model-context-window-exceeded-2025-08-26",
        "oauth-2025-04-20",
        "output-128k-2025-02-19",
        "prompt-caching-2024-07-31",
        "skills-2025-10-02",
        "structured-outputs-2025-11-13",
        "token-counting-2024-11-01",
        "token-efficient-tools-2025-02-19",
    }
)


def check_headers(headers: Mapping[str, str]) -> Rejection | None:
    """Auth, version and beta headers, checked on every endpoint."""
    bearer = headers.get("authorization", "")
    if not headers.get("x-api-key") and not bearer.lower().startswith("bearer "):
        return Rejection(401, "authentication_error", "x-api-key header is required")
    if not headers.get("anthropic-version"):
        return _invalid("anthropic-version: header is required")
    betas = [b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()]
    if unknown := [b for b in betas if b not in KNOWN_BETAS]:
        return _invalid(
            f"Unexpected value(s) `{', '.join(unknown)}` for the `anthropic-beta` header. "
            "Please consult our documentation at docs.claude.com or try again without the header."
        )
    return None


def check_model(body: dict[str, Any], catalog: ModelCatalog) -> ModelSpec | Rejection:
    """The request's model, or its rejection (missing: 400, unknown: 404)."""
    if "model" not in body:
        return _invalid("model: Field required")
    spec = catalog.get(body["model"])
    if spec is None:
        return Rejection(404, "not_found_error", f"model: {body['model']}")
    return spec


def check_request(
    body: dict[str, Any], spec: ModelSpec, estimated_tokens: int, *, count_only: bool = False
) -> Rejection | None:
    """Every body rule, in the order the API reports them; count_only skips max_tokens."""
    for check in (
        None if count_only else _check_max_tokens,
        _check_system,
        _check_messages,
        _check_tool_pairing,
        _check_tools,
        _check_cache_breakpoints,
    ):
        if check is not None and (rejection := check(body, spec)):
            return rejection
    if estimated_tokens > spec.context_window:
        return _invalid(prompt_too_long_message(estimated_tokens, spec.context_window))
    return None


def _check_max_tokens(body: dict[str, Any], spec: ModelSpec) -> Rejection | None:
    if "max_tokens" not in body:
        return _invalid("max_tokens: Field required")
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        return _invalid("max_tokens: Input should be a valid integer greater than or equal to 1")
    if max_tokens > spec.max_output:
        return _invalid(
            f"max_tokens: {max_tokens} > {spec.max_output}, which is the maximum allowed "
            f"number of output tokens for {body['model']}"
        )
    return None


def _check_system(body: dict[str, Any], _spec: ModelSpec) -> Rejection | None:
    system = body.get("system")
    if system is None or isinstance(system, str):
        return None
    if not isinstance(system, list):
        return _invalid("system: Input should be a valid string or a valid list")
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            return _invalid(f"system.{i}.type: Input should be 'text'")
        if not isinstance(block.get("text"), str) or not block["text"]:
            return _invalid("system: text content blocks must be non-empty")
    return None


def _check_messages(body: dict[str, Any], _spec: ModelSpec) -> Rejection | None:
    if "messages" not in body:
        return _invalid("messages: Field required")
    messages = body["messages"]
    if not isinstance(messages, list):
        return _invalid("messages: Input should be a valid list")
    if not messages:
        return _invalid("messages: at least one message is required")
    last = len(messages) - 1
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            return _invalid(f"messages.{i}: Input should be a valid dictionary")
        role = message.get("role")
        if role not in ("user", "assistant"):
            return _invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if i == 0 and role != "user":
            return _invalid('messages: first message must use the "user" role')
        may_be_empty = i == last and role == "assistant"
        if rejection := _check_content(i, message.get("content"), may_be_empty):
            return rejection
        if i == last and role == "assistant" and _ends_with_whitespace(message["content"]):
            return _invalid("messages: final assistant content cannot end with trailing whitespace")
    return None


def _check_content(i: int, content: Any, may_be_empty: bool) -> Rejection | None:
    empty = f"messages.{i}: all messages must have non-empty content except for the optional final assistant message"
    if isinstance(content, str):
        return _invalid(empty) if not content and not may_be_empty else None
    if not isinstance(content, list):
        return _invalid(f"messages.{i}.content: Input should be a valid string or a valid list")
    if not content:
        return None if may_be_empty else _invalid(empty)
    for j, block in enumerate(content):
        if not isinstance(block, dict) or "type" not in block:
            return _invalid(f"messages.{i}.content.{j}.type: Field required")
        if block["type"] == "text":
            text = block.get("text")
            if not isinstance(text, str) or not text:
                return _invalid("messages: text content blocks must be non-empty")
            if not text.strip():
                return _invalid("messages: text content blocks must contain non-whitespace text")
    return None


def _ends_with_whitespace(content: Any) -> bool:
    if isinstance(content, str):
        return content != content.rstrip()
    if isinstance(content, list) and content and content[-1].get("type") == "text":
        text = content[-1].get("text", "")
        return text != text.rstrip()
    return False


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _check_tool_pairing(body: dict[str, Any], _spec: ModelSpec) -> Rejection | None:
    """Each tool_use answered in the next user message, each tool_result answering one.

    Like the API, only the tool_result blocks that open the next message count as
    answers, so a result placed after other content reports its tool_use unanswered.
    """
    messages = body["messages"]
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        blocks = _blocks(message)
        if message["role"] == "assistant":
            use_ids = [block.get("id") for block in blocks if block["type"] == "tool_use"]
            for j, block in enumerate(blocks):
                if block["type"] == "tool_use":
                    if block.get("id") in seen_ids:
                        return _invalid(f"messages.{i}.content.{j}: `tool_use` ids must be unique")
                    seen_ids.add(block.get("id"))
            if use_ids:
                following = messages[i + 1] if i + 1 < len(messages) else None
                answered = _leading_result_ids(following)
                missing = [use_id for use_id in use_ids if use_id not in answered]
                if missing:
                    return _invalid(
                        f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                        f"immediately after: {', '.join(map(str, missing))}. Each `tool_use` block "
                        "must have a corresponding `tool_result` block in the next message."
                    )
            continue
        previous = messages[i - 1] if i > 0 else None
        expected = set()
        if previous is not None and previous["role"] == "assistant":
            expected = {b.get("id") for b in _blocks(previous) if b["type"] == "tool_use"}
        answered: set[Any] = set()
        for j, block in enumerate(blocks):
            if block["type"] != "tool_result":
                continue
            use_id = block.get("tool_use_id")
            if use_id not in expected:
                return _invalid(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {use_id}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
            if use_id in answered:
                return _invalid(
                    f"messages.{i}.content.{j}: each `tool_use` block must have exactly one "
                    f"`tool_result` block; found more than one for {use_id}"
                )
            answered.add(use_id)
    return None


def _leading_result_ids(message: dict[str, Any] | None) -> set[Any]:
    """tool_use_ids of the tool_result blocks that open a user message."""
    if message is None or message.get("role") != "user":
        return set()
    ids = set()
    for block in _blocks(message):
        if block.get("type") != "tool_result":
            break
        ids.add(block.get("tool_use_id"))
    return ids


def _check_tools(body: dict[str, Any], _spec: ModelSpec) -> Rejection | None:
    tools = body.get("tools")
    if tools is None:
        tools = []
    if not isinstance(tools, list):
        return _invalid("tools: Input should be a valid list")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            return _invalid(f"tools.{i}: Input should be a valid dictionary")
        name = tool.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            return _invalid(
                f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
        if name in names:
            return _invalid("tools: Tool names must be unique.")
        names.add(name)
        if tool.get("type", "custom") == "custom":
            schema = tool.get("input_schema")
            if not isinstance(schema, dict):
                return _invalid(f"tools.{i}.custom.input_schema: Field required")
            if schema.get("type") != "object":
                return _invalid(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
    return _check_tool_choice(body.get("tool_choice"), names)


def _check_tool_choice(choice: Any, names: set[str]) -> Rejection | None:
    if choice is None:
        return None
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        return _invalid("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    if choice["type"] in ("any", "tool") and not names:
        return _invalid("tool_choice: may only be specified while providing tools.")
    if choice["type"] == "tool" and choice.get("name") not in names:
        return _invalid(f"tool_choice: Tool '{choice.get('name')}' not found in provided tools")
    return None


def _check_cache_breakpoints(body: dict[str, Any], _spec: ModelSpec) -> Rejection | None:
    found = 0
    system = body.get("system")
    containers = [body.get("tools") or [], system if isinstance(system, list) else []]
    containers += [_blocks(message) for message in body["messages"]]
    for blocks in containers:
        for block in blocks:
            if isinstance(block, dict):
                found += "cache_control" in block and block["cache_control"] is not None
                if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                    found += sum(
                        1
                        for item in block["content"]
                        if isinstance(item, dict) and item.get("cache_control") is not None
                    )
    if found > MAX_CACHE_BREAKPOINTS:
        return _invalid(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {found}."
        )
    return None
