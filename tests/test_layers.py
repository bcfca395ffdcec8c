"""The layers as an order: a module imports only from its own package or the ones below it.

Bottom to top: tools, agent, compaction, tui (ARCHITECTURE.md). The fake
Messages API (tui.fake_api) stands alone: only the demo (and tests and
benchmarks) may use it. Imports under ``if TYPE_CHECKING:`` count like any
other, and no file-level import cycle is allowed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.import_graph import ROOT, cycles, import_graph, source_files

LAYERS: tuple[str, ...] = ("tools", "agent", "compaction", "tui")  # bottom first
ASSET = "tui.fake_api"
ASSET_USERS = ("tui.demo",)


def layer_of(module: str) -> int | None:
    top = module.split(".", 1)[0]
    return LAYERS.index(top) if top in LAYERS else None


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
                    f"{module} imports {target}: {LAYERS[high]} sits above {LAYERS[low]}"
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
        "compaction.manager": {"tui.session.runtime"},
        "tui.session.runtime": {"compaction.manager", "agent.loop.agent"},
        "agent.core.events": {"tui.fake_api.server"},
    }
    assert len(layer_violations(graph)) == 4
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_a_package_re_entered_from_its_own_module_is_a_cycle(tmp_path: Path) -> None:
    """``from pkg import x`` in a module pkg/__init__.py imports reads a half-made package;
    ``import pkg.x as x`` and ``from pkg.x import y`` do not."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg.main import run\n")
    (package / "part.py").write_text("VALUE = 1\n")
    main = package / "main.py"
    files = {"pkg": package / "__init__.py", "pkg.main": main, "pkg.part": package / "part.py"}
    main.write_text("from pkg import part\n")
    assert cycles(import_graph(files)) == [["pkg", "pkg.main"]]
    for fixed in ("import pkg.part as part\n", "from pkg.part import VALUE\n"):
        main.write_text(fixed)
        assert cycles(import_graph(files)) == []


def test_version_imports_nothing_heavy() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from tui.cli.launcher import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    run(['--version'])\n"
        "heavy = [m for m in ('anthropic', 'typer', 'pydantic', 'textual', 'asyncio') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"
