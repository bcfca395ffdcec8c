"""The job registry: start, progress, finish, stop, incremental reads, notifications once."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from tools.jobs import JobRegistry, status_line


def test_an_ended_job_is_announced_once(tmp_path: Path) -> None:
    jobs = JobRegistry(tmp_path)
    job = jobs.start("bash", "count slowly")
    assert job.id.startswith("b") and len(job.id) == 9
    assert job.output_path == tmp_path / "tasks" / f"{job.id}.output"
    assert jobs.take_notifications() == []
    jobs.finish(job.id, "failed", exit_code=3)
    notes = jobs.take_notifications()
    assert len(notes) == 1
    assert f"<job-id>{job.id}</job-id>" in notes[0] and "<status>failed</status>" in notes[0]
    assert "exit code 3" in notes[0]
    assert jobs.take_notifications() == []
    jobs.finish(job.id, "completed")  # an ended job stays as it ended
    assert job.status == "failed"


def test_a_job_read_after_it_ended_is_not_announced(tmp_path: Path) -> None:
    jobs = JobRegistry(tmp_path)
    job = jobs.start("agent", "review the diff")
    assert job.id.startswith("a")
    jobs.finish(job.id, "completed")
    jobs.read_new(job.id)
    assert jobs.take_notifications() == []
    assert jobs.restoration_text() is None


def test_reads_return_only_new_output_and_filter_lines(tmp_path: Path) -> None:
    jobs = JobRegistry(tmp_path)
    job = jobs.start("bash", "log")
    job.output_path.write_text("one\ntwo\n")
    assert jobs.read_new(job.id) == ("one\ntwo\n", False)
    assert jobs.read_new(job.id) == ("", False)
    with job.output_path.open("a") as handle:
        handle.write("three\nfour\nthirty\n")
    assert jobs.read_new(job.id, re.compile("^th")) == ("three\nthirty\n", False)
    with pytest.raises(KeyError):
        jobs.read_new("bnothere")


def test_long_output_is_read_in_whole_lines_across_calls(tmp_path: Path) -> None:
    jobs = JobRegistry(tmp_path)
    job = jobs.start("bash", "chatty")
    lines = [f"line {n:06d}\n" for n in range(10_000)]
    job.output_path.write_text("".join(lines))
    first, more = jobs.read_new(job.id)
    assert more and first.endswith("\n") and len(first) <= 30_000
    rest = ""
    while True:
        chunk, more = jobs.read_new(job.id)
        rest += chunk
        if not more:
            break
    assert first + rest == "".join(lines)


def test_progress_of_a_running_job_is_rate_limited(tmp_path: Path) -> None:
    jobs = JobRegistry(tmp_path, progress_interval_s=0.0)
    job = jobs.start("bash", "build")
    assert jobs.take_notifications() == []  # no output yet
    job.output_path.write_text("compiling a\n")
    jobs.report_progress(job.id, "compiling a")
    (note,) = jobs.take_notifications()
    assert job.id in note and "compiling a" in note
    assert jobs.take_notifications() == []  # nothing new since that note
    with job.output_path.open("a") as handle:
        handle.write("compiling b\n")
    assert len(jobs.take_notifications()) == 1
    slow = JobRegistry(tmp_path, progress_interval_s=3600)
    other = slow.start("bash", "build")
    other.output_path.write_text("x\n")
    assert slow.take_notifications() == []


def test_restoration_lists_running_and_unread_jobs_once_each(tmp_path: Path) -> None:
    jobs = JobRegistry(tmp_path)
    running = jobs.start("bash", "serve the docs")
    jobs.report_progress(running.id, "listening on :8000")
    failed = jobs.start("agent", "triage")
    jobs.finish(failed.id, "failed", error="the model refused")
    done = jobs.start("bash", "quick")
    jobs.finish(done.id, "completed", exit_code=0)
    jobs.read_new(done.id)
    text = jobs.restoration_text()
    assert text is not None
    assert text.count(f"- {running.id} ") == 1 and text.count(f"- {failed.id} ") == 1
    assert done.id not in text
    assert "listening on :8000" in text and "the model refused" in text
    assert str(running.output_path) in text
    assert status_line(running).startswith(f"- {running.id} (bash, running, ")


def test_stop_runs_the_callback_and_wait_returns_the_end(tmp_path: Path) -> None:
    async def scenario() -> None:
        jobs = JobRegistry(tmp_path)
        stopped: list[str] = []

        async def stop() -> None:
            stopped.append("stop")

        job = jobs.start("bash", "forever", stop=stop)
        waiter = asyncio.ensure_future(jobs.wait(job.id, 5))
        changed = asyncio.ensure_future(jobs.wait_for_change(5))
        await asyncio.sleep(0)
        assert (await jobs.stop(job.id)).status == "killed"
        assert stopped == ["stop"]
        assert (await waiter).status == "killed"
        assert await changed
        assert (await jobs.wait(job.id, 0.01)).status == "killed"
        assert not await jobs.wait_for_change(0.01)

    asyncio.run(scenario())


def test_kill_all_kills_running_jobs_without_a_loop(tmp_path: Path) -> None:
    jobs = JobRegistry(tmp_path)
    killed: list[str] = []
    first = jobs.start("bash", "a", kill=lambda: killed.append("a"))
    second = jobs.start("agent", "b", kill=lambda: killed.append("b"))
    jobs.finish(second.id, "completed")
    jobs.kill_all()
    assert killed == ["a"] and first.status == "killed" and second.status == "completed"
