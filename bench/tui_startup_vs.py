"""First paint side by side: `ccx` and Claude Code launched in tmux at 80x24, alternating.

Used by ``bench/tui_startup.py --vs-claude``. Each launch starts a tmux session running the
client in a clean environment, then reads the pane every few milliseconds until the
client's marker shows: for ccx a token figure in the footer's meter ("5.3K / 1M"), for
Claude Code its footer ("? for shortcuts" or the permission mode's "shift+tab to cycle").
Both talk to the same fake Messages API; Claude Code's home is set up as after its
onboarding (the key approved, the folder trusted) so it opens straight on its prompt.
A tmux server of the benchmark's own is started first, so no launch pays for it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.session_overhead import CCX, user_environment
from tui.fake_api import FakeApi

SIZE = ("80", "24")
POLL_S = 0.005
CCX_FIGURE = re.compile(r"\d+(?:\.\d+)?[KM]? / \d+(?:\.\d+)?[KM]")
CCX_FIRST_FRAME = re.compile(r"/help for commands")  # the header, over "context: starting"
CLAUDE_FOOTER = re.compile(r"\? for shortcuts|shift\+tab to cycle")
KEY = "sk-ant-bench-first-paint-0001"


class Tmux:
    def __init__(self) -> None:
        self.socket = f"ccx-bench-{os.getpid()}"

    def __call__(self, *args: str) -> str:
        run = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        )
        return run.stdout

    def close(self) -> None:
        self("kill-server")


def time_to_marker(
    tmux: Tmux,
    command: list[str],
    env: dict[str, str],
    cwd: Path,
    marker: re.Pattern[str],
    early: re.Pattern[str] | None = None,
    seen: list[float] | None = None,
) -> float:
    """Milliseconds from the launch to ``marker`` on the pane; the time ``early`` showed
    (ccx's first frame) is appended to ``seen``."""
    line = "cd {} && exec env -i {} {}".format(
        shlex.quote(str(cwd)),
        " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()),
        " ".join(shlex.quote(a) for a in command),
    )
    started = time.perf_counter()
    tmux("new-session", "-d", "-s", "run", "-x", SIZE[0], "-y", SIZE[1], line)
    try:
        while True:
            screen = tmux("capture-pane", "-p", "-t", "run")
            if early is not None and seen is not None and early.search(screen):
                seen.append((time.perf_counter() - started) * 1000)
                early = None
            if marker.search(screen):
                return (time.perf_counter() - started) * 1000
            if time.perf_counter() - started > 30:
                raise TimeoutError(f"{command[0]} never showed {marker.pattern!r}:\n{screen}")
            time.sleep(POLL_S)
    finally:
        tmux("kill-session", "-t", "run")
        time.sleep(0.3)  # let the client's exit settle before the next launch


def claude_home(home: Path, cwd: Path) -> None:
    """Claude Code's state after onboarding: no theme picker, key prompt or trust dialog."""
    state = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "numStartups": 5,
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {
            str(cwd): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
        },
    }
    home.mkdir(parents=True, exist_ok=True)
    (home / ".claude.json").write_text(json.dumps(state))


def side_by_side(claude: str, runs: int = 5) -> dict[str, object]:
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed")
    tmux = Tmux()
    with tempfile.TemporaryDirectory() as tmp, FakeApi() as api:
        root = Path(tmp)
        cwd = root / "repo"
        cwd.mkdir()
        (cwd / ".git").mkdir()
        base = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "TERM": "tmux-256color",
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": KEY,
        }
        ccx_env = {
            **{k: v for k, v in user_environment().items() if k.startswith("PYTHON")},
            **base,
            "HOME": str(root / "ccx-home"),
            "CCX_CONFIG_DIR": str(root / "ccx-config"),
        }
        claude_env = {
            **base,
            "HOME": str(root / "claude-home"),
            "IS_SANDBOX": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        claude_home(root / "claude-home", cwd)
        clients = {
            "ccx": ([CCX], ccx_env, CCX_FIGURE),
            "claude": ([claude], claude_env, CLAUDE_FOOTER),
        }
        times: dict[str, list[float]] = {"ccx": [], "claude": []}
        first_frames: list[float] = []
        tmux("new-session", "-d", "-s", "keeper", "-x", SIZE[0], "-y", SIZE[1], "sleep 3600")
        try:
            for argv, env, marker in clients.values():  # warm the OS file cache
                time_to_marker(tmux, argv, env, cwd, marker)
            for index in range(runs):
                order = ("ccx", "claude") if index % 2 == 0 else ("claude", "ccx")
                for name in order:
                    argv, env, marker = clients[name]
                    early = CCX_FIRST_FRAME if name == "ccx" else None
                    elapsed = time_to_marker(tmux, argv, env, cwd, marker, early, first_frames)
                    times[name].append(elapsed)
        finally:
            tmux.close()
    ccx_median = statistics.median(times["ccx"])
    claude_median = statistics.median(times["claude"])
    return {
        "runs": runs,
        "terminal": "tmux 80x24",
        "ccx_token_figure_ms": [round(t) for t in times["ccx"]],
        "ccx_first_frame_ms": [round(t) for t in first_frames],  # header, meter "starting"
        "claude_footer_ms": [round(t) for t in times["claude"]],
        "ccx_median_ms": round(ccx_median),
        "claude_median_ms": round(claude_median),
        "ccx_first_frame_median_ms": round(statistics.median(first_frames or [0])),
        "ratio": round(ccx_median / claude_median, 2),
        "target_ratio": 1.0,
        "meets_target": ccx_median <= claude_median,
    }
