"""Dataclasses' methods from the kept table behave exactly as freshly compiled ones; a table
that is not the user's own, or not this Python's, or damaged, is never run.

Each case runs in a process of its own: ``install`` changes the ``dataclasses`` module for
the whole process."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# No ``from __future__ import annotations`` here: the generated __init__'s annotations are the
# types themselves, which they would not be had the cache compiled them with that flag.
SAMPLE = """
import dataclasses
from dataclasses import InitVar, dataclass, field
from typing import ClassVar


@dataclass(order=True)
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list, compare=False)
    secret: str = field(default="s", repr=False)
    count: ClassVar[int] = 0


@dataclass(frozen=True, kw_only=True)
class Key:
    name: str
    scope: str = "user"


@dataclass(slots=True, unsafe_hash=True)
class Slotted:
    a: int
    b: float = 1.5


@dataclass
class Derived(Point):
    z: int = 3
    factor: InitVar[int] = 2

    def __post_init__(self, factor: int) -> None:
        self.z *= factor
"""

DESCRIBE = """
import dataclasses, json, sys
from pathlib import Path
from agent.core import dataclass_code

table, mode = Path(sys.argv[1]), sys.argv[2]
if mode != "off":
    dataclass_code.install(table)
sys.path.insert(0, sys.argv[3])
import sample as s

p, q = s.Point(1, 2, ["a"]), s.Point(1, 3)
key = s.Key(name="k")
try:
    key.name = "other"
    frozen = "no error"
except dataclasses.FrozenInstanceError as error:
    frozen = repr(error)
try:
    s.Key("positional")
    keyword_only = "no error"
except TypeError as error:
    keyword_only = str(error)
d = s.Derived(1, z=5, factor=3)
print(json.dumps({
    "reprs": [repr(p), repr(q), repr(key), repr(s.Slotted(1)), repr(d)],
    "compare": [p == s.Point(1, 2, ["b"]), p < q, sorted([q, p]) == [p, q]],
    "hash": [hash(key) == hash(s.Key(name="k")), hash(s.Slotted(1)) == hash(s.Slotted(1))],
    "frozen": frozen,
    "keyword_only": keyword_only,
    "post_init": d.z,
    "annotations": repr(s.Point.__init__.__annotations__),
    "docs": [s.Point.__doc__, s.Key.__doc__],
    "match_args": list(s.Point.__match_args__),
    "slots": list(s.Slotted.__slots__),
    "stats": dataclass_code.stats(),
    "saved": dataclass_code.save() if mode == "save" else None,
}))
"""


def describe(tmp_path: Path, table: Path, mode: str) -> dict:
    (tmp_path / "sample.py").write_text(SAMPLE)
    out = subprocess.run(
        [sys.executable, "-c", DESCRIBE, str(table), mode, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=True,
    )
    return json.loads(out.stdout)


def without_stats(described: dict) -> dict:
    return {k: v for k, v in described.items() if k not in ("stats", "saved")}


def test_methods_from_the_table_behave_as_freshly_compiled_ones(tmp_path: Path) -> None:
    table = tmp_path / "cache" / "table.marshal"
    plain = describe(tmp_path, table, "off")
    assert plain["annotations"].startswith("{'x': <class 'int'>")
    first = describe(tmp_path, table, "save")
    assert first["stats"]["from_file"] == 0 and first["stats"]["compiled"] > 10
    assert first["saved"] is True
    assert table.stat().st_mode & 0o777 == 0o600
    second = describe(tmp_path, table, "save")
    assert second["stats"] == {"from_file": first["stats"]["compiled"], "compiled": 0}
    assert second["saved"] is False  # nothing new: the file is left alone
    assert without_stats(first) == without_stats(plain) == without_stats(second)


def test_the_file_holds_only_what_the_last_run_used(tmp_path: Path) -> None:
    table = tmp_path / "table.marshal"
    table.write_bytes(MAGIC_NUMBER + marshal.dumps({"x = 1": compile("x = 1", "<s>", "exec")}))
    table.chmod(0o600)
    described = describe(tmp_path, table, "save")
    assert described["stats"]["from_file"] == 0 and described["saved"]
    kept = marshal.loads(table.read_bytes()[len(MAGIC_NUMBER) :])
    assert "x = 1" not in kept and len(kept) == described["stats"]["compiled"]


def saved_table(tmp_path: Path) -> tuple[Path, dict]:
    table = tmp_path / "table.marshal"
    first = describe(tmp_path, table, "save")
    return table, first


def test_a_table_others_may_write_is_not_run(tmp_path: Path) -> None:
    table, first = saved_table(tmp_path)
    table.chmod(0o620)
    again = describe(tmp_path, table, "on")
    assert again["stats"] == {"from_file": 0, "compiled": first["stats"]["compiled"]}
    table.chmod(0o602)
    assert describe(tmp_path, table, "on")["stats"]["from_file"] == 0


def test_a_table_of_another_python_or_damaged_is_not_run(tmp_path: Path) -> None:
    table, first = saved_table(tmp_path)
    data = table.read_bytes()
    compiled = first["stats"]["compiled"]
    for damaged in (b"\0\0\r\n" + data[4:], data[: len(data) // 2], MAGIC_NUMBER + b"junk"):
        table.write_bytes(damaged)
        again = describe(tmp_path, table, "on")
        assert again["stats"] == {"from_file": 0, "compiled": compiled}
        assert without_stats(again) == without_stats(first)


def test_an_entry_that_is_not_code_is_compiled_instead(tmp_path: Path) -> None:
    table, first = saved_table(tmp_path)
    kept = marshal.loads(table.read_bytes()[len(MAGIC_NUMBER) :])
    table.write_bytes(MAGIC_NUMBER + marshal.dumps(dict.fromkeys(kept, "print('not code')")))
    again = describe(tmp_path, table, "on")
    assert again["stats"] == {"from_file": 0, "compiled": first["stats"]["compiled"]}
    assert without_stats(again) == without_stats(first)
