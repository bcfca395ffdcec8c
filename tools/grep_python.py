"""The pure-Python Grep engine, used when ripgrep is not installed.

It follows ripgrep's rules so both engines give the same answer: .gitignore,
.ignore and .rgignore files (with pathspec), .git/info/exclude, parent ignore
files up to the repository root, hidden files and directories skipped,
symlinks not followed, files containing NUL bytes skipped, ``--glob``
overrides matched relative to the working directory (last match wins, they
beat ignore rules), and ``--type`` filters that also let hidden files in.

The query and result types shared with the ripgrep engine live here too.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pathspec

from tools.glob import compile_gitignore_glob, glob_to_regex

OutputMode = Literal["content", "files_with_matches", "count"]
MAX_LINE_CHARS = 500
# Safety net for pathological searches: stop collecting after this many lines.
MAX_COLLECTED_LINES = 100_000
IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")  # highest precedence first

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
    collected = 0
    for path in _candidate_files(query, cancel):
        hits = _search_file(path, regex, query)
        if hits is None:
            continue
        files.append(hits)
        collected += max(1, len(hits.lines))
        if collected >= MAX_COLLECTED_LINES:
            return GrepOutcome(files, truncated=True)
    return GrepOutcome(files)


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    if b"\0" in data:
        return None  # binary
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace")


def _search_file(path: str, regex: re.Pattern[str], query: GrepQuery) -> FileHits | None:
    text = _read_text(path)
    if text is None:
        return None
    first = regex.search(text)
    if first is None:
        return None
    if query.mode == "files_with_matches" and not query.multiline and "\n" not in first.group():
        return FileHits(path=path, count=1)
    line_count = text.count("\n") + (0 if text.endswith("\n") else 1)
    if query.multiline:
        ranges = _multiline_ranges(text, regex, line_count)
    else:
        ranges = _line_ranges(text, regex, line_count)
    if not ranges:
        return None
    hits = FileHits(path=path, count=len(ranges))
    if query.mode == "content":
        lines = text.split("\n")
        hits.lines = _with_context(lines[:line_count], ranges, query.before, query.after)
    return hits


def _line_ranges(text: str, regex: re.Pattern[str], line_count: int) -> list[tuple[int, int]]:
    """0-based matching lines, each as a (line, line) range."""
    ranges: list[tuple[int, int]] = []
    line, pos = 0, 0
    for m in regex.finditer(text):
        if "\n" in m.group():
            # A match across lines does not count line by line: check each line on its own.
            lines = text.split("\n")[:line_count]
            return [(i, i) for i, ln in enumerate(lines) if regex.search(ln)]
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if line >= line_count:
            break  # the empty "line" after the final newline is not a line
        if not ranges or ranges[-1][0] != line:
            ranges.append((line, line))
    return ranges


def _multiline_ranges(text: str, regex: re.Pattern[str], line_count: int) -> list[tuple[int, int]]:
    """0-based (first, last) line of each match; matches sharing a line merge, as rg's do."""
    ranges: list[tuple[int, int]] = []
    line, pos = 0, 0
    for m in regex.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if line >= line_count:
            break
        last = line + text.count("\n", m.start(), max(m.start(), m.end() - 1))
        if ranges and line <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(last, ranges[-1][1]))
        else:
            ranges.append((line, last))
    return ranges


def _with_context(
    lines: list[str], ranges: list[tuple[int, int]], before: int, after: int
) -> list[tuple[int, str, bool]]:
    matched: set[int] = set()
    for first, last in ranges:
        matched.update(range(first, min(last, len(lines) - 1) + 1))
    shown: set[int] = set(matched)
    if before or after:
        for i in matched:
            shown.update(range(max(0, i - before), min(len(lines), i + after + 1)))
    return [(i + 1, cap_line(lines[i]), i in matched) for i in sorted(shown)]


# --- walking the tree the way ripgrep does ------------------------------------------------


@dataclass
class _IgnoreLevel:
    directory: str  # absolute, without a trailing slash
    specs: list[pathspec.GitIgnoreSpec]  # highest precedence first


