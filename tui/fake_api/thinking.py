"""Extended thinking in the fake Messages API: signed blocks, and the API's thinking rules.

Every thinking block the fake sends is signed: its `signature` is a nonce and an
HMAC of the nonce and the block's text under a key made once per process, so a
signature verifies in any later request to any fake server, as the API's do.
A scripted block that brings its own signature, and every redacted_thinking
`data` sent, are remembered as issued. A request is refused when a thinking
block's text or signature changed or a redacted block's data was never issued.

The request rules, each with the API's wording: the shape of `thinking`
(`enabled` with a budget of at least 1,024 and below `max_tokens`, `adaptive`
only on models that take it, `disabled`, an optional `display`),
`output_config.effort` per model, no `cache_control` on thinking blocks, no
thinking block in a final assistant prefill, and the tool-loop rule: with
thinking on, the assistant message the last tool results answer starts with
its thinking when the response that carried it did.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
from typing import Any

from tui.fake_api.models import ModelSpec
from tui.fake_api.rejection import Rejection, invalid

MIN_BUDGET_TOKENS = 1_024
THINKING_TYPES = ("enabled", "disabled", "adaptive")
DISPLAYS = ("summarized", "omitted")
SDK_EFFORTS = ("low", "medium", "high", "xhigh", "max")
THINKING_BLOCKS = ("thinking", "redacted_thinking")

_KEY = secrets.token_bytes(32)
_NONCE_BYTES = 12
_lock = threading.Lock()
_issued_signatures: set[tuple[str, str]] = set()  # (text, signature) scripted with a signature
_issued_redacted: set[str] = set()


_invalid = invalid


# -- signatures ---------------------------------------------------------------------------
def _mac(purpose: bytes, nonce: bytes, text: str) -> bytes:
    return hmac.new(
        _KEY, purpose + nonce + text.encode("utf-8", "surrogatepass"), hashlib.sha256
    ).digest()


def sign(text: str) -> str:
    """A signature for a thinking block with this text: verifiable, never repeated."""
    nonce = secrets.token_bytes(_NONCE_BYTES)
    return base64.b64encode(nonce + _mac(b"thinking\0", nonce, text)).decode()


def verify(text: Any, signature: Any) -> bool:
    """True when ``signature`` is one this process issued for exactly ``text``."""
    if not isinstance(text, str) or not isinstance(signature, str):
        return False
    with _lock:
        if (text, signature) in _issued_signatures:
            return True
    return _signed_here(text, signature)


def _signed_here(text: str, signature: str) -> bool:
    try:
        raw = base64.b64decode(signature, validate=True)
    except ValueError:
        return False
    nonce, mac = raw[:_NONCE_BYTES], raw[_NONCE_BYTES:]
    return len(nonce) == _NONCE_BYTES and hmac.compare_digest(mac, _mac(b"thinking\0", nonce, text))


def new_redacted_data() -> str:
    """The opaque `data` of a redacted_thinking block (remembered when sent)."""
    nonce = secrets.token_bytes(_NONCE_BYTES)
    return base64.b64encode(
        nonce + _mac(b"redacted\0", nonce, "") + secrets.token_bytes(48)
    ).decode()


def redacted_data_issued(data: Any) -> bool:
    with _lock:
        return isinstance(data, str) and data in _issued_redacted


def issue(content: list[dict[str, Any]]) -> None:
    """Remember the thinking of a response about to be sent, so it verifies when it comes back."""
    for block in content:
        kind = block.get("type")
        text, signature = str(block.get("thinking", "")), block.get("signature")
        if kind == "thinking" and isinstance(signature, str):
            if not _signed_here(text, signature):  # a signature the test scripted
                with _lock:
                    _issued_signatures.add((text, signature))
        elif kind == "redacted_thinking" and isinstance(block.get("data"), str):
            with _lock:
                _issued_redacted.add(block["data"])


class IssuedThinking:
    """Per server: the thinking blocks each sent response carried, found by its tool_use ids."""

    def __init__(self) -> None:
        self._by_tool_use: dict[str, tuple[dict[str, Any], ...]] = {}
        self._lock = threading.Lock()
        self.responses = 0  # responses that got an emitted thinking block (redacted_every)

    def record(self, content: list[dict[str, Any]]) -> None:
        thinking = tuple(_thinking_key(b) for b in content if b.get("type") in THINKING_BLOCKS)
        with self._lock:
            for block in content:
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    self._by_tool_use[block["id"]] = thinking

    def for_message(self, blocks: list[Any]) -> tuple[dict[str, Any], ...] | None:
        """The thinking issued with the response these blocks came from; None if unknown."""
        with self._lock:
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    found = self._by_tool_use.get(block.get("id"))  # type: ignore[arg-type]
                    if found is not None:
                        return found
        return None

    def next_response(self) -> int:
        with self._lock:
            self.responses += 1
            return self.responses


def _thinking_key(block: dict[str, Any]) -> dict[str, Any]:
    if block.get("type") == "thinking":
        return {
            "type": "thinking",
            "thinking": block.get("thinking"),
            "signature": block.get("signature"),
        }
    return {"type": "redacted_thinking", "data": block.get("data")}


# -- emission -------------------------------------------------------------------------------
_THOUGHT = "I weigh what the last message asks, what the results so far show and what to do next. "


def opening_thinking(
    body: dict[str, Any], tokens: int, redacted: bool
) -> tuple[dict[str, Any], int]:
    """A signed thinking block of about ``tokens`` tokens for a reply to open with, and the
    output tokens it bills unseen.

    With `display: omitted` the block's text is empty (its signature still
    verifies); a redacted reply opens with a redacted_thinking block instead.
    Either way the hidden thinking is billed as output.
    """
    if redacted:
        return {"type": "redacted_thinking", "data": new_redacted_data()}, tokens
    text = (_THOUGHT * (tokens * 4 // len(_THOUGHT) + 1))[: tokens * 4]
    omitted = (
        isinstance(body.get("thinking"), dict) and body["thinking"].get("display") == "omitted"
    )
    shown = "" if omitted else text
    block = {"type": "thinking", "thinking": shown, "signature": sign(shown)}
    return block, tokens if omitted else 0


def starts_with_thinking(content: list[dict[str, Any]]) -> bool:
    return bool(content) and content[0].get("type") in THINKING_BLOCKS


# -- request rules ------------------------------------------------------------------------------
def thinking_on(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def check_thinking_config(
    body: dict[str, Any], spec: ModelSpec, count_only: bool
) -> Rejection | None:
    """`thinking` and `output_config.effort` against the model."""
    if (rejection := _check_thinking_param(body, spec, count_only)) is not None:
        return rejection
    return _check_effort(body, spec)


def _check_thinking_param(
    body: dict[str, Any], spec: ModelSpec, count_only: bool
) -> Rejection | None:
    if "thinking" not in body:
        return None
    thinking = body["thinking"]
    if not isinstance(thinking, dict):
        return _invalid(
            "thinking: Input should be a valid dictionary or object to extract fields from"
        )
    kind = thinking.get("type")
    if kind not in THINKING_TYPES:
        if kind is None:
            return _invalid("thinking: Unable to extract tag using discriminator 'type'")
        expected = ", ".join(f"'{name}'" for name in THINKING_TYPES)
        return _invalid(
            f"thinking: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {expected}"
        )
    allowed = {"type", "display"} | ({"budget_tokens"} if kind == "enabled" else set())
    for key in thinking:
        if key not in allowed:
            return _invalid(f"thinking.{kind}.{key}: Extra inputs are not permitted")
    display = thinking.get("display")
    if display is not None and display not in DISPLAYS:
        return _invalid(f"thinking.{kind}.display: Input should be 'summarized' or 'omitted'")
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if budget is None:
            return _invalid("thinking.enabled.budget_tokens: Field required")
        if not isinstance(budget, int) or isinstance(budget, bool):
            return _invalid("thinking.enabled.budget_tokens: Input should be a valid integer")
        if budget < MIN_BUDGET_TOKENS:
            return _invalid(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to "
                f"{MIN_BUDGET_TOKENS}"
            )
    if kind == "adaptive" and not spec.adaptive:
        return _invalid("adaptive thinking is not supported on this model")
    if kind != "adaptive" and spec.adaptive_only:
        return _invalid(
            f'"thinking.type.{kind}" is not supported for this model. Use '
            '"thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
        )
    if kind == "disabled":
        return None
    max_tokens = body.get("max_tokens")
    budget = thinking.get("budget_tokens")
    if (
        kind == "enabled"
        and not count_only
        and isinstance(max_tokens, int)
        and isinstance(budget, int)
        and budget >= max_tokens
    ):
        return _invalid("`max_tokens` must be greater than `thinking.budget_tokens`")
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        return _invalid("Thinking may not be enabled when tool_choice forces tool use.")
    return None


def _check_effort(body: dict[str, Any], spec: ModelSpec) -> Rejection | None:
    config = body.get("output_config")
    if not isinstance(config, dict) or config.get("effort") is None:
        return None
    effort = config["effort"]
    if effort not in SDK_EFFORTS:
        return _invalid(
            "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
        )
    if not spec.efforts:
        return _invalid("This model does not support the effort parameter.")
    if effort not in spec.efforts:
        return _invalid(
            f"This model does not support effort level '{effort}'. "
            f"Supported levels: {', '.join(sorted(spec.efforts))}."
        )
    return None


def check_thinking_blocks(body: dict[str, Any], issued: IssuedThinking) -> Rejection | None:
    """Thinking blocks in the messages: unchanged, not cached, not prefilled, kept in a tool loop."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    last = len(messages) - 1
    for i, message in enumerate(messages):
        blocks = _blocks(message)
        for j, block in enumerate(blocks):
            kind = block.get("type")
            if kind not in THINKING_BLOCKS:
                continue
            if "cache_control" in block:
                return _invalid(
                    f"messages.{i}.content.{j}.{kind}.cache_control: Extra inputs are not permitted"
                )
            if kind == "thinking" and not verify(block.get("thinking"), block.get("signature")):
                return _invalid(
                    f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                )
            if kind == "redacted_thinking" and not redacted_data_issued(block.get("data")):
                return _invalid(
                    f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"
                )
            if i == last and message.get("role") == "assistant":
                return _invalid(
                    f"messages.{i}.content.{j}: `{kind}` blocks cannot be used in a final "
                    "`assistant` message (prefill); the model writes its own thinking"
                )
    return _check_latest_assistant(messages, body, issued)


