"""The one-way layers: tui -> agent -> tools, compaction plugged in only at the composition root."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agent", "tools", "compaction", "tui")
# Modules of agent/ that assemble the parts and so may name compaction/.
COMPOSITION_ROOTS = {
    "agent.runtime",
    "agent.context_setup",
    "agent.headless",
    "agent.cli",
    "agent.commands",
}
# What compaction/ may use of agent/: the data types and the model client, not the loop or the CLI.
AGENT_FOR_COMPACTION_FORBIDDEN = {"agent.loop", "agent.runtime", "agent.cli", "agent.headless"}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def modules() -> dict[str, set[str]]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[name] = imports_of(path)
    return found


def top(name: str) -> str:
    return name.split(".")[0]


def test_layers_point_one_way() -> None:
    problems = []
    for module, imported in modules().items():
        for name in imported:
            layer, target = top(module), top(name)
            if layer == "tools" and target in ("agent", "compaction", "tui"):
                problems.append(f"{module} imports {name}: tools/ is the bottom layer")
            if layer in ("agent", "compaction") and target == "tui":
                problems.append(f"{module} imports {name}: only tui/ may name tui/")
            if layer == "agent" and target == "compaction" and module not in COMPOSITION_ROOTS:
                problems.append(
                    f"{module} imports {name}: the loop must not know compaction's insides"
                )
            if layer == "compaction" and any(
                name.startswith(f) for f in AGENT_FOR_COMPACTION_FORBIDDEN
            ):
                problems.append(
                    f"{module} imports {name}: compaction/ must not reach into the loop"
                )
            if (
                module.startswith("agent.fake_api")
                and target in PACKAGES
                and not name.startswith("agent.fake_api")
            ):
                problems.append(f"{module} imports {name}: the fake API stands alone")
    assert problems == []


def test_version_imports_nothing_heavy() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from tui.launcher import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    run(['--version'])\n"
        "heavy = [m for m in ('anthropic', 'typer', 'pydantic', 'textual', 'asyncio') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"
