"""The Agent SDK's own example programs, run unchanged with ccx and with Claude Code as their CLI.

The programs (anthropics/claude-agent-sdk-python at e8bde60, examples/, MIT) are kept in
tests/e2e/sdk_examples/programs. Each runs in a copy of the SDK's layout (examples/ beside
the .claude/ folder some of them read) against the referee, whose scenario plays the model:
the replies each program's prompts need, in order. A program's outcome is its exit code and
the checks below (lines it must print, files it must leave); both clients face the same
replies and the same checks.

    .venv/bin/python bench/sdk_examples.py [--client ccx|claude|both] [--only NAME ...]

tests/e2e/test_sdk_examples.py runs the same programs and checks through ccx against ccx's
own fake API in CI.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS_DIR = ROOT / "tests" / "e2e" / "sdk_examples" / "programs"
SDK_CLAUDE_DIR = ROOT / "tests" / "e2e" / "sdk_examples" / "sdk_dot_claude"
RUNNER = ROOT / "tests" / "e2e" / "sdk_examples" / "run_program.py"
REFEREE = Path(os.environ.get("CCX_REFEREE", ROOT.parent / "shared" / "bench" / "fakeapi.py"))
CLAUDE_BIN = Path(
    os.environ.get(
        "CLAUDE_BIN",
        Path.home() / ".cache/ccx-peers/node_modules/@anthropic-ai/claude-code-linux-x64/claude",
    )
)
CCX_BIN = Path(sys.executable).with_name("ccx")
REPO = "{repo}"  # the referee puts the program's folder here


Step = dict[str, Any]  # {"text": ...} or {"tool": name, "input": {...}}


def text(words: str) -> Step:
    return {"text": words}


def call(tool: str, **tool_input: Any) -> Step:
    return {"tool": tool, "input": tool_input}


@dataclass
class Program:
    name: str
    steps: list[Step]
    args: tuple[str, ...] = ()
    prints: tuple[str, ...] = ()  # lines (or parts of lines) the output must hold
    never: tuple[str, ...] = ()  # text the output must not hold
    files: dict[str, str] = field(default_factory=dict)  # examples/NAME -> content it must hold
    stdin: str = ""
    needs: tuple[str, ...] = ()  # Python modules the program imports beyond the SDK
    exit_code: int = 0  # the SDK raises ResultError at the end of an error result: exit 1
    tools_line: tuple[str, ...] | None = None  # the first "Tools from system message" list
    timeout_s: float = 240


PROGRAMS = [
    Program(
        "quick_start",
        [
            text("2 + 2 = 4."),
            text("Python is a readable, general-purpose programming language."),
            call("Write", file_path=f"{REPO}/hello.txt", content="Hello, World!"),
            text("I created hello.txt."),
        ],
        prints=(
            "Claude: 2 + 2 = 4.",
            "Claude: Python is a readable",
            "Claude: I created hello.txt.",
        ),
        files={"hello.txt": "Hello, World!"},
    ),
    Program(
        "system_prompt",
        [text("4."), text("Arr, 'tis 4, matey!"), text("4"), text("2 + 2 = 4")],
        prints=("Claude: 4.", "Claude: Arr, 'tis 4, matey!", "Claude: 2 + 2 = 4"),
    ),
    Program(
        "stderr_callback_example",
        [text("2 + 2 = 4")],
        prints=("Running query with stderr capture...", "Captured "),
        never=("Error detected",),
    ),
    Program(
        "max_budget_usd",
        [
            text("4"),
            text("4"),
            call("Read", file_path=f"{REPO}/README.md"),
            text("The README describes the examples."),
        ],
        prints=("Status: success", "Status: error_max_budget_usd", "Budget limit exceeded!"),
        exit_code=1,
    ),
    Program(
        "tools_option",
        [text("I have Read, Glob and Grep."), text("I have no tools."), text("Many tools.")],
        prints=("Tools from system message: []",),
        tools_line=("Glob", "Grep", "Read"),
    ),
    Program(
        "setting_sources",
        [text("4"), text("4"), text("4")],
        args=("all",),
        prints=(
            "✓ /commit is available (expected: CLI defaults loaded)",
            "✓ /commit is NOT available (expected: sources disabled)",
            "✓ /commit is NOT available (expected)",
        ),
        never=("❌",),
    ),
    Program(
        "filesystem_agents",
        [text("Hello there, friend!")],
        prints=(
            "'test-agent'",
            "SUCCESS: Received full response",
            "SUCCESS: test-agent was loaded",
        ),
        never=("FAILURE",),
    ),
    Program(
        "include_partial_messages",
        [text("Why did the function return early? It had a date with the exception.")],
        prints=("StreamEvent(", "ResultMessage(", "It had a date with the exception."),
    ),
    Program(
        "streaming_mode_trio",
        [text("15 + 27 = 42."), text("42 × 2 = 84."), text("84 ÷ 7 = 12.00.")],
        prints=("42", "84", "12.00"),
        needs=("trio",),
    ),
    Program(
        "hooks",
        [
            call("Bash", command="./foo.sh --help", description="Show foo's help"),
            text("The hook blocked that command."),
            call("Bash", command="echo 'Hello from hooks example!'", description="Say hello"),
            text("It printed the greeting."),
            text("I do not know your favorite color."),
            call("Bash", command="ls /nonexistent_directory", description="List a folder"),
            text("That folder does not exist."),
            call("Write", file_path=f"{REPO}/important_config.txt", content="test data"),
            text("Writing that file was denied."),
            call("Write", file_path=f"{REPO}/regular_file.txt", content="test data"),
            text("I wrote regular_file.txt."),
            call("Bash", command="echo 'CRITICAL ERROR: system failure'", description="Echo"),
            text("(not reached: the hook stops the turn)"),
        ],
        args=("all",),
        prints=("Hello from hooks example!", "I wrote regular_file.txt."),
        files={"regular_file.txt": "test data"},
    ),
    Program(
        "agents",
        [
            call(
                "Agent",
                description="Review types.py",
                prompt="Review src/claude_agent_sdk/types.py.",
                subagent_type="code-reviewer",
                run_in_background=False,
            ),
            text("types.py reads well; no bugs found."),
            text("The reviewer found no bugs in types.py."),
            call(
                "Agent",
                description="Explain AgentDefinition",
                prompt="Explain AgentDefinition.",
                subagent_type="doc-writer",
                run_in_background=False,
            ),
            text("AgentDefinition describes a subagent."),
            text("AgentDefinition describes a subagent: its prompt, tools and model."),
            call(
                "Agent",
                description="Find Python files",
                prompt="List the Python files in examples/.",
                subagent_type="analyzer",
                run_in_background=False,
            ),
            text("quick_start.py and others."),
            text("The examples folder holds quick_start.py and others."),
        ],
        # The subagents' and the parent's words, as the SDK streams them.
        prints=("Claude: types.py reads well; no bugs found.", "=== Multiple Agents Example ==="),
    ),
    Program(
        "mcp_calculator",
        [
            text("I have add, subtract, multiply, divide, sqrt and power."),
            call("ToolSearch", query="select:mcp__calc__add", max_results=1),
            call("mcp__calc__add", a=15, b=27),
            text("15 + 27 = 42."),
            call("ToolSearch", query="select:mcp__calc__divide", max_results=1),
            call("mcp__calc__divide", a=100, b=7),
            text("About 14.29."),
            call("ToolSearch", query="select:mcp__calc__sqrt", max_results=1),
            call("mcp__calc__sqrt", n=144),
            text("12."),
            call("ToolSearch", query="select:mcp__calc__power", max_results=1),
            call("mcp__calc__power", base=2, exponent=8),
            text("256."),
            text("(12 + 8) * 3 - 10 = 50."),
        ],
        prints=("15 + 27 = 42", "100 ÷ 7 = 14.28", "√144 = 12", "2^8 = 256", "Claude: 256."),
    ),
    Program(
        "tool_permission_callback",
        [
            call("Bash", command="ls", description="List files"),
            call("Write", file_path="hello.py", content="print('Hello, World!')\n"),
            call("Bash", command="python safe_output/hello.py", description="Run it"),
            text("Listed the files, wrote the script and ran it."),
        ],
        prints=(
            "Allowing bash command: python safe_output/hello.py",
            "💬 Claude: Listed the files, wrote the script and ran it.",
            "Task completed!",
        ),
        files={"hello.py": "Hello, World!"},
        stdin="y\n" * 5,
    ),
    Program(
        "plugin_example",
        [text("Hello! How can I help?")],
        prints=("Plugins loaded:", "demo-plugin"),
    ),
    Program(
        "streaming_mode",
        [
            text("2 + 2 = 4"),
            text("Paris."),
            text("About two million people live in Paris."),
            text("4"),
            text("12"),
            text("8"),
            text("1, 2, 3, 4, 5."),
            text("Why do programmers prefer dark mode? Light attracts bugs."),
            text("Python: scripting. Go: servers. Rust: systems. JS: web. SQL: data."),
            call("Write", file_path=f"{REPO}/hello.txt", content="Hello from the SDK!"),
            text("Created hello.txt."),
            text("Hello! Ask away."),
            text("Tokyo."),
            text("30."),
            call("Bash", command="echo 'Hello from bash!'", description="Say hello"),
            text("It printed Hello from bash!"),
            text("1 2 3 4 5"),
            text("Hello!"),
            call("Bash", command="sleep 5", description="Sleep five seconds"),
            text("Done sleeping."),
        ],
        args=("all",),
        prints=("Claude: 2 + 2 = 4", "Claude: Paris.", "Hello from bash!", "Claude: Hello!"),
        files={"hello.txt": "Hello from the SDK!"},
    ),
]

NAMES = [program.name for program in PROGRAMS]


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


def workspace(base: Path) -> Path:
    """A copy of the SDK's layout: examples/ (the programs) beside .claude/; returns examples/."""
    shutil.copytree(PROGRAMS_DIR, base / "examples")
    shutil.copytree(SDK_CLAUDE_DIR, base / ".claude")
    (base / "README.md").write_text("# Agent SDK examples\n\nExample programs for the SDK.\n")
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    return base / "examples"


