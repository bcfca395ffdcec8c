"""Session-level hooks: Notification on a permission prompt, SessionEnd bounded, prompt checks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agent.core.events import Event, Notice
from agent.instructions.hooks import HookRunner
from agent.loop.tool_runner import Answer, PermissionRequest
from agent.permissions.rules import Rule
from tools.jobs import JobRegistry
from tui.session.jobs_setup import stop_hook_tasks
from tui.session.session_hooks import SessionHooks


def hooks_of(tmp_path: Path, config: dict[str, Any]) -> tuple[SessionHooks, list[Event]]:
    events: list[Event] = []
    runner = HookRunner(config, tmp_path, "s-1", tmp_path / "t.jsonl", mode=lambda: "default")
    return SessionHooks(runner, events.append), events


def group(command: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **extra}]}
    if matcher is not None:
        entry["matcher"] = matcher
    return entry


async def test_a_permission_prompt_fires_notification(tmp_path: Path) -> None:
    out = tmp_path / "note.json"
    hooks, _ = hooks_of(tmp_path, {"Notification": [group(f"cat > {out}", "permission_prompt")]})
    asked: list[str] = []

    async def ask(request: PermissionRequest) -> Answer:
        asked.append(request.tool_name)
        return "deny"

    wrapped = hooks.asking(ask)
    assert wrapped is not None and hooks.asking(None) is None
    request = PermissionRequest("toolu_1", "Bash", {"command": "ls"}, "ls", "why", Rule("Bash"))
    assert await wrapped(request) == "deny" and asked == ["Bash"]
    await hooks.session_end()  # waits for the background notification
    data = json.loads(out.read_text())
    assert data["hook_event_name"] == "Notification"
    assert data["notification_type"] == "permission_prompt" and "Bash" in data["message"]


async def test_session_end_is_bounded(tmp_path: Path) -> None:
    hooks, events = hooks_of(tmp_path, {"SessionEnd": [group("sleep 30", timeout=60)]})
    hooks.end_timeout = 0.5
    await hooks.session_end("prompt_input_exit")
    # stopped at ccx's bound, not the hook's own 60 s
    assert any(isinstance(e, Notice) and "timed out after 0.5 s" in e.text for e in events)


async def test_prompt_check_block_and_context(tmp_path: Path) -> None:
    hooks, events = hooks_of(
        tmp_path,
        {"UserPromptSubmit": [group("grep -q secret && { echo no >&2; exit 2; }; echo ctx")]},
    )
    blocked = await hooks.prompt_submitted("a secret")
    assert blocked.blocked and "no" in blocked.reason
    (notice,) = [e for e in events if isinstance(e, Notice)]  # seen in every front end
    assert "The prompt, not sent: a secret" in notice.text
    passed = await hooks.prompt_submitted("hello")
    assert not passed.blocked and "ctx" in passed.context


async def test_waiting_for_input_fires_an_idle_notification_unless_a_prompt_comes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "idle.json"
    hooks, _ = hooks_of(tmp_path, {"Notification": [group(f"cat >> {out}", "idle_prompt")]})
    hooks.waiting_for_input(delay=0.05)
    hooks.cancel_idle()  # a prompt came first: nothing fires
    hooks.waiting_for_input(delay=0.05)
    for _ in range(200):
        if hooks._background or out.exists():
            break
        await asyncio.sleep(0.05)
    await hooks.session_end()  # waits for the notification's hook
    (data,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert data["notification_type"] == "idle_prompt" and "waiting" in data["message"]


async def test_stop_tells_the_hook_which_background_jobs_still_run(tmp_path: Path) -> None:
    out = tmp_path / "stop.jsonl"
    log = group(f"cat >> {out}; echo >> {out}")
    hooks, _ = hooks_of(tmp_path, {"Stop": [log], "SubagentStop": [log]})
    jobs = JobRegistry(tmp_path)
    hooks.background_tasks = lambda: stop_hook_tasks(jobs)
    shell = jobs.start("bash", "npm run dev")
    watch = jobs.start("monitor", "errors in the log")
    ended = jobs.start("agent", "survey the tests")
    jobs.finish(ended.id, "completed")
    assert await hooks.stop(False, "Waiting on the server.") is None
    assert await hooks.subagent_stop(False, "Found 3.", "a1", "Explore") is None
    jobs.finish(shell.id, "killed")
    jobs.finish(watch.id, "completed")
    assert await hooks.stop(False, "Done.") is None
    first, subagent, second = [json.loads(line) for line in out.read_text().splitlines() if line]
    assert subagent["background_tasks"] == first["background_tasks"]
    assert first["background_tasks"] == [
        {"id": shell.id, "type": "shell", "status": "running", "description": "npm run dev"},
        {
            "id": watch.id,
            "type": "monitor",
            "status": "running",
            "description": "errors in the log",
        },
    ]
    assert second["background_tasks"] == [] and second["session_crons"] == []
