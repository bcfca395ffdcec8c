"""The ripgrep Grep engine: runs `rg` and parses what it prints.

Every rule that could make it disagree with the pure-Python engine is pinned
by flags: no config file, .gitignore honoured outside git repositories too,
no global gitignore, and file types given explicitly with --type-add.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
from typing import Any

from tools.grep_python import MAX_COLLECTED_LINES, FileHits, GrepOutcome, GrepQuery, cap_line

TIMEOUT_S = 60.0
MAX_OUTPUT_BYTES = 64 * 1024 * 1024


class RgError(Exception):
    """ripgrep refused the search (a bad pattern, an unknown type); the message says why."""


def build_args(rg: str, query: GrepQuery, type_name: str | None = None) -> list[str]:
    args = [rg, "--no-config", "--no-require-git", "--no-ignore-global", "--no-messages"]
    args.append("--with-filename")
    if not query.vcs_ignores:
        args.append("--no-ignore-vcs")
    if query.ignore_case:
        args.append("--ignore-case")
    if query.multiline:
        args += ["--multiline", "--multiline-dotall"]
    for glob in query.globs:
        args.append(f"--glob={glob}")
    if query.type_globs:
        args += [f"--type-add=ccx:{glob}" for glob in query.type_globs]
        args.append("--type=ccx")
    elif type_name:
        args.append(f"--type={type_name}")  # a type only rg knows
    if query.mode == "files_with_matches":
        args += ["--files-with-matches", "--null"]
    elif query.mode == "count":
        args += ["--count", "--null"]
    else:
        args.append("--json")
        if query.before:
            args.append(f"--before-context={query.before}")
        if query.after:
            args.append(f"--after-context={query.after}")
    args += ["--regexp", query.pattern, "--", str(query.root)]
    return args


async def search(
    query: GrepQuery, rg: str, type_name: str | None = None, timeout: float = TIMEOUT_S
) -> GrepOutcome:
    """Raises RgError when rg rejects the search, TimeoutError after `timeout` seconds."""
    proc = await asyncio.create_subprocess_exec(
        *build_args(rg, query, type_name),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=query.cwd,
    )
    assert proc.stderr is not None  # piped above
    try:
        outcome, err = await asyncio.wait_for(
            asyncio.gather(_collect(proc, query), proc.stderr.read()),
            timeout,
        )
        code = await proc.wait()
    finally:
        if proc.returncode is None:  # timed out or cancelled: do not leave rg running
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    if code == 2 and not outcome.files and not outcome.truncated:
        message = err.decode("utf-8", errors="replace").strip()
        if message:
            raise RgError(message)
    return outcome


async def _collect(proc: asyncio.subprocess.Process, query: GrepQuery) -> GrepOutcome:
    """Parses rg's output as it comes; stops rg once enough is collected, so memory stays
    bounded by what can be shown, not by what rg finds."""
    assert proc.stdout is not None
    parser = OutputParser(query)
    separator = b"\0" if query.mode == "files_with_matches" else b"\n"
    pending = b""
    size = 0
    while chunk := await proc.stdout.read(1 << 16):
        size += len(chunk)
        *records, pending = (pending + chunk).split(separator)
        parser.feed_many(records)
        if parser.full or size > MAX_OUTPUT_BYTES:
            proc.kill()
            parser.outcome.truncated = True
            return parser.outcome
    if pending:
        parser.feed(pending)
    return parser.outcome


def parse_output(query: GrepQuery, out: bytes) -> GrepOutcome:
    parser = OutputParser(query)
    separator = b"\0" if query.mode == "files_with_matches" else b"\n"
    for record in out.split(separator):
        parser.feed(record)
        if parser.full:
            parser.outcome.truncated = True
            break
    return parser.outcome


class OutputParser:
    """rg's records, one at a time, into a GrepOutcome: paths (-l --null), path NUL count
    (--count --null), or JSON events (content)."""

    def __init__(self, query: GrepQuery) -> None:
        self.mode = query.mode
        self.outcome = GrepOutcome([])
        self._by_path: dict[str, FileHits] = {}
        self._collected = 0

    @property
    def full(self) -> bool:
        return self._collected >= MAX_COLLECTED_LINES

    def feed_many(self, records: list[bytes]) -> None:
        if self.mode != "files_with_matches":
            for record in records:
                self.feed(record)
            return
        # The common case at scale (thousands of files), without a call per record. The
        # files are stat'ed now, while rg is still searching: they are shown newest first.
        paths = [os.fsdecode(record) for record in records if record]
        self.outcome.files += [FileHits(p, count=1, mtime=_mtime(p)) for p in paths]
        self._collected += len(paths)

    def feed(self, record: bytes) -> None:
        if not record:
            return
        if self.mode == "files_with_matches":
            self.feed_many([record])
        elif self.mode == "count":
            path, _, count = record.rpartition(b"\0")
            if path:
                self.outcome.files.append(FileHits(path=os.fsdecode(path), count=int(count)))
                self._collected += 1
        else:
            self._feed_json(record)

    def _feed_json(self, record: bytes) -> None:
        try:
            event = json.loads(record)
        except ValueError:
            return
        kind = event.get("type")
        if kind not in ("match", "context"):
            return
        data = event["data"]
        path = _text(data["path"], is_path=True)
        hits = self._by_path.get(path)
        if hits is None:
            hits = self._by_path[path] = FileHits(path=path)
            self.outcome.files.append(hits)
        text = _text(data["lines"])
        if text.endswith("\n"):
            text = text[:-1]
        number = data["line_number"]
        is_match = kind == "match"
        hits.count += is_match
        for offset, line in enumerate(text.split("\n")):
            hits.lines.append((number + offset, cap_line(line), is_match))
        self._collected += 1


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _text(value: dict[str, Any], *, is_path: bool = False) -> str:
    """rg's JSON gives text, or base64 bytes when they are not valid UTF-8."""
    if "text" in value:
        text: str = value["text"]
        return text
    raw = base64.b64decode(value.get("bytes", ""))
    return os.fsdecode(raw) if is_path else raw.decode("utf-8", errors="replace")
