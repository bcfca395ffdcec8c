"""Fuzzy matching of project paths for ``@`` completion, fast on 100,000 paths.

A query matches a path when its characters appear in the path in order (a
subsequence; case is ignored). Matches are ranked in tiers, best first:

1. the file or directory name starts with the query,
2. the name contains the query,
3. the path contains the query,
4. the name holds the query as a subsequence,
5. the path holds it as a subsequence;

and, within a tier, shorter paths first (then alphabetical). Directories end
with ``/``.

Python's regular expressions try every position of a text one by one, which on
100,000 paths (5 MB) costs 50-200 ms a scan, so every tier here is a scan that
jumps: the contiguous tiers start with the query itself (the engine searches
for a literal prefix), and the subsequence tiers run over a copy of the paths
that keeps only the query's characters, the slashes and the line breaks
(``bytes.translate``, one C pass), where each path is a few bytes long. The
paths are joined in rank order (shortest first), so a tier's first hits are
its best and a scan stops once enough are found.

Matching is incremental: when at most ``FEW`` paths hold a query of three or
more characters as a subsequence, they are ranked in Python and kept, and the
next query that extends it (one more character typed) is matched against them
only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

ALL_BYTES = frozenset(range(256))
FEW = 1_000  # matches few enough to keep and rank in Python
FEW_FROM = 3  # shorter queries match most paths of a large tree: looking for few costs more
STRUCTURE = frozenset(b"\n/")  # kept in the reduced copy: line ends, and where names start


class PathMatcher:
    """The paths of one index, ready to be matched; build a new one when the paths change."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = sorted(set(paths), key=lambda p: (len(p), p))
        self.count = len(self.paths)
        self._lower = [path.lower() for path in self.paths]
        self._index = {lower: i for i, lower in reversed(list(enumerate(self._lower)))}
        self._text = "\n" + "\n".join(self._lower)  # each path after a line break
        self._bytes = self._text.encode("utf-8", "surrogateescape")
        # The last query and every path holding it as a subsequence, when they are few.
        self._narrowed: tuple[str, list[int]] | None = None
        self._reduced_for: tuple[frozenset[int], bytes] = (frozenset(), b"")

    def match(self, query: str, limit: int = 30) -> list[str]:
        """The best ``limit`` paths for ``query``, best first; the shortest paths for ''."""
        if not query:
            return self.paths[:limit]
        query = query.lower()
        narrowed = self._narrowed
        if narrowed is not None and query.startswith(narrowed[0]):
            still = [i for i in narrowed[1] if _is_subsequence(query, self._lower[i])]
            self._narrowed = (query, still)
            return [self.paths[i] for i in self._rank_few(query, still)[:limit]]
        self._narrowed = None
        found: dict[int, None] = {}
        if self._take(self._contiguous(query), query, found, limit):
            return [self.paths[i] for i in found]  # enough hold the query itself: fast
        few = self._few_matches(query) if len(query) >= FEW_FROM else None
        if few is not None:
            self._narrowed = (query, few)
            return [self.paths[i] for i in self._rank_few(query, few)[:limit]]
        self._take(self._subsequences(query), query, found, limit)
        return [self.paths[i] for i in found]

    def _take(self, indexes: Iterator[int], query: str, found: dict[int, None], limit: int) -> bool:
        """Add the new ones to ``found`` up to ``limit``; True once it is full."""
        for index in indexes:
            if index not in found and self._lower[index] != query:
                found[index] = None
                if len(found) >= limit:
                    return True
        return False

    def _contiguous(self, query: str) -> Iterator[int]:
        """Tiers 1 to 3: paths holding the query itself (a path may come more than once)."""
        if query not in self._text:  # one fast search
            return
        q = re.escape(query)
        name_end = r"[^\n/]*+/?$"
        if "/" not in query:  # a name holds no slash
            name_start = f"(?<=[/\\n]{q})"
            yield from self._literal_hits(re.compile(f"{q}{name_start}{name_end}", re.M))
            yield from self._literal_hits(re.compile(f"{q}{name_end}", re.M))
        yield from self._literal_hits(re.compile(q))

    def _subsequences(self, query: str) -> Iterator[int]:
        """Tiers 4 and 5: paths holding the query as a subsequence, its name first."""
        reduced = self._reduced(query)
        wanted = query.encode("utf-8", "surrogateescape")
        exact = wanted.isascii()  # else a byte subsequence may mix two characters' bytes
        if "/" not in query:
            name = b"[\n/]" + _subsequence(wanted, b"\n/") + rb"[^\n/]*+/?(?=\n|\Z)"
            for index in _reduced_hits(re.compile(name), reduced):
                if exact or _is_subsequence(query, self._lower[index].rstrip("/").rsplit("/")[-1]):
                    yield index
        for index in _reduced_hits(re.compile(b"\n" + _subsequence(wanted, b"\n")), reduced):
            if exact or _is_subsequence(query, self._lower[index]):
                yield index

    def _few_matches(self, query: str) -> list[int] | None:
        """Every path holding ``query`` as a subsequence, in rank order, when at most FEW do;
        None when more do."""
        hits: list[int] = []
        wanted = query.encode("utf-8", "surrogateescape")
        pattern = re.compile(b"\n" + _subsequence(wanted, b"\n"))
        for index in _reduced_hits(pattern, self._reduced(query)):
            if wanted.isascii() or _is_subsequence(query, self._lower[index]):
                hits.append(index)
                if len(hits) > FEW:
                    return None
        return hits

    def _rank_few(self, query: str, hits: list[int]) -> list[int]:
        """``hits`` (every path holding the query as a subsequence) in the tiers' order."""
        tiers: list[list[int]] = [[], [], [], [], []]
        for index in hits:
            path = self._lower[index]
            if path == query:
                continue
            name = path.rstrip("/").rsplit("/", 1)[-1]
            if query in name:
                tiers[0 if name.startswith(query) else 1].append(index)
            elif query in path:
                tiers[2].append(index)
            else:
                tiers[3 if _is_subsequence(query, name) else 4].append(index)
        return [index for tier in tiers for index in tier]

    def _literal_hits(self, pattern: re.Pattern[str]) -> Iterator[int]:
        text = self._text
        for hit in pattern.finditer(text):
            start = text.rfind("\n", 0, hit.start()) + 1
            end = text.find("\n", hit.end())
            yield self._index[text[start : end if end >= 0 else len(text)]]

    def _reduced(self, query: str) -> bytes:
        """The joined paths with only the query's bytes, slashes and line breaks (the last
        query's kept: a keystroke asks twice)."""
        keep = STRUCTURE | set(query.encode("utf-8", "surrogateescape"))
        if self._reduced_for[0] != keep:
            self._reduced_for = (keep, self._bytes.translate(None, bytes(sorted(ALL_BYTES - keep))))
        return self._reduced_for[1]


def _subsequence(query: bytes, stop: bytes) -> bytes:
    """The bytes of ``query`` in order, none of ``stop`` between them; possessive, so a miss
    costs one pass, never backtracking."""
    parts = []
    for byte in query:
        char = re.escape(bytes([byte]))
        parts.append(b"[^" + stop + char + b"]*+" + char)
    return b"".join(parts)


def _reduced_hits(pattern: re.Pattern[bytes], reduced: bytes) -> Iterator[int]:
    """The path index of each hit: the line breaks before it, counted as the scan goes."""
    line, counted = -1, 0
    for hit in pattern.finditer(reduced):
        line += reduced.count(b"\n", counted, hit.start() + 1)
        counted = hit.start() + 1
        yield line


def _is_subsequence(query: str, text: str) -> bool:
    position = 0
    for char in query:
        position = text.find(char, position) + 1
        if not position:
            return False
    return True
