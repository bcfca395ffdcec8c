"""The models the fake Messages API knows: context window, output limit and thinking controls."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")  # the 5.x models'
LONG_CONTEXT_BETA = "context-1m-2025-08-07"
LONG_CONTEXT_WINDOW = 1_000_000


@dataclass(frozen=True)
class ModelSpec:
    """One model: its limits and the thinking controls the API accepts for it.

    ``adaptive`` says `thinking: {type: adaptive}` is accepted; ``adaptive_only``
    that `enabled` and `disabled` are refused; ``efforts`` the levels of
    `output_config.effort` it takes (none: the parameter is refused);
    ``long_context_beta`` that the 1M-context beta raises its window to 1M.
    """

    id: str
    context_window: int
    max_output: int
    display_name: str = ""
    created_at: str = "2025-09-29T00:00:00Z"
    adaptive: bool = False
    adaptive_only: bool = False
    efforts: tuple[str, ...] = ()
    long_context_beta: bool = False

    def window(self, betas: list[str]) -> int:
        """The context window a request with these anthropic-beta values gets."""
        if self.long_context_beta and LONG_CONTEXT_BETA in betas:
            return max(self.context_window, LONG_CONTEXT_WINDOW)
        return self.context_window

    def info(self) -> dict[str, Any]:
        """The model as `GET /v1/models/{id}` returns it (ModelInfo)."""
        return {
            "type": "model",
            "id": self.id,
            "display_name": self.display_name or _display_name(self.id),
            "created_at": self.created_at,
            "max_input_tokens": self.context_window,
            "max_tokens": self.max_output,
            "lifecycle": "active",
            "capabilities": None,
        }


def _display_name(model_id: str) -> str:
    # "claude-sonnet-4-5" -> "Claude Sonnet 4.5"
    words: list[str] = []
    version: list[str] = []
    for part in model_id.split("-"):
        (version if part.isdigit() else words).append(part)
    name = " ".join(word.capitalize() for word in words)
    return f"{name} {'.'.join(version)}".strip()


_FIVE_FIVE: dict[str, Any] = {
    "created_at": "2026-05-01T00:00:00Z",
    "adaptive": True,
    "efforts": EFFORT_LEVELS,
}

DEFAULT_MODELS: dict[str, ModelSpec] = {
    spec.id: spec
    for spec in (
        ModelSpec("claude-opus-5-5", 1_000_000, 128_000, **_FIVE_FIVE),
        ModelSpec("claude-sonnet-5-5", 1_000_000, 128_000, **_FIVE_FIVE),
        ModelSpec("claude-haiku-5-5", 1_000_000, 128_000, **_FIVE_FIVE),
        # Fable takes adaptive thinking only: `enabled` and `disabled` are refused.
        ModelSpec("claude-fable-5-2", 1_000_000, 128_000, adaptive_only=True, **_FIVE_FIVE),
        ModelSpec(
            "claude-sonnet-4-5",
            200_000,
            64_000,
            created_at="2025-09-29T00:00:00Z",
            long_context_beta=True,
        ),
        ModelSpec("claude-haiku-4-5", 200_000, 64_000, created_at="2025-10-15T00:00:00Z"),
    )
}

_DATED = re.compile(r"^(?P<base>.+)-\d{8}$")


class ModelCatalog:
    """Known models; a dated id ("claude-sonnet-4-5-20250929") resolves to its alias."""

    def __init__(self, extra: Mapping[str, ModelSpec | tuple[int, int]] | None = None) -> None:
        self.models: dict[str, ModelSpec] = dict(DEFAULT_MODELS)
        # Set to an unset Event, the Models API answers only once it is set (or 30 s passed):
        # a test can tell what waits for those answers.
        self.hold: threading.Event | None = None
        for model_id, spec in (extra or {}).items():
            if not isinstance(spec, ModelSpec):
                window, max_output = spec
                spec = ModelSpec(model_id, window, max_output)
            self.models[model_id] = spec

    def get(self, model_id: Any) -> ModelSpec | None:
        if not isinstance(model_id, str):
            return None
        spec = self.models.get(model_id)
        if spec is None and (dated := _DATED.match(model_id)):
            spec = self.models.get(dated["base"])
        return spec

    def listing(self) -> dict[str, Any]:
        """`GET /v1/models`: every model, newest first, as one page."""
        data = [spec.info() for spec in self.models.values()]
        data.sort(key=lambda info: info["created_at"], reverse=True)
        return {
            "data": data,
            "has_more": False,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }
