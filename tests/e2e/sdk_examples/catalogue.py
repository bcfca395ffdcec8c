"""The Agent SDK's example programs as both their runners see them: the model's replies each
program's prompts need, and the checks of what it must print and leave behind.

The programs (anthropics/claude-agent-sdk-python at e8bde60, ``examples/``, MIT) are kept as
shipped in ``programs/``. Each runs in a copy of the SDK's layout (``examples/`` beside the
``.claude/`` folder some of them read, ``workspace``). The model's replies are the program's
``turns``: for each prompt (or a subagent's brief) the replies its agent turns get. The
referee plays them in order (``Program.steps``) for ``bench/sdk_examples.py``, ccx and Claude
Code side by side; ccx's fake API plays them by prompt for ``tests/e2e/test_sdk_examples.py``
(ccx in CI), so that a turn a program interrupts before its request is sent shifts no later
reply. Both follow the referee's rule for which request is an agent turn
(``is_agent_turn``): any other request (a subagent with fewer tools) is answered
``SIDE_REPLY``, and an agent turn with no reply left ``FINAL_REPLY``. A program's outcome is
its exit code and ``check``, the same for both runners.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROGRAMS_DIR = HERE / "programs"
SDK_CLAUDE_DIR = HERE / "sdk_dot_claude"
RUNNER = HERE / "run_program.py"
FINAL_REPLY = "Done."  # an agent turn after the last scripted step
SIDE_REPLY = "ok"  # a request that is not an agent turn

REPO = "{repo}"  # in a tool input: the program's folder (examples/), filled in when played

Step = dict[str, Any]  # {"text": ...} or {"tool": name, "input": {...}}


def text(words: str) -> Step:
    return {"text": words}


def call(tool: str, **tool_input: Any) -> Step:
    return {"tool": tool, "input": tool_input}


@dataclass(frozen=True)
class Turn:
    """The replies to one prompt of the program (or one subagent's brief), in order: each
    agent turn of that prompt gets the next."""

    prompt: str  # a part of the prompt's text that tells it from the program's other prompts
    steps: tuple[Step, ...]


def turn(prompt: str, *steps: Step) -> Turn:
    return Turn(prompt, steps)


@dataclass
class Program:
    name: str
    turns: list[Turn]
    args: tuple[str, ...] = ()
    prints: tuple[str, ...] = ()  # lines (or parts of lines) the output must hold
    never: tuple[str, ...] = ()  # text the output must not hold
    files: dict[str, str] = field(default_factory=dict)  # examples/NAME -> content it must hold
    stdin: str = ""
    needs: tuple[str, ...] = ()  # Python modules the program imports beyond the SDK
    exit_code: int = 0  # the SDK raises ResultError at the end of an error result: exit 1
    tools_line: tuple[str, ...] | None = None  # the first "Tools from system message" list
    timeout_s: float = 240

    @property
    def steps(self) -> list[Step]:
        """Every reply in the order the program asks for them (the referee plays them so)."""
        return [step for one in self.turns for step in one.steps]


TWO_AND_TWO = "What is 2 + 2?"
WHAT_TOOLS = "What tools do you have available?"

PROGRAMS = [
    Program(
        "quick_start",
        [
            turn(TWO_AND_TWO, text("2 + 2 = 4.")),
            turn(
                "Explain what Python is in one sentence.",
                text("Python is a readable, general-purpose programming language."),
            ),
            turn(
                "Create a file called hello.txt",
                call("Write", file_path=f"{REPO}/hello.txt", content="Hello, World!"),
                text("I created hello.txt."),
            ),
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
        [
            turn(TWO_AND_TWO, text("4.")),
            turn(TWO_AND_TWO, text("Arr, 'tis 4, matey!")),
            turn(TWO_AND_TWO, text("4")),
            turn(TWO_AND_TWO, text("2 + 2 = 4")),
        ],
        prints=("Claude: 4.", "Claude: Arr, 'tis 4, matey!", "Claude: 2 + 2 = 4"),
    ),
    Program(
        "stderr_callback_example",
        [turn("What is 2+2?", text("2 + 2 = 4"))],
        prints=("Running query with stderr capture...", "Captured "),
        never=("Error detected",),
    ),
    Program(
        "max_budget_usd",
        [
            turn(TWO_AND_TWO, text("4")),
            turn(TWO_AND_TWO, text("4")),
            turn(
                "Read the README.md file",
                call("Read", file_path=f"{REPO}/README.md"),
                text("The README describes the examples."),
            ),
        ],
        prints=("Status: success", "Status: error_max_budget_usd", "Budget limit exceeded!"),
        exit_code=1,
    ),
    Program(
        "tools_option",
        [
            turn(WHAT_TOOLS, text("I have Read, Glob and Grep.")),
            turn(WHAT_TOOLS, text("I have no tools.")),
            turn(WHAT_TOOLS, text("Many tools.")),
        ],
        prints=("Tools from system message: []",),
        tools_line=("Glob", "Grep", "Read"),
    ),
    Program(
        "setting_sources",
        [turn(TWO_AND_TWO, text("4")), turn(TWO_AND_TWO, text("4")), turn(TWO_AND_TWO, text("4"))],
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
        [turn("Say hello in exactly 3 words", text("Hello there, friend!"))],
        prints=(
            "'test-agent'",
            "SUCCESS: Received full response",
            "SUCCESS: test-agent was loaded",
        ),
        never=("FAILURE",),
    ),
    Program(
        "include_partial_messages",
        [
            turn(
                "Think of three jokes",
                text("Why did the function return early? It had a date with the exception."),
            )
        ],
        prints=("StreamEvent(", "ResultMessage(", "It had a date with the exception."),
    ),
    Program(
        "streaming_mode_trio",
        [
            turn("What's 15 + 27?", text("15 + 27 = 42.")),
            turn("Now multiply that result by 2", text("42 × 2 = 84.")),
            turn("Divide that by 7", text("84 ÷ 7 = 12.00.")),
        ],
        prints=("42", "84", "12.00"),
        needs=("trio",),
    ),
    Program(
        "hooks",
        [
            turn(
                "Run the bash command: ./foo.sh --help",
                call("Bash", command="./foo.sh --help", description="Show foo's help"),
                text("The hook blocked that command."),
            ),
            turn(
                "Run the bash command: echo 'Hello from hooks example!'",
                call("Bash", command="echo 'Hello from hooks example!'", description="Say hello"),
                text("It printed the greeting."),
            ),
            turn("What's my favorite color?", text("I do not know your favorite color.")),
            turn(
                "Run this command: ls /nonexistent_directory",
                call("Bash", command="ls /nonexistent_directory", description="List a folder"),
                text("That folder does not exist."),
            ),
            turn(
                "a file called important_config.txt",
                call("Write", file_path=f"{REPO}/important_config.txt", content="test data"),
                text("Writing that file was denied."),
            ),
            turn(
                "a file called regular_file.txt",
                call("Write", file_path=f"{REPO}/regular_file.txt", content="test data"),
                text("I wrote regular_file.txt."),
            ),
            turn(
                "echo 'CRITICAL ERROR: system failure'",
                call("Bash", command="echo 'CRITICAL ERROR: system failure'", description="Echo"),
                text("(not reached: the hook stops the turn)"),
            ),
        ],
        args=("all",),
        prints=("Hello from hooks example!", "I wrote regular_file.txt."),
        files={"regular_file.txt": "test data"},
    ),
    Program(
        # code-reviewer (Read, Grep) and analyzer (Read, Grep, Glob) are not agent turns by
        # the referee's rule, so they answer SIDE_REPLY; doc-writer (Read, Write, Edit) is.
        "agents",
        [
            turn(
                "Use the code-reviewer agent",
                call(
                    "Agent",
                    description="Review types.py",
                    prompt="Review src/claude_agent_sdk/types.py.",
                    subagent_type="code-reviewer",
                    run_in_background=False,
                ),
                text("types.py reads well; no bugs found."),
            ),
            turn(
                "Use the doc-writer agent",
                call(
                    "Agent",
                    description="Explain AgentDefinition",
                    prompt="Explain AgentDefinition.",
                    subagent_type="doc-writer",
                    run_in_background=False,
                ),
            ),
            turn("Explain AgentDefinition.", text("AgentDefinition describes a subagent.")),
            turn(
                "Use the doc-writer agent",
                text("AgentDefinition describes a subagent: its prompt, tools and model."),
            ),
            turn(
                "Use the analyzer agent",
                call(
                    "Agent",
                    description="Find Python files",
                    prompt="List the Python files in examples/.",
                    subagent_type="analyzer",
                    run_in_background=False,
                ),
                text("The examples folder holds quick_start.py and others."),
            ),
        ],
        # The subagents' and the parent's words, as the SDK streams them.
        prints=(
            "Claude: types.py reads well; no bugs found.",
            "=== Multiple Agents Example ===",
            "Claude: The examples folder holds quick_start.py and others.",
        ),
    ),
    Program(
        "mcp_calculator",
        [
            turn(
                "List your tools", text("I have add, subtract, multiply, divide, sqrt and power.")
            ),
            turn(
                "Calculate 15 + 27",
                call("ToolSearch", query="select:mcp__calc__add", max_results=1),
                call("mcp__calc__add", a=15, b=27),
                text("15 + 27 = 42."),
            ),
            turn(
                "What is 100 divided by 7?",
                call("ToolSearch", query="select:mcp__calc__divide", max_results=1),
                call("mcp__calc__divide", a=100, b=7),
                text("About 14.29."),
            ),
            turn(
                "Calculate the square root of 144",
                call("ToolSearch", query="select:mcp__calc__sqrt", max_results=1),
                call("mcp__calc__sqrt", n=144),
                text("12."),
            ),
            turn(
                "What is 2 raised to the power of 8?",
                call("ToolSearch", query="select:mcp__calc__power", max_results=1),
                call("mcp__calc__power", base=2, exponent=8),
                text("256."),
            ),
            turn("Calculate (12 + 8) * 3 - 10", text("(12 + 8) * 3 - 10 = 50.")),
        ],
        prints=("15 + 27 = 42", "100 ÷ 7 = 14.28", "√144 = 12", "2^8 = 256", "Claude: 256."),
    ),
    Program(
        "tool_permission_callback",
        [
            turn(
                "1. List the files in the current directory",
                call("Bash", command="ls", description="List files"),
                call("Write", file_path="hello.py", content="print('Hello, World!')\n"),
                call("Bash", command="python safe_output/hello.py", description="Run it"),
                text("Listed the files, wrote the script and ran it."),
            )
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
        [turn("Hello!", text("Hello! How can I help?"))],
        prints=("Plugins loaded:", "demo-plugin"),
    ),
    Program(
        "streaming_mode",
        [
            turn("What is 2+2?", text("2 + 2 = 4")),
            turn("What's the capital of France?", text("Paris.")),
            turn(
                "What's the population of that city?",
                text("About two million people live in Paris."),
            ),
            turn(TWO_AND_TWO, text("4")),
            turn("What is the square root of 144?", text("12")),
            turn("What is 10% of 80?", text("8")),
            turn("Count from 1 to 100 slowly", text("1, 2, 3, 4, 5.")),
            turn(
                "Never mind, just tell me a quick joke",
                text("Why do programmers prefer dark mode? Light attracts bugs."),
            ),
            turn(
                "List 5 programming languages",
                text("Python: scripting. Go: servers. Rust: systems. JS: web. SQL: data."),
            ),
            turn(
                "Create a simple hello.txt file",
                call("Write", file_path=f"{REPO}/hello.txt", content="Hello from the SDK!"),
                text("Created hello.txt."),
            ),
            turn("Hello! I have multiple questions.", text("Hello! Ask away.")),
            turn("First, what's the capital of Japan?", text("Tokyo.")),
            turn("Second, what's 15% of 200?", text("30.")),
            turn(
                "Run a bash echo command",
                call("Bash", command="echo 'Hello from bash!'", description="Say hello"),
                text("It printed Hello from bash!"),
            ),
            turn("Count from 1 to 20 slowly", text("1 2 3 4 5")),
            turn("Just say 'Hello!'", text("Hello!")),
            turn(
                "Run a bash sleep command for 5 seconds",
                call("Bash", command="sleep 5", description="Sleep five seconds"),
                text("Done sleeping."),
            ),
        ],
        args=("all",),
        prints=(
            "Claude: 2 + 2 = 4",
            "Claude: Paris.",
            "Claude: Why do programmers prefer dark mode?",
            "Hello from bash!",
            "Claude: Hello!",
        ),
        files={"hello.txt": "Hello from the SDK!"},
    ),
]

NAMES = [program.name for program in PROGRAMS]
BY_NAME = {program.name: program for program in PROGRAMS}


def is_agent_turn(body: dict[str, Any]) -> bool:
    """Whether a request is the agent's turn, the referee's rule: it offers Bash and Read, or
    Read and Edit. (No program here asks for a summary: the referee's third kind.)"""
    names = {tool.get("name") for tool in body.get("tools") or [] if isinstance(tool, dict)}
    return {"Bash", "Read"} <= names or {"Read", "Edit"} <= names


def filled(value: Any, folder: Path) -> Any:
    """A step's tool input with ``REPO`` replaced by the program's folder."""
    if isinstance(value, str):
        return value.replace(REPO, str(folder))
    if isinstance(value, dict):
        return {key: filled(item, folder) for key, item in value.items()}
    if isinstance(value, list):
        return [filled(item, folder) for item in value]
    return value


def workspace(base: Path) -> Path:
    """A copy of the SDK's layout: examples/ (the programs) beside .claude/; returns examples/."""
    shutil.copytree(PROGRAMS_DIR, base / "examples")
    shutil.copytree(SDK_CLAUDE_DIR, base / ".claude")
    (base / "README.md").write_text("# Agent SDK examples\n\nExample programs for the SDK.\n")
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    return base / "examples"


def run_example(
    program: Program, examples: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """The program run in its folder through ``RUNNER`` with ``env`` (which names the CLI), fed
    its stdin; raises subprocess.TimeoutExpired after its ``timeout_s``."""
    return subprocess.run(
        [sys.executable, str(RUNNER), str(examples / f"{program.name}.py"), *program.args],
        cwd=examples,
        env=env,
        input=program.stdin,
        capture_output=True,
        text=True,
        timeout=program.timeout_s,
    )


def check(program: Program, stdout: str, folder: Path) -> list[str]:
    """What is wrong with a run's output and files (nothing: it did what it should)."""
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


def missing_module(program: Program) -> str:
    """Why the program cannot run here (a module it imports is not installed), or ""."""
    absent = [name for name in program.needs if importlib.util.find_spec(name) is None]
    return f"needs {', '.join(absent)} (not installed)" if absent else ""
