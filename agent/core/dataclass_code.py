"""The methods ``@dataclass`` writes, compiled once and kept between runs of ccx.

For every dataclass, the standard library writes ``__init__``, ``__repr__``, ``__eq__`` (and
more) as Python source and compiles it with ``exec``: some 1,200 small compilations, ~90 ms
of the app's start-up before the meter's first figure (Python 3.11). The source is a pure
function of the class, and its compiled code a pure function of the source, so
``install`` routes the module's ``exec`` through a table of code objects read from a file
(``marshal``, the format of ``.pyc`` files, under the interpreter's magic number) and compiles
only what the table lacks, exactly as ``exec`` would (no inherited ``__future__`` flags).
``save`` writes the sources this run used back, so the file holds one start-up's worth.

The file is code ccx runs: it is read only when it is the user's own and nobody else may
write it, as for ``.pyc`` files in the user's folders, and written 0600.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import marshal
import os
import stat
import sys
import threading
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

_state: dict[str, Any] = {
    "path": None,
    "known": {},  # source -> code, from the file
    "used": {},  # source -> code, this run's
    "compiled": 0,
    "hits": 0,
    "saved": 0,  # "compiled" when the file was last written
}
_lock = threading.Lock()


def cache_file(config: Path, front_end: str = "app") -> Path:
    """Where ``install`` keeps the table, per Python (each writes its own) and per front end
    (``app``, ``headless``): each start keeps its own set, so the two do not take turns."""
    tag = sys.implementation.cache_tag
    name = "dataclass-code" if front_end == "app" else f"dataclass-code-{front_end}"
    return config / "cache" / f"{name}.{tag}.marshal"


def install(path: Path) -> None:
    """Serve dataclasses' compilations from ``path`` (read now) from here on; once a process."""
    if _state["path"] is not None:
        return
    _state["path"] = path
    _state["known"] = _read(path)
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # the module's own name first


def _read(path: Path) -> dict[str, CodeType]:
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return {}
            data = handle.read()
    except OSError:
        return {}
    if not data.startswith(MAGIC_NUMBER):
        return {}  # another Python wrote it
    try:
        table = marshal.loads(data[len(MAGIC_NUMBER) :])
    except (ValueError, EOFError, TypeError):
        return {}
    return table if isinstance(table, dict) else {}


def _exec(source: Any, globals: Any = None, locals: Any = None, /, **options: Any) -> None:
    if isinstance(source, str):
        code = _state["known"].get(source)
        if type(code) is CodeType:
            _state["hits"] += 1
        else:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _state["compiled"] += 1
        _state["used"][source] = code
        source = code
    builtins.exec(source, globals, locals, **options)  # options: a later Python's (closure=)


def stats() -> dict[str, int]:
    """How many compilations came from the file and how many were made this run."""
    return {"from_file": _state["hits"], "compiled": _state["compiled"]}


def save() -> bool:
    """Write what this run used, when it compiled anything; True when the file was written."""
    from tools.atomic_file import atomic_write

    path = _state["path"]
    with _lock:
        if path is None or _state["compiled"] == _state["saved"]:
            return False
        _state["saved"] = _state["compiled"]
        used = dict(_state["used"])
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, MAGIC_NUMBER + marshal.dumps(used), mode=0o600)
        return True
    return False
