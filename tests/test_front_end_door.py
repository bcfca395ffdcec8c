"""The front ends' one door: they reach the session through the driver, never its Runtime.

The full-screen app, the plain REPL, headless ``-p``, stream-json, the CLI and
the rest of ``tui`` outside the session package (``tui.session``) and the slash
commands it runs (``tui.commands``) neither import ``tui.session.runtime``
(under ``TYPE_CHECKING`` too) nor read an attribute named ``runtime``: what
they need is a method or a read-only view of ``tui.session.driver``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.import_graph import imported_names, source_files

INSIDE = ("tui.session", "tui.commands")
RUNTIME = "tui.session.runtime"


def front_end_modules() -> dict[str, Path]:
    return {
        module: path
        for module, path in source_files(("tui",)).items()
        if not any(module == p or module.startswith(p + ".") for p in INSIDE)
    }


def reaches_past_the_door(path: Path) -> list[str]:
    """Where the file imports the Runtime's module or reads a ``.runtime`` attribute."""
    found = [f"imports {RUNTIME}"] if RUNTIME in imported_names(path) else []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found += [
        f"line {node.lineno}: .runtime"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "runtime"
    ]
    return found


def test_front_ends_go_through_the_driver() -> None:
    modules = front_end_modules()
    assert {"tui.fullscreen.bridge", "tui.plain.repl", "tui.headless.run"} <= set(modules)
    problems = {m: found for m, path in modules.items() if (found := reaches_past_the_door(path))}
    assert problems == {}


def test_the_check_catches_a_reach_through(tmp_path: Path) -> None:
    reaching = tmp_path / "reaching.py"
    reaching.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from tui.session.runtime import Runtime\n"
        "def f(driver):\n"
        "    return driver.runtime.jobs\n"
    )
    assert reaches_past_the_door(reaching) == [f"imports {RUNTIME}", "line 5: .runtime"]
    clean = tmp_path / "clean.py"
    clean.write_text("def f(driver):\n    runtime = driver.inventory()\n    return runtime\n")
    assert reaches_past_the_door(clean) == []
