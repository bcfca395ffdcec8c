"""Keys at the prompt, ccx and Claude Code side by side: keystroke-to-screen latency idle,
while a reply streams and with a 1 MB paste in the prompt, and ``@`` completion on a
100,000-file repository.

.venv/bin/python bench/tui_keys.py [--files 100000] [--clients ccx,claude] [--trials 20]

Each client runs in a pseudo-terminal (120x40, bench/tui_pty.py) in the same generated
repository, against ccx's fake Messages API served from a process of its own (any
prompt gets a short answer; "stream please" gets a ~6,000-token reply at 2,000 tokens/s).
Claude Code is $CLAUDE_BIN (or --claude), from a fresh HOME that has finished its
onboarding, trusts the folder and accepts the key.

- Keystroke: one distinct CJK ideograph written to the pty, timed until it is in the
  terminal's output (as bench/tui_streaming.py does): 30 idle; as many as fit while the
  reply streams; 30 after a 1 MB bracketed paste (the paste is first seen folded).
- ``@`` completion, in tmux (the client's own session, 120x40; Claude Code redraws only
  the cells that change, so its output never holds a path whole: the screen is read
  instead): ``@`` and the six digits that name one file among 100,000 (file names are
  ``word_NNNNNN.ext``), typed 60 ms apart; timed from sending the last digit until the
  file's path is on the screen (``capture-pane`` polled every few ms, so figures include
  ~5 ms of polling). One warm-up query first (it may wait for the file list), then
  ``--trials`` queries.

Targets: keystroke p95 <= 50 ms while streaming and with the paste; ``@`` p95 <= 100 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.session_overhead import CCX, precompile, user_environment
from bench.tui_pty import PtyApp
from bench.tui_streaming import END_MARK, FIRST_WORD, keystrokes, reply_text, summary
from tui.fake_api import FakeApi, text_reply

WORDS = [
    "alpha", "bravo", "cargo", "delta", "ember", "forge", "gamma", "harbor", "index", "jolt",
    "kernel", "lumen", "matrix", "nexus", "orbit", "pixel", "quartz", "relay", "signal", "tensor",
    "umbra", "vector", "widget", "xenon", "yield", "zephyr", "anchor", "beacon", "cipher", "drift",
    "echo", "fable", "glyph", "helix", "ion", "jade", "karma", "lotus", "myth", "nova",
]  # fmt: skip
EXTS = ["py", "ts", "go", "md", "rs"]
PASTE_BYTES = 1_000_000
KEY_GAP_S = 0.06
READY = {"ccx": b"until auto-compact", "claude": b"shift+tab to cycle"}
API_KEY = "sk-bench-tui-keys-0000000000000000"


def make_repo(root: Path, files: int, seed: int = 7) -> list[str]:
    """``files`` empty files in 10,000 directories; their paths."""
    rng = random.Random(seed)
    directories = [
        f"{top}/mod{chr(97 + mid)}/part{chr(97 + leaf // 26)}{chr(97 + leaf % 26)}"
        for top in WORDS
        for mid in range(10)
        for leaf in range(25)
    ]
    for directory in directories:
        (root / directory).mkdir(parents=True)
    made = []
    for number in range(files):
        directory = directories[number % len(directories)]
        word = rng.choice(WORDS)
        path = f"{directory}/{word}_{number:06d}.{rng.choice(EXTS)}"
        os.close(os.open(root / path, os.O_CREAT | os.O_WRONLY, 0o644))
        made.append(path)
    return made


def serve(tokens: int, rate: float) -> None:
    """The fake API in this process: print its URL, answer until stdin closes."""
    stream = text_reply(reply_text(tokens), tokens_per_s=rate, chunk_chars=16)
    with FakeApi(strict=False) as api:  # Claude Code sends fields ccx's checks do not know
        api.on(lambda request: "stream please" in request.last_user_text(), stream)
        api.on(lambda request: True, text_reply("ok"))
        print(api.url, flush=True)
        sys.stdin.read()


def claude_home(home: Path, repo: Path) -> None:
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "numStartups": 5,
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                "projects": {
                    str(repo): {
                        "hasTrustDialogAccepted": True,
                        "hasCompletedProjectOnboarding": True,
                    }
                },
            }
        )
    )


def client_env(client: str, repo: Path, work: Path, url: str) -> dict[str, str]:
    home = work / f"home-{client}"
    home.mkdir(exist_ok=True)
    env = user_environment() | {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": API_KEY,
    }
    if client == "ccx":
        return env | {"CCX_CONFIG_DIR": str(home / ".ccx")}
    claude_home(home, repo)
    return env | {
        "IS_SANDBOX": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


class TmuxClient:
    """The client in a tmux server of its own, read through capture-pane."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, socket: str) -> None:
        self.socket = socket
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"cd {shlex.quote(str(cwd))} && env -i {exports} {shlex.join(argv)}"
        self.tmux("new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", command)

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        )
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "bench")

    def keys(self, text: str) -> float:
        now = time.time()
        self.tmux("send-keys", "-t", "bench", "-l", text)
        return now

    def key(self, name: str) -> None:
        self.tmux("send-keys", "-t", "bench", name)

    def wait_for(self, text: str, timeout: float) -> float:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if text in self.screen():
                return time.time()
            time.sleep(0.002)
        raise TimeoutError(f"{text!r} did not appear; the screen:\n{self.screen()}")

    def quit(self) -> None:
        self.tmux("kill-server")


