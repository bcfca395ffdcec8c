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

from agent.core.events import EventSink, Notice, NoticeLevel
from agent.core.messages import ToolUseBlock
from tools.jobs import Job, JobRegistry, format_runtime, job_summary


def build_jobs(folder: Path | None, emit: EventSink) -> JobRegistry:
    jobs = JobRegistry(folder)

    def ended(job: Job) -> None:
        level: NoticeLevel = "info" if job.status == "completed" else "warning"
        emit(Notice(f"{job_summary(job)} ({job.id}; output: {job.output_path})", level))

    jobs.end_listeners.append(ended)
    return jobs


def mark_output_reads(
    jobs: JobRegistry, uses: list[ToolUseBlock], resolve: Callable[[str], Path]
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


def job_rows(jobs: list[Job]) -> list[dict[str, Any]]:
    """The jobs as plain rows (id, kind, status, runtime_s, description, output path)."""
    return [
        {
            "id": job.id,
            "kind": job.kind,
            "status": job.status,
            "runtime_s": round(job.runtime_s, 1),
            "description": job.description,
            "output_path": str(job.output_path),
        }
        for job in jobs
    ]


# Claude Code's names for the kinds of background work (its hook payloads' ``type``).
HOOK_TASK_TYPES = {"bash": "shell", "agent": "subagent", "monitor": "monitor"}


def stop_hook_tasks(jobs: JobRegistry) -> list[dict[str, Any]]:
    """Stop's ``background_tasks``: the jobs still running, in Claude Code's shape, so a hook
    can tell a session that is done from one waiting on background work."""
    return [
        {
            "id": job.id,
            "type": HOOK_TASK_TYPES.get(job.kind, job.kind),
            "status": job.status,
            "description": job.description,
        }
        for job in jobs.running()
    ]


def render_jobs(jobs: list[Job]) -> str:
    """/tasks: one line a job, newest last, with how to stop one."""
    if not jobs:
        return "No background jobs in this session."
    lines = [
        f"{job.id}  {job.kind:<5}  {job.status:<9}  {format_runtime(job.runtime_s):>7}  "
        f"{job.description}"
        for job in jobs
    ]
    if any(job.running for job in jobs):
        lines.append("Stop one with /tasks stop ID.")
    return "\n".join(lines)
