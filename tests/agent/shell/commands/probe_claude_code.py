"""Re-observe Claude Code's verdicts in claude_code_2.1.328.txt.

Runs Claude Code headless (claude -p, default permission mode, no rules) in a throwaway git
repository against the scripted fake API of /work/shared/bench/fakeapi.py, one Bash call
per command of the data file, and prints every command whose observed verdict (R ran, A
asked) differs from the one recorded. Needs $CLAUDE_BIN (source /work/shared/bench/peers.sh).

    python3 tests/agent/shell/commands/probe_claude_code.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).with_name("claude_code_2.1.328.txt")
FAKE_API = Path("/work/shared/bench/fakeapi.py")
# How Claude Code words a refusal in a tool result.
REFUSALS = (
    "requires approval", "needs approval", "cannot be auto", "was blocked", "can't be checked",
    "evaluates arguments", "require approval", "following part req", "executes arbitr", "bash ev",
)  # fmt: skip
FILES = {"README.md": "# r\nb\na\n", "file.txt": "x\ny\n", "f": "1\n2\n", "a": "a\n", "b": "b\n",
         "data.csv": "1,2\n"}  # fmt: skip


def recorded() -> list[tuple[str, str]]:
    rows = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if line[:1] in ("+", "-"):
            rows.append((line[2], line[4:]))
    return rows


def make_repo(work: Path) -> Path:
    repo = work / "repo"
    repo.mkdir()
    for name, text in FILES.items():
        (repo / name).write_text(text, encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return repo


def observe(commands: list[str]) -> dict[str, str]:
    work = Path(tempfile.mkdtemp(prefix="ccx-probe-"))
    repo = make_repo(work)
    steps = [{"tool": "Bash", "input": {"command": c, "description": "probe"}} for c in commands]
    scenario = work / "scenario.json"
    scenario.write_text(json.dumps({"repo": str(repo), "task": "probe", "steps": steps}))
    log = work / "log.jsonl"
    server = subprocess.Popen(
        [sys.executable, str(FAKE_API), str(scenario), "--log", str(log)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None
    port = server.stdout.readline().strip()
    home = work / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
           "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "IS_SANDBOX": "1"}  # fmt: skip
    try:
        subprocess.run(
            [os.environ["CLAUDE_BIN"], "-p", "probe", "--output-format", "json"],
            cwd=repo, env=env, capture_output=True, timeout=1800, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        server.kill()
    return verdicts(log)


def verdicts(log: Path) -> dict[str, str]:
    last = [json.loads(line) for line in log.read_text().splitlines()]
    body = [r for r in last if r.get("kind") == "main"][-1]["body"]
    uses, results = [], {}
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_use":
                uses.append(block)
            elif block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, list):
                    content = " ".join(c.get("text", "") for c in content if isinstance(c, dict))
                results[block["tool_use_id"]] = content or ""
    return {
        u["input"]["command"]: "A" if any(r in results.get(u["id"], "") for r in REFUSALS) else "R"
        for u in uses
    }


def main() -> int:
    rows = recorded()
    seen = observe([command for _, command in rows])
    changed = [(c, v, seen.get(c)) for v, c in rows if seen.get(c) != v]
    for command, was, now in changed:
        print(f"{command!r}: recorded {was}, observed {now}")
    print(f"{len(rows) - len(changed)} of {len(rows)} verdicts as recorded")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
