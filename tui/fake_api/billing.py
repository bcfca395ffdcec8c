"""Token estimate and prompt-cache simulation of the fake Messages API.

The estimate is ceil(chars / 4) per text (text, tool_result text, tool_use name
+ compact JSON of its input, thinking; images and documents 1,600 each; a tool
definition is its compact JSON / 4). The cache works as the API's does: the
request is a flat sequence of blocks (tools, system blocks, each message's
content blocks); a block with `cache_control` is a breakpoint; a breakpoint
looks back over itself and the 20 blocks before it for the longest prefix
cached within the TTL (hashes exclude the cache_control markers); tokens up to
the hit are cache reads, from there to the last cacheable breakpoint cache
writes, the rest plain input.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MEDIA_TOKENS = 1_600
CACHE_LOOKBACK_BLOCKS = 20
DEFAULT_CACHE_MIN_TOKENS = 1_024
DEFAULT_CACHE_TTL_S = 300.0
_TTL_BY_NAME = {"5m": 300.0, "1h": 3_600.0}


def _ceil4(chars: int) -> int:
    return -(-chars // 4)


def _compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def block_tokens(block: Any) -> int:
    """Estimated tokens of one content block (or a bare string)."""
    if isinstance(block, str):
        return _ceil4(len(block))
    if not isinstance(block, dict):
        return _ceil4(len(str(block)))
    kind = block.get("type")
    if kind == "text":
        return _ceil4(len(block.get("text") or ""))
    if kind in ("tool_use", "server_tool_use"):
        return _ceil4(len(block.get("name") or "") + len(_compact_json(block.get("input", {}))))
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            return sum(block_tokens(item) for item in content)
        return _ceil4(len(content)) if isinstance(content, str) else 0
    if kind == "thinking":
        return _ceil4(len(block.get("thinking") or ""))
    if kind == "redacted_thinking":
        return _ceil4(len(block.get("data") or ""))
    if kind in ("image", "document"):
        return MEDIA_TOKENS
    return _ceil4(len(_compact_json(block)))


@dataclass(frozen=True)
class Segment:
    """One block of the flattened request: where it is, its tokens, its cache marker."""

    section: str  # "tools", "system", or the message's role
    block: Any
    tokens: int
    cache_ttl_s: float | None  # set when the block carries cache_control
    starts_message: bool = False


def _cache_ttl(block: Any, default_ttl_s: float) -> float | None:
    if not isinstance(block, dict) or not isinstance(block.get("cache_control"), dict):
        return None
    return _TTL_BY_NAME.get(block["cache_control"].get("ttl"), default_ttl_s)


def flatten_request(
    body: dict[str, Any], default_ttl_s: float = DEFAULT_CACHE_TTL_S
) -> list[Segment]:
    """The request as the cache sees it: tools, then system blocks, then message blocks."""
    segments: list[Segment] = []
    for tool in _as_list(body.get("tools")):
        stripped = _without_cache_control(tool)
        # A deferred tool is not rendered up front: its definition comes where a tool
        # result references it (counted there, as that block).
        deferred = isinstance(tool, dict) and tool.get("defer_loading") is True
        tokens = 0 if deferred else _ceil4(len(_compact_json(stripped)))
        segments.append(Segment("tools", tool, tokens, _cache_ttl(tool, default_ttl_s)))
    system = body.get("system")
    for block in [system] if isinstance(system, str) else _as_list(system):
        if block:
            ttl = _cache_ttl(block, default_ttl_s)
            segments.append(Segment("system", block, block_tokens(block), ttl))
    for message in _as_list(body.get("messages")):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [content] if isinstance(content, str) else _as_list(content)
        role = str(message.get("role"))
        for index, block in enumerate(blocks):
            ttl = _cache_ttl(block, default_ttl_s)
            segments.append(Segment(role, block, block_tokens(block), ttl, index == 0))
    return segments


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def estimate_request_tokens(body: dict[str, Any]) -> int:
    """Estimated input tokens of a whole Messages request."""
    return sum(segment.tokens for segment in flatten_request(body))


def estimate_output_tokens(content: list[dict[str, Any]]) -> int:
    """Output tokens of a reply: ceil(all its characters / 4)."""
    chars = 0
    for block in content:
        kind = block.get("type")
        if kind == "text":
            chars += len(block.get("text") or "")
        elif kind == "thinking":
            chars += len(block.get("thinking") or "")
        elif kind in ("tool_use", "server_tool_use"):
            chars += len(block.get("name") or "") + len(_compact_json(block.get("input", {})))
        elif kind != "redacted_thinking":  # its opaque data is not what was generated
            chars += len(_compact_json(block))
    return _ceil4(chars)


def _without_cache_control(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    stripped = {key: value for key, value in block.items() if key != "cache_control"}
    if isinstance(stripped.get("content"), list):  # tool_result items may carry markers too
        stripped["content"] = [_without_cache_control(item) for item in stripped["content"]]
    return stripped


@dataclass
class RequestBilling:
    """One request's token breakdown, as its usage reports it."""

    input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    output_tokens: int = 0
    estimated_tokens: int = 0  # the whole prompt

    def usage(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": self.output_tokens,
        }

    @property
    def input_equivalent(self) -> float:
        """Input cost in plain-input tokens: reads cost 0.1, writes 1.25."""
        return (
            self.input_tokens
            + 0.1 * self.cache_read_input_tokens
            + 1.25 * self.cache_creation_input_tokens
        )

    @property
    def with_output(self) -> float:
        """input_equivalent plus output at 5x the input price."""
        return self.input_equivalent + 5 * self.output_tokens


