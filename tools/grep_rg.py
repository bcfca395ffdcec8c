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
import shutil
from functools import cache
from typing import Any

from tools.grep_python import MAX_COLLECTED_LINES, FileHits, GrepOutcome, GrepQuery, cap_line

TIMEOUT_S = 60.0
MAX_OUTPUT_BYTES = 64 * 1024 * 1024


class RgError(Exception):
    """ripgrep refused the search (a bad pattern, an unknown type); the message says why."""


@cache
def find_rg() -> str | None:
    """The `rg` on PATH, looked up once per process."""
    return shutil.which("rg")


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
        (out, cut), err = await asyncio.wait_for(
            asyncio.gather(_read_capped(proc), proc.stderr.read()),
            timeout,
        )
        code = await proc.wait()
    finally:
        if proc.returncode is None:  # timed out or cancelled: do not leave rg running
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    if cut:
        out = out[: out.rfind(b"\n") + 1]  # drop a torn last record
    outcome = parse_output(query, out)
    if code == 2 and not outcome.files:
        message = err.decode("utf-8", errors="replace").strip()
        if message:
            raise RgError(message)
    outcome.truncated = outcome.truncated or cut
    return outcome


async def _read_capped(proc: asyncio.subprocess.Process) -> tuple[bytes, bool]:
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    while chunk := await proc.stdout.read(1 << 16):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_OUTPUT_BYTES:
            proc.kill()
            return b"".join(chunks), True
    return b"".join(chunks), False


def parse_output(query: GrepQuery, out: bytes) -> GrepOutcome:
    if query.mode == "files_with_matches":
        return GrepOutcome([FileHits(os.fsdecode(p), count=1) for p in out.split(b"\0") if p])
    if query.mode == "count":
        files = []
        for record in out.splitlines():
            path, _, count = record.rpartition(b"\0")
            if path:
                files.append(FileHits(path=os.fsdecode(path), count=int(count)))
        return GrepOutcome(files)
    return _parse_json(out)


def _parse_json(out: bytes) -> GrepOutcome:
    by_path: dict[str, FileHits] = {}
    collected = 0
    for record in out.splitlines():
        try:
            event = json.loads(record)
        except ValueError:
            continue
        kind = event.get("type")
        if kind not in ("match", "context"):
            continue
        data = event["data"]
        path = _text(data["path"], is_path=True)
        hits = by_path.setdefault(path, FileHits(path=path))
        text = _text(data["lines"])
        if text.endswith("\n"):
            text = text[:-1]
        number = data["line_number"]
        is_match = kind == "match"
        hits.count += is_match
        for offset, line in enumerate(text.split("\n")):
            hits.lines.append((number + offset, cap_line(line), is_match))
        collected += 1
        if collected >= MAX_COLLECTED_LINES:
            return GrepOutcome(list(by_path.values()), truncated=True)
    return GrepOutcome(list(by_path.values()))


def _text(value: dict[str, Any], *, is_path: bool = False) -> str:
    """rg's JSON gives text, or base64 bytes when they are not valid UTF-8."""
    if "text" in value:
        text: str = value["text"]
        return text
    raw = base64.b64decode(value.get("bytes", ""))
    return os.fsdecode(raw) if is_path else raw.decode("utf-8", errors="replace")
