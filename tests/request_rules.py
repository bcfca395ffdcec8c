"""The content rules of the real Messages API, checked on a request body by tests.

Written from the API's documented rules, apart from ccx's own ``agent.core.sendable``
(a test that used the code's own rules could not catch the code breaking them): no
text block without non-whitespace text, at the top of a message or in a tool
result; images only as JPEG, PNG, GIF or WebP; ``cache_control`` never on a
thinking block or an empty text block; only the block types ccx sends; tool names
of 1 to 64 letters, digits, ``_`` and ``-``.
"""

from __future__ import annotations

import re
from typing import Any

IMAGES = {"image/jpeg", "image/png", "image/gif", "image/webp"}
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
BLOCK_TYPES = {
    "user": {"text", "image", "document", "tool_result"},
    "assistant": {"text", "thinking", "redacted_thinking", "tool_use"},
}


def refusals(body: dict[str, Any]) -> list[str]:
    """Every way ``body`` breaks the rules above, in words (empty when it keeps them)."""
    problems: list[str] = []
    for i, message in enumerate(body.get("messages") or []):
        content = message["content"]
        if isinstance(content, str):
            if not content.strip():
                problems.append(f"messages.{i}: blank text")
            continue
        for j, block in enumerate(content):
            where = f"messages.{i}.content.{j}"
            if block.get("type") not in BLOCK_TYPES[message["role"]]:
                problems.append(f"{where}: a {block.get('type')!r} block")
            problems += _block_problems(where, block)
            inner = block.get("content") if block.get("type") == "tool_result" else None
            if isinstance(inner, str) and not inner.strip():
                problems.append(f"{where}.content: blank text")
            for k, item in enumerate(inner if isinstance(inner, list) else []):
                problems += _block_problems(f"{where}.content.{k}", item)
    for k, block in enumerate(body.get("system") or []):
        problems += _block_problems(f"system.{k}", block)
    for k, tool in enumerate(body.get("tools") or []):
        if not TOOL_NAME.match(str(tool.get("name"))):
            problems.append(f"tools.{k}: name {tool.get('name')!r}")
    return problems


def _block_problems(where: str, block: dict[str, Any]) -> list[str]:
    problems = []
    kind = block.get("type")
    blank = kind == "text" and not str(block.get("text") or "").strip()
    if blank:
        problems.append(f"{where}: blank text")
    if block.get("cache_control") is not None and (
        blank or kind in ("thinking", "redacted_thinking")
    ):
        problems.append(f"{where}: cache_control on a {kind} block")
    source = block.get("source") or {}
    if (
        kind == "image"
        and source.get("type") == "base64"
        and source.get("media_type") not in IMAGES
    ):
        problems.append(f"{where}: an image in {source.get('media_type')}")
    return problems
