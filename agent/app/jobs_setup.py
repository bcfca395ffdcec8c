"""Wiring the session's background jobs: the registry, what the user is told, reads of outputs.

The registry (``tools.jobs``) is built here for the runtime; a job's end is
shown to the user as a notice at once, and told to the model before its next
request (the loop's reminder sources). A model that Reads a job's output file
has seen it: the job is marked read, so its end is not announced again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.core.events import EventSink, Notice
from tools.jobs import Job, JobRegistry, job_summary


def build_jobs(folder: Path | None, emit: EventSink) -> JobRegistry:
    jobs = JobRegistry(folder)

    def ended(job: Job) -> None:
        level = "info" if job.status == "completed" else "warning"
        emit(Notice(f"{job_summary(job)} ({job.id}; output: {job.output_path})", level))

    jobs.on_end = ended
    return jobs


def mark_output_reads(
    jobs: JobRegistry, uses: list[dict[str, Any]], resolve: Callable[[str], Path]
) -> None:
    """A Read of a job's output file counts as the model reading the job."""
    outputs = {str(job.output_path): job.id for job in jobs.jobs()}
    if not outputs:
        return
    for use in uses:
        tool_input = use.get("input")
        if use.get("name") != "Read" or not isinstance(tool_input, dict):
            continue
        path = tool_input.get("file_path")
        if isinstance(path, str) and (job_id := outputs.get(str(resolve(path)))) is not None:
            jobs.mark_read(job_id)
