"""The pure-Python Grep engine, used when ripgrep is not installed.

It follows ripgrep's rules so both engines give the same answer: the files
are those ripgrep would search (tools/ignore_walk.py), files containing NUL
bytes are skipped, a match never spans lines unless multiline is set.

Memory stays bounded whatever the files' sizes: a file is read in blocks of
whole lines (BLOCK_BYTES; a line longer than MAX_LINE_BYTES is searched in
pieces), only the lines to show are kept, and collecting stops at
MAX_COLLECTED_LINES. In multiline mode a match cannot span two blocks
(MULTILINE_BLOCK_BYTES), which only matters for files bigger than that.

The query and result types shared with the ripgrep engine live here too.
"""

from __future__ import annotations

import codecs
import re
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

from tools.ignore_walk import WalkFilter, walk_files

OutputMode = Literal["content", "files_with_matches", "count"]
MAX_LINE_CHARS = 500
# Safety net for pathological searches: stop collecting after this many lines.
MAX_COLLECTED_LINES = 100_000
BLOCK_BYTES = 1 << 20
MULTILINE_BLOCK_BYTES = 8 << 20
MAX_LINE_BYTES = 8 << 20

# ripgrep's names for common file types, with the same globs on both engines.
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "py": ("*.py", "*.pyi"),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "tsx": ("*.tsx",),
    "rust": ("*.rs",),
    "go": ("*.go",),
    "java": ("*.java", "*.jsp", "*.jspx", "*.properties"),
    "kotlin": ("*.kt", "*.kts"),
    "scala": ("*.scala", "*.sbt"),
    "swift": ("*.swift",),
    "c": ("*.[chH]", "*.[chH].in", "*.cats"),
    "cpp": ("*.[ChH]", "*.cc", "*.[ch]pp", "*.[ch]xx", "*.hh", "*.inl", "*.c++", "*.h++"),
    "cs": ("*.cs",),
    "md": ("*.md", "*.markdown", "*.mdown", "*.mkdn", "*.mdx"),
    "json": ("*.json", "composer.lock"),
    "jsonl": ("*.jsonl",),
    "yaml": ("*.yaml", "*.yml"),
    "toml": ("*.toml", "Cargo.lock"),
    "xml": ("*.xml", "*.xsd", "*.xsl", "*.xslt", "*.dtd", "*.xhtml"),
    "html": ("*.html", "*.htm", "*.ejs"),
    "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "sh": ("*.sh", "*.bash", "*.zsh", "*.ksh", ".bashrc", ".zshrc", ".profile", ".bash_profile"),
    "ruby": ("*.rb", "*.gemspec", "*.rake", "Gemfile", "Rakefile", "config.ru"),
    "php": ("*.php", "*.phtml"),
    "lua": ("*.lua",),
    "perl": ("*.pl", "*.pm", "*.t"),
    "r": ("*.R", "*.r", "*.Rmd"),
    "sql": ("*.sql", "*.psql"),
    "dart": ("*.dart",),
    "elixir": ("*.ex", "*.exs", "*.eex"),
    "erlang": ("*.erl", "*.hrl"),
    "haskell": ("*.hs", "*.lhs"),
    "ocaml": ("*.ml", "*.mli"),
    "clojure": ("*.clj", "*.cljs", "*.cljc", "*.edn"),
    "zig": ("*.zig",),
    "svelte": ("*.svelte",),
    "vue": ("*.vue",),
    "proto": ("*.proto",),
    "make": ("[Mm]akefile", "GNUmakefile", "*.mk", "*.mak"),
    "cmake": ("CMakeLists.txt", "*.cmake"),
    "docker": ("*Dockerfile*",),
    "tf": ("*.tf", "*.tfvars"),
    "txt": ("*.txt",),
    "rst": ("*.rst",),
    "csv": ("*.csv",),
    "ini": ("*.ini", "*.cfg", "*.conf"),
}
FILE_TYPE_ALIASES = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "rs": "rust",
    "golang": "go",
    "markdown": "md",
    "yml": "yaml",
    "rb": "ruby",
    "csharp": "cs",
    "c++": "cpp",
    "cxx": "cpp",
    "kt": "kotlin",
    "bash": "sh",
    "shell": "sh",
    "zsh": "sh",
    "protobuf": "proto",
    "terraform": "tf",
    "makefile": "make",
    "dockerfile": "docker",
    "text": "txt",
}


