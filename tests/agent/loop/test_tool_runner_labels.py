"""The runner labels each call once, with the tool's own label, for ToolStarted and permission asks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.core.events import Event, ToolStarted
from agent.loop.tool_runner import Answer, PermissionRequest, ToolRunner
from agent.permissions.gate import PermissionGate
from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult
from tools.file_state import FileStateCache
from tools.registry import default_tools


class WhatParams(ToolParams):
    what: str


class BadLabel(Tool[WhatParams]):
    """A tool whose label has a bug: the call must still run, labelled with the name."""

    name = "BadLabel"
    is_mutating = False

    @classmethod
    def description(cls) -> str:
        return "A tool with a broken label."

    def label(self, params: WhatParams, cwd: StrPath | None = None) -> str:
        raise RuntimeError("label bug")

    async def run(self, params: WhatParams, ctx: ToolContext) -> ToolResult:
        return ToolResult(f"did {params.what}")


def use(tool_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def started(events: list[Event]) -> dict[str, str]:
    return {e.tool_use_id: e.label for e in events if isinstance(e, ToolStarted)}


async def test_tool_started_carries_the_tools_own_label(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a\nb\nc\nd\n")
    events: list[Event] = []
    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    gate = PermissionGate("bypassPermissions", [], [], [], cwd=tmp_path)
    runner = ToolRunner([*default_tools(), BadLabel()], ctx, gate, events.append)
    uses = [
        use("r", "Read", file_path=str(tmp_path / "src" / "app.py"), offset=2, limit=2),
        use("b", "Bash", command="echo hi", description="Say hi"),
        use("g", "Grep", pattern="b", path=str(tmp_path / "src"), glob="*.py"),
        use("x", "Nope", anything=1),
        use("i", "Grep", path="src"),
        use("j", "Glob"),
        use("l", "BadLabel", what="it"),
    ]
    results: dict[str, dict[str, Any]] = {}
    await runner.run(uses, {"j": '{"pattern": '}, results)
    assert started(events) == {
        "r": "Read src/app.py (lines 2-3)",
        "b": "echo hi",  # the command itself, not its description
        "g": 'Grep "b" in src (*.py)',
        "x": "Nope",  # no such tool: its name
        "i": "Grep",  # input that does not validate: the name
        "j": "Glob",  # input that is not JSON: the name
        "l": "BadLabel",  # a label that crashes: the name, and the call still runs
    }
    assert results["l"]["content"] == "did it" and "is_error" not in results["l"]
    assert results["r"]["content"].startswith("2\tb\n3\tc")
    assert all(results[k]["is_error"] for k in "xij")


async def test_a_permission_ask_shows_the_same_label(tmp_path: Path) -> None:
    events: list[Event] = []
    asked: list[PermissionRequest] = []

    async def ask(request: PermissionRequest) -> Answer:
        asked.append(request)
        return "deny"

    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    gate = PermissionGate("default", [], [], [], cwd=tmp_path)
    runner = ToolRunner(default_tools(), ctx, gate, events.append, ask=ask)
    write = use("w", "Write", file_path=str(tmp_path / "notes" / "todo.md"), content="x")
    results: dict[str, dict[str, Any]] = {}
    await runner.run([write], {}, results)
    assert [r.summary for r in asked] == ["Write notes/todo.md"]
    assert started(events) == {"w": "Write notes/todo.md"}
    assert results["w"]["is_error"] and not (tmp_path / "notes").exists()
