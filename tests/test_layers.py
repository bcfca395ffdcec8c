"""The layers as an order: a module imports only from its own layer or the ones below it.

Bottom to top: tools, then the agent's core parts (themselves in an order:
core data types, the model client, the shell parser, permissions and
settings, sessions, instructions, the loop), then compaction, then the
composition root (agent.app), then the front ends (tui). The fake Messages
API stands alone: only the demo (and tests and benchmarks) may use it. No
file-level import cycle, TYPE_CHECKING imports aside.
"""

from __future__ import annotations

import subprocess
import sys

from tests.import_graph import ROOT, cycles, import_graph, source_files

# Bottom first; a module belongs to the most specific prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("tools",),
    ("agent", "agent.core"),
    ("agent.model",),
    ("agent.shell",),
    ("agent.permissions",),
    ("agent.sessions",),
    ("agent.instructions",),
    ("agent.mcp",),
    ("agent.loop",),
    ("compaction",),
    ("agent.app",),
    ("tui",),
)
ASSET = "agent.fake_api"
ASSET_USERS = ("tui.demo",)


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            named = module == prefix or module.startswith(prefix + ".")
            if named and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    problems = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if _within(target, (ASSET,)):
                if not _within(module, (ASSET, *ASSET_USERS)):
                    problems.append(f"{module} imports {target}: the fake API is a test asset")
                continue
            if _within(module, (ASSET,)):
                problems.append(f"{module} imports {target}: the fake API stands alone")
                continue
            low, high = layer_of(module), layer_of(target)
            if low is not None and high is not None and high > low:
                problems.append(
                    f"{module} imports {target}: {'/'.join(LAYERS[high])} sits above "
                    f"{'/'.join(LAYERS[low])}"
                )
    return problems


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in source_files() if layer_of(m) is None and not _within(m, (ASSET,))]
    assert unplaced == []


def test_imports_follow_the_layer_order() -> None:
    assert layer_violations(import_graph(source_files())) == []


def test_no_import_cycles() -> None:
    assert cycles(import_graph(source_files())) == []


def test_the_order_is_checked() -> None:
    """The check catches what it is for: a loop importing compaction, tools importing agent."""
    graph = {
        "agent.loop.agent": {"compaction.manager"},
        "tools.bash": {"agent.core.messages"},
        "compaction.manager": {"agent.app.runtime"},
        "agent.app.runtime": {"compaction.manager", "agent.loop.agent"},
        "agent.core.events": {"agent.fake_api.server"},
    }
    assert len(layer_violations(graph)) == 4
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


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
