"""Monitor with the real shell: stdout lines become batched events for the model (stderr only
in the file), the watch ends on exit, at its deadline, by TaskStop, or when it floods."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.tools.helpers import assert_schema_matches_snapshot
from tools.base import ToolContext, ToolResult
from tools.bash import BashTool
from tools.file_state import FileStateCache
from tools.jobs import JobRegistry
from tools.monitor import FLOOD_LINES, MonitorTool
from tools.task_tools import TaskStopTool


@pytest.fixture
def jobs(tmp_path: Path) -> JobRegistry:
    return JobRegistry(tmp_path / "session")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work, file_state=FileStateCache(), session_dir=tmp_path / "session")


@pytest.fixture
def monitor(jobs: JobRegistry) -> MonitorTool:
    return MonitorTool(BashTool(jobs=jobs), jobs)


async def call(tool: MonitorTool | TaskStopTool, ctx: ToolContext, **raw: object) -> ToolResult:
    params = tool.parse(raw)
    assert not isinstance(params, ToolResult), params.output
    return await tool.run(params, ctx)  # type: ignore[arg-type]


def job_id(result: ToolResult) -> str:
    assert not result.is_error, result.output
    return str(result.meta["job_id"])


def test_schema_is_claude_codes() -> None:
    assert_schema_matches_snapshot(MonitorTool)
    schema = MonitorTool.input_schema()
    assert set(schema["properties"]) == {"description", "timeout_ms", "command", "ws"}
    assert schema["required"] == ["description"]


async def test_stdout_lines_are_events_and_stderr_stays_in_the_file(
    monitor: MonitorTool, jobs: JobRegistry, ctx: ToolContext
) -> None:
    command = "echo first; echo oops >&2; sleep 0.4; echo second; exit 4"
    started = await call(monitor, ctx, description="build steps", command=command)
    job = await jobs.wait(job_id(started), 10)
    await asyncio.sleep(0.3)  # the last batch closes
    assert job.kind == "monitor" and job.id.startswith("m") and job.event_count == 2
    notes = jobs.take_notifications()
    events = [n for n in notes if "<monitor-events" in n]
    assert "first" in "".join(events) and "second" in "".join(events)
    assert "oops" not in "".join(notes)
    assert 'description="build steps"' in events[0]
    ending = next(n for n in notes if "<job-notification>" in n)
    assert "exited with code 4 after 2 events" in ending
    text = job.output_path.read_text()
    assert "oops" in text and "first" in text and "second" in text
    assert jobs.take_notifications() == []  # each told once


async def test_lines_close_together_make_one_batch(
    monitor: MonitorTool, jobs: JobRegistry, ctx: ToolContext
) -> None:
    started = await call(monitor, ctx, description="burst", command="printf 'a\\nb\\nc\\n'")
    await jobs.wait(job_id(started), 10)
    await asyncio.sleep(0.3)
    events = [n for n in jobs.take_notifications() if "<monitor-events" in n]
    assert len(events) == 1 and all(x in events[0] for x in ("a\n", "b\n", "c\n"))


async def test_a_news_listener_and_waiters_hear_of_events_while_it_runs(
    monitor: MonitorTool, jobs: JobRegistry, ctx: ToolContext
) -> None:
    heard: list[str] = []
    jobs.news_listeners.append(lambda job: heard.append(job.id))
    started = await call(monitor, ctx, description="tick", command="echo tick; sleep 30")
    assert await jobs.wait_for_change(5)
    while not jobs.has_news():
        assert await jobs.wait_for_change(5)
    assert heard == [job_id(started)] and jobs.get(heard[0]).running  # type: ignore[union-attr]
    stop = TaskStopTool(jobs)
    stopped = await call(stop, ctx, task_id=heard[0])
    assert not stopped.is_error
    assert jobs.get(heard[0]).status == "killed"  # type: ignore[union-attr]


async def test_the_deadline_ends_the_watch(
    monitor: MonitorTool, jobs: JobRegistry, ctx: ToolContext
) -> None:
    started = await call(
        monitor, ctx, description="never ends", command="while true; do sleep 0.1; done",
        timeout_ms=1000,
    )  # fmt: skip
    job = await jobs.wait(job_id(started), 10)
    assert not job.running
    ending = "".join(jobs.take_notifications())
    assert "expired after 0 events" in ending and "call Monitor again" in ending


async def test_deadlines_are_capped_at_ten_minutes(
    monitor: MonitorTool, jobs: JobRegistry, ctx: ToolContext
) -> None:
    started = await call(monitor, ctx, description="long", command="sleep 30", timeout_ms=3600000)
    assert "600 s" in str(started.output)
    await jobs.stop(job_id(started))


async def test_a_flood_is_stopped(
    monitor: MonitorTool, jobs: JobRegistry, ctx: ToolContext
) -> None:
    started = await call(monitor, ctx, description="firehose", command="yes line")
    job = await jobs.wait(job_id(started), 10)
    assert job.status == "killed" and job.event_count <= FLOOD_LINES
    ending = "".join(n for n in jobs.take_notifications() if "<job-notification>" in n)
    assert "tighter filter" in ending


async def test_bad_input_is_a_clear_error(monitor: MonitorTool, ctx: ToolContext) -> None:
    ws = await call(monitor, ctx, description="sock", ws={"url": "wss://example.com"})
    assert ws.is_error and "WebSocket" in str(ws.output)
    empty = await call(monitor, ctx, description="nothing", command="  ")
    assert empty.is_error and "needs `command`" in str(empty.output)
    assert isinstance(monitor.parse({"description": "x", "timeout_ms": 10}), ToolResult)
