"""Typing while a reply streams at 2,000 tokens/s: keystroke-to-screen latency and backlog.

.venv/bin/python bench/tui_streaming.py [--tokens 6000] [--rate 2000]

The real `ccx` app runs in a pseudo-terminal against the fake API, which
streams a ~6,000-token Markdown reply at 2,000 tokens/s (deltas of ~4
tokens, as the API sends them). While it streams, the script types one
character at a time into the prompt and times each from the write to the
pty until the character arrives in the terminal output (each typed
character is a distinct CJK ideograph, which neither the reply nor any
escape sequence contains). Backlog: the time from the server sending the
last delta to the reply's last word reaching the terminal. The fake API runs
in a process of its own (``--serve``), so its pacing thread does not compete
with the measuring thread for this process's GIL.
Targets: keystroke p95 <= 50 ms while streaming, no backlog.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.session_overhead import CCX, precompile, user_environment
from bench.tui_pty import PtyApp
from tui.fake_api import FakeApi, text_reply

END_MARK = "zzendofreplyzz"
FIRST_WORD = "streamingbeginshere"
WORDS = [
    "context",
    "window",
    "tokens",
    "compaction",
    "summary",
    "session",
    "model",
    "tool",
    "result",
    "cache",
    "prefix",
]
KEY_GAP_S = 0.03
TARGET_P95_MS = 50.0


def reply_text(tokens: int) -> str:
    """Lowercase Markdown of about ``tokens`` tokens (4 characters each)."""
    parts = [f"# {FIRST_WORD}\n\n"]
    size, index = 0, 0
    while size < tokens * 4:
        words = [WORDS[(index + i * 7) % len(WORDS)] for i in range(60)]
        if index % 5 == 4:
            block = "\n".join(f"- {' '.join(words[i : i + 6])}" for i in range(0, 30, 6)) + "\n\n"
        elif index % 7 == 6:
            block = "```python\n" + "\n".join(f"{w} = {w}_value" for w in words[:8]) + "\n```\n\n"
        else:
            block = " ".join(words) + ".\n\n"
        parts.append(block)
        size += len(block)
        index += 1
    parts.append(f"the end {END_MARK}\n")
    return "".join(parts)


def keystrokes(
    app: PtyApp, count: int, start_char: int, stop: Callable[[], bool] = lambda: False
) -> list[float]:
    """Type ``count`` distinct characters (or until ``stop()``); each one's latency in ms."""
    latencies = []
    for index in range(count):
        if stop():
            break
        char = chr(start_char + index).encode()
        offset = app.offset()
        sent = app.write(char)
        seen = app.wait_for(char, start=offset, timeout=5)
        latencies.append((seen - sent) * 1000)
        time.sleep(KEY_GAP_S)
    return latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "count": len(values),
        "median_ms": round(statistics.median(values), 1),
        "p95_ms": round(percentile(values, 0.95), 1),
        "max_ms": round(max(values), 1),
    }


def serve(tokens: int, rate: float) -> None:
    """The fake API in this process: print its URL, stream on request, report timing at EOF."""
    reply = text_reply(reply_text(tokens), tokens_per_s=rate, chunk_chars=16)
    with FakeApi([reply]) as api:
        print(api.url, flush=True)
        sys.stdin.read()
        offset = time.time() - time.perf_counter()
        done = [offset + r.received_at + r.server_seconds for r in api.requests]
        print(json.dumps({"done": done, "seconds": [r.server_seconds for r in api.requests]}))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tokens", type=int, default=6000)
    parser.add_argument("--rate", type=float, default=2000.0)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.tokens, args.rate)
        return
    precompile()
    text = reply_text(args.tokens)
    server = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            "--tokens",
            str(args.tokens),
            "--rate",
            str(args.rate),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    url = server.stdout.readline().strip()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp) / "repo"
        cwd.mkdir()
        (cwd / ".git").mkdir()
        env = user_environment() | {
            "CCX_CONFIG_DIR": str(Path(tmp) / "config"),
            "HOME": tmp,
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "bench",
        }
        app = PtyApp([CCX], env, cwd)
        try:
            app.wait_for(b"until auto-compact", timeout=30)
            time.sleep(3)  # let the agent thread finish warming up (the anthropic import)
            idle = keystrokes(app, 30, 0x4E00)
            app.write(b"\x03")  # ctrl+c: empty the prompt
            time.sleep(0.2)
            offset = app.offset()
            app.write(b"stream please\r")
            app.wait_for(FIRST_WORD.encode(), start=offset, timeout=30)
            streaming = keystrokes(
                app, 2_000, 0x5000, stop=lambda: app.contains(END_MARK.encode(), offset)
            )
        except BaseException:
            app.quit()
            raise
        end_seen = app.wait_for(END_MARK.encode(), start=offset, timeout=60)
        rss = app.peak_rss_mb()
        code = app.quit()
    timing = json.loads(server.communicate("")[0])
    server_done, stream_seconds = timing["done"][-1], timing["seconds"][-1]
    report = {
        "reply_tokens": round(len(text) / 4),
        "stream_rate_tokens_per_s": args.rate,
        "server_stream_seconds": round(stream_seconds, 2),
        "method": "pty: write a character to the terminal, time until it is in the output",
        "idle_keystrokes": summary(idle),
        "streaming_keystrokes": summary(streaming),
        "backlog_ms": round((end_seen - server_done) * 1000, 1),
        "peak_rss_mb": round(rss, 1),
        "exit_code": code,
        "target_p95_ms": TARGET_P95_MS,
        "meets_target": percentile(streaming, 0.95) <= TARGET_P95_MS,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
