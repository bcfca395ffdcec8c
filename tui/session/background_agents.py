"""Background agents: an Agent call with ``run_in_background`` returns at once; the run is a job.

The subagent runs as an asyncio task registered in the session's job
registry (kind "agent", the agent's id as the job's id),
so the model is told when it ends, TaskOutput reads its output file and
TaskStop (or the session's end) cancels it. An interrupt of the parent's
turn does not reach it: it is nobody's tool call any more. The output file
gets one line per tool call the subagent makes, then its report (or why it
failed); the job's progress line is its latest call.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from agent.core.events import Event, EventSink, ToolFinished, ToolStarted
from agent.instructions.agents import AgentDefinition
from tools.agent import AgentParams
from tools.base import ToolResult
from tools.jobs import Job, JobRegistry
from tools.result_content import text_block
from tui.session.subagent_report import Ended

log = logging.getLogger(__name__)

STARTED = (
    "The {kind} agent is running in the background.\n"
    "agentId: {id}\n"
    "output_file: {path}\n"
    "You will be told when it finishes, before your next request; until then you know nothing "
    "of its results, so do not guess them. Read its output so far with TaskOutput "
    '(task_id "{id}"), or stop it with TaskStop.'
)


class RunSubagent(Protocol):
    """One subagent to its end (``Subagents.run``)."""

    async def __call__(
        self,
        definition: AgentDefinition,
        params: AgentParams,
        tool_use_id: str,
        agent_id: str,
        background: bool = False,
        on_event: EventSink | None = None,
        output_file: str = "",
    ) -> Ended: ...


def start_in_background(
    jobs: JobRegistry,
    run: RunSubagent,
    definition: AgentDefinition,
    params: AgentParams,
    tool_use_id: str,
) -> ToolResult:
    """Register the job in ``jobs``, start the run, and answer the call with the job's id and
    output."""
    agent_id = jobs.new_id("agent")
    task: asyncio.Task[None] | None = None

    async def stop() -> None:
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})  # its ending is its own; an interrupt of ours goes on up

    def kill() -> None:
        if task is not None:
            task.cancel()

    job = jobs.start(
        "agent",
        params.description,
        job_id=agent_id,
        stop=stop,
        kill=kill,
        tool_use_id=tool_use_id,
    )
    task = asyncio.get_running_loop().create_task(
        _run(jobs, run, definition, params, tool_use_id, job), name=f"ccx-agent-{agent_id}"
    )
    text = STARTED.format(kind=definition.name, id=agent_id, path=job.output_path)
    meta = {"agent_id": agent_id, "agent_type": definition.name, "background": True}
    display = f"running in the background ({agent_id})"
    return ToolResult(output=[text_block(text)], display=display, meta=meta)


async def _run(
    jobs: JobRegistry,
    run: RunSubagent,
    definition: AgentDefinition,
    params: AgentParams,
    tool_use_id: str,
    job: Job,
) -> None:
    output = _Output(job, jobs)
    try:
        ended = await run(
            definition,
            params,
            tool_use_id,
            job.id,
            background=True,
            on_event=output.observe,
            output_file=str(job.output_path),
        )
    except asyncio.CancelledError:
        output.write("(stopped before it finished)\n")
        jobs.finish(job.id, "killed")
        raise
    except Exception as exc:  # a bug around the run: the job says so, the session goes on
        log.exception("background agent %s crashed", job.id)
        output.write(f"(failed: {type(exc).__name__}: {exc})\n")
        jobs.finish(job.id, "failed", error=f"{type(exc).__name__}: {exc}")
        return
    if ended.status == "completed":
        output.write("\n" + ended.report(job.id) + "\n")
        jobs.finish(job.id, "completed")
    else:
        output.write(f"(failed: {ended.text})\n")
        jobs.finish(job.id, "failed", error=ended.text)


class _Output:
    """The job's output file and progress line, from the subagent's events."""

    def __init__(self, job: Job, jobs: JobRegistry) -> None:
        self.job = job
        self.jobs = jobs
        self.labels: dict[str, str] = {}

    def observe(self, event: Event) -> None:
        if isinstance(event, ToolStarted):
            self.labels[event.tool_use_id] = " ".join((event.label or event.name).split())
        elif isinstance(event, ToolFinished):
            label = self.labels.pop(event.tool_use_id, event.name)
            self.write(f"{'✗' if event.is_error else '✓'} {label}\n")
            self.jobs.report_progress(self.job.id, label)

    def write(self, text: str) -> None:
        try:
            with self.job.output_path.open("a", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:  # a full disk loses the output, not the run
            log.warning("cannot write %s: %s", self.job.output_path, exc)
