"""A real agent loop with a ContextManager against the fake API, shared by the manager tests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic

from agent.core.events import Event
from agent.loop.agent import Agent, AgentConfig
from agent.loop.tool_runner import ToolRunner
from agent.model.client import ModelClient, RetryPolicy
from agent.permissions.gate import PermissionGate
from compaction.manager import ContextManager
from compaction.services import CompactionServices
from compaction.session_memory import SessionMemory
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from compaction.thresholds import ContextLimits, WindowConfig
from tools.base import ToolContext
from tools.file_state import FileStateCache, normalize_path
from tools.registry import default_tools
from tui.fake_api import FakeApi, text_reply, tool_reply

MODEL = "claude-sonnet-5-5"
LIMITS = ContextLimits(200_000, 64_000)


class Hooks:
    def __init__(self, block: bool = False, interrupt_session_start: bool = False) -> None:
        self.block = block
        self.interrupt_session_start = interrupt_session_start
        self.calls: list[tuple[str, Any]] = []
        self.payloads: list[dict[str, Any]] = []

    async def run(self, event: str, value: Any, payload: dict[str, Any]) -> Any:
        self.calls.append((event, value))
        self.payloads.append(payload)
        if event == "SessionStart" and self.interrupt_session_start:
            raise asyncio.CancelledError  # Esc while the hook runs
        outcome = type("Outcome", (), {})()
        outcome.blocked = self.block and event == "PreCompact"
        outcome.block_reason = "not now"
        outcome.messages = []
        outcome.additional_context = ["hook says hello"] if event == "SessionStart" else []
        return outcome


class Setup:
    def __init__(
        self,
        api: FakeApi,
        tmp_path: Path,
        window: int = 40_000,
        hooks: Hooks | None = None,
        limits: ContextLimits = LIMITS,
        session_memory: SessionMemory | None = None,
    ):
        self.api = api
        self.repo = tmp_path / "repo"
        self.repo.mkdir(parents=True)
        for index in range(12):
            (self.repo / f"m{index:02d}.py").write_text(
                f"FACT_{index} = {index}\n" + "value = 1\n" * 600
            )
        self.events: list[Event] = []
        self.file_state = FileStateCache()
        ctx = ToolContext(
            cwd=self.repo, file_state=self.file_state, session_dir=tmp_path / "session"
        )
        gate = PermissionGate("bypassPermissions", [], [], [], cwd=self.repo)
        runner = ToolRunner(default_tools(), ctx, gate, self.events.append)
        client = anthropic.AsyncAnthropic(base_url=api.url, api_key="test", max_retries=0)
        self.agent = Agent(
            config=AgentConfig(model=MODEL),
            client=ModelClient(
                client, RetryPolicy(max_attempts=2, base_delay_s=0.001), self.events.append
            ),
            runner=runner,
            system=[{"type": "text", "text": "You are a test agent."}],
            emit=self.events.append,
        )
        self.hooks = hooks
        services = CompactionServices(
            file_state=self.file_state,
            invoked_skills=lambda: [("deploy", "/skills/deploy/SKILL.md", "Step 1. Build.\n" * 10)],
            plan=lambda: ("/plans/p.md", "1. read\n2. fix"),
            run_hook=hooks.run if hooks else None,
            resolve_path=lambda path: normalize_path(ctx.resolve(path)),  # as context_setup does
        )
        self.manager = ContextManager(
            limits_for=lambda model: limits,
            window=WindowConfig(window, True, True, "cli"),
            services=services,
            emit=self.events.append,
            session_memory=session_memory,
        )
        self.agent.policy = self.manager

    def read_script(self, count: int) -> list[Any]:
        return [
            tool_reply(("Read", {"file_path": str(self.repo / f"m{i:02d}.py")}))
            for i in range(count)
        ]

    def summaries(self) -> list[Any]:
        return [r for r in self.api.requests if SUMMARY_MARK in r.last_user_text()]

    def main_requests(self) -> list[Any]:
        return [r for r in self.api.requests if SUMMARY_MARK not in r.last_user_text()]


def summary_reply(_request: Any) -> Any:
    return text_reply(
        "<analysis>scratch</analysis><summary>1. Primary request: read all modules.</summary>"
    )
