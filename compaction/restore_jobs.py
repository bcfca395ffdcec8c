"""What a compaction restores about work going on beside the conversation.

Background jobs (Bash commands and agents) still running or ended and not yet
read, with their description, status, latest progress or error and output
file; processes a foreground command left running; and the list of agents the
model may start. Each comes back exactly once: a job whose current state the
kept messages still show (a partial or session-memory compaction keeps the
newest messages) is not repeated, nor is an agents list they already carry.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent.core.messages import Message
from compaction.restore import RestoredItem, text_item
from compaction.services import CompactionServices
from tools.jobs import Job, status_line

JOBS_HEADER = "Background jobs (read one with TaskOutput, stop one with TaskStop):"


def background_items(services: CompactionServices, kept: list[Message]) -> list[RestoredItem]:
    """The restored items for background work, in a fixed order: jobs, processes, agents."""
    shown = _kept_text(kept)
    items = []
    jobs = [job for job in services.background_jobs() if not _still_shown(job, shown)]
    if jobs:
        text = JOBS_HEADER + "\n" + "\n".join(status_line(job) for job in jobs)
        items.append(text_item("jobs", "background jobs", text))
    if tasks := services.background_tasks():
        text = "Processes left running by earlier commands:\n" + "\n".join(f"- {t}" for t in tasks)
        items.append(text_item("tasks", "background tasks", text))
    listing = services.agents_listing()
    if listing and listing.strip() not in shown:
        items.append(text_item("agents", "available agents", listing.strip()))
    return items


def _still_shown(job: Job, shown: str) -> bool:
    """Whether the kept messages still show the job as it stands: its start (while it runs)
    or the notice of its end."""
    if job.running:
        return job.id in shown
    return f"<job-id>{job.id}</job-id>" in shown and f"<status>{job.status}</status>" in shown


def _kept_text(kept: Iterable[Message]) -> str:
    parts: list[str] = []
    for message in kept:
        for block in message.content:
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, str):
                    parts.append(content)
                elif isinstance(content, list):
                    parts += [str(b.get("text", "")) for b in content if isinstance(b, dict)]
    return "\n".join(parts)
