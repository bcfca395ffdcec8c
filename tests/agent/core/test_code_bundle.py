"""The code bundle: modules served from one file are the modules the path finder would give,
and nothing stale, shadowed or unsafe is ever served. Each start is a child Python (the
bundle changes the import system of its process once)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

CHILD = """
import importlib, json, sys
sys.path[:0] = {path!r}
from agent.core import code_bundle
code_bundle.install(__import__("pathlib").Path({bundle!r}))
report = {{}}
for name in {names!r}:
    module = importlib.import_module(name)
    spec = module.__spec__
    report[name] = {{
        "value": getattr(module, "VALUE", None),
        "file": module.__file__,
        "cached": module.__cached__,
        "path": list(getattr(module, "__path__", []) or []) or None,
        "origin": spec.origin,
        "loader": type(spec.loader).__name__,
        "source": spec.loader.get_source(name),
    }}
report["stats"] = code_bundle.stats()
report["saved"] = code_bundle.save() if {save!r} else None
print(json.dumps(report))
"""


def start(tmp_path: Path, names: list[str], path: list[Path], save: bool = True) -> dict:
    """One start of a child Python that imports ``names`` with the bundle (and saves it)."""
    code = CHILD.format(
        path=[str(p) for p in path],
        bundle=str(tmp_path / "bundle.bin"),
        names=names,
        save=save,
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the bundle compiles what has no .pyc
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def plain_import(names: list[str], path: list[Path]) -> dict:
    """What the usual import system gives, in a child Python without the bundle."""
    code = (
        "import importlib, json, sys\n"
        f"sys.path[:0] = {[str(p) for p in path]!r}\n"
        "out = {}\n"
        f"for name in {names!r}:\n"
        "    m = importlib.import_module(name)\n"
        "    out[name] = [m.__file__, m.__cached__, list(getattr(m, '__path__', []) or []) "
        "or None, m.__spec__.origin, getattr(m, 'VALUE', None)]\n"
        "print(json.dumps(out))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    lib = tmp_path / "lib"
    write(lib / "topmod.py", "VALUE = 'top'\n")
    write(lib / "pkg" / "__init__.py", "VALUE = 'pkg'\n")
    write(lib / "pkg" / "mod.py", "from . import sub\nVALUE = 'mod:' + sub.VALUE\n")
    write(lib / "pkg" / "sub" / "__init__.py", "VALUE = 'sub'\n")
    return lib


NAMES = ["topmod", "pkg", "pkg.mod", "pkg.sub"]


def test_the_second_start_is_served_and_gets_the_same_modules(tmp_path: Path, tree: Path) -> None:
    first = start(tmp_path, NAMES, [tree])
    assert first["saved"] is True
    bundle = tmp_path / "bundle.bin"
    assert bundle.stat().st_mode & 0o777 == 0o600
    second = start(tmp_path, NAMES, [tree])
    assert second["stats"]["served"] >= len(NAMES)
    assert second["saved"] is False  # it held them all
    plain = plain_import(NAMES, [tree])
    for name in NAMES:
        got = second[name]
        assert [got["file"], got["cached"], got["path"], got["origin"], got["value"]] == plain[name]
        assert got["loader"] == "_BundledLoader"  # a SourceFileLoader: source and resources
        assert got["source"] == (Path(got["file"])).read_text()
    assert second["pkg.mod"]["value"] == "mod:sub"


def test_a_changed_source_is_imported_from_the_source(tmp_path: Path, tree: Path) -> None:
    start(tmp_path, NAMES, [tree])
    module = tree / "pkg" / "mod.py"
    module.write_text("VALUE = 'changed'\n")
    os.utime(module, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    second = start(tmp_path, NAMES, [tree])
    assert second["pkg.mod"]["value"] == "changed"
    assert second["saved"] is True  # the stale entry is written again
    third = start(tmp_path, NAMES, [tree])
    assert third["pkg.mod"]["value"] == "changed"
    assert third["stats"]["served"] >= len(NAMES)


def test_a_same_size_edit_with_the_same_mtime_second_is_still_seen(
    tmp_path: Path, tree: Path
) -> None:
    """A .pyc checks whole seconds; the bundle checks nanoseconds and the size."""
    start(tmp_path, NAMES, [tree])
    module = tree / "topmod.py"
    before = module.stat()
    module.write_text("VALUE = 'pot'\n")  # same size
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert start(tmp_path, NAMES, [tree])["topmod"]["value"] == "pot"


def test_a_module_shadowed_earlier_on_the_path_is_not_served(tmp_path: Path, tree: Path) -> None:
    early = tmp_path / "early"
    early.mkdir()
    start(tmp_path, NAMES, [early, tree])
    write(early / "topmod.py", "VALUE = 'shadow'\n")
    second = start(tmp_path, NAMES, [early, tree])
    assert second["topmod"]["value"] == "shadow"
    assert second["topmod"]["file"] == str(early / "topmod.py")


def test_a_package_that_now_shadows_a_module_wins_as_it_would(tmp_path: Path, tree: Path) -> None:
    start(tmp_path, NAMES, [tree])
    write(tree / "pkg" / "mod" / "__init__.py", "VALUE = 'package now'\n")
    second = start(tmp_path, ["pkg.mod"], [tree])
    assert second["pkg.mod"]["value"] == "package now"


def test_another_path_serves_no_top_level_module(tmp_path: Path, tree: Path) -> None:
    start(tmp_path, NAMES, [tree])
    other = tmp_path / "other"
    other.mkdir()
    second = start(tmp_path, NAMES, [other, tree], save=False)
    assert second["topmod"]["value"] == "top"
    # the top-level ones go to the path finder; only what lies under them may be served
    assert second["stats"]["missed"] >= 2


def test_a_file_others_may_write_or_not_a_bundle_is_ignored(tmp_path: Path, tree: Path) -> None:
    start(tmp_path, NAMES, [tree])
    bundle = tmp_path / "bundle.bin"
    bundle.chmod(0o666)
    second = start(tmp_path, NAMES, [tree], save=False)
    assert second["stats"]["served"] == 0 and second["pkg.mod"]["value"] == "mod:sub"
    bundle.chmod(0o600)
    bundle.write_bytes(bundle.read_bytes()[:200])  # torn
    third = start(tmp_path, NAMES, [tree])
    assert third["stats"]["served"] == 0 and third["saved"] is True
    bundle.write_bytes(b"not a bundle at all")
    assert start(tmp_path, NAMES, [tree], save=False)["stats"]["served"] == 0


def test_a_module_another_finder_makes_is_left_to_it(tmp_path: Path, tree: Path) -> None:
    """A finder ahead of the path finder (here one that renames a module) keeps its modules."""
    made_from = str(tree / "pkg" / "__init__.py")
    write(
        tree / "redirect.py",
        "import importlib.machinery, importlib.util, sys\n"
        "class F:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'made':\n"
        f"            return importlib.util.spec_from_file_location('made', {made_from!r})\n"
        "sys.meta_path.insert(0, F())\n",
    )
    first = start(tmp_path, ["redirect", "made"], [tree])
    assert first["made"]["value"] == "pkg"
    second = start(tmp_path, ["redirect", "made"], [tree])
    assert second["made"]["loader"] == "SourceFileLoader"  # made by F, not the bundle


def test_a_package_with_an_earlier_folder_on_its_path_finds_what_appears_there(
    tmp_path: Path, tree: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    write(tree / "pkg" / "__init__.py", f"__path__.insert(0, {str(extra)!r})\nVALUE = 'pkg'\n")
    assert start(tmp_path, NAMES, [tree])["pkg.mod"]["value"] == "mod:sub"
    assert start(tmp_path, NAMES, [tree])["pkg.mod"]["value"] == "mod:sub"
    write(extra / "mod.py", "VALUE = 'from the earlier folder'\n")
    assert start(tmp_path, NAMES, [tree])["pkg.mod"]["value"] == "from the earlier folder"


def test_a_bundle_that_is_not_the_file_ccx_wrote_is_not_read(tmp_path: Path, tree: Path) -> None:
    """Same bytes, another file (a copy put in its place): its stamp no longer matches."""
    start(tmp_path, NAMES, [tree])
    bundle = tmp_path / "bundle.bin"
    data = bundle.read_bytes()
    bundle.unlink()
    bundle.write_bytes(data)
    bundle.chmod(0o600)
    second = start(tmp_path, NAMES, [tree])
    assert second["stats"]["served"] == 0 and second["saved"] is True
    assert start(tmp_path, NAMES, [tree])["stats"]["served"] >= len(NAMES)  # written anew