@dataclass(frozen=True)
class GrepQuery:
    pattern: str
    root: Path  # absolute: a directory or a single file
    cwd: Path  # --glob patterns are relative to it, as ripgrep's are to its working directory
    mode: OutputMode = "files_with_matches"
    globs: tuple[str, ...] = ()
    type_globs: tuple[str, ...] = ()  # from FILE_TYPES; empty means no type filter
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0
    vcs_ignores: bool = True  # .gitignore and .git/info/exclude apply (respectGitignore)


@dataclass
class FileHits:
    path: str  # absolute
    count: int = 0  # matching lines; in multiline mode, matches (a match over lines counts once)
    lines: list[tuple[int, str, bool]] = field(default_factory=list)  # (number, text, is_match)
    mtime: float | None = None  # taken while the search runs, for files_with_matches' order


@dataclass
class GrepOutcome:
    files: list[FileHits]
    truncated: bool = False  # the collection limit was reached


def resolve_type(name: str) -> tuple[str, ...] | None:
    key = name.strip().lower()
    return FILE_TYPES.get(FILE_TYPE_ALIASES.get(key, key))


def split_globs(spec: str | None) -> tuple[str, ...]:
    """Globs separated by spaces or commas; a comma inside {braces} belongs to the glob."""
    if not spec:
        return ()
    globs: list[str] = []
    for part in spec.split():
        if "{" in part and "}" in part:
            globs.append(part)
        else:
            globs.extend(p for p in part.split(",") if p)
    return tuple(globs)


def cap_line(text: str) -> str:
    if text.endswith("\r"):
        text = text[:-1]
    if len(text) <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]}… [{len(text) - MAX_LINE_CHARS} more characters]"


def compile_pattern(query: GrepQuery) -> re.Pattern[str]:
    """Raises re.error for an invalid pattern."""
    flags = re.MULTILINE
    if query.ignore_case:
        flags |= re.IGNORECASE
    if query.multiline:
        flags |= re.DOTALL
    return re.compile(query.pattern, flags)


def search(query: GrepQuery, cancel: threading.Event | None = None) -> GrepOutcome:
    regex = compile_pattern(query)
    cancel = cancel or threading.Event()
    files: list[FileHits] = []
    budget = MAX_COLLECTED_LINES
    for path in _candidate_files(query, cancel):
        hits = _search_file(path, regex, query, budget)
        if hits is None:
            continue
        files.append(hits)
        budget -= max(1, len(hits.lines))
        if budget <= 0:
            return GrepOutcome(files, truncated=True)
    return GrepOutcome(files)


def _candidate_files(query: GrepQuery, cancel: threading.Event) -> Iterator[str]:
    root = str(query.root)
    if not query.root.is_dir():
        yield root  # a file named explicitly is searched whatever the filters say
        return
    flt = WalkFilter(str(query.cwd), query.globs, query.type_globs)
    yield from walk_files(root, flt, cancel, query.vcs_ignores)


class _BinaryFile(Exception):
    """The file holds a NUL byte: ripgrep skips it, so this engine does too."""


def _text_blocks(path: str, size: int) -> Iterator[str]:
    """The file's text in blocks of whole lines; the last may lack its newline.

    Raises OSError when it cannot be read, _BinaryFile on a NUL byte.
    """
    with open(path, "rb") as f:
        data = f.read(size)
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            yield from _utf16_blocks(f, data, size)
            return
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        pending = b""
        while data:
            if b"\0" in data:
                raise _BinaryFile
            pending += data
            cut = pending.rfind(b"\n") + 1
            if cut == 0 and len(pending) >= MAX_LINE_BYTES:
                cut = len(pending)  # an overlong line: searched in pieces
            if cut:
                yield pending[:cut].decode("utf-8", errors="replace")
                pending = pending[cut:]
            data = f.read(size)
        if pending:
            yield pending.decode("utf-8", errors="replace")


def _utf16_blocks(f: BinaryIO, first: bytes, size: int) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
    pending = ""
    data = first
    while data:
        pending += decoder.decode(data)
        cut = pending.rfind("\n") + 1
        if cut == 0 and len(pending) >= MAX_LINE_BYTES:
            cut = len(pending)
        if cut:
            yield pending[:cut]
            pending = pending[cut:]
        data = f.read(size)
    pending += decoder.decode(b"", final=True)
    if pending:
        yield pending


def _block_line_count(block: str) -> int:
    return block.count("\n") + (0 if block.endswith("\n") else 1)


def _matched_lines(block: str, regex: re.Pattern[str]) -> list[int]:
    """0-based lines of the block holding a match, a match never spanning lines."""
    found: list[int] = []
    line_count = _block_line_count(block)
    line, pos = 0, 0
    for m in regex.finditer(block):
        if "\n" in m.group():
            # A match across lines does not count line by line: check each line on its own.
            lines = block.split("\n")[:line_count]
            return [i for i, ln in enumerate(lines) if regex.search(ln)]
        line += block.count("\n", pos, m.start())
        pos = m.start()
        if line >= line_count:
            break  # the empty "line" after the final newline is not a line
        if not found or found[-1] != line:
            found.append(line)
    return found


