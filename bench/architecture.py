"""The shape of the code: module sizes, the import graph's cycles, and imports against the layers.

Reports the number of modules of agent/, tools/, compaction/ and tui/, the
median and the largest sizes (lines), the files over the 600-line limit
(tests and bench included), the import cycles (strongly connected components
of more than one module, TYPE_CHECKING imports counted; see
tests/import_graph.py) and the imports against the layer order of
tests/test_layers.py.

    .venv/bin/python bench/architecture.py [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.import_graph import PACKAGES, cycles, import_graph, source_files  # noqa: E402
from tests.test_layers import layer_violations  # noqa: E402

LIMIT = 600  # no module over this; no other line-count rule


def line_counts(paths: list[Path]) -> dict[str, int]:
    return {
        str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in paths
    }


def report() -> dict[str, object]:
    files = source_files()
    sizes = line_counts(list(files.values()))
    every = line_counts(sorted(p for p in ROOT.glob("*/**/*.py") if _counted(p)))
    graph = import_graph(files)
    return {
        "modules": len(sizes),
        "median_lines": statistics.median(sizes.values()),
        "largest": sorted(sizes.items(), key=lambda kv: -kv[1])[:5],
        "over_limit": sorted(name for name, n in every.items() if n > LIMIT),
        "import_edges": sum(len(t) for t in graph.values()),
        "cycles": cycles(graph),
        "layer_violations": layer_violations(graph),
    }


def _counted(path: Path) -> bool:
    parts = path.relative_to(ROOT).parts
    return parts[0] in (*PACKAGES, "tests", "bench") and "__pycache__" not in parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = report()
    if args.json:
        print(json.dumps(figures))
        return
    print(f"modules: {figures['modules']}, median {figures['median_lines']} lines")
    print(f"largest: {figures['largest']}")
    print(f"over {LIMIT} lines (tests and bench included): {figures['over_limit']}")
    found = figures["cycles"]
    assert isinstance(found, list)
    print(f"import edges: {figures['import_edges']}; cycles: {len(found)}")
    for component in found:
        print(f"  cycle of {len(component)}: {', '.join(component)}")
    violations = figures["layer_violations"]
    assert isinstance(violations, list)
    print(f"imports against the layer order: {len(violations)}")
    for violation in violations:
        print(f"  {violation}")


if __name__ == "__main__":
    main()
