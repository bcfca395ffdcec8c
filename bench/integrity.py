"""Data integrity figures: text that is not UTF-8, two writers on one session, the escaping's cost.

1. Every way text that is not UTF-8 reaches a message (file names through
   Glob / Grep / Read, lone surrogates from the model in Write, Edit, Bash and
   its own text, the prompt, the working directory's name, a transcript an
   older build wrote), each a real `ccx -p` against the fake API followed by a
   `ccx -c`; counts crashes (a non-zero exit, a traceback, a request the API
   would refuse) and failed resumes.
2. Rounds of two concurrent `ccx -c` on one session, each making slow Bash
   calls; counts tool results lost or rewritten in either transcript.
3. What escaping costs where text enters the conversation (every appended
   message is checked), per message.

    .venv/bin/python bench/integrity.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.core.messages import Message, user_text
from agent.sessions.session import Session, load_session
from tools.surrogates import escape_value
from tui.fake_api import FakeApi, RecordedRequest, ResponseItem, text_reply, tool_reply

CCX = str(Path(sys.executable).with_name("ccx"))
BAD = b"bad\xff\xfe.txt"
SHOWN = "bad\\xff\\xfe.txt"


class Sandbox:
    """A repository (its name not UTF-8 when asked), a config folder, a fake API."""

    def __init__(self, tmp: Path, api: FakeApi, bad_cwd: bool = False) -> None:
        name = b"proj\xe9" if bad_cwd else b"proj"
        self.repo = Path(os.fsdecode(os.path.join(os.fsencode(tmp), name)))
        self.repo.mkdir()
        Path(os.fsdecode(os.path.join(os.fsencode(self.repo), BAD))).write_text("a needle\n")
        (self.repo / "notes.txt").write_text("old line\n")
        self.api = api
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_"))},
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "bench",
            "CCX_CONFIG_DIR": str(tmp / "config"),
            "HOME": str(tmp),
            "CCX_RETRY_BASE_DELAY_MS": "5",  # a request the API refuses fails fast
        }

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A run that hangs or prints bytes that are not UTF-8 counts as a crash, not an abort."""
        try:
            proc = subprocess.run(
                [CCX, *args], cwd=self.repo, env=self.env, capture_output=True, timeout=120
            )
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(args, -1, "", "timed out")
        out, err = (data.decode("utf-8", "replace") for data in (proc.stdout, proc.stderr))
        return subprocess.CompletedProcess(args, proc.returncode, out, err)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [CCX, *args], cwd=self.repo, env=self.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip


def _ok(proc: subprocess.CompletedProcess[str], api: FakeApi) -> bool:
    return proc.returncode == 0 and "Traceback" not in proc.stderr and not api.errors


def _old_transcript(box: Sandbox) -> None:
    """A session as an older build wrote it: lone surrogates kept in its records."""
    os.environ["CCX_CONFIG_DIR"] = box.env["CCX_CONFIG_DIR"]
    session = Session.create(box.repo, "claude-sonnet-5-5")
    session.append_message(user_text("look at bad\udcff.txt"))
    reply = Message("assistant", [{"type": "text", "text": "It is \udcff\ud800."}], "response")
    session.append_message(reply)
    session.close()


# name -> (script for the first run, extra args, prepare, a non-UTF-8 cwd)
ATTEMPTS: dict[str, tuple[list[Any], list[str], Callable[[Sandbox], None] | None, bool]] = {
    "Glob lists a file named bad\\xff\\xfe.txt": ([tool_reply(("Glob", {"pattern": "*"}))], [], None, False),
    "Grep files_with_matches": ([tool_reply(("Grep", {"pattern": "needle"}))], [], None, False),
    "Grep content": ([tool_reply(("Grep", {"pattern": "needle", "output_mode": "content"}))], [], None, False),
    "Grep count": ([tool_reply(("Grep", {"pattern": "needle", "output_mode": "count"}))], [], None, False),
    "Read of the escaped name": ([tool_reply(("Read", {"file_path": SHOWN}))], [], None, False),
    "Write with a lone surrogate": ([tool_reply(("Write", r'{"file_path": "w.txt", "content": "a\ud800b"}'))], [], None, False),
    "Edit with a lone surrogate": ([tool_reply(("Read", {"file_path": "notes.txt"})), tool_reply(("Edit", r'{"file_path": "notes.txt", "old_string": "old", "new_string": "n\udcffw"}'))], [], None, False),
    "Bash command with surrogates": ([tool_reply(("Bash", r"""{"command": "echo '\udcff\ud800'"}"""))], [], None, False),
    "Bash output that is not UTF-8": ([tool_reply(("Bash", {"command": "printf 'x\\377y'; ls"}))], [], None, False),
    "assistant text with a surrogate": ([tool_reply(("Glob", {"pattern": "*.md"}), text="hm \ud800")], [], None, False),
    "thinking with a surrogate": ([tool_reply(("Glob", {"pattern": "*.md"}), text="ok"), ], [], None, False),
    "prompt that is not UTF-8": ([], ["\udcff\udcfe prompt"], None, False),
    "working directory not UTF-8": ([tool_reply(("Bash", {"command": "pwd"}))], [], None, True),
    "resume of an old transcript with surrogates": ([], [], _old_transcript, False),
}  # fmt: skip


