"""The project's import graph, read from the source: what each module imports at run time.

Counts every import a file makes (at module level, inside a function, or under
``if TYPE_CHECKING:``: a type-only import is still a dependency a reader must
follow, and a cycle through one is still a cycle); a module's own packages are
left out (they are initialized before it runs whatever it imports) unless it
imports from one by name (``from package import x``). Used by
tests/test_layers.py and bench/architecture.py; ``run_time_only`` leaves the
TYPE_CHECKING imports out.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agent", "tools", "compaction", "tui")


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def source_files(packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    return {
        module_name(path): path
        for package in packages
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def _nodes(tree: ast.AST, run_time_only: bool) -> Iterator[ast.AST]:
    """Every node, or (``run_time_only``) every node outside ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if run_time_only and isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(path: Path, run_time_only: bool = False) -> set[str]:
    """Absolute module names ``path`` imports (``from a import b`` gives a.b too, so importing
    a submodule by name counts)."""
    return {name for name, _ in _imports(path, run_time_only)}


def _imports(path: Path, run_time_only: bool) -> Iterator[tuple[str, bool]]:
    """(module name, whether the statement reads that module's namespace as it runs:
    ``from a import b`` reads a's; ``import a.b`` only binds a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in _nodes(tree, run_time_only):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, False
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, True
            for alias in node.names:
                yield f"{node.module}.{alias.name}", False


def import_graph(files: dict[str, Path], run_time_only: bool = False) -> dict[str, set[str]]:
    """module -> the project modules it imports."""
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        # A module's own packages are initialized before it runs, whatever it imports; but
        # a ``from package import x`` reads the package's namespace, which is half-made when
        # its __init__ is what imports this module: that edge counts.
        ancestors = {module.rsplit(".", k)[0] for k in range(1, module.count(".") + 1)}
        targets = {
            name
            for name, reads in _imports(path, run_time_only)
            if name in files and name != module and (reads or name not in ancestors)
        }
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found
