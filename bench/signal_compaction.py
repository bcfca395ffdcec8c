"""Control during a compaction, and empty replies: ccx and Claude Code side by side on the referee.

    .venv/bin/python bench/signal_compaction.py [--runs 3] [--clients ccx,cc] [--only signal|empty]

(``CCX=PATH`` runs another ccx, as the referee's run_ccx.sh does: a build of main, say;
``CCX_SESSION_MEMORY=0`` turns ccx's session memory off, so that what its compaction waits
on is its own summary request rather than the session-notes update.)

Both clients run headless (`-p`) on the same scripted session against the
referee (`../shared/bench/fakeapi.py`), with the environment and flags of its
run_ccx.sh / run_claude.sh; they are started from here rather than through
those scripts because the signal must reach the client itself. Between the
client and the referee sits a small proxy (this file), which adds what the
referee cannot do:

- **signal**: every request the referee classes as a compaction ("compact": a
  summary request, and ccx's session-notes update, which asks for the same
  ``<summary>`` block) is held open, never answered. Once one is held and no
  other request has come for half a second (the client waits on it), the
  client gets SIGINT or SIGTERM. Measured: the time from the signal to the
  client's exit, its exit code, and the requests that reached the proxy after
  the signal. For ccx, `ccx -c -p` then continues the session: it must run,
  and its first request must carry the task and the last step done.
- **empty**: the second agent request of a six-step task gets a reply with no
  content (stop_reason end_turn) instead of the referee's step, once or every
  time. Measured: the exit code, whether the result is an error, and how many
  of the six steps the referee served.

Each step of the signal scenario says a long sentence (the model's words, which
no clearing removes) and runs a short command, so both clients compact after a
dozen steps: ccx at `--autocompact 53000`, Claude Code at 100K with
CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=40 (both thresholds near 40K tokens).
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REFEREE = ROOT.parent / "shared" / "bench"
CCX = os.environ.get("CCX") or str(Path(sys.executable).with_name("ccx"))  # as run_ccx.sh
CLAUDE_BIN = os.environ.get("CLAUDE_BIN") or str(
    Path.home() / ".cache/ccx-peers/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
)
TASK = "Walk through the numbered steps and report when they are all done."
SIGNAL_STEPS = 40
EMPTY_STEPS = 5  # tool steps; the sixth is the final text
QUIET_S = 0.5
SESSION_MEMORY = os.environ.get("CCX_SESSION_MEMORY", "1") != "0"  # ccx's: on by default
EXIT_WAIT_S = 20.0


# -- the referee and the proxy in front of it --------------------------------------------------


def load_referee(folder: Path) -> Any:
    spec = importlib.util.spec_from_file_location("referee_fakeapi", folder / "fakeapi.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Proxy:
    """Forwards to the referee; holds compaction requests or answers empty, as told."""

    def __init__(self, referee_port: int, classify: Any) -> None:
        self.referee_port = referee_port
        self.classify = classify
        self.hold = False
        self.empty_at: int | None = None  # the agent request (1-based) that gets empty replies
        self.empty_times = 0  # how many times in a row (from empty_at on)
        self.lock = threading.Lock()
        self.log: list[tuple[float, str]] = []  # (time, kind) of every POST
        self.main_seen = 0
        self.empties_sent = 0
        self.held = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                proxy.forward(self, b"")

            def do_HEAD(self) -> None:
                proxy.forward(self, b"")

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(size) if size else b"{}"
                proxy.post(self, raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def reset(self, *, hold: bool = False, empty_at: int | None = None, times: int = 0) -> None:
        with self.lock:
            self.hold, self.empty_at, self.empty_times = hold, empty_at, times
            self.log, self.main_seen, self.empties_sent = [], 0, 0
            self.held = threading.Event()

    def post(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        kind = self.classify(None, body) if handler.path.split("?")[0].endswith("/messages") else ""
        with self.lock:
            self.log.append((time.monotonic(), kind or "other"))
            empty = False
            if kind == "main":
                self.main_seen += 1
                at = self.empty_at
                if at is not None and self.main_seen >= at and self.empties_sent < self.empty_times:
                    self.empties_sent += 1
                    empty = True
            hold = self.hold and kind == "compact"
        if hold:
            self.held.set()
            _wait_for_close(handler, 60.0)
            handler.close_connection = True
            return
        if empty:
            _empty_reply(handler, body)
            return
        self.forward(handler, raw)

    def forward(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.referee_port, timeout=120)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("host",)}
        try:
            connection.request(handler.command, handler.path, body=raw or None, headers=headers)
            response = connection.getresponse()
            data = response.read()
        except OSError:
            handler.close_connection = True
            return
        finally:
            connection.close()
        handler.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                handler.send_header(name, value)
        handler.send_header("content-length", str(len(data)))
        handler.send_header("connection", "close")
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(data)
        handler.close_connection = True

    def requests_after(self, moment: float) -> int:
        with self.lock:
            return sum(1 for at, _kind in self.log if at > moment)

    def last_request_at(self) -> float:
        with self.lock:
            return self.log[-1][0] if self.log else 0.0

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _wait_for_close(handler: BaseHTTPRequestHandler, seconds: float) -> None:
    """Keep the request open until the client closes its end (or ``seconds`` pass)."""
    deadline = time.monotonic() + seconds
    sock = handler.connection
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], 0.1)
        if ready:
            try:
                if not sock.recv(1, 0):
                    return
            except OSError:
                return


def _empty_reply(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    """A reply with no content blocks and stop_reason end_turn, as the API sometimes sends."""
    message = {
        "id": f"msg_empty{time.monotonic_ns()}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude"),
        "content": [],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }
    if not body.get("stream"):
        data = json.dumps(message).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        return
    start = dict(message, stop_reason=None, usage={"input_tokens": 10, "output_tokens": 1})
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 2},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    data = b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("content-length", str(len(data)))
    handler.send_header("connection", "close")
    handler.end_headers()
    handler.wfile.write(data)
    handler.close_connection = True


class Referee:
    """The referee's fakeapi.py on a scenario, in a process of its own."""

    def __init__(self, folder: Path, scenario: Path, log: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(folder / "fakeapi.py"), str(scenario), "--log", str(log)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


# -- the scenarios -----------------------------------------------------------------------------


def make_folder(root: Path, steps: list[dict[str, Any]], final: str) -> Path:
    """root/repo (a small git repository) and root/scenario.json for the referee."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    for index in range(3):
        (repo / f"notes_{index}.txt").write_text(f"note {index}\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "i"],
        check=True,
    )
    scenario = {"repo": str(repo), "task": TASK, "facts": [], "steps": steps, "final": final}
    (root / "scenario.json").write_text(json.dumps(scenario))
    (root / "home").mkdir()
    return root


def signal_steps() -> list[dict[str, Any]]:
    filler = "The step goes on with words that only the model wrote. " * 140  # ~2K tokens
    return [
        {
            "say": f"Step {i}. {filler}",
            "tool": "Bash",
            "input": {"command": f"echo step-{i}", "description": f"step {i}"},
        }
        for i in range(SIGNAL_STEPS)
    ]


def empty_steps() -> list[dict[str, Any]]:
    return [
        {"tool": "Bash", "input": {"command": f"echo part-{i}", "description": f"part {i}"}}
        for i in range(EMPTY_STEPS)
    ]


# -- the clients -------------------------------------------------------------------------------


def command(client: str, folder: Path, url: str, extra: list[str]) -> tuple[list[str], dict]:
    """The client's command line and environment, as run_ccx.sh / run_claude.sh set them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_"))}
    env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-test", HOME=str(folder / "home"))
    if client == "ccx":
        env["CCX_CONFIG_DIR"] = str(folder / "ccxhome")
        if not SESSION_MEMORY:
            env["CCX_SESSION_MEMORY"] = "0"  # every compaction makes its own summary request
        cmd = [CCX, "-p", TASK, "--permission-mode", "bypassPermissions"]
        cmd += ["--output-format", "json", *extra]
        return cmd, env
    env.update(
        IS_SANDBOX="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
    )
    cmd = [CLAUDE_BIN, "-p", TASK, "--dangerously-skip-permissions"]
    cmd += ["--output-format", "json", *extra]
    return cmd, env


def signal_run(client: str, sig: signal.Signals, referee_dir: Path, work: Path) -> dict[str, Any]:
    folder = make_folder(work, signal_steps(), "All steps done.")
    referee = Referee(referee_dir, folder / "scenario.json", folder / "log.jsonl")
    proxy = Proxy(referee.port, load_referee(referee_dir).State.classify)
    row: dict[str, Any] = {"client": client, "signal": sig.name}
    try:
        proxy.reset(hold=True)
        extra = ["--autocompact", "53000" if client == "ccx" else "100000"]
        cmd, env = command(client, folder, proxy.url, extra)
        if client == "cc":
            env["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] = "40"
        proc = subprocess.Popen(
            cmd, cwd=folder / "repo", env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        if not proxy.held.wait(180):
            proc.kill()
            proc.communicate()
            return {**row, "error": f"no compaction request was held (exit {proc.returncode})"}
        while time.monotonic() - proxy.last_request_at() < QUIET_S:  # it waits on the held one
            time.sleep(0.05)
        sent = time.monotonic()
        proc.send_signal(sig)
        try:
            proc.communicate(timeout=EXIT_WAIT_S)
            took: float | None = time.monotonic() - sent
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            took = None
        row.update(
            exit=proc.returncode,
            seconds=None if took is None else round(took, 3),
            requests_after=proxy.requests_after(sent),
            steps_served=_steps_served(folder / "log.jsonl"),
        )
        if client == "ccx":
            proxy.reset()
            row["continues"] = _continues(folder, proxy.url, folder / "log.jsonl")
    finally:
        proxy.close()
        referee.close()
    return row


def _steps_served(log: Path) -> int:
    steps = [json.loads(line).get("step", 0) for line in log.read_text().splitlines() if line]
    return max(steps, default=0)


def _continues(folder: Path, url: str, log: Path) -> bool:
    """`ccx -c -p` after the signal: it runs, and its first request carries the task and the
    step the run had reached (the conversation as it was before the compaction began)."""
    reached = _steps_served(log)
    before = len(log.read_text().splitlines())
    cmd, env = command("ccx", folder, url, [])
    cmd = [CCX, "-c", "-p", "Say where you are.", *cmd[3:]]
    run = subprocess.run(
        cmd, cwd=folder / "repo", env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    records = [json.loads(line) for line in log.read_text().splitlines()[before:] if line]
    if run.returncode != 0 or not records:
        return False
    sent = json.dumps(records[0]["body"]["messages"])
    return TASK in sent and f"Step {reached - 1}." in sent


def empty_run(client: str, times: int, referee_dir: Path, work: Path) -> dict[str, Any]:
    folder = make_folder(work, empty_steps(), "All six parts done.")
    referee = Referee(referee_dir, folder / "scenario.json", folder / "log.jsonl")
    proxy = Proxy(referee.port, load_referee(referee_dir).State.classify)
    try:
        proxy.reset(empty_at=2, times=times)
        cmd, env = command(client, folder, proxy.url, [])
        run = subprocess.run(
            cmd, cwd=folder / "repo", env=env, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        try:
            result = json.loads(run.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            result = {}
        return {
            "client": client,
            "empty_replies": "always" if times > 10 else times,
            "exit": run.returncode,
            "is_error": result.get("is_error"),
            "result": str(result.get("result", ""))[:60],
            "empty_sent": proxy.empties_sent,
            "steps_served": f"{_steps_served(folder / 'log.jsonl')} of {EMPTY_STEPS + 1}",
        }
    finally:
        proxy.close()
        referee.close()


# -- the table ---------------------------------------------------------------------------------


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for key in sorted({(r["client"], r["signal"]) for r in rows}):
        group = [r for r in rows if (r["client"], r["signal"]) == key]
        times = [r["seconds"] for r in group if r.get("seconds") is not None]
        out.append(
            {
                "client": key[0],
                "signal": key[1],
                "runs": len(group),
                "exit_codes": sorted({r.get("exit") for r in group}, key=str),
                "exit_s_median": round(statistics.median(times), 3) if times else None,
                "exit_s_max": max(times) if times else None,
                "timeouts": sum(1 for r in group if r.get("seconds") is None),
                "requests_after_signal": [r.get("requests_after") for r in group],
                "continues_with_-c": [r["continues"] for r in group if "continues" in r],
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", default="ccx,cc")
    parser.add_argument("--only", choices=("signal", "empty"))
    parser.add_argument("--referee", type=Path, default=REFEREE)
    args = parser.parse_args()
    clients = [c for c in args.clients.split(",") if c]
    if "cc" in clients and not Path(CLAUDE_BIN).is_file():
        sys.exit(f"Claude Code is not at {CLAUDE_BIN}: source ../shared/bench/peers.sh first")
    with tempfile.TemporaryDirectory(prefix="ccx-signal-") as tmp:
        root = Path(tmp)
        n = 0
        if args.only in (None, "signal"):
            rows = []
            for client in clients:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    for _ in range(args.runs):
                        n += 1
                        rows.append(signal_run(client, sig, args.referee, root / f"r{n}"))
                        print(json.dumps(rows[-1]), file=sys.stderr)
            print("signal while a compaction request is held open:")
            for line in summarize(rows):
                print(json.dumps(line))
        if args.only in (None, "empty"):
            print("empty replies (the 2nd agent request of a six-step task):")
            for client in clients:
                for times in (1, 1000):
                    n += 1
                    print(json.dumps(empty_run(client, times, args.referee, root / f"r{n}")))


if __name__ == "__main__":
    main()