def non_utf8_attempts() -> tuple[int, int, int]:
    """(attempts, crashes, failed resumes)."""
    crashes = failed_resumes = 0
    for name, (items, extra, prepare, bad_cwd) in ATTEMPTS.items():
        with tempfile.TemporaryDirectory() as tmp, FakeApi() as api:
            box = Sandbox(Path(tmp), api, bad_cwd)
            if name.startswith("thinking"):
                items = [_thinking_reply()]
            args = ["-p", *(extra or ["go"]), "--output-format", "json"]
            args += ["--permission-mode", "bypassPermissions"]
            if prepare is not None:
                prepare(box)
                args.insert(0, "-c")
            api.add(*items, text_reply("done"))
            first = box.run(*args)
            api.add(text_reply("resumed"))
            second = box.run("-c", "-p", "again", "--output-format", "json")
            crashed = not _ok(first, api)
            resumed = _ok(second, api) and _result(second) == "resumed"
            crashes += crashed
            failed_resumes += not resumed
            print(
                f"  {'crash' if crashed else 'ok':5} {'resumed' if resumed else 'NO RESUME':9} {name}"
            )
    return len(ATTEMPTS), crashes, failed_resumes


def _result(proc: subprocess.CompletedProcess[str]) -> str | None:
    try:
        return json.loads(proc.stdout)["result"]
    except (ValueError, KeyError, TypeError):
        return None


def _thinking_reply() -> ResponseItem:
    from tui.fake_api import Reply

    return Reply(
        [
            {"type": "thinking", "thinking": "considering \ud800 this"},
            {"type": "tool_use", "name": "Glob", "input": {"pattern": "*.md"}},
        ],
        stop_reason="tool_use",
    )


# -- two writers ---------------------------------------------------------------------------

CALLS = 3


def _responder(request: RecordedRequest) -> ResponseItem:
    messages = request.messages
    start = max(i for i, m in enumerate(messages) if "job " in json.dumps(m["content"]))
    job = json.dumps(messages[start]["content"]).split("job ")[1][0]
    done = sum(1 for m in messages[start + 1 :] if m["role"] == "assistant")
    if done < CALLS:
        return tool_reply(("Bash", {"command": f"sleep 0.5; echo out-{job}{done + 1}"}))
    return text_reply(f"job {job} finished")


def _check(path: Path, job: str) -> tuple[int, int]:
    """(results expected, results lost or rewritten) of one job in one transcript."""
    loaded = load_session(path)
    uses = {
        b["id"]: b["input"]["command"].split("echo ")[1]
        for m in loaded.messages
        for b in m.content
        if b.get("type") == "tool_use" and f"out-{job}" in str(b.get("input"))
    }
    answered = {
        b["tool_use_id"]: str(b["content"])
        for m in loaded.messages
        for b in m.content
        if b.get("type") == "tool_result" and b["tool_use_id"] in uses
    }
    bad = sum(1 for use_id, out in uses.items() if not answered.get(use_id, "").startswith(out))
    return CALLS, bad + max(0, CALLS - len(uses))


def concurrent_rounds(rounds: int) -> tuple[int, int, int, int]:
    """(rounds, rounds where the second opener forked, results checked, lost or rewritten)."""
    checked = lost = forked = 0
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp, FakeApi() as api:
            box = Sandbox(Path(tmp), api)
            api.add(text_reply("ready"))
            assert box.run("-p", "start").returncode == 0
            api.on(lambda _r: True, _responder)
            args = ("--output-format", "json", "--allowedTools", "Bash(sleep *)")
            procs = {job: box.popen("-c", "-p", f"job {job}", *args) for job in "AB"}
            outs = {job: p.communicate(timeout=120)[0] for job, p in procs.items()}
            folder = next((Path(tmp) / "config" / "projects").iterdir())
            ids = {job: json.loads(out)["session_id"] for job, out in outs.items()}
            forked += ids["A"] != ids["B"]
            for job, session_id in ids.items():
                expected, bad = _check(folder / f"{session_id}.jsonl", job)
                checked, lost = checked + expected, lost + bad
    return rounds, forked, checked, lost


# -- cost ----------------------------------------------------------------------------------


def _median_us(func: Callable[[], object], repeat: int = 2000) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        func()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def escaping_cost() -> dict[str, float]:
    ascii_result = [
        {"type": "tool_result", "tool_use_id": "t", "content": "x = 1\n" * 2000}
    ]  # 12 KB
    utf8_result = [{"type": "tool_result", "tool_use_id": "t", "content": "é ü 日本\n" * 1500}]
    bad_result = [{"type": "tool_result", "tool_use_id": "t", "content": "bad\udcff\n" * 2000}]
    response = [
        {"type": "text", "text": "Let me look at the file."},
        {"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "/src/app.py"}},
    ]
    return {
        "12 KB ASCII tool result": _median_us(lambda: escape_value(ascii_result)),
        "12 KB non-ASCII UTF-8 tool result": _median_us(lambda: escape_value(utf8_result)),
        "assistant response (text + tool_use)": _median_us(lambda: escape_value(response)),
        "12 KB result with surrogates (escaped)": _median_us(lambda: escape_value(bad_result), 200),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5, help="rounds of two concurrent -c")
    args = parser.parse_args()
    print("Text that is not UTF-8 (each a ccx -p, then ccx -c):")
    attempts, crashes, failed = non_utf8_attempts()
    print(f"  {attempts} attempts: {crashes} crashes, {failed} failed resumes")
    print(f"Two concurrent ccx -c on one session, {args.rounds} rounds:")
    rounds, forked, checked, lost = concurrent_rounds(args.rounds)
    print(f"  {rounds} rounds ({forked} forked), {checked} tool results: {lost} lost or rewritten")
    print("Escaping where text enters a message, median per message:")
    for name, micros in escaping_cost().items():
        print(f"  {micros:8.2f} µs  {name}")


if __name__ == "__main__":
    main()
