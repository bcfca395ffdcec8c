"""Path matching for permission rules: gitignore-style specifiers and symlink-aware views.

A path is checked in every form it can be reached by: as written
(normalized, so ``sub/../.env`` is ``.env``) and with symlinks resolved, so a
link to a denied file is denied and an allow rule must hold for both forms.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path


def views(path: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys([path, os.path.realpath(path)]))


def is_within(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def same_file(path: str, other: Path) -> bool:
    return os.path.realpath(path) == os.path.realpath(other)


def gitignore_match(pattern: str, anchored: bool, base: str, path: str) -> bool:
    if not is_within(path, base):
        return False
    rel = os.path.relpath(path, base)
    parts = [] if rel == "." else rel.split("/")
    dir_only = pattern.endswith("/")
    regex = gitignore_regex(pattern.rstrip("/"), anchored)
    if not parts:
        return regex.fullmatch("") is not None
    # A pattern that matches a directory covers everything inside it.
    for k in range(1, len(parts) + 1):
        inside_match = k < len(parts) or not dir_only or os.path.isdir(path)
        if inside_match and regex.fullmatch("/".join(parts[:k])):
            return True
    return False


@functools.lru_cache(maxsize=512)
def gitignore_regex(pattern: str, anchored: bool) -> re.Pattern[str]:
    if pattern in ("", ".", "**"):
        return re.compile(".*", re.DOTALL)
    pieces: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        at_segment_start = i == 0 or pattern[i - 1] == "/"
        if at_segment_start and pattern.startswith("**/", i):
            pieces.append("(?:.*/)?")
            i += 3
        elif at_segment_start and pattern.startswith("**", i) and i + 2 == n:
            if pieces and pieces[-1] == "/":
                pieces[-1] = "(?:/.*)?"  # "src/**" covers src itself and all below
            else:
                pieces.append(".*")
            i += 2
        elif pattern[i] == "*":
            while i < n and pattern[i] == "*":
                i += 1
            pieces.append("[^/]*")
        elif pattern[i] == "?":
            pieces.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            pieces.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif pattern[i] == "\\" and i + 1 < n:
            pieces.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            pieces.append(re.escape(pattern[i]))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(prefix + "".join(pieces), re.DOTALL)


def escape_glob(path: str) -> str:
    return re.sub(r"([*?\[\\])", r"\\\1", path)