class _Filter:
    def __init__(self, query: GrepQuery) -> None:
        self.cwd = str(query.cwd)
        self.overrides: list[tuple[re.Pattern[str], bool, bool]] = []  # regex, dir_only, exclude
        for glob in query.globs:
            exclude = glob.startswith("!")
            regex, dir_only = compile_gitignore_glob(glob[1:] if exclude else glob)
            self.overrides.append((regex, dir_only, exclude))
        self.has_whitelist = any(not exclude for _, _, exclude in self.overrides)
        self.types = [re.compile(glob_to_regex(g), re.DOTALL) for g in query.type_globs]

    def _override(self, path: str, is_dir: bool) -> bool | None:
        """True: search it, False: skip it, None: no say."""
        if not self.overrides:
            return None
        rel = _relative(path, self.cwd)
        verdict = None
        for regex, dir_only, exclude in self.overrides:
            if (not dir_only or is_dir) and regex.fullmatch(rel):
                verdict = not exclude
        if verdict is None and self.has_whitelist and not is_dir:
            return False
        return verdict

    def accept(self, path: str, name: str, is_dir: bool, levels: list[_IgnoreLevel]) -> bool:
        verdict = self._override(path, is_dir)
        if verdict is not None:
            return verdict
        whitelisted = False
        ignored = _ignored(path, is_dir, levels)
        if ignored is True:
            return False
        if ignored is False:
            whitelisted = True
        if self.types and not is_dir:
            if not any(t.fullmatch(name) for t in self.types):
                return False
            whitelisted = True
        return whitelisted or not name.startswith(".")


def _relative(path: str, base: str) -> str:
    if path.startswith(base + os.sep):
        return path[len(base) + 1 :]
    return path


def _ignored(path: str, is_dir: bool, levels: list[_IgnoreLevel]) -> bool | None:
    """True if an ignore file ignores it, False if one re-includes it (!pattern), else None."""
    for level in reversed(levels):  # the deepest ignore file decides first
        rel = _relative(path, level.directory)
        if rel == path:
            continue
        if is_dir:
            rel += "/"
        for spec in level.specs:
            result = _entry_verdict(spec, rel)
            if result is not None:
                return result
    return None


def _entry_verdict(spec: pathspec.GitIgnoreSpec, rel: str) -> bool | None:
    """The last pattern matching `rel` itself decides: True ignores, False re-includes.

    pathspec also counts a path as matched when a directory above it is; ripgrep
    does not (its walk never enters an ignored directory, and directories above the
    search root are not checked), so such matches are set aside here.
    """
    if spec.check_file(rel).include is None:
        return None  # the common case: no pattern matches even counting parents
    verdict = None
    for pattern in spec.patterns:
        if pattern.include is None or pattern.regex is None:
            continue
        m = pattern.regex.match(rel)
        if m is None:
            continue
        if m.end() < len(rel) and "ps_d" in m.re.groupindex and m.group("ps_d") is not None:
            continue  # matched a parent directory, not this entry
        verdict = pattern.include
    return verdict


def _load_level(
    directory: str, extra: tuple[str, ...] = (), vcs: bool = True
) -> _IgnoreLevel | None:
    specs = []
    names = IGNORE_FILES if vcs else tuple(n for n in IGNORE_FILES if n != ".gitignore")
    for name in (*names, *(extra if vcs else ())):
        try:
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                specs.append(pathspec.GitIgnoreSpec.from_lines(f.read().splitlines()))
        except OSError:
            continue
    return _IgnoreLevel(directory, specs) if specs else None


def _parent_levels(root: str, vcs: bool = True) -> list[_IgnoreLevel]:
    """Ignore files of the directories above the search root, up to the repository root."""
    chain = []
    current = root
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            break
        chain.append(parent)
        if os.path.exists(os.path.join(parent, ".git")):
            break
        current = parent
    if os.path.exists(os.path.join(root, ".git")):
        chain = []  # the root is a repository root: nothing above it applies
    levels = []
    for directory in reversed(chain):
        level = _load_level(directory, _git_exclude(directory), vcs)
        if level:
            levels.append(level)
    return levels


def _git_exclude(directory: str) -> tuple[str, ...]:
    exclude = os.path.join(".git", "info", "exclude")
    return (exclude,) if os.path.isfile(os.path.join(directory, exclude)) else ()


def _candidate_files(query: GrepQuery, cancel: threading.Event) -> Iterator[str]:
    root = str(query.root)
    if not os.path.isdir(root):
        yield root  # a file named explicitly is searched whatever the filters say
        return
    flt = _Filter(query)
    levels = _parent_levels(root, query.vcs_ignores)
    stack: list[tuple[str, list[_IgnoreLevel]]] = [(root, levels)]
    while stack:
        if cancel.is_set():
            return
        directory, inherited = stack.pop()
        level = _load_level(directory, _git_exclude(directory), query.vcs_ignores)
        current = [*inherited, level] if level else inherited
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue  # like rg without --follow
                is_dir = entry.is_dir()
            except OSError:
                continue
            if not flt.accept(entry.path, entry.name, is_dir, current):
                continue
            if is_dir:
                subdirs.append((entry.path, current))
            elif entry.is_file():
                yield entry.path
        stack.extend(reversed(subdirs))
