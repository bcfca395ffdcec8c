"""Monitor: Claude Code 2.1.328's tool that watches a command, each stdout line an event.

The command runs as a background job (kind ``monitor``) through the session's
Bash tool: same shell, folder, environment and sandbox. Its stdout is the
event stream: each complete line is handed to the job registry, which batches
lines that come close together and tells the model at its next request (and,
when the session is idle, starts a turn for it: tui.session.driver). Stderr
only goes to the output file. The watch ends when the command exits, at its
deadline (``timeout_ms``, capped at 10 minutes) or by TaskStop; a command
that floods (more than FLOOD_LINES lines in FLOOD_WINDOW_S) is stopped and
the model told to filter harder. WebSocket sources (``ws``) are refused:
ccx opens no sockets of its own for the model.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any, ClassVar

from pydantic import Field

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.bash import BashTool
from tools.jobs import JobRegistry

DEFAULT_TIMEOUT_MS = 300_000
CAP_TIMEOUT_MS = 600_000
FLOOD_LINES = 200
FLOOD_WINDOW_S = 10.0


class MonitorParams(ToolParams):
    description: str = Field(description="What is watched, shown with each event")
    timeout_ms: float = Field(default=DEFAULT_TIMEOUT_MS, ge=1000, le=3_600_000)
    command: str | None = None
    ws: dict[str, Any] | None = Field(default=None, description="Not supported by ccx")


class StdoutLines:
    """Cuts a command's stdout into lines for the registry, and stops a flood."""

    def __init__(self, jobs: JobRegistry) -> None:
        self.jobs = jobs
        self.job_id: str | None = None
        self.partial = b""
        self.early: list[str] = []  # lines before the job was registered
        self.recent: deque[float] = deque()
        self.flooded = False

    def feed(self, chunk: bytes) -> None:
        data = self.partial + chunk
        *complete, self.partial = data.split(b"\n")
        lines = [
            line.decode("utf-8", errors="replace").rstrip("\r") for line in complete if line.strip()
        ]
        if lines:
            self.deliver(lines)

    def deliver(self, lines: list[str]) -> None:
        if self.flooded:
            return
        if self.job_id is None:
            self.early += lines
            return
        now = time.monotonic()
        self.recent.extend([now] * len(lines))
        while self.recent and now - self.recent[0] > FLOOD_WINDOW_S:
            self.recent.popleft()
        if len(self.recent) > FLOOD_LINES:
            self.flooded = True
            reason = (
                f"stopped by ccx: more than {FLOOD_LINES} events in {FLOOD_WINDOW_S:g} s; "
                "start it again with a tighter filter"
            )
            asyncio.get_running_loop().create_task(self.jobs.stop(self.job_id, reason))
            return
        self.jobs.add_events(self.job_id, lines)

    def started(self, job_id: str) -> None:
        self.job_id = job_id
        early, self.early = self.early, []
        if early:
            self.deliver(early)


class MonitorTool(Tool[MonitorParams]):
    name: ClassVar[str] = "Monitor"
    deferred: ClassVar[bool] = True  # loaded with ToolSearch when needed
    is_mutating: ClassVar[bool] = True  # runs a command: the gate judges it as Bash's

    def __init__(self, shell: BashTool, jobs: JobRegistry) -> None:
        self.shell = shell
        self.jobs = jobs

    def label(self, params: MonitorParams, cwd: StrPath | None = None) -> str:
        return f"Monitor {one_line(params.description, 60)}"

    async def run(self, params: MonitorParams, ctx: ToolContext) -> ToolResult:
        if params.ws is not None:
            return ToolResult.error(
                "ccx's Monitor cannot open WebSockets; give a `command` instead (e.g. a script "
                "that connects and prints one line per message)."
            )
        command = (params.command or "").strip()
        if not command:
            return ToolResult.error("Monitor needs `command`: the script whose lines to watch.")
        timeout_ms = int(min(params.timeout_ms, CAP_TIMEOUT_MS))
        lines = StdoutLines(self.jobs)
        description = params.description.strip() or one_line(command, 60)
        job = await self.shell.start_monitor(command, description, ctx, timeout_ms, lines.feed)
        if isinstance(job, ToolResult):
            return job
        lines.started(job.id)
        text = (
            f"Monitor started as job {job.id}; it watches for {timeout_ms / 1000:g} s. Each "
            "stdout line reaches you as an event, on its own schedule; keep working. Stop it "
            f"with TaskStop; stderr and every line are in {job.output_path}."
        )
        display = f"Monitor started · {job.id} · timeout {timeout_ms / 1000:g} s"
        meta = {"job_id": job.id, "command": command, "output_path": str(job.output_path)}
        return ToolResult(text, display=display, meta=meta)
