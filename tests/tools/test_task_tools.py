"""Background Bash with the real shell: start at once, output capped to its file, timeouts,
TaskOutput's incremental reads and waits, TaskStop on the whole process group."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.tools.helpers import assert_schema_matches_snapshot
from tests.tools.test_bash import alive, wait_dead
from tools.base import ToolContext, ToolResult
from tools.bash import BashTool
from tools.file_state import FileStateCache
from tools.jobs import JobRegistry
from tools.task_tools import TaskOutputTool, TaskStopTool


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work, file_state=FileStateCache(), session_dir=tmp_path / "session")


async def call(
    tool: BashTool | TaskOutputTool | TaskStopTool, ctx: ToolContext, **raw: object
) -> ToolResult:
    params = tool.parse(raw)
    assert not isinstance(params, ToolResult), params.output
    return await tool.run(params, ctx)  # type: ignore[arg-type]


def test_schemas_are_pinned() -> None:
    assert_schema_matches_snapshot(TaskOutputTool)
    assert_schema_matches_snapshot(TaskStopTool)
    assert set(TaskStopTool.input_schema()["properties"]) == {"task_id", "shell_id"}  # 2.1.328


def test_a_background_command_runs_on_and_ends_as_a_job(ctx: ToolContext, tmp_path: Path) -> None:
    async def scenario() -> None:
        jobs = JobRegistry(tmp_path / "session")
        bash = BashTool(jobs=jobs)
        result = await call(bash, ctx, command="echo a; sleep 0.3; echo b; exit 4",
                            run_in_background=True, description="two lines")  # fmt: skip
        assert not result.is_error and result.meta["background"]
        job = jobs.get(result.meta["job_id"])
        assert job is not None and job.running and job.id in result.output_text()
        assert job.output_path == tmp_path / "session" / "tasks" / f"{job.id}.output"
        await jobs.wait(job.id, 10)
        assert (job.status, job.exit_code) == ("failed", 4)
        assert job.output_path.read_text() == "a\nb\n" and job.progress == "b"
        # the shell's own cwd is not moved by a background command
        await call(bash, ctx, command="cd /", run_in_background=True)
        await asyncio.sleep(0.2)
        assert (await call(bash, ctx, command="pwd")).output_text() == str(ctx.cwd)

    asyncio.run(scenario())


def test_output_past_the_cap_is_dropped_and_said(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CCX_JOB_OUTPUT_MAX_BYTES", "1000")

    async def scenario() -> None:
        jobs = JobRegistry(tmp_path / "session")
        result = await call(BashTool(jobs=jobs), ctx, command="seq 1 5000", run_in_background=True)
        job = await jobs.wait(result.meta["job_id"], 10)
        assert job.status == "completed"
        text = job.output_path.read_text()
        assert text.startswith("1\n2\n") and "output capped at 1000 bytes" in text
        assert len(text) < 1200

    asyncio.run(scenario())


def test_a_background_timeout_kills_the_job(ctx: ToolContext, tmp_path: Path) -> None:
    async def scenario() -> None:
        jobs = JobRegistry(tmp_path / "session")
        result = await call(BashTool(jobs=jobs), ctx, command="sleep 30", run_in_background=True,
                            timeout=300)  # fmt: skip
        job = await jobs.wait(result.meta["job_id"], 10)
        assert job.status == "failed" and "timed out after 0.3 s" in (job.error or "")

    asyncio.run(scenario())


def test_without_a_registry_background_is_refused(ctx: ToolContext) -> None:
    result = asyncio.run(call(BashTool(), ctx, command="true", run_in_background=True))
    assert result.is_error and "not available" in result.output_text()


def test_task_output_waits_reads_new_lines_and_filters(ctx: ToolContext, tmp_path: Path) -> None:
    async def scenario() -> None:
        jobs = JobRegistry(tmp_path / "session")
        bash, output = BashTool(jobs=jobs), TaskOutputTool(jobs)
        started = await call(bash, ctx, command="echo x1; echo y1; sleep 0.3; echo x2",
                             run_in_background=True)  # fmt: skip
        job_id = started.meta["job_id"]
        done = await call(output, ctx, task_id=job_id, timeout=10_000)
        text = done.output_text()
        assert "<status>completed</status>" in text and "<exit-code>0</exit-code>" in text
        assert "x1\ny1\nx2" in text
        again = await call(output, ctx, task_id=job_id, block=False)
        assert "(no new output)" in again.output_text()
        other = await call(bash, ctx, command="printf 'x1\\ny1\\nx2\\n'", run_in_background=True)
        await jobs.wait(other.meta["job_id"], 10)
        matched = await call(output, ctx, task_id=other.meta["job_id"], filter="^x")
        assert "x1\nx2" in matched.output_text() and "y1" not in matched.output_text()
        bad = await call(output, ctx, task_id=job_id, filter="(")
        assert bad.is_error and "not a valid regex" in bad.output_text()
        unknown = await call(output, ctx, task_id="bnope")
        assert unknown.is_error and job_id in unknown.output_text()
        assert jobs.take_notifications() == []  # both were read after they ended

    asyncio.run(scenario())


def test_task_stop_kills_the_whole_group(ctx: ToolContext, tmp_path: Path) -> None:
    async def scenario() -> None:
        jobs = JobRegistry(tmp_path / "session")
        bash, stop = BashTool(jobs=jobs), TaskStopTool(jobs)
        pid_file = ctx.cwd / "child.pid"
        started = await call(bash, ctx, command=f"sleep 600 & echo $! > {pid_file}; wait",
                             run_in_background=True)  # fmt: skip
        for _ in range(200):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            await asyncio.sleep(0.02)
        child = int(pid_file.read_text())
        assert alive(child)
        result = await call(stop, ctx, shell_id=started.meta["job_id"])  # the deprecated name
        assert not result.is_error and "Stopped job" in result.output_text()
        job = jobs.get(started.meta["job_id"])
        assert job is not None and job.status == "killed"
        assert wait_dead([child], within=3) == []
        again = await call(stop, ctx, task_id=job.id)
        assert again.is_error and "not running" in again.output_text()
        missing = await call(stop, ctx)
        assert missing.is_error and "task_id" in missing.output_text()

    asyncio.run(scenario())


def test_kill_all_at_shutdown_kills_running_jobs(ctx: ToolContext, tmp_path: Path) -> None:
    async def scenario() -> int:
        jobs = JobRegistry(tmp_path / "session")
        pid_file = ctx.cwd / "pid"
        await call(BashTool(jobs=jobs), ctx, command=f"echo $$ > {pid_file}; exec sleep 600",
                   run_in_background=True)  # fmt: skip
        for _ in range(200):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            await asyncio.sleep(0.02)
        jobs.kill_all()
        assert all(job.status == "killed" for job in jobs.jobs())
        return int(pid_file.read_text())

    pid = asyncio.run(scenario())
    assert wait_dead([pid], within=3) == []
