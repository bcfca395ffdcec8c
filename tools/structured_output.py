"""StructuredOutput: the model's final answer as JSON that fits the caller's schema.

With ``--json-schema`` (the Agent SDK's ``output_format``) the model gets this
tool, its input schema the caller's, and is told to call it once at the end.
An input that does not fit the schema is an error the model can correct; a
valid one is kept in ``value``, ends the turn, and becomes the result's
``structured_output``, as in Claude Code.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult

DESCRIPTION = (
    "Return your final answer in the structured format the user asked for. Call this tool "
    "exactly once, at the end of your work, with the answer as its input."
)
ACCEPTED = "Structured output provided successfully"
NUDGE = (
    "You have not given your answer in the required format yet: call the StructuredOutput "
    "tool now with your final answer."
)


class StructuredOutputParams(ToolParams):
    model_config = ConfigDict(extra="allow")


class StructuredOutputTool(Tool[StructuredOutputParams]):
    name = "StructuredOutput"
    is_mutating = False

    def __init__(self, schema: dict[str, Any]) -> None:
        import jsonschema  # only a --json-schema run needs it: off every other start-up

        jsonschema.validators.validator_for(schema).check_schema(schema)  # SchemaError if bad
        self.schema = schema
        self.value: dict[str, Any] | None = None

    def to_api(self) -> dict[str, Any]:  # type: ignore[override]  # the caller's schema
        return {"name": self.name, "description": DESCRIPTION, "input_schema": self.schema}

    def parse(self, raw: Any) -> StructuredOutputParams | ToolResult:
        params = super().parse(raw)
        if isinstance(params, ToolResult):
            return params
        import jsonschema

        try:
            jsonschema.validate(params.model_dump(), self.schema)
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "the input"
            return ToolResult.error(
                f"The output does not match the required schema at {where}: {exc.message}"
            )
        return params

    def label(self, params: StructuredOutputParams, cwd: StrPath | None = None) -> str:
        return "Structured output"

    async def run(self, params: StructuredOutputParams, ctx: ToolContext) -> ToolResult:
        self.value = params.model_dump()
        return ToolResult(output=ACCEPTED, display=ACCEPTED)

    def take(self) -> dict[str, Any] | None:
        out, self.value = self.value, None
        return out