@dataclass
class Billing(RequestBilling):
    """Totals over every billed request."""

    requests: int = 0

    def add(self, charge: RequestBilling) -> None:
        self.requests += 1
        self.input_tokens += charge.input_tokens
        self.cache_read_input_tokens += charge.cache_read_input_tokens
        self.cache_creation_input_tokens += charge.cache_creation_input_tokens
        self.output_tokens += charge.output_tokens
        self.estimated_tokens += charge.estimated_tokens


class PromptCache:
    """The server-side prompt cache: prefix hash -> (expiry, ttl)."""

    def __init__(
        self,
        min_tokens: int = DEFAULT_CACHE_MIN_TOKENS,
        ttl_s: float = DEFAULT_CACHE_TTL_S,
        clock: Callable[[], float] = time.monotonic,
        lookback: int = CACHE_LOOKBACK_BLOCKS,
    ) -> None:
        self.min_tokens = min_tokens
        self.ttl_s = ttl_s
        self.clock = clock
        self.lookback = lookback
        self._entries: dict[int, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def charge(self, body: dict[str, Any], segments: list[Segment] | None = None) -> RequestBilling:
        """Bill the request's input against the cache, storing its cacheable prefixes."""
        if segments is None:
            segments = flatten_request(body, self.ttl_s)
        cumulative, total = [], 0
        for segment in segments:
            total += segment.tokens
            cumulative.append(total)
        breakpoints = [k for k, segment in enumerate(segments) if segment.cache_ttl_s is not None]
        if not breakpoints:
            return RequestBilling(input_tokens=total, estimated_tokens=total)
        digests = _prefix_digests(str(body.get("model")), segments, breakpoints[-1])
        with self._lock:
            now = self.clock()
            read_end, hit = 0, None
            for b in breakpoints:
                for k in range(b, max(-1, b - self.lookback - 1), -1):
                    entry = self._entries.get(digests[k])
                    if entry is not None and entry[0] > now:
                        if cumulative[k] > read_end:
                            read_end, hit = cumulative[k], k
                        break
            if hit is not None:
                ttl = self._entries[digests[hit]][1]
                self._entries[digests[hit]] = (now + ttl, ttl)
            write_end = read_end
            for b in breakpoints:
                if cumulative[b] >= self.min_tokens and cumulative[b] > 0:
                    ttl = segments[b].cache_ttl_s or self.ttl_s
                    self._entries[digests[b]] = (now + ttl, ttl)
                    write_end = max(write_end, cumulative[b])
        return RequestBilling(
            input_tokens=total - write_end,
            cache_read_input_tokens=read_end,
            cache_creation_input_tokens=write_end - read_end,
            estimated_tokens=total,
        )

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _prefix_digests(model: str, segments: list[Segment], last: int) -> list[int]:
    """digest[k] identifies the prefix ending at block k (cache_control markers excluded).

    Python's own hashing of the parsed JSON, not a digest of re-encoded bytes: a
    700 KB request costs well under a millisecond this way. The cache lives
    in-process, so per-process hash seeds do not matter.
    """
    running = hash(("prefix", model))
    digests = []
    for segment in segments[: last + 1]:
        running = hash(
            (running, segment.section, segment.starts_message, _fingerprint(segment.block))
        )
        digests.append(running)
    return digests


def _fingerprint(value: Any) -> int:
    if isinstance(value, dict):
        return hash(
            (
                "d",
                *(
                    (key, _fingerprint(item))
                    for key, item in value.items()
                    if key != "cache_control"
                ),
            )
        )
    if isinstance(value, list):
        return hash(("l", *(_fingerprint(item) for item in value)))
    return hash((type(value).__name__, value))
