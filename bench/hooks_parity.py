"""Issue 12's hooks target: every hook event through ccx and Claude Code, side by side.

    .venv/bin/python bench/hooks_parity.py [--client ccx|cc|both] [--json] [--keep DIR]

One repository with a logging hook on every event of Claude Code's schema (each hook
appends its stdin to a log), one scripted headless session per client against the shared
referee (/work/shared/bench/fakeapi.py): a prompt, a Bash call, a Read call, a final text.
Prints per event whether each client fired it, how many times, and whether the payload keys
are the same. Claude Code comes from /work/shared/bench/peers.sh (or $CLAUDE_BIN).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.instructions.hooks.config import EVENTS as HOOK_EVENTS

SHARED_BENCH = Path("/work/shared/bench")
CCX = str(Path(sys.executable).with_name("ccx"))
# ccx's own list of events, less PostCompact (this script compares the others).
EVENTS = tuple(event for event in HOOK_EVENTS if event != "PostCompact")
TASK = "Say hello with Bash, then read notes.txt."
LOGGER = """import json, os, sys
data = json.load(sys.stdin)
data["_env_project_dir"] = os.environ.get("CLAUDE_PROJECT_DIR")
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(data) + "\\n")
"""


def build_repo(root: Path, log: Path) -> Path:
    repo = root / "repo"
    (repo / ".claude").mkdir(parents=True)
    (repo / "notes.txt").write_text("the notes\n")
    (repo / "log_hook.py").write_text(LOGGER)
    command = f"python3 {repo / 'log_hook.py'} {log}"
    hooks = {event: [{"hooks": [{"type": "command", "command": command}]}] for event in EVENTS}
    for event in ("PreToolUse", "PostToolUse"):
        hooks[event][0]["matcher"] = "*"
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}, indent=2))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def scenario(repo: Path) -> dict[str, Any]:
    return {
        "task": TASK,
        "repo": str(repo),
        "steps": [
            {"tool": "Bash", "input": {"command": "echo hello", "description": "Say hello"}},
            {"tool": "Read", "input": {"file_path": str(repo / "notes.txt")}},
        ],
        "final": "Said hello and read the notes.",
    }


def start_referee(workdir: Path, scenario_path: Path) -> tuple[subprocess.Popen[str], int]:
    port_file = workdir / "port.txt"
    server = subprocess.Popen(
        [
            sys.executable,
            str(SHARED_BENCH / "fakeapi.py"),
            str(scenario_path),
            "--log",
            str(workdir / "api.log"),
        ],
        stdout=port_file.open("w"),
        stderr=(workdir / "server.err").open("w"),
        text=True,
    )
    for _ in range(100):
        if port_file.exists() and port_file.read_text().strip():
            return server, int(port_file.read_text().split()[0])
        time.sleep(0.1)
    server.kill()
    raise SystemExit("the referee server did not start")


def claude_bin() -> str:
    if os.environ.get("CLAUDE_BIN"):
        return os.environ["CLAUDE_BIN"]
    out = subprocess.run(
        ["bash", "-c", f"source {SHARED_BENCH / 'peers.sh'} >/dev/null 2>&1; echo $CLAUDE_BIN"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not out:
        raise SystemExit("Claude Code is not installed (see /work/shared/bench/peers.sh)")
    return out


def run_client(client: str, workdir: Path) -> list[dict[str, Any]]:
    """One scripted session of ``client`` ("ccx" or "cc"); the hook payloads it logged."""
    workdir.mkdir(parents=True)
    log = workdir / "hooks.jsonl"
    repo = build_repo(workdir, log)
    scenario_path = workdir / "scenario.json"
    scenario_path.write_text(json.dumps(scenario(repo)))
    server, port = start_referee(workdir, scenario_path)
    home = workdir / "home"
    home.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_"))},
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "sk-test",
    }
    if client == "cc":
        env.update(
            IS_SANDBOX="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
        )
        argv = [
            claude_bin(),
            "-p",
            TASK,
            "--dangerously-skip-permissions",
            "--output-format",
            "json",
        ]
    else:
        env.update(CCX_CONFIG_DIR=str(workdir / "ccx-config"), CCX_SKIP_MODELS_API="1")
        argv = [
            CCX,
            "-p",
            TASK,
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "json",
        ]
    try:
        proc = subprocess.run(
            argv,
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
    finally:
        server.kill()
        server.wait()
    (workdir / "client.out").write_text(proc.stdout)
    (workdir / "client.err").write_text(proc.stderr)
    time.sleep(1.0)  # SessionEnd hooks may still be writing after the client exits
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def summarize(runs: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    names = sorted(
        {p.get("hook_event_name", "?") for r in runs.values() for p in r},
        key=lambda e: EVENTS.index(e) if e in EVENTS else len(EVENTS),
    )
    for event in dict.fromkeys([*EVENTS, *names]):
        row: dict[str, Any] = {"event": event}
        keys: dict[str, set[str]] = {}
        for client, payloads in runs.items():
            mine = [p for p in payloads if p.get("hook_event_name") == event]
            row[client] = len(mine)
            keys[client] = set().union(*(p.keys() for p in mine)) if mine else set()
        if len(runs) == 2 and all(row[c] for c in runs):
            ccx_keys, cc_keys = keys["ccx"], keys["cc"]
            row["keys_match"] = ccx_keys == cc_keys
            row["only_ccx"] = sorted(ccx_keys - cc_keys)
            row["only_cc"] = sorted(cc_keys - ccx_keys)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=("ccx", "cc", "both"), default="both")
    parser.add_argument("--json", action="store_true", help="one JSON document")
    parser.add_argument("--keep", type=Path, help="keep the runs' folders here")
    args = parser.parse_args()
    clients = ("ccx", "cc") if args.client == "both" else (args.client,)
    root = args.keep or Path(tempfile.mkdtemp(prefix="hooks-parity-"))
    runs = {client: run_client(client, root / client) for client in clients}
    rows = summarize(runs)
    if args.json:
        print(json.dumps({"rows": rows, "payloads": runs}, indent=2))
    else:
        print(f"{'event':<18}" + "".join(f"{c:>6}" for c in clients) + "  payload keys")
        for row in rows:
            counts = "".join(f"{row[c]:>6}" for c in clients)
            if "keys_match" not in row:
                verdict = ""
            elif row["keys_match"]:
                verdict = "same"
            else:
                verdict = f"ccx only {row['only_ccx']}, cc only {row['only_cc']}"
            print(f"{row['event']:<18}{counts}  {verdict}")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