def check(program: Program, stdout: str, folder: Path) -> list[str]:
    problems = [f"missing output: {want!r}" for want in program.prints if want not in stdout]
    problems += [f"unexpected output: {bad!r}" for bad in program.never if bad in stdout]
    if program.tools_line is not None:
        found = re.search(r"Tools from system message: (\[.*\])", stdout)
        listed = sorted(ast.literal_eval(found.group(1))) if found else None
        if listed != sorted(program.tools_line):
            problems.append(f"tools listed {listed}, expected {sorted(program.tools_line)}")
    for name, content in program.files.items():
        path = folder / name
        if not path.is_file() or content not in path.read_text(errors="replace"):
            problems.append(f"file {name} missing or without {content!r}")
    return problems


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


def missing_module(program: Program) -> str:
    import importlib.util

    absent = [name for name in program.needs if importlib.util.find_spec(name) is None]
    return f"needs {', '.join(absent)} (not installed)" if absent else ""


def run_with_referee(client: str, program: Program, base: Path) -> Outcome:
    if reason := missing_module(program):
        return Outcome(client, program.name, None, "", "", 0.0, [], skipped=reason)
    examples = workspace(base / "sdk")
    scenario = {
        "repo": str(examples),
        "task": program.name,
        "steps": program.steps,
        "final": "Done.",
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
        done = subprocess.run(
            [sys.executable, str(RUNNER), str(examples / f"{program.name}.py"), *program.args],
            cwd=examples,
            env=env,
            input=program.stdin,
            capture_output=True,
            text=True,
            timeout=program.timeout_s,
        )
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
