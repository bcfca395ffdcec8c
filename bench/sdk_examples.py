"""The Agent SDK's own example programs, run unchanged with ccx and with Claude Code as their CLI.

The programs (anthropics/claude-agent-sdk-python at e8bde60, examples/, MIT) are kept in
tests/e2e/sdk_examples/programs. Each runs in a copy of the SDK's layout (examples/ beside
the .claude/ folder some of them read) against the referee, whose scenario plays the model:
the replies each program's prompts need, in order. A program's outcome is its exit code and
its checks (lines it must print, files it must leave); both clients face the same replies
and the same checks, kept with the programs in tests/e2e/sdk_examples/catalogue.py.

    .venv/bin/python bench/sdk_examples.py [--client ccx|claude|both] [--only NAME ...]

tests/e2e/test_sdk_examples.py runs the same programs and checks through ccx against ccx's
own fake API in CI.
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.sdk_examples.catalogue import (  # noqa: E402
    FINAL_REPLY,
    NAMES,
    PROGRAMS,
    Program,
    check,
    missing_module,
    run_example,
    workspace,
)

REFEREE = Path(os.environ.get("CCX_REFEREE", ROOT.parent / "shared" / "bench" / "fakeapi.py"))
CLAUDE_BIN = Path(
    os.environ.get(
        "CLAUDE_BIN",
        Path.home() / ".cache/ccx-peers/node_modules/@anthropic-ai/claude-code-linux-x64/claude",
    )
)
CCX_BIN = Path(sys.executable).with_name("ccx")


# -- running one program ---------------------------------------------------------------------


@dataclass
class Outcome:
    client: str
    program: str
    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float
    problems: list[str]
    skipped: str = ""

    @property
    def ok(self) -> bool:
        """The program ended as it should (its exit code is checked among the problems)."""
        return not self.skipped and self.exit_code is not None and not self.problems


def client_env(client: str, home: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CCX", "ANTHROPIC"))}
    env |= {"HOME": str(home), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-test"}
    if client == "ccx":
        return env | {
            "CCX_SDK_CLI": str(CCX_BIN),
            "CCX_CONFIG_DIR": str(home / ".ccx"),
            "CCX_WARM": "0",
        }
    return env | {
        "CCX_SDK_CLI": str(CLAUDE_BIN),
        "IS_SANDBOX": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def run_with_referee(client: str, program: Program, base: Path) -> Outcome:
    if reason := missing_module(program):
        return Outcome(client, program.name, None, "", "", 0.0, [], skipped=reason)
    examples = workspace(base / "sdk")
    scenario = {
        "repo": str(examples),
        "task": program.name,
        "steps": program.steps,
        "final": FINAL_REPLY,
    }
    (base / "scenario.json").write_text(json.dumps(scenario))
    port_file = base / "port.txt"
    with open(port_file, "w") as port_out:
        server = subprocess.Popen(
            [
                sys.executable,
                str(REFEREE),
                str(base / "scenario.json"),
                "--log",
                str(base / "log.jsonl"),
            ],
            stdout=port_out,
            stderr=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 60
        while not port_file.read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port_file.read_text().strip()}"
        home = base / "home"
        home.mkdir()
        if client == "claude":
            trust_claude(home, examples)
        return run_program(client, program, examples, client_env(client, home, url))
    finally:
        server.kill()
        server.wait()


def trust_claude(home: Path, examples: Path) -> None:
    """Claude Code's first-run state: onboarding done, the SDK folder trusted."""
    projects = {str(p): {"hasTrustDialogAccepted": True} for p in (examples, examples.parent)}
    state = {"hasCompletedOnboarding": True, "projects": projects}
    (home / ".claude.json").write_text(json.dumps(state))


def run_program(client: str, program: Program, examples: Path, env: dict[str, str]) -> Outcome:
    started = time.monotonic()
    try:
        done = run_example(program, examples, env)
        code: int | None = done.returncode
        stdout, stderr = done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        code = None
        stdout = _text(exc.stdout)
        stderr = _text(exc.stderr) + f"\n(timed out after {program.timeout_s:.0f} s)"
    seconds = time.monotonic() - started
    problems = check(program, stdout, examples)
    if code != program.exit_code:
        problems.insert(0, f"exit {code}: {stderr.strip().splitlines()[-1:] or ''}")
    return Outcome(client, program.name, code, stdout, stderr, seconds, problems)


def _text(value: str | bytes | None) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value or ""


# -- the table ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=("ccx", "claude", "both"), default="both")
    parser.add_argument("--only", nargs="*", choices=NAMES, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the work folders")
    parser.add_argument("--json", type=Path, help="write the outcomes here")
    args = parser.parse_args(argv)
    clients = ["ccx", "claude"] if args.client == "both" else [args.client]
    chosen = [p for p in PROGRAMS if args.only is None or p.name in args.only]
    outcomes: list[Outcome] = []
    root = Path(tempfile.mkdtemp(prefix="ccx-sdk-examples-"))
    for program in chosen:
        for client in clients:
            base = root / f"{program.name}-{client}"
            base.mkdir()
            outcome = run_with_referee(client, program, base)
            outcomes.append(outcome)
            print(_row(outcome), flush=True)
    print()
    print(render(outcomes, clients))
    if args.json:
        args.json.write_text(json.dumps([vars(o) for o in outcomes], indent=1))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"work folders: {root}")
    return 0


def _row(outcome: Outcome) -> str:
    state = "skip" if outcome.skipped else "ok" if outcome.ok else "FAIL"
    detail = outcome.skipped or "; ".join(outcome.problems)[:160]
    return f"{outcome.program:<26} {outcome.client:<7} {state:<5} {outcome.seconds:5.1f}s  {detail}"


def render(outcomes: list[Outcome], clients: list[str]) -> str:
    by = {(o.program, o.client): o for o in outcomes}
    programs = list(dict.fromkeys(o.program for o in outcomes))
    lines = [
        "| program | " + " | ".join(clients) + " | same outcome |",
        "|---" * (len(clients) + 2) + "|",
    ]
    same = 0
    for name in programs:
        cells = []
        for client in clients:
            o = by[(name, client)]
            cells.append("skip" if o.skipped else "ok" if o.ok else "fails")
        agree = len(set(cells)) == 1
        same += agree
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {'yes' if agree else 'no'} |")
    lines.append(f"\n{same} of {len(programs)} programs end the same way with each client.")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
