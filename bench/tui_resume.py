"""Resuming a 2,000-message session in the full-screen app: open, scroll, peak memory.

.venv/bin/python bench/tui_resume.py [--messages 2000]

Writes a session of prompts, tool calls, tool results and Markdown answers,
then runs `ccx -r ID` in a pseudo-terminal and times: launch to the last
answer on screen, first paint to that moment (the app's own part), then
ctrl+home to the top of what is mounted (the "load earlier" button) and
ctrl+end back to the last answer. Peak RSS is VmHWM of the ccx process.
Targets: open and scroll <= 1 s; RSS <= 300 MB.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.session_overhead import CCX, precompile, user_environment
from bench.tui_pty import PtyApp
from tui.fake_api import FakeApi

TARGET_S = 1.0
TARGET_RSS_MB = 300
LAST = "finalanswermarker"

ANSWER = """## Step {i}

The change in `src/module_{i}.py` keeps the retry loop but moves the backoff into
its own function, so the tests can drive it without sleeping. Two callers
needed updating; both now pass the clock in explicitly.

- `retry()` takes `clock` and `sleep` parameters
- the default policy is unchanged: 5 attempts, doubling from 0.5 s
- errors other than timeouts are re-raised at once

```python
def backoff(attempt: int, base: float = 0.5) -> float:
    return min(32.0, base * 2 ** attempt)
```
"""


def write_session(cwd: Path, config: Path, messages: int) -> str:
    """A stored session of ``messages`` messages (rounds of 4); returns its id."""
    from agent.core.messages import Message, tool_result_block, user_text
    from agent.sessions.session import Session

    session = Session.create(cwd, "claude-sonnet-4-5", config_dir=config)
    rounds = messages // 4
    output = "\n".join(f"{n}\tline {n} of the file under review" for n in range(1, 60))
    for i in range(rounds):
        session.append_message(user_text(f"Please look at module {i} and tidy the retry code."))
        use = {
            "type": "tool_use",
            "id": f"toolu_{i:06d}",
            "name": "Read" if i % 3 else "Bash",
            "input": {"file_path": f"src/module_{i}.py"} if i % 3 else {"command": "pytest -q"},
        }
        session.append_message(
            Message(
                "assistant",
                [{"type": "text", "text": f"Reading module {i} first."}, use],
                kind="response",
                api_id=f"msg_a{i}",
            )
        )
        session.append_message(
            Message("user", [tool_result_block(use["id"], output)], kind="tool_result")
        )
        text = ANSWER.format(i=i) + (f"\n{LAST}\n" if i == rounds - 1 else "")
        session.append_message(
            Message("assistant", [{"type": "text", "text": text}], kind="response", api_id=f"m{i}")
        )
    session.close()
    return session.id


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args()
    precompile()
    with tempfile.TemporaryDirectory() as tmp, FakeApi() as api:
        cwd = Path(tmp) / "repo"
        cwd.mkdir()
        (cwd / ".git").mkdir()
        config = Path(tmp) / "config"
        session_id = write_session(cwd, config, args.messages)
        size_mb = sum(p.stat().st_size for p in config.rglob("*.jsonl")) / 1e6
        paint_file = Path(tmp) / "paint.json"
        env = user_environment() | {
            "CCX_CONFIG_DIR": str(config),
            "HOME": tmp,
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "bench",
            "CCX_FIRST_PAINT_FILE": str(paint_file),
        }
        app = PtyApp([CCX, "-r", session_id], env, cwd)
        try:
            shown = app.wait_for(LAST.encode(), timeout=60)
            app.wait_for(b"Resumed session", timeout=30)
            painted = json.loads(paint_file.read_text())["time"]
            time.sleep(0.3)
            offset = app.offset()
            sent = app.write(b"\x1b[1;5H")  # ctrl+home
            top = app.wait_for(b"Load earlier messages", start=offset, timeout=30) - sent
            offset = app.offset()
            sent = app.write(b"\x1b[1;5F")  # ctrl+end
            end = app.wait_for(LAST.encode(), start=offset, timeout=30) - sent
            rss = app.peak_rss_mb()
        finally:
            code = app.quit()
    opened = shown - painted
    report = {
        "messages": args.messages,
        "session_file_mb": round(size_mb, 1),
        "launch_to_first_paint_s": round(painted - app.launched, 3),
        "launch_to_history_on_screen_s": round(shown - app.launched, 3),
        "first_paint_to_history_on_screen_s": round(opened, 3),
        "scroll_to_top_of_mounted_s": round(top, 3),
        "scroll_back_to_end_s": round(end, 3),
        "open_and_scroll_s": round(opened + top + end, 3),
        "peak_rss_mb": round(rss, 1),
        "exit_code": code,
        "targets": {"open_and_scroll_s": TARGET_S, "peak_rss_mb": TARGET_RSS_MB},
        "meets_targets": opened + top + end <= TARGET_S and rss <= TARGET_RSS_MB,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
