"""Every tool name ccx sends is one the API takes: ``^[a-zA-Z0-9_-]{1,64}$``, unique.

MCP tools get theirs from ``agent.mcp.names`` (tests/mcp/test_names.py and the e2e test of
issue 17); this checks the rest of what a session offers: the built-in tools, the Agent
tool, Skill, ExitPlanMode, the task tools, StructuredOutput, MCP's resource tools, and
every class of tool in the tree with a name of its own.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import agent
import tools
from tests.fake_env import use_fake_api
from tools.base import Tool
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


def test_a_sessions_tools_are_named_as_the_api_takes(api: FakeApi, repo: Path) -> None:
    options = RunOptions(
        cwd=repo, watch_files=False, json_schema={"type": "object", "properties": {}}
    )
    runtime = assemble_runtime(options, lambda event: None)
    names = [tool["name"] for tool in runtime.agent.tools_api]
    assert "StructuredOutput" in names and "Agent" in names and "Read" in names
    assert [name for name in names if not VALID.match(name)] == []
    assert len(names) == len(set(names))


async def test_a_tool_left_out_by_tools_cannot_be_called_by_its_other_name(
    api: FakeApi, repo: Path
) -> None:
    """--tools without Agent: the model asking for "Task" (the Agent tool's old name) gets
    an unknown tool, not a subagent."""
    api.add(
        tool_reply(("Task", {"description": "look", "prompt": "look around"})),
        text_reply("done"),
    )
    runtime = assemble_runtime(RunOptions(cwd=repo, watch_files=False, tools=["Read"]), print)
    try:
        await runtime.agent.submit("look around")
    finally:
        await runtime.aclose()
    assert [tool["name"] for tool in runtime.agent.tools_api] == ["Read"]
    (result,) = [m.content[0] for m in runtime.agent.messages if m.kind == "tool_result"]
    assert result["is_error"] and "No tool named 'Task'" in str(result["content"])
    assert len(api.requests) == 2  # no subagent's request


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_every_tool_class_with_a_name_has_a_valid_one() -> None:
    for package in (tools, agent):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not module.name.startswith("tui.fake_api"):
                importlib.import_module(module.name)
    named = {cls: cls.__dict__["name"] for cls in _subclasses(Tool) if "name" in cls.__dict__}
    assert len(named) >= 12  # the walk found the tools
    assert {cls.__name__: name for cls, name in named.items() if not VALID.match(name)} == {}
