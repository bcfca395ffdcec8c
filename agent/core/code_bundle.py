"""The compiled code of the modules a start of ccx imports, kept in one file between runs.

A cold `-p` imports some 1,700 modules (ccx's, ~1,400 of the SDK's, pydantic, httpx...).
For each, the path finder checks its folder's listing and stats the file, the loader stats
the source again to check the ``.pyc``, then opens and reads it: ~25 µs of system calls and
Python a module, ~40 ms before the first request. ``install`` puts a finder just before the
path finder on ``sys.meta_path`` (every other finder still comes first) that knows where
the last start found each module and serves its code from one file (its index read at
once, each module's code when that module is imported). The module is otherwise what the
path finder makes: the same spec, ``__file__``, ``__cached__`` and ``__path__``, and a
``SourceFileLoader`` (its source and resources).

Nothing stale is served. A module comes from the file only while its source has the size
and modification time recorded (a ``.pyc`` is checked by less), the folder it was found in
is unchanged (as the path finder checks its listing) and lies on the path it is looked for
on; a top-level module only while ``sys.path`` is the recorded one and none of its folders
changed. Anything else goes to the path finder. ``save`` writes the file again when this
run imported a module it lacked, taking each one's code from its ``.pyc`` when that
matches the source, else compiling the source as the import system does; only modules the
path finder itself finds where they were found are kept.

The file is code ccx runs: it is read only when it is the user's own and nobody else may
write it (as ``.pyc`` files in the user's folders), written 0600, and read only while it is
the very file ccx wrote (``stamp_file``): a sandboxed command that rewrote it, where ccx's
folder lies in a tree commands may write, leaves a bundle no later ccx reads.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import json
import marshal
import os
import stat
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

HEADER = importlib.util.MAGIC_NUMBER + b"ccx-code-bundle-2\n"  # then code, index, its size
_PYC_HEADER = 16  # magic, flags, source mtime, source size
# (origin, is a package, source mtime_ns, source size, offset, length)
Entry = tuple[str, bool, int, int, int, int]


def cache_file(config: Path, front_end: str) -> Path:
    """Where a front end's bundle is kept: per Python and per front end (``app``,
    ``headless``), as each imports its own set."""
    return config / "cache" / f"code-bundle-{front_end}.{sys.implementation.cache_tag}.bin"


def stamp_file(bundle: Path) -> Path:
    """The bundle's stamp: the identity of the file ccx wrote (device, inode, size, times
    of modification and of change, which no later write can leave as they were). A bundle
    that does not match its stamp is not read. The stamp is small, so the sandbox's guard
    can put it back after a command (it cannot keep a copy of the ~10 MB bundle itself)."""
    return bundle.with_name(bundle.name + ".stamp")


def _identity(info: os.stat_result) -> list[int]:
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


class _Bundle:
    def __init__(self, path: Path) -> None:
        self.path = path
        # The open file and its index, swapped together: a thread finding a module reads
        # its code from the file its entry is for. A file replaced by ``save`` stays open
        # (a number that was closed could be another file's by the time a read comes).
        self.table: tuple[int | None, dict[str, Entry]] = (None, {})
        self.sys_path: list[str] = []
        self.folders: dict[str, int] = {}  # folder -> mtime_ns when saved
        self.checked: dict[str, bool] = {}  # folder -> unchanged, once a run
        self.top_level_ok: bool | None = None
        self.served = 0
        self.missed = 0  # found by the path finder instead
        self.lock = threading.Lock()

    def read(self) -> None:
        """The file's index; each module's code is read from it when asked for (the file
        stays open, nothing of it is kept in memory)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return
        try:
            info = os.fstat(fd)
            if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                raise ValueError("not the user's own")
            if _read_stamp(stamp_file(self.path)) != _identity(info):
                raise ValueError("not the file ccx wrote")
            head = os.pread(fd, len(HEADER), 0)
            if head != HEADER or info.st_size < len(HEADER) + 8:
                raise ValueError("another Python, or another format")
            index_size = int.from_bytes(os.pread(fd, 8, info.st_size - 8), "little")
            index_at = info.st_size - 8 - index_size
            if index_at < len(HEADER):
                raise ValueError("torn")
            index = marshal.loads(os.pread(fd, index_size, index_at))
            modules, sys_path, folders = index["modules"], index["path"], index["folders"]
            if not (isinstance(modules, dict) and isinstance(folders, dict)):
                raise ValueError("not an index")
            entries = {
                name: (origin, is_pkg, mtime, size, offset, length)
                for name, (origin, is_pkg, mtime, size, offset, length) in modules.items()
                if len(HEADER) <= offset and offset + length <= index_at
            }
            sys_path = [str(entry) for entry in sys_path]
        except (OSError, ValueError, EOFError, TypeError, KeyError):
            os.close(fd)
            return
        self.sys_path, self.folders = sys_path, folders
        self.table = (fd, entries)

    @property
    def modules(self) -> dict[str, Entry]:
        return self.table[1]

    @staticmethod
    def code(fd: int | None, offset: int, length: int) -> bytes | None:
        if fd is None:
            return None
        try:
            data = os.pread(fd, length, offset)
        except OSError:
            return None
        return data if len(data) == length else None

    def folder_unchanged(self, folder: str) -> bool:
        known = self.checked.get(folder)
        if known is None:
            known = self.checked[folder] = _mtime(folder) == self.folders.get(folder)
        return known

    def top_level_allowed(self) -> bool:
        """sys.path as recorded and none of its folders changed: the path finder would find
        each top-level module where it did."""
        if self.top_level_ok is None:
            self.top_level_ok = sys.path == self.sys_path and all(
                self.folder_unchanged(entry or os.getcwd()) for entry in sys.path
            )
        return self.top_level_ok

    def code_of(self, name: str, path: Sequence[str] | None) -> tuple[Entry, bytes] | None:
        fd, modules = self.table
        entry = modules.get(name)
        if entry is None:
            return None
        origin, is_pkg, mtime, size, offset, length = entry
        folder = os.path.dirname(origin)
        where = os.path.dirname(folder) if is_pkg else folder  # where it was looked for
        if path is None:
            if not self.top_level_allowed():
                return None
        elif next(iter(path), None) != where:
            return None  # looked for elsewhere, or where an earlier folder may now have it
        if not self.folder_unchanged(folder) or (is_pkg and not self.folder_unchanged(where)):
            return None
        try:
            info = os.stat(origin)
        except OSError:
            return None
        if info.st_mtime_ns != mtime or info.st_size != size:
            return None
        code = self.code(fd, offset, length)
        return None if code is None else (entry, code)


