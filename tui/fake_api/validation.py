"""What the real Messages API rejects, checked on every request the fake server receives.

Each check returns a `Rejection` carrying the HTTP status, the API's error type
and a message in the real API's wording, or None when the request is fine.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

from tui.fake_api.deferred_tools import check_deferred_tools
from tui.fake_api.models import ModelCatalog, ModelSpec
from tui.fake_api.rejection import Rejection, invalid
from tui.fake_api.script import prompt_too_long_message
from tui.fake_api.sdk_types import check_sdk_types
from tui.fake_api.thinking import IssuedThinking, check_thinking_blocks, check_thinking_config

MAX_CACHE_BREAKPOINTS = 4
MAX_USER_ID_CHARS = 256
IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_MEDIA_TYPES_WORDING = "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
# The content block types of a request's messages (the SDK's beta params), as the API lists them.
BLOCK_TYPES = (
    "text", "image", "document", "search_result", "thinking", "redacted_thinking", "tool_use",
    "tool_result", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
    "code_execution_tool_result", "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result", "tool_search_tool_result", "mcp_tool_use",
    "mcp_tool_result", "container_upload", "compaction",
)  # fmt: skip
TOOL_RESULT_BLOCK_TYPES = ("text", "image", "document", "search_result", "tool_reference")
# The API's tool name pattern with the 64-character limit of its older versions (newer ones
# take 128; the shared referee keeps 64): a client that fits here fits everywhere.
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


_invalid = invalid


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
    body: dict[str, Any],
    spec: ModelSpec,
    estimated_tokens: int,
    *,
    count_only: bool = False,
    issued: IssuedThinking | None = None,
    window: int | None = None,
) -> Rejection | None:
    """Every body rule, in the order the API reports them; count_only skips max_tokens.

    ``issued`` is the server's record of the thinking it sent (for the tool-loop
    rule); ``window`` the context window the request's betas give the model.
    """
    for check in (
        None if count_only else _check_max_tokens,
        _check_metadata,
        _check_system,
        _check_messages,
        _check_block_types,
        _check_tool_pairing,
        _check_tools,
        check_deferred_tools,
        _check_cache_breakpoints,
    ):
        if check is not None and (rejection := check(body, spec)):
            return rejection
    if rejection := check_thinking_config(body, spec, count_only):
        return rejection
    if rejection := check_thinking_blocks(body, issued or IssuedThinking()):
        return rejection
    if rejection := check_sdk_types(body, count_only=count_only):
        return rejection
    window = window or spec.context_window
    if estimated_tokens > window:
        return _invalid(prompt_too_long_message(estimated_tokens, window))
    return None


def _check_metadata(body: dict[str, Any], _spec: ModelSpec) -> Rejection | None:
    metadata = body.get("metadata")
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        return _invalid(
            "metadata: Input should be a valid dictionary or object to extract fields from"
        )
    for key in metadata:
        if key != "user_id":
            return _invalid(f"metadata.{key}: Extra inputs are not permitted")
    user_id = metadata.get("user_id")
    if user_id is not None and not isinstance(user_id, str):
        return _invalid("metadata.user_id: Input should be a valid string")
    if isinstance(user_id, str) and len(user_id) > MAX_USER_ID_CHARS:
        return _invalid(
            f"metadata.user_id: String should have at most {MAX_USER_ID_CHARS} characters"
        )
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
        text = block.get("text")
        if block.get("cache_control") is not None and isinstance(text, str) and not text:
            return _invalid(f"system.{i}.text: cache_control cannot be set for empty text blocks")
        if not isinstance(text, str) or not text:
            return _invalid("system: text content blocks must be non-empty")
        if not text.strip():
            return _invalid("system: text content blocks must contain non-whitespace text")
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
        if may_be_empty:
            return None
        if not content:
            return _invalid(empty)
        if not content.strip():
            return _invalid("messages: text content blocks must contain non-whitespace text")
        return None
    if not isinstance(content, list):
        return _invalid(f"messages.{i}.content: Input should be a valid string or a valid list")
    if not content:
        return None if may_be_empty else _invalid(empty)
    for j, block in enumerate(content):
        if not isinstance(block, dict) or "type" not in block:
            return _invalid(f"messages.{i}.content.{j}.type: Field required")
        if block["type"] == "text":
            text = block.get("text")
            if block.get("cache_control") is not None and text == "":
                return _invalid(
                    f"messages.{i}.content.{j}.text: cache_control cannot be set for empty text blocks"
                )
            if not isinstance(text, str) or not text:
                return _invalid("messages: text content blocks must be non-empty")
            if not text.strip():
                return _invalid("messages: text content blocks must contain non-whitespace text")
    return None


def _check_block_types(body: dict[str, Any], _spec: ModelSpec) -> Rejection | None:
    """Known block types only; images in the four media types; tool results' own blocks too."""
    for i, message in enumerate(body["messages"]):
        for j, block in enumerate(_blocks(message)):
            where = f"messages.{i}.content.{j}"
            if rejection := _check_block(where, block, BLOCK_TYPES):
                return rejection
            nested = block.get("content") if block["type"] == "tool_result" else None
            for k, item in enumerate(nested if isinstance(nested, list) else []):
                inner = f"{where}.tool_result.content.{k}"
                if not isinstance(item, dict) or "type" not in item:
                    return _invalid(f"{inner}.type: Field required")
                if rejection := _check_block(inner, item, TOOL_RESULT_BLOCK_TYPES):
                    return rejection
                text = item.get("text")
                if item["type"] == "text" and isinstance(text, str) and not text.strip():
                    return _invalid(
                        f"{where}.content: text content blocks must contain non-whitespace text"
                    )
    return None


def _check_block(where: str, block: dict[str, Any], known: tuple[str, ...]) -> Rejection | None:
    kind = block["type"]
    if kind not in known:
        expected = ", ".join(f"'{name}'" for name in known)
        return _invalid(
            f"{where}: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {expected}"
        )
    source = block.get("source")
    if (
        kind == "image"
        and isinstance(source, dict)
        and source.get("type") == "base64"
        and source.get("media_type") not in IMAGE_MEDIA_TYPES
    ):
        return _invalid(f"{where}.image.source.base64.media_type: {_MEDIA_TYPES_WORDING}")
    if kind == "document" and isinstance(source, dict) and source.get("type") == "base64":
        if source.get("media_type") != "application/pdf":
            return _invalid(
                f"{where}.document.source.base64.media_type: Input should be 'application/pdf'"
            )
        if not _is_pdf(source.get("data")):
            return _invalid(
                f"{where}.document.source.base64.data: The PDF specified was not valid."
            )
    return None


def _is_pdf(data: Any) -> bool:
    if not isinstance(data, str):
        return False
    try:
        return base64.b64decode(data[:16], validate=True).startswith(b"%PDF-")
    except ValueError:
        return False


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
    seen_ids: set[Any] = set()
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
        answered = set()
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
