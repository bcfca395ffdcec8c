"""Rarely used built-in tools behind ToolSearch: named in the system prompt, their definitions
sent only once loaded, the cached prefix unchanged by a load; all sent whole with search off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.mcp.tool_search import PLACEHOLDER
from tests.fake_env import use_fake_api
from tests.import_graph import ROOT
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


# Run in a process of its own: the schemas are built once a process (tools.base.params_schema).
FIRST_REQUEST = """
import asyncio, json, os, sys
from pathlib import Path

import tools.base as base

built = set()
real = base.params_schema


def recording(params):
    built.add(params.__name__)
    return real(params)


base.params_schema = recording
from tui.fake_api import FakeApi, text_reply
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions


async def main():
    with FakeApi([text_reply("ok")]) as api:
        os.environ["ANTHROPIC_BASE_URL"] = api.url
        options = RunOptions(cwd=Path(sys.argv[1]), watch_files=False)
        runtime = assemble_runtime(options, lambda _event: None)
        try:
            await runtime.agent.submit("hi")
        finally:
            await runtime.aclose()
        sent = [tool["name"] for tool in api.requests[0].body["tools"]]
    print(json.dumps({"built": sorted(built), "sent": sent}))


asyncio.run(main())
"""


def test_the_first_request_builds_only_the_definitions_it_sends(repo: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_"))}
    env |= {
        "ANTHROPIC_API_KEY": "test-key",
        "CCX_CONFIG_DIR": str(tmp_path / "config"),
        "HOME": str(tmp_path / "home"),
        "CCX_MANAGED_SETTINGS_FILE": str(tmp_path / "managed-settings.json"),
        "CCX_SKIP_MODELS_API": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", FIRST_REQUEST, str(repo)],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert "ToolSearch" in result["sent"] and not RARE & set(result["sent"])
    # one schema per tool sent (the anchor has none); none for the tools behind ToolSearch
    # (built when searched)
    tools = [name for name in result["sent"] if name != PLACEHOLDER["name"]]
    assert result["built"] == sorted(f"{name}Params" for name in tools)
    assert not {f"{name}Params" for name in ("NotebookEdit", "WebFetch", "WebSearch")} & set(
        result["built"]
    )