def _blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _check_latest_assistant(
    messages: list[Any], body: dict[str, Any], issued: IssuedThinking
) -> Rejection | None:
    """The latest assistant message keeps the thinking it was sent with, in a tool loop first."""
    latest = max(
        (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"),
        default=None,
    )
    if latest is None:
        return None
    blocks = _blocks(messages[latest])
    sent = issued.for_message(blocks)
    if sent is None:
        return None  # not a response this server sent: nothing to compare with
    kept = [(j, b) for j, b in enumerate(blocks) if b.get("type") in THINKING_BLOCKS]
    if kept and [_thinking_key(b) for _, b in kept] != list(sent):
        return _invalid(
            f"messages.{latest}.content.{kept[0][0]}: `thinking` or `redacted_thinking` blocks in "
            "the latest assistant message cannot be modified. These blocks must remain as they "
            "were in the original response."
        )
    answers = latest + 1 < len(messages) and any(
        b.get("type") == "tool_result" for b in _blocks(messages[latest + 1])
    )
    if not (thinking_on(body) and sent and answers):
        return None
    first = blocks[0].get("type") if blocks else None
    if first in THINKING_BLOCKS:
        return None
    return _invalid(
        f"messages.{latest}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`{first}`. When `thinking` is enabled, a final `assistant` message must start with a "
        "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
        "We recommend you include thinking blocks from previous turns. To avoid this "
        "requirement, disable `thinking`."
    )
