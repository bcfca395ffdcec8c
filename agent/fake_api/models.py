"""The models the fake Messages API knows: context window and output limit of each."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModelSpec:
    id: str
    context_window: int
    max_output: int
    display_name: str = ""
    created_at: str = "2025-09-29T00:00:00Z"

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
    words, version = [], []
    for part in model_id.split("-"):
        (version if part.isdigit() else words).append(part)
    name = " ".join(word.capitalize() for word in words)
    return f"{name} {'.'.join(version)}".strip()


DEFAULT_MODELS: dict[str, ModelSpec] = {
    spec.id: spec
    for spec in (
        ModelSpec("claude-opus-5-5", 1_000_000, 128_000, created_at="2026-05-01T00:00:00Z"),
        ModelSpec("claude-sonnet-5-5", 1_000_000, 128_000, created_at="2026-05-01T00:00:00Z"),
        ModelSpec("claude-haiku-5-5", 1_000_000, 128_000, created_at="2026-05-01T00:00:00Z"),
        ModelSpec("claude-fable-5-2", 1_000_000, 128_000, created_at="2026-06-01T00:00:00Z"),
        ModelSpec("claude-sonnet-4-5", 200_000, 64_000, created_at="2025-09-29T00:00:00Z"),
        ModelSpec("claude-haiku-4-5", 200_000, 64_000, created_at="2025-10-15T00:00:00Z"),
    )
}

_DATED = re.compile(r"^(?P<base>.+)-\d{8}$")


class ModelCatalog:
    """Known models; a dated id ("claude-sonnet-4-5-20250929") resolves to its alias."""

    def __init__(self, extra: Mapping[str, ModelSpec | tuple[int, int]] | None = None) -> None:
        self.models: dict[str, ModelSpec] = dict(DEFAULT_MODELS)
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
