"""Fixtures for the file tools: a working directory, a ToolContext and a way to call a tool."""

from __future__ import annotations

import os
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


# A small project for Grep: ignore files at several levels, hidden, binary, CRLF and wide files.
GREP_FILES: dict[str, bytes] = {
    ".gitignore": b"build/\n*.log\n!keep.log\n",
    "app.py": b"import os\n\nneedle = 1\n\n\ndef f():\n    return NEEDLE + needle\n",
    "README.md": b"# Title\nA Needle in the docs.\n",
    "keep.log": b"needle kept\n",
    "debug.log": b"needle ignored by *.log\n",
    "build/out.py": b"needle in build\n",
    ".hidden.py": b"needle hidden file\n",
    ".cfg/settings.py": b"needle hidden dir\n",
    "src/lib.rs": b"fn needle() {}\n",
    "src/main.ts": b"const needle = 1;\n",
    "src/view.tsx": b"export const View = () => <div>needle</div>;\n",
    "src/.ignore": b"secret.txt\n",
    "src/secret.txt": b"needle secret\n",
    "src/nested/.gitignore": b"gen.py\n",
    "src/nested/gen.py": b"needle generated\n",
    "src/nested/mod.py": b"".join(b"line %d\n" % i for i in range(1, 21))
    .replace(b"line 5\n", b"needle five\n")
    .replace(b"line 7\n", b"needle seven\n")
    .replace(b"line 15\n", b"needle fifteen\n"),
    "data.bin": b"needle\x00binary",
    "wide.txt": b"x" * 1000 + b" needle\n",
    "crlf.txt": b"needle one\r\nother\r\nneedle two\r\n",
    "multi.py": b"class A:\n    def needle(self):\n        pass\n",
}


@pytest.fixture
def grep_tree(ctx: ToolContext) -> Path:
    """GREP_FILES written into the working directory, each a second newer than the last."""
    for i, (rel, data) in enumerate(sorted(GREP_FILES.items())):
        path = ctx.cwd / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))  # later in the alphabet = newer
    return ctx.cwd
