"""What a compaction restores about background work: each job still running or ended and
unread, once (not again when the kept messages still show it), and the agents listing once."""

from __future__ import annotations

from pathlib import Path

from agent.core.messages import Message, user_text
from compaction.restore_jobs import JOBS_HEADER, background_items
from compaction.services import CompactionServices
from tests.compaction.manager_harness import Setup
from tools.file_state import FileStateCache
from tools.jobs import JobRegistry, notification_text
from tui.fake_api import text_reply


def services(jobs: JobRegistry, listing: str | None = None) -> CompactionServices:
    return CompactionServices(
        file_state=FileStateCache(), background_jobs=jobs.unread, agents_listing=lambda: listing
    )


def test_running_and_unread_jobs_come_back_once_with_their_state(tmp_path: Path) -> None:
    jobs = JobRegistry(tmp_path)
    running = jobs.start("bash", "serve the docs")
    jobs.report_progress(running.id, "listening on :8000")
    failed = jobs.start("agent", "triage the bug")
    jobs.finish(failed.id, "failed", error="ran out of turns")
    read = jobs.start("bash", "lint")
    jobs.finish(read.id, "completed", exit_code=0)
    jobs.read_new(read.id)
    listing = "Agents you can start with the Agent tool:\n- reviewer: reviews diffs"
    items = background_items(services(jobs, listing), kept=[])
    assert [item.kind for item in items] == ["jobs", "agents"]
    text = items[0].text
    assert text.startswith(JOBS_HEADER)
    assert text.count(f"- {running.id} (bash, running") == 1
    assert "listening on :8000" in text and str(running.output_path) in text
    assert text.count(f"- {failed.id} (agent, failed") == 1 and "ran out of turns" in text
    assert read.id not in text
    assert items[1].text == listing


def test_what_the_kept_messages_still_show_is_not_repeated(tmp_path: Path) -> None:
    jobs = JobRegistry(tmp_path)
    running = jobs.start("bash", "serve")
    told = jobs.start("bash", "build")
    jobs.finish(told.id, "failed", exit_code=2)
    stale = jobs.start("bash", "test")
    listing = "Agents: reviewer"
    kept: list[Message] = [
        user_text(f"Command running in the background as job {running.id}; ..."),
        user_text(notification_text(told), kind="meta"),
        user_text(f"Command running in the background as job {stale.id}; ..."),
        user_text(listing, kind="attachment"),
    ]
    jobs.finish(
        stale.id, "completed", exit_code=0
    )  # it ended after the kept message said "running"
    items = background_items(services(jobs, listing), kept)
    assert [item.kind for item in items] == ["jobs"]
    assert running.id not in items[0].text and told.id not in items[0].text
    assert f"- {stale.id} (bash, completed" in items[0].text


def test_nothing_running_restores_nothing(tmp_path: Path) -> None:
    assert background_items(services(JobRegistry(tmp_path)), kept=[]) == []


async def test_full_and_partial_compactions_restore_a_running_job_once(api, tmp_path) -> None:
    setup = Setup(api, tmp_path)
    jobs = JobRegistry(tmp_path / "session")
    job = jobs.start("bash", "watch the tests")
    setup.manager.services.background_jobs = jobs.unread
    api.add(*setup.read_script(3), text_reply("read three"))
    await setup.agent.submit("read three")
    api.add(text_reply("<summary>older part</summary>"))
    await setup.manager.compact(setup.agent, partial="up_to", keep_rounds=1)
    assert _lines_naming(setup, job.id) == 1
    api.add(text_reply("<summary>all of it</summary>"))
    await setup.manager.compact(setup.agent)
    assert _lines_naming(setup, job.id) == 1
    api.add(text_reply("still watching"))
    await setup.agent.submit("how is it going?")
    sent = api.requests[-1].all_text()
    assert len([line for line in sent.splitlines() if job.id in line]) == 1
    jobs.finish(job.id, "killed")


def _lines_naming(setup: Setup, job_id: str) -> int:
    text = "\n".join(
        str(block.get("text", "")) for m in setup.agent.messages for block in m.content
    )
    return len([line for line in text.splitlines() if job_id in line])


def test_a_task_output_is_cleared_like_a_command_output() -> None:
    from compaction.markers import marker_for
    from compaction.microcompact import COMPACTABLE_TOOLS
    from compaction.result_index import Candidate

    assert "TaskOutput" in COMPACTABLE_TOOLS
    candidate = Candidate("toolu_1", "TaskOutput", {"task_id": "b12345678"}, 3, 9_000.0)
    # the TaskOutput call beside the marker keeps the job's id; the marker does not repeat it
    assert marker_for(candidate) == "[Cleared to save context: old output.]"
