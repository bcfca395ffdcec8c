"""Glob patterns as regular expressions, shared by Glob and Grep's pure-Python engine.

``**``, ``*``, ``?``, ``[...]`` and ``{a,b}``, in plain form for Glob (the pattern
matches the whole relative path) and in gitignore form (unanchored without a
slash) for Grep's ``glob`` filter and ignore-file rules.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex for the whole relative path: `*` and `?` stay within one path component."""
    return re.compile(glob_to_regex(pattern), re.DOTALL)


@lru_cache(maxsize=256)
def compile_gitignore_glob(glob: str) -> tuple[re.Pattern[str], bool]:
    """Gitignore-style: no slash means any depth; a trailing slash matches directories only."""
    dir_only = glob.endswith("/")
    body = glob.rstrip("/")
    anchored = "/" in body
    body = body.lstrip("/")
    regex = glob_to_regex(body)
    if not anchored:
        regex = "(?:.*/)?" + regex
    return re.compile(regex, re.DOTALL), dir_only


def glob_to_regex(pattern: str, *, braces: bool = True) -> str:
    out: list[str] = []
    depth = 0
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole_component = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if j - i >= 2 and whole_component:
                if j == n:
                    out.append(".*")
                else:
                    out.append("(?:.*/)?")  # "**/": zero or more directories
                    j += 1
            else:
                out.append("[^/]*")
            i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _class_end(pattern, i)
            if end == -1:
                out.append(re.escape(c))
            else:
                inner = pattern[i + 1 : end]
                negate = inner[:1] in ("!", "^")
                inner = inner[1:] if negate else inner
                inner = inner.replace("\\", "\\\\").replace("[", "\\[")
                out.append(f"[{'^/' if negate else ''}{inner}]")
                i = end + 1
                continue
        elif c == "{" and braces:
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    if depth:  # an unclosed brace is just a character
        return glob_to_regex(pattern, braces=False)
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    j = start + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    end = pattern.find("]", j)
    return end
