"""`ccx -p` in-process: whatever goes wrong, exactly one result; the context events in it."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import SERVER_CLEARING, CompactionFailed, Microcompacted
from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi
from tui.headless import run as headless
from tui.headless.run import HeadlessOutput, run_headless
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions
from tui.session.runtime import Runtime


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


async def run_json(repo: Path) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = await run_headless(
        RunOptions(cwd=repo, watch_files=False), "hi", HeadlessOutput("json", out=out)
    )
    (line,) = out.getvalue().splitlines()
    return code, json.loads(line)


async def test_a_crash_while_starting_still_prints_a_result(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> SessionDriver:
        raise RuntimeError("the disk caught fire")

    monkeypatch.setattr(headless, "SessionDriver", broken)
    code, result = await run_json(repo)
    assert code == 1
    assert result["subtype"] == "error_during_execution" and result["is_error"]
    assert result["result"] == "RuntimeError: the disk caught fire"


async def test_a_crash_during_the_run_still_prints_a_result_and_closes(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[bool] = []

    async def broken_start(_self: Runtime) -> None:
        raise KeyError("missing")

    async def aclose(self: Runtime) -> None:
        self.close()
        closed.append(True)

    monkeypatch.setattr(Runtime, "start", broken_start)
    monkeypatch.setattr(Runtime, "aclose", aclose)
    code, result = await run_json(repo)
    assert code == 1 and closed == [True]
    assert result["subtype"] == "error_during_execution"
    assert result["result"] == "KeyError: 'missing'"
    assert result["session_id"]


def test_the_result_lists_microcompactions_and_failed_compactions_in_order() -> None:
    out = HeadlessOutput("json", out=io.StringIO())
    out.emit(Microcompacted("time gap", cleared=3, tokens_freed=1200, saved_paths=["/x"]))
    out.emit(CompactionFailed("auto", "the summary was empty", consecutive_failures=1))
    out.emit(Microcompacted(SERVER_CLEARING, cleared=9, tokens_freed=40_000))
    result = headless._result(out, "success", "done", 0.0, None, 1)
    assert result["context_events"] == [
        {"type": "microcompact", "reason": "time gap", "cleared": 3, "tokens_freed": 1200},
        {"type": "compaction_failed", "trigger": "auto", "reason": "the summary was empty"},
        {"type": "microcompact", "reason": "server", "cleared": 9, "tokens_freed": 40_000},
    ]
    assert result["compactions"] == []