def write_all(app: PtyApp, data: bytes) -> float:
    """Write everything (a pty takes a large write in pieces); when it started."""
    started = time.time()
    view = memoryview(data)
    while view:
        written = os.write(app.master, view[:65536])
        view = view[written:]
    return started


def clear_prompt(app: PtyApp) -> None:
    app.write(b"\x15")  # ctrl+u: the line up to the cursor (all of it), in both clients
    time.sleep(0.4)
    app.write(b"\x15")  # a wrapped line: what is left of it
    time.sleep(0.4)


def completion_trial(term: TmuxClient, path: str, timeout: float) -> float:
    """Type ``@`` and the file's digits; ms from the last digit to its path on screen."""
    digits = path.rsplit("_", 1)[1].split(".")[0]
    for key in "@" + digits[:-1]:
        term.keys(key)
        time.sleep(KEY_GAP_S)
    time.sleep(0.3)  # the earlier keys' lists drawn: the last key is timed alone
    sent = term.keys(digits[-1])
    latency = (term.wait_for(path, timeout) - sent) * 1000
    term.key("C-u")
    time.sleep(0.4)
    return latency


def completion(
    client: str, argv: list[str], env: dict[str, str], repo: Path, made: list[str], trials: int
) -> dict[str, object]:
    term = TmuxClient(argv, env, repo, f"ccx-bench-keys-{os.getpid()}")
    try:
        term.wait_for(READY[client].decode(), timeout=60)
        time.sleep(3)  # both warm up after the first paint
        targets = random.Random(11).sample(made, trials + 1)
        started = time.time()
        completion_trial(term, targets[0], timeout=180)  # may wait for the first listing
        first = round(time.time() - started, 2)
        latencies = [completion_trial(term, target, timeout=30) for target in targets[1:]]
    finally:
        term.quit()
    return {"at_first_query_s": first, "at_completion": summary(latencies)}


def run_client(
    client: str, claude: str, repo: Path, work: Path, url: str, made: list[str], trials: int
) -> dict[str, object]:
    env = client_env(client, repo, work, url)
    argv = [CCX] if client == "ccx" else [claude]
    report = completion(client, argv, env, repo, made, trials)
    app = PtyApp(argv, env, repo)
    try:
        app.wait_for(READY[client], timeout=60)
        time.sleep(3)  # both warm up after the first paint
        report["idle_keystrokes"] = summary(keystrokes(app, 30, 0x4E00))
        clear_prompt(app)
        paste = "".join(f"log line {i:>8} of a one megabyte paste\n" for i in range(25_000))
        offset = app.offset()
        started = write_all(app, b"\x1b[200~" + paste.encode()[:PASTE_BYTES] + b"\x1b[201~")
        seen = app.wait_for(b"Pasted", start=offset, timeout=120)  # Ink moves over the blanks
        report["paste_folded_s"] = round(seen - started, 2)
        time.sleep(1)
        report["paste_keystrokes"] = summary(keystrokes(app, 30, 0x5000))
        clear_prompt(app)
        offset = app.offset()
        app.write(b"stream please\r")
        app.wait_for(FIRST_WORD.encode(), start=offset, timeout=60)
        streaming = keystrokes(
            app, 2_000, 0x6000, stop=lambda: app.contains(END_MARK.encode(), offset)
        )
        report["streaming_keystrokes"] = summary(streaming)
        app.wait_for(END_MARK.encode(), start=offset, timeout=60)
        report["peak_rss_mb"] = round(app.peak_rss_mb(), 1)
    finally:
        app.quit()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--clients", default="ccx,claude")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--claude", default=os.environ.get("CLAUDE_BIN", ""))
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(6000, 2000.0)
        return
    clients = [c for c in args.clients.split(",") if c]
    if "claude" in clients and not args.claude:
        sys.exit("Claude Code not found: set $CLAUDE_BIN (source peers.sh) or pass --claude")
    precompile()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    url = server.stdout.readline().strip()
    results: dict[str, object] = {"files": args.files, "trials": args.trials}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp).resolve()
            repo = work / "repo"
            repo.mkdir()
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            started = time.time()
            made = make_repo(repo, args.files)
            results["repo_made_s"] = round(time.time() - started, 1)
            for client in clients:
                results[client] = run_client(
                    client, args.claude, repo, work, url, made, args.trials
                )
                print(json.dumps({client: results[client]}), file=sys.stderr, flush=True)
    finally:
        server.communicate("")
    for client in clients:
        report = results[client]
        assert isinstance(report, dict)
        report["meets_targets"] = (
            report["streaming_keystrokes"]["p95_ms"] <= 50
            and report["paste_keystrokes"]["p95_ms"] <= 50
            and report["at_completion"]["p95_ms"] <= 100
        )
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
