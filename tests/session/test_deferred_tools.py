"""Rarely used built-in tools behind ToolSearch: named in the system prompt, their definitions
sent only once loaded, the cached prefix unchanged by a load; all sent whole with search off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions

RARE = {"NotebookEdit", "WebFetch", "WebSearch", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate"}


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


async def test_rare_tools_are_named_then_loaded_without_changing_the_prefix(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ENABLE_TOOL_SEARCH", raising=False)
    api.add(tool_reply(("ToolSearch", {"query": "select:WebSearch"})), text_reply("ok"))
    runtime = assemble_runtime(RunOptions(cwd=repo, watch_files=False), print)
    try:
        await runtime.agent.submit("find the release notes online")
    finally:
        await runtime.aclose()
    first, loaded = api.requests
    names = [t["name"] for t in first.body["tools"]]
    assert "ToolSearch" in names and not RARE & set(names)
    assert {"Read", "Edit", "Write", "Bash", "Grep", "Glob"} <= set(names)
    system = first.system_text()
    assert "Tools loaded on demand" in system and all(name in system for name in RARE)
    assert "NotebookEdit" not in first.last_user_text()  # no reminder: the prompt holds them
    # The load appends WebSearch, deferred; nothing before it changes (the cache holds).
    tools = loaded.body["tools"]
    assert tools[: len(names)] == first.body["tools"]
    assert [(t["name"], t.get("defer_loading")) for t in tools[len(names) :]] == [
        ("WebSearch", True)
    ]
    assert loaded.body["system"] == first.body["system"]
    assert api.errors == []


def test_with_tool_search_off_every_definition_is_sent(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENABLE_TOOL_SEARCH", "false")
    runtime = assemble_runtime(RunOptions(cwd=repo, watch_files=False), print)
    names = {tool["name"] for tool in runtime.agent.tools_api}
    system = "\n".join(block["text"] for block in runtime.agent.system)
    runtime.close()
    assert {"NotebookEdit", "WebFetch", "WebSearch", "TaskCreate"} <= names
    assert "ToolSearch" not in names and "Tools loaded on demand" not in system
