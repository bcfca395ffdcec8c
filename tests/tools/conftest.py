"""Fixtures for the file tools: a working directory, a ToolContext and a way to call a tool."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tools.base import Tool, ToolContext, ToolResult
from tools.file_state import FileStateCache

Call = Callable[..., Awaitable[ToolResult]]


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    cwd = tmp_path / "work"
    cwd.mkdir()
    return ToolContext(cwd=cwd, file_state=FileStateCache())


@pytest.fixture
def call(ctx: ToolContext) -> Call:
    """call(tool, **input): validate the input as the loop would, then run the tool."""

    async def run(tool: Tool, **raw: Any) -> ToolResult:
        params = tool.parse(raw)
        assert not isinstance(params, ToolResult), params.output
        return await tool.run(params, ctx)

    return run
