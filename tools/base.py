"""What every tool is: typed parameters, a description, a mutating flag, a label and an async run.

A tool is generic in its parameters model (``class ReadTool(Tool[ReadParams])``):
the JSON schema sent to the model is generated from that model, ``parse``
validates raw input into it, and ``run`` and ``label`` receive it typed. The
long description lives in a sibling ``<name>.md``. Expected failures (missing
file, non-unique edit) come back as a ``ToolResult`` with ``is_error``;
exceptions mean bugs.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from tools.file_state import FileStateCache
from tools.result_content import ToolResultPart
from tools.surrogates import existing_name


class ToolParams(BaseModel):
    # Validators are built at a model's first use, not at import: some 25 models would
    # otherwise cost start-up ~15 ms, and a session calls a few of them.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


P = TypeVar("P", bound=ToolParams)
StrPath = str | os.PathLike[str]

# The id of the tool_use being run, set by the tool runner around each call (one per task,
# so calls running side by side each see their own); None outside a call.
CURRENT_TOOL_USE: ContextVar[str | None] = ContextVar("ccx_current_tool_use", default=None)


@dataclass
class ToolResult:
    """What the model sees (``output``) kept apart from what the user sees (``display``)."""

    output: str | list[ToolResultPart]
    display: str = ""
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def error(cls, message: str, display: str = "") -> ToolResult:
        return cls(output=message, display=display or message, is_error=True)

    def output_text(self) -> str:
        if isinstance(self.output, str):
            return self.output
        return "\n".join(b["text"] if b["type"] == "text" else "[image]" for b in self.output)


@dataclass
class ToolContext:
    """What a tool may touch, handed in by the loop (tests build one from fixtures)."""

    cwd: Path
    file_state: FileStateCache
    session_dir: Path | None = None
    # Files a deny rule keeps from the model: Grep and Glob leave them out of what they return.
    read_denied: Callable[[str], bool] | None = None
    # A running command's output so far, for the user: (tool_use id, lines). Set by the loop.
    on_output_lines: Callable[[str, int], None] | None = None
    # Grep leaves out what .gitignore lists (the respectGitignore setting; default on).
    respect_gitignore: bool = True

    def hidden(self, path: str | Path) -> bool:
        return self.read_denied is not None and self.read_denied(str(path))

    def resolve(self, path: str) -> Path:
        """The absolute path; a name shown with \\xNN escapes finds the file it stands for."""
        candidate = Path(path).expanduser()
        resolved = candidate if candidate.is_absolute() else self.cwd / candidate
        if "\\x" in path:
            resolved = Path(existing_name(str(resolved)))
        return resolved


class Tool(Generic[P]):
    """A tool the model can call; ``P`` is its parameters model.

    ``Params`` is taken from the class's ``Tool[...]`` base, so a tool names
    its parameters once and ``run`` and ``label`` see them typed.
    """

    name: ClassVar[str]
    Params: ClassVar[type[ToolParams]]
    # Defensive default: a tool that forgets to say is treated as changing things.
    is_mutating: ClassVar[bool] = True
    # A tool that may change things by our count but says it only reads (an MCP tool's
    # readOnlyHint): plan mode lets it run, still through the usual permission question.
    declares_read_only: bool = False
    # Rarely used: with tool search on, its definition is left out of requests until the
    # model loads it with ToolSearch (agent/mcp/tool_search.py), so it costs nothing before.
    deferred: ClassVar[bool] = False
    # Other names the model may call the tool by (Claude Code's older names, e.g. Task).
    aliases: ClassVar[tuple[str, ...]] = ()
    # Other names permission rules may call the tool by (an MCP tool's long spelling).
    rule_aliases: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        given = _params_argument(cls)
        if given is None:
            return
        declared = cls.__dict__.get("Params")
        if declared is not None and declared is not given:
            raise TypeError(
                f"{cls.__name__} is Tool[{given.__name__}] but sets Params = {declared.__name__}"
            )
        cls.Params = given

    @classmethod
    def description(cls) -> str:
        return _description(cls.name)

    @classmethod
    def input_schema(cls) -> dict[str, Any]:
        """The parameters' JSON schema (generated once per class: each subagent's tool list
        is built afresh, and pydantic takes milliseconds per schema); a copy each call."""
        return copy.deepcopy(params_schema(cls.Params))

    @classmethod
    def to_api(cls) -> dict[str, Any]:
        return {
            "name": cls.name,
            "description": cls.description(),
            "input_schema": cls.input_schema(),
        }

    def parse(self, raw: Any) -> P | ToolResult:
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
            # Params is the model named in Tool[P] (see __init_subclass__), so this is a P.
            return cast(P, self.Params.model_validate(raw))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}"
                for err in exc.errors()
            )
            return ToolResult.error(f"Invalid input for {self.name}: {problems}")

    def label(self, params: P, cwd: StrPath | None = None) -> str:
        """The call's one-line label for the user, e.g. ``Read src/app.py``.

        Paths are shown relative to ``cwd`` (the session's working directory;
        default: the process's) when they lie inside it.
        """
        return self.name

    def precheck(self, params: P, ctx: ToolContext) -> ToolResult | None:
        """An error the call would surely end in, found before anyone is asked to allow it
        (an Edit of a file never read); None: nothing known against it. Cheap, no changes."""
        return None

    async def run(self, params: P, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


@functools.cache
def _description(name: str) -> str:
    return Path(__file__).with_name(f"{name.lower()}.md").read_text(encoding="utf-8").strip()


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` up to its first line break, cut to ``limit`` characters: a label is one line."""
    first = text.splitlines()[0] if text else ""
    if limit is not None and len(first) > limit:
        return first[: limit - 1] + "…"
    return first


def _params_argument(cls: type) -> type[ToolParams] | None:
    """The parameters model named in ``cls``'s own ``Tool[...]`` base, if it names one."""
    for base in cls.__dict__.get("__orig_bases__", ()):
        origin = get_origin(base)
        if isinstance(origin, type) and issubclass(origin, Tool):
            (argument,) = get_args(base)
            if isinstance(argument, type) and issubclass(argument, ToolParams):
                return argument
    return None


_SCHEMAS: dict[type[BaseModel], dict[str, Any]] = {}
_KNOWN: dict[str, dict[str, Any]] = {}  # by schema_key: what an earlier process generated


def params_schema(params: type[BaseModel]) -> dict[str, Any]:
    """The API's JSON schema of a parameters model: fixed by the code, so built once a process
    (pydantic takes some 10 ms a tool), or taken from ``know_schemas``; callers get copies."""
    schema = _SCHEMAS.get(params)
    if schema is None:
        key = schema_key(params)
        schema = _KNOWN.get(key) if key is not None else None
        if schema is None:
            schema = _collapse_optional(_strip_titles(params.model_json_schema(by_alias=True)))
            assert isinstance(schema, dict)  # both walks give a dict back for a dict
        _SCHEMAS[params] = schema
    return schema


def schema_key(params: type[BaseModel]) -> str | None:
    """The name a model's schema is kept under across processes; None for a model made inside
    a function (two of them may share a name)."""
    if "<locals>" in params.__qualname__:
        return None
    return f"{params.__module__}:{params.__qualname__}"


def know_schemas(schemas: dict[str, dict[str, Any]]) -> None:
    """Schemas by ``schema_key`` that this very code generated in an earlier process (the
    caller vouches for that): ``params_schema`` returns them instead of asking pydantic."""
    _KNOWN.update(schemas)


def generated_schemas() -> dict[str, dict[str, Any]]:
    """Every schema ``params_schema`` has returned in this process, by ``schema_key``."""
    made = list(_SCHEMAS.items())  # one step: another thread may be adding one
    return {key: schema for params, schema in made if (key := schema_key(params))}


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
