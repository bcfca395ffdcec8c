"""What every tool is: typed parameters, a description, a mutating flag and an async run.

A tool's parameters are a pydantic model; the JSON schema sent to the model is
generated from it, and its long description lives in a sibling ``<name>.md``.
Expected failures (missing file, non-unique edit) come back as a
``ToolResult`` with ``is_error``; exceptions mean bugs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from tools.file_state import FileStateCache
from tools.surrogates import existing_name


class ToolParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


@dataclass
class ToolResult:
    """What the model sees (``output``) kept apart from what the user sees (``display``)."""

    output: str | list[dict[str, Any]]
    display: str = ""
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def error(cls, message: str, display: str = "") -> ToolResult:
        return cls(output=message, display=display or message, is_error=True)

    def output_text(self) -> str:
        if isinstance(self.output, str):
            return self.output
        return "\n".join(b.get("text", "[image]") for b in self.output)


@dataclass
class ToolContext:
    """What a tool may touch, handed in by the loop (tests build one from fixtures)."""

    cwd: Path
    file_state: FileStateCache
    session_dir: Path | None = None
    # Files a deny rule keeps from the model: Grep and Glob leave them out of what they return.
    read_denied: Callable[[str], bool] | None = None

    def hidden(self, path: str | Path) -> bool:
        return self.read_denied is not None and self.read_denied(str(path))

    def resolve(self, path: str) -> Path:
        """The absolute path; a name shown with \\xNN escapes finds the file it stands for."""
        candidate = Path(path).expanduser()
        resolved = candidate if candidate.is_absolute() else self.cwd / candidate
        if "\\x" in path:
            resolved = Path(existing_name(str(resolved)))
        return resolved


class Tool:
    name: ClassVar[str]
    Params: ClassVar[type[ToolParams]]
    # Defensive default: a tool that forgets to say is treated as changing things.
    is_mutating: ClassVar[bool] = True

    @classmethod
    def description(cls) -> str:
        path = Path(__file__).with_name(f"{cls.name.lower()}.md")
        return path.read_text(encoding="utf-8").strip()

    @classmethod
    def input_schema(cls) -> dict[str, Any]:
        schema = cls.Params.model_json_schema(by_alias=True)
        return _collapse_optional(_strip_titles(schema))

    @classmethod
    def to_api(cls) -> dict[str, Any]:
        return {
            "name": cls.name,
            "description": cls.description(),
            "input_schema": cls.input_schema(),
        }

    def parse(self, raw: Any) -> ToolParams | ToolResult:
        """Validate raw tool input; a ToolResult error explains what was wrong."""
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as exc:
                return ToolResult.error(f"{self.name} input is not valid JSON: {exc}")
        if not isinstance(raw, dict):
            return ToolResult.error(
                f"{self.name} input must be a JSON object, got {type(raw).__name__}"
            )
        try:
            return self.Params.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}"
                for err in exc.errors()
            )
            return ToolResult.error(f"Invalid input for {self.name}: {problems}")

    def summary(self, params: ToolParams) -> str:
        """A short one-line label for the UI."""
        return self.name

    async def run(self, params: ToolParams, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def _collapse_optional(node: Any) -> Any:
    """Show an ``int | None = None`` field as a plain optional ``integer``, like Claude Code."""
    if isinstance(node, list):
        return [_collapse_optional(v) for v in node]
    if not isinstance(node, dict):
        return node
    variants = node.get("anyOf")
    if isinstance(variants, list) and len(variants) == 2 and {"type": "null"} in variants:
        (other,) = [v for v in variants if v != {"type": "null"}]
        node = {k: v for k, v in node.items() if k != "anyOf" and (k, v) != ("default", None)}
        node = {**other, **node}
    return {k: _collapse_optional(v) for k, v in node.items()}
