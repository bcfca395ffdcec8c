"""Tool's contract: generic in its parameters model, which it parses into; a label; a default."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from tools.base import (
    P,
    StrPath,
    Tool,
    ToolContext,
    ToolParams,
    ToolResult,
    generated_schemas,
    know_schemas,
    params_schema,
    schema_key,
)
from tools.file_state import FileStateCache
from tools.registry import default_tools


class EchoParams(ToolParams):
    text: str = Field(description="What to echo")
    times: int = Field(default=1, ge=1, description="How often")


class Echo(Tool[EchoParams]):
    name = "Echo"
    is_mutating = False

    def label(self, params: EchoParams, cwd: StrPath | None = None) -> str:
        return f"Echo {params.text} ×{params.times}"

    async def run(self, params: EchoParams, ctx: ToolContext) -> ToolResult:
        return ToolResult(" ".join([params.text] * params.times))


class Unlabelled(Tool[EchoParams]):
    name = "Unlabelled"


def context(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, file_state=FileStateCache())


def test_the_parameters_model_comes_from_the_generic_argument() -> None:
    assert Echo.Params is EchoParams
    assert Echo.input_schema() == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "What to echo"},
            "times": {"type": "integer", "default": 1, "minimum": 1, "description": "How often"},
        },
        "required": ["text"],
        "additionalProperties": False,
    }
    for tool in default_tools():
        (argument,) = type(tool).__orig_bases__[0].__args__  # type: ignore[attr-defined]
        assert type(tool).Params is argument, tool.name


async def test_parse_gives_the_model_and_run_gets_it(tmp_path: Path) -> None:
    echo = Echo()
    params = echo.parse('{"text": "hi", "times": "2"}')
    assert isinstance(params, EchoParams) and params.times == 2
    assert echo.label(params) == "Echo hi ×2"
    assert (await echo.run(params, context(tmp_path))).output == "hi hi"
    error = echo.parse({"text": "hi", "times": 0})
    assert isinstance(error, ToolResult) and error.is_error
    assert "times: Input should be greater than or equal to 1" in error.output


def test_defaults_label_with_the_name_and_count_as_mutating() -> None:
    tool = Unlabelled()
    params = tool.parse({"text": "x"})
    assert isinstance(params, EchoParams)
    assert tool.label(params, "/somewhere") == "Unlabelled"
    assert Unlabelled.is_mutating is True


def test_a_subclass_keeps_its_parents_parameters() -> None:
    class LoudEcho(Echo):
        name = "LoudEcho"

    assert LoudEcho.Params is EchoParams


def test_a_generic_intermediate_class_passes_the_model_on() -> None:
    class TextTool(Tool[P]):
        """A family of tools sharing behaviour, each with its own parameters."""

    class Shout(TextTool[EchoParams]):
        name = "Shout"

    assert Shout.Params is EchoParams
    assert "Params" not in TextTool.__dict__


def test_params_set_by_hand_still_work_and_must_agree() -> None:
    class Legacy(Tool):
        name = "Legacy"
        Params = EchoParams

    assert isinstance(Legacy().parse({"text": "x"}), EchoParams)

    class Other(ToolParams):
        value: int

    with pytest.raises(TypeError, match="is Tool\\[EchoParams\\] but sets Params = Other"):

        class Confused(Tool[EchoParams]):
            name = "Confused"
            Params = Other


class KeptParams(ToolParams):
    """Only the schema tests below use it: nothing else asks for its schema first."""

    path: str = Field(description="Where")


class Kept(Tool[KeptParams]):
    name = "Kept"


class UnseededParams(ToolParams):
    depth: int = Field(default=0, description="How deep")


class Unseeded(Tool[UnseededParams]):
    name = "Unseeded"


def test_a_schema_known_from_an_earlier_run_is_used_and_pydantic_is_not_asked() -> None:
    key = schema_key(KeptParams)
    assert key == "tests.tools.test_base:KeptParams"
    saved = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    know_schemas({key: saved})
    assert not KeptParams.__pydantic_complete__  # its validator is not built yet either
    assert Kept.input_schema() == saved
    assert not KeptParams.__pydantic_complete__
    assert generated_schemas()[key] == saved
    # the model still validates: its validator is built at this first use
    assert Kept().parse({"path": "a.py"}) == KeptParams(path="a.py")
    assert isinstance(Kept().parse({"path": 3}), ToolResult)


def test_a_schema_not_known_is_generated_and_listed_for_the_next_run() -> None:
    key = schema_key(UnseededParams)
    assert key is not None and key not in generated_schemas()
    schema = Unseeded.input_schema()
    assert schema["properties"]["depth"] == {
        "type": "integer",
        "default": 0,
        "description": "How deep",
    }
    assert generated_schemas()[key] == schema


def test_a_model_made_inside_a_function_is_never_kept_by_name() -> None:
    class LocalParams(ToolParams):
        x: int

    assert schema_key(LocalParams) is None
    # even a file naming it by its full name is not taken: another one may share that name
    know_schemas({f"{LocalParams.__module__}:{LocalParams.__qualname__}": {"type": "object"}})
    assert "x" in params_schema(LocalParams)["properties"]
    assert all("<locals>" not in key for key in generated_schemas())