class _BundledLoader(importlib.machinery.SourceFileLoader):
    """The path finder's loader for a ``.py`` file, whose first ``get_code`` is the code
    the bundle held (checked against the source by the finder)."""

    def __init__(self, fullname: str, path: str, code: bytes) -> None:
        super().__init__(fullname, path)
        self._code: bytes | None = code

    def get_code(self, fullname: str) -> Any:
        code, self._code = self._code, None
        if code is None or fullname != self.name:
            return super().get_code(fullname)
        try:
            return marshal.loads(code)
        except (ValueError, EOFError, TypeError):
            return super().get_code(fullname)


class _BundleFinder:
    """Just before the path finder: serves the modules the bundle holds, as it would."""

    def __init__(self, bundle: _Bundle) -> None:
        self.bundle = bundle

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        found = self.bundle.code_of(fullname, path)
        if found is None:
            self.bundle.missed += 1
            return None
        (origin, is_pkg, *_rest), code = found
        self.bundle.served += 1
        loader = _BundledLoader(fullname, origin, code)
        locations = [os.path.dirname(origin)] if is_pkg else None
        return importlib.util.spec_from_file_location(
            fullname, origin, loader=loader, submodule_search_locations=locations
        )

    def invalidate_caches(self) -> None:
        self.bundle.checked.clear()
        self.bundle.top_level_ok = None


_state: dict[str, Any] = {"bundle": None}


def install(path: Path) -> None:
    """Serve the modules the file at ``path`` holds from here on; once a process."""
    if _state["bundle"] is not None:
        return
    bundle = _Bundle(path)
    bundle.read()
    _state["bundle"] = bundle
    finder = _BundleFinder(bundle)
    try:
        index = sys.meta_path.index(importlib.machinery.PathFinder)
    except ValueError:
        return  # an import system this does not know: left as it is
    sys.meta_path.insert(index, finder)


def holds_module(fullname: str) -> bool:
    """Whether the bundle holds ``fullname`` as a module, not a package (whether or not it
    will serve it): a finder ahead of it that wants only packages can let it pass without
    looking."""
    bundle = _state["bundle"]
    entry = None if bundle is None else bundle.modules.get(fullname)
    return entry is not None and not entry[1]


def stats() -> dict[str, int]:
    """Modules served from the file, and those the path finder found instead."""
    bundle = _state["bundle"]
    if bundle is None:
        return {"served": 0, "missed": 0, "held": 0}
    return {"served": bundle.served, "missed": bundle.missed, "held": len(bundle.modules)}


