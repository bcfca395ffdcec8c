"""TaskOutput and TaskStop: the model's hands on the session's background jobs.

TaskStop has Claude Code 2.1.328's name and input schema (``task_id``, and the
deprecated ``shell_id``). 2.1.328 has no tool to read a job's output (it points
the model at the output file); TaskOutput keeps the name and schema earlier
Claude Code versions sent (``task_id``, ``block``, ``timeout``) and adds
BashOutput's ``filter``: it returns the output written since the model last
looked, with the job's status and exit code.
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import Field

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult
from tools.jobs import Job, JobRegistry, format_runtime, job_summary

DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000


class TaskOutputParams(ToolParams):
    task_id: str = Field(description="The id of the background job to read.")
    block: bool = Field(
        default=True, description="Wait for the job to end (up to `timeout`) before answering."
    )
    timeout: float = Field(
        default=DEFAULT_WAIT_MS,
        ge=0,
        le=MAX_WAIT_MS,
        description="How long to wait when blocking, in milliseconds.",
    )
    filter: str | None = Field(
        default=None,
        description="A regular expression: only new lines that match it are returned; the rest "
        "count as read.",
    )


class TaskStopParams(ToolParams):
    task_id: str | None = Field(default=None, description="The id of the background job to stop.")
    shell_id: str | None = Field(default=None, description="Deprecated: use task_id instead.")


def _unknown(registry: JobRegistry, job_id: str) -> ToolResult:
    known = ", ".join(job.id for job in registry.jobs()) or "none"
    return ToolResult.error(f"No background job with id {job_id!r}. Jobs of this session: {known}.")


def _header(job: Job) -> list[str]:
    lines = [
        f"<job-id>{job.id}</job-id>",
        f"<status>{job.status}</status>",
        f"<runtime>{format_runtime(job.runtime_s)}</runtime>",
    ]
    if job.exit_code is not None:
        lines.append(f"<exit-code>{job.exit_code}</exit-code>")
    if job.error:
        lines.append(f"<error>{job.error}</error>")
    return lines


class TaskOutputTool(Tool[TaskOutputParams]):
    name: ClassVar[str] = "TaskOutput"
    is_mutating: ClassVar[bool] = False

    def __init__(self, jobs: JobRegistry) -> None:
        self.jobs = jobs

    def label(self, params: TaskOutputParams, cwd: StrPath | None = None) -> str:
        return f"TaskOutput {params.task_id}"

    async def run(self, params: TaskOutputParams, ctx: ToolContext) -> ToolResult:
        try:
            pattern = re.compile(params.filter) if params.filter else None
        except re.error as exc:
            return ToolResult.error(f"The filter {params.filter!r} is not a valid regex: {exc}")
        job = self.jobs.get(params.task_id)
        if job is None:
            return _unknown(self.jobs, params.task_id)
        if params.block and job.running:
            await self.jobs.wait(job.id, params.timeout / 1000)
        text, more = self.jobs.read_new(job.id, pattern)
        body = text.rstrip("\n") or (
            "(no new output)" if pattern is None else "(no new lines match)"
        )
        lines = [*_header(job), f"<output>\n{body}\n</output>"]
        if more:
            lines.append("[More output is waiting: call TaskOutput again for the next part.]")
        display = f"{job_summary(job)}; {len(text.splitlines())} new lines"
        meta = {"job_id": job.id, "status": job.status, "exit_code": job.exit_code}
        return ToolResult("\n".join(lines), display=display, meta=meta)


class TaskStopTool(Tool[TaskStopParams]):
    name: ClassVar[str] = "TaskStop"
    deferred: ClassVar[bool] = True  # loaded with ToolSearch when needed (as Claude Code does)
    # Ends only jobs this session started; asking first would leave a runaway job running.
    is_mutating: ClassVar[bool] = False

    def __init__(self, jobs: JobRegistry) -> None:
        self.jobs = jobs

    def label(self, params: TaskStopParams, cwd: StrPath | None = None) -> str:
        return f"TaskStop {params.task_id or params.shell_id or ''}".rstrip()

    async def run(self, params: TaskStopParams, ctx: ToolContext) -> ToolResult:
        job_id = params.task_id or params.shell_id
        if not job_id:
            return ToolResult.error("TaskStop needs task_id: the id of the job to stop.")
        job = self.jobs.get(job_id)
        if job is None:
            return _unknown(self.jobs, job_id)
        if not job.running:
            return ToolResult.error(f"Job {job.id} is not running: {job_summary(job)}.")
        await self.jobs.stop(job.id)
        self.jobs.mark_read(job.id)  # this result tells the model: no notice of the end follows
        text = (
            f"Stopped job {job.id} ({job.description}). Its output so far is in {job.output_path}."
        )
        meta = {"job_id": job.id, "status": job.status}
        return ToolResult(text, display=f"Stopped {job.id}", meta=meta)