def _multiline_ranges(block: str, regex: re.Pattern[str]) -> list[tuple[int, int]]:
    """0-based (first, last) line of each match; matches sharing a line merge, as rg's do."""
    ranges: list[tuple[int, int]] = []
    line_count = _block_line_count(block)
    line, pos = 0, 0
    for m in regex.finditer(block):
        line += block.count("\n", pos, m.start())
        pos = m.start()
        if line >= line_count:
            break
        last = min(line + block.count("\n", m.start(), max(m.start(), m.end() - 1)), line_count - 1)
        if ranges and line <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(last, ranges[-1][1]))
        else:
            ranges.append((line, last))
    return ranges


class _LineCollector:
    """Keeps the lines to show (matches and their context) as blocks go by, and no others."""

    def __init__(self, before: int, after: int, budget: int) -> None:
        self.before, self.after, self.budget = before, after, budget
        self.lines: list[tuple[int, str, bool]] = []
        self.last_shown = 0  # 1-based number of the last line kept
        self.pending_after = 0  # context lines still owed after the last match
        self.tail: deque[tuple[int, str]] = deque(maxlen=before)  # for the next block's context

    @property
    def full(self) -> bool:
        return len(self.lines) >= self.budget

    def _keep(self, number: int, text: str, is_match: bool) -> None:
        if number > self.last_shown:
            self.lines.append((number, cap_line(text), is_match))
            self.last_shown = number

    def add_block(self, first_number: int, block: str, matched: set[int]) -> None:
        if not matched and not self.pending_after:
            if self.before:
                self._remember_tail(first_number, block)
            return
        lines = block.split("\n")[: _block_line_count(block)]
        last_match = max(matched, default=-1)
        for index, text in enumerate(lines):
            number = first_number + index
            if index in matched:
                for before_number, before_text in self.tail:
                    if before_number >= number - self.before:
                        self._keep(before_number, before_text, False)
                self._keep(number, text, True)
                self.pending_after = self.after
            elif self.pending_after:
                self._keep(number, text, False)
                self.pending_after -= 1
            elif index > last_match:
                if self.before:
                    self._remember_tail(first_number, block)
                return
            if self.before:
                self.tail.append((number, text))
            if self.full:
                return

    def _remember_tail(self, first_number: int, block: str) -> None:
        line_count = _block_line_count(block)
        pieces = block.rsplit("\n", self.before + 1)
        if block.endswith("\n"):
            pieces.pop()
        start = first_number + line_count - len(pieces)
        kept = [(start + i, text) for i, text in enumerate(pieces)]
        if len(kept) > self.before:  # the first piece may be only part of a line
            kept = kept[-self.before :]
        newest = self.tail[-1][0] if self.tail else 0
        self.tail.extend(line for line in kept if line[0] > newest)


def _search_file(
    path: str, regex: re.Pattern[str], query: GrepQuery, budget: int
) -> FileHits | None:
    size = MULTILINE_BLOCK_BYTES if query.multiline else BLOCK_BYTES
    content = query.mode == "content"
    collector = _LineCollector(query.before, query.after, budget)
    count = 0
    line_base = 0  # lines before the current block
    try:
        for block in _text_blocks(path, size):
            first = regex.search(block)
            if first is None and not collector.pending_after:
                if collector.before:
                    collector.add_block(line_base + 1, block, set())
                line_base += block.count("\n")
                continue
            if first is not None and query.mode == "files_with_matches":
                in_a_line = not query.multiline and "\n" not in first.group()
                if in_a_line and (first.start() < len(block) or not block.endswith("\n")):
                    return FileHits(path=path, count=1)
            matched: set[int] = set()
            if first is not None and query.multiline:
                ranges = _multiline_ranges(block, regex)
                count += len(ranges)
                for start, last in ranges:
                    matched.update(range(start, last + 1))
            elif first is not None:
                found = _matched_lines(block, regex)
                count += len(found)
                matched.update(found)
            if matched and query.mode == "files_with_matches":
                return FileHits(path=path, count=1)
            if content:
                collector.add_block(line_base + 1, block, matched)
                if collector.full:
                    break
            line_base += block.count("\n")
    except (OSError, _BinaryFile):
        return None
    if not count:
        return None
    return FileHits(path=path, count=count, lines=collector.lines)