def save() -> bool:
    """Write the file again when this run imported a module it lacked or held stale code
    of; True when written. The modules it held that are still valid are kept too."""
    bundle: _Bundle | None = _state["bundle"]
    if bundle is None:
        return False
    with bundle.lock:
        held = {name: entry[:4] for name, entry in bundle.modules.items()}
        modules = _found_by_the_path_finder(held)  # those it served are in it already
        if all(held.get(name) == entry for name, entry in modules.items()) and (
            sys.path == bundle.sys_path
        ):
            return False
        from tools.atomic_file import atomic_write

        with contextlib.suppress(OSError, ValueError):
            bundle.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(bundle.path, _encode(modules, bundle), mode=0o600)
            stamp = json.dumps(_identity(os.stat(bundle.path))).encode()
            atomic_write(stamp_file(bundle.path), stamp, mode=0o600)
            bundle.read()  # what was written: served from now on, and compared by a later save
            bundle.checked.clear()
            bundle.top_level_ok = None
            return True
    return False


def _found_by_the_path_finder(
    held: dict[str, tuple[str, bool, int, int]],
) -> dict[str, tuple[str, bool, int, int]]:
    """The imported modules this run did not take from the bundle that the path finder finds,
    from a ``.py`` file, where they were found: name -> (origin, is a package, source
    mtime_ns, size). One the bundle ``held`` as it is now was checked when it was saved."""
    found: dict[str, tuple[str, bool, int, int]] = {}
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            continue
        origin = spec.origin
        if not isinstance(origin, str) or not origin.endswith(".py"):
            continue
        try:
            info = os.stat(origin)
        except OSError:
            continue
        is_pkg = spec.submodule_search_locations is not None
        entry = (origin, is_pkg, info.st_mtime_ns, info.st_size)
        if held.get(name) == entry:
            found[name] = entry
            continue
        parent_name = name.rpartition(".")[0]
        if parent_name:
            parent = sys.modules.get(parent_name)
            path = getattr(parent, "__path__", None)
            if path is None:
                continue
            path = list(path)
        else:
            path = None
        again = importlib.machinery.PathFinder.find_spec(name, path)
        if again is None or again.origin != origin:
            continue  # another finder made it: that one is asked first next time too
        found[name] = entry
    return found


def _encode(modules: dict[str, tuple[str, bool, int, int]], bundle: _Bundle) -> Iterator[bytes]:
    """The file, a piece at a time (one module's code in memory at once): the header, the
    code of the modules this run found and of those the bundle held that are still valid
    (copied from it), then the index and its size. ValueError when the index cannot be
    written."""
    yield HEADER
    index: dict[str, Entry] = {}
    offset = len(HEADER)
    fd, held = bundle.table
    for name in sorted(set(modules) | set(held)):
        if name in modules:
            origin, is_pkg, mtime, size = modules[name]
            code = _code_bytes(origin, mtime, size)
        else:
            origin, is_pkg, mtime, size, start, length = held[name]
            try:
                info = os.stat(origin)
            except OSError:
                continue
            if (info.st_mtime_ns, info.st_size) != (mtime, size):
                continue
            code = bundle.code(fd, start, length)
        if code is None:
            continue
        index[name] = (origin, is_pkg, mtime, size, offset, len(code))
        yield code
        offset += len(code)
    folders: dict[str, int] = {}
    for origin, is_pkg, *_rest in index.values():
        folder = os.path.dirname(origin)
        for each in (folder, os.path.dirname(folder)) if is_pkg else (folder,):
            folders.setdefault(each, _mtime(each))
    for entry in sys.path:  # one that does not exist must still not exist
        folders.setdefault(entry or os.getcwd(), _mtime(entry or os.getcwd()))
    encoded = marshal.dumps({"modules": index, "path": list(sys.path), "folders": folders})
    yield encoded
    yield len(encoded).to_bytes(8, "little")


def _read_stamp(path: Path) -> Any:
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return None
            return json.loads(handle.read(200))
    except (OSError, ValueError):
        return None


def _mtime(path: str) -> int:
    """A folder's modification time (ns), or -1 when there is none (or it is not there)."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _code_bytes(origin: str, mtime_ns: int, size: int) -> bytes | None:
    """The module's code as marshal data: its ``.pyc``'s when that was written for this
    source (by modification time and size), else the source compiled as import does."""
    with contextlib.suppress(OSError, NotImplementedError, ValueError):
        source_mtime = int(os.stat(origin).st_mtime)  # what a .pyc records
        cached = importlib.util.cache_from_source(origin)
        with open(cached, "rb") as handle:
            pyc = handle.read()
        flags = int.from_bytes(pyc[4:8], "little")
        if (
            pyc[:4] == importlib.util.MAGIC_NUMBER
            and flags == 0  # timestamp-checked, as the import system writes them
            and int.from_bytes(pyc[8:12], "little") == source_mtime & 0xFFFFFFFF
            and int.from_bytes(pyc[12:16], "little") == size & 0xFFFFFFFF
        ):
            return pyc[_PYC_HEADER:]
    try:
        with open(origin, "rb") as handle:
            source = handle.read()
        code = compile(source, origin, "exec", dont_inherit=True)
        return marshal.dumps(code)
    except (OSError, SyntaxError, ValueError):
        return None
