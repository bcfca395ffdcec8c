"""`ccx demo`: the scripted model and sample project, run through the plain REPL at full speed."""

from __future__ import annotations

import asyncio
import io
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from agent.core.events import (
    AssistantMessage,
    CompactionFailed,
    CompactionFinished,
    ContextUpdate,
    Event,
    Microcompacted,
)
from tui.demo.progress import is_summary_request, latest_prompt, tour_progress
from tui.demo.sample_sources import BUGGY_LINE, FIXED_LINE
from tui.demo.script import DEMO_PROMPT, NOMINAL_TOKENS_PER_S, SUMMARY_SPEEDUP
from tui.demo.tour import BANNER, DEMO_WINDOW, demo_environment, demo_session, parse_args
from tui.fake_api import RecordedRequest
from tui.plain.repl import PlainRepl

ENTER = "\r"


async def until(condition: Callable[[], Any], out: io.StringIO, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; output so far:\n{out.getvalue()}")
        await asyncio.sleep(0.01)
    return value


async def run_tour(
    tmp_path: Path, permission: str, then: list[str]
) -> tuple[str, list[Event], list[RecordedRequest], Path]:
    """The whole demo at full speed: answer the permission question, type ``then``, quit."""
    events: list[Event] = []
    out = io.StringIO()
    with demo_session(tmp_path, pace=0) as demo, create_pipe_input() as pipe:
        repl = PlainRepl(
            demo.options,
            console=Console(file=out, width=120, color_system=None),
            initial_prompt=DEMO_PROMPT,
            banner=BANNER,
            pt_input=pipe,
            pt_output=DummyOutput(),
            history_path=tmp_path / "history",
        )
        repl.observers.append(events.append)
        task = asyncio.create_task(repl.run())
        await until(lambda: repl.waiting == "permission", out)
        pipe.send_text(permission)
        for line in then:
            await until(lambda: repl.waiting == "prompt", out)
            seen = repl.lines_read
            pipe.send_text(line + ENTER)
            await until(lambda n=seen: repl.lines_read > n and repl.waiting == "prompt", out)
        pipe.send_text("/exit" + ENTER)
        assert await asyncio.wait_for(task, 15) == 0
        assert demo.api.errors == []
        return out.getvalue(), events, list(demo.api.requests), demo.root


async def test_demo_fills_the_meter_warns_and_auto_compacts(tmp_path: Path) -> None:
    output, events, _requests, root = await run_tour(tmp_path, "y", ["what is 2+2?"])
    states = [e.state for e in events if isinstance(e, ContextUpdate)]
    assert all(s.window == int(DEMO_WINDOW) for s in states)
    assert states[0].level == "ok"
    first_warning = next(i for i, s in enumerate(states) if s.level == "warning")
    compactions = [e.record for e in events if isinstance(e, CompactionFinished)]
    assert [c.trigger for c in compactions] == ["auto"]
    assert not any(isinstance(e, CompactionFailed) for e in events)
    assert any(isinstance(e, Microcompacted) for e in events)
    compacted_at = next(i for i, e in enumerate(events) if isinstance(e, CompactionFinished))
    assert first_warning < len([e for e in events[:compacted_at] if isinstance(e, ContextUpdate)])
    after = [e.state for e in events[compacted_at:] if isinstance(e, ContextUpdate)]
    assert after and all(s.level == "ok" for s in after)  # the meter drops back
    assert compactions[0].tokens_after < compactions[0].tokens_before

    assert output.startswith(BANNER)
    first_text = next(e for e in events if isinstance(e, AssistantMessage)).message["content"][0]
    assert "scripted model" in first_text["text"] and "no API calls" in first_text["text"]
    assert "⚠ Context" in output and "Compacted (auto)" in output
    assert "? Allow Edit ledger/report.py" in output
    assert FIXED_LINE in (root / "ledger" / "report.py").read_text()
    assert "That's the tour." in output
    assert 'I can\'t really work on "what is 2+2?"' in output


async def test_demo_reaches_auto_compaction_within_a_minute_at_human_pace(tmp_path: Path) -> None:
    _output, _events, requests, _root = await run_tour(tmp_path, "y", [])
    seconds = 0.0
    for request in requests:
        chars = sum(
            len(block.get("text", "")) + len(str(block.get("input", "")))
            for block in getattr(request.response_item, "content", [])
        )
        speed = NOMINAL_TOKENS_PER_S * (SUMMARY_SPEEDUP if is_summary_request(request) else 1)
        seconds += chars / 4 / speed
        if is_summary_request(request):
            break
    else:
        raise AssertionError("no summary request")
    assert 10 < seconds < 45  # streamed time; tools and the client add a few seconds


async def test_declining_the_edit_leaves_the_file_and_continue_ends_the_tour(
    tmp_path: Path,
) -> None:
    output, _events, _requests, root = await run_tour(tmp_path, "n", ["continue"])
    assert BUGGY_LINE in (root / "ledger" / "report.py").read_text()
    assert "since you declined the edit" in output
    assert "The tour is over." in output


def summary_message(done: int, at: str, auto: bool) -> str:
    return (
        "This session continues an earlier conversation.\n\n<summary>\n1. ...\n"
        f"Tour progress: {done} steps done, automatic compaction at step {at}.\n</summary>\n\n"
        f"The user's most recent request, verbatim:\n<user-request>\n{DEMO_PROMPT}\n"
        "</user-request>" + ("\n\nContinue the work from where it stopped." if auto else "")
    )


def test_a_manual_compaction_does_not_end_the_reading_phase() -> None:
    manual = [
        {
            "role": "user",
            "content": [{"type": "text", "text": summary_message(5, "pending", False)}],
        }
    ]
    assert tour_progress(manual).compacted_at is None
    auto = [
        {"role": "user", "content": [{"type": "text", "text": summary_message(9, "pending", True)}]}
    ]
    assert tour_progress(auto).compacted_at == 9
    later = [
        {"role": "user", "content": [{"type": "text", "text": summary_message(14, "9", False)}]}
    ]
    assert tour_progress(later).compacted_at == 9


def test_latest_prompt_and_progress_survive_a_compaction() -> None:
    summary = summary_message(12, "pending", True)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": summary}]},
        {"role": "user", "content": [{"type": "text", "text": "Contents of /x/a.py, re-read"}]},
    ]
    assert latest_prompt(messages) == DEMO_PROMPT
    progress = tour_progress(messages)
    assert (progress.done, progress.compacted_at, progress.fresh) == (12, 12, True)
    messages += [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
    ]
    progress = tour_progress(messages)
    assert (progress.done, progress.fresh) == (13, False)
    messages.append({"role": "user", "content": [{"type": "text", "text": "hello there"}]})
    assert latest_prompt(messages) == "hello there"


def test_demo_arguments() -> None:
    assert parse_args([]) == (False, 1.0, False)
    assert parse_args(["--plain", "--pace", "0", "--keep"]) == (True, 0.0, True)
    assert "usage: ccx demo" in str(parse_args(["--help"]))
    assert "unknown argument" in str(parse_args(["--bogus"]))


def test_demo_environment_is_isolated_and_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-real")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with demo_environment("http://127.0.0.1:9", Path("/tmp/c"), Path("/tmp/h")):
        assert os.environ["ANTHROPIC_API_KEY"] != "sk-real"
        assert os.environ["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
        assert "HTTPS_PROXY" not in os.environ
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-real"
    assert os.environ["HTTPS_PROXY"] == "http://proxy.example:3128"
    assert "ANTHROPIC_BASE_URL" not in os.environ
