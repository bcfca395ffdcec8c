from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot
from tools import grep_python, grep_rg
from tools.base import ToolContext, ToolResult
from tools.grep import GrepParams, GrepTool
from tools.grep_python import GrepQuery, split_globs

RG = grep_rg.find_rg()
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep (rg) is not on PATH")
ENGINES = ["python", pytest.param("rg", marks=needs_rg)]

FILES: dict[str, bytes] = {
    ".gitignore": b"build/\n*.log\n!keep.log\n",
    "app.py": b"import os\n\nneedle = 1\n\n\ndef f():\n    return NEEDLE + needle\n",
    "README.md": b"# Title\nA Needle in the docs.\n",
    "keep.log": b"needle kept\n",
    "debug.log": b"needle ignored by *.log\n",
    "build/out.py": b"needle in build\n",
    ".hidden.py": b"needle hidden file\n",
    ".cfg/settings.py": b"needle hidden dir\n",
    "src/lib.rs": b"fn needle() {}\n",
    "src/main.ts": b"const needle = 1;\n",
    "src/view.tsx": b"export const View = () => <div>needle</div>;\n",
    "src/.ignore": b"secret.txt\n",
    "src/secret.txt": b"needle secret\n",
    "src/nested/.gitignore": b"gen.py\n",
    "src/nested/gen.py": b"needle generated\n",
    "src/nested/mod.py": b"".join(b"line %d\n" % i for i in range(1, 21))
    .replace(b"line 5\n", b"needle five\n")
    .replace(b"line 7\n", b"needle seven\n")
    .replace(b"line 15\n", b"needle fifteen\n"),
    "data.bin": b"needle\x00binary",
    "wide.txt": b"x" * 1000 + b" needle\n",
    "crlf.txt": b"needle one\r\nother\r\nneedle two\r\n",
    "multi.py": b"class A:\n    def needle(self):\n        pass\n",
}


@pytest.fixture
def tree(ctx: ToolContext) -> Path:
    for i, (rel, data) in enumerate(sorted(FILES.items())):
        path = ctx.cwd / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))  # later in the alphabet = newer
    return ctx.cwd


async def grep(call: Call, engine: str, **raw: Any) -> ToolResult:
    return await call(GrepTool(engine=engine), **raw)  # type: ignore[arg-type]


def test_schema_snapshot() -> None:
    assert_schema_matches_snapshot(GrepTool)
    assert GrepTool.is_mutating is False


def test_dashed_parameters_and_bad_input() -> None:
    tool = GrepTool()
    params = tool.parse(
        {"pattern": "x", "-i": True, "-n": False, "-A": 1, "-B": 2, "-C": 3, "type": "py"}
    )
    assert isinstance(params, GrepParams)
    assert (params.case_insensitive, params.line_numbers) == (True, False)
    assert (params.after_context, params.before_context, params.context) == (1, 2, 3)
    assert params.file_type == "py"
    for raw, expected in [
        ({"pattern": "x", "output_mode": "lines"}, "output_mode"),
        ({"pattern": "x", "-A": -1}, "-A: Input should be greater than or equal to 0"),
        ({"pattern": "x", "-i": "sometimes"}, "-i: Input should be a valid boolean"),
        ({"pattern": "x", "--files": True}, "Extra inputs are not permitted"),
        ("not json", "not valid JSON"),
    ]:
        result = tool.parse(raw)
        assert isinstance(result, ToolResult) and expected in result.output, raw
    params = tool.parse({"pattern": "TODO", "path": "src", "glob": "*.py"})
    assert isinstance(params, GrepParams)
    assert tool.summary(params) == 'Grep "TODO" in src (*.py)'


# --- output, pinned; the same for both engines ---


@pytest.mark.parametrize("engine", ENGINES)
async def test_files_with_matches(tree: Path, call: Call, engine: str) -> None:
    result = await grep(call, engine, pattern="needle")
    # Not: debug.log, build/ (.gitignore), src/secret.txt (.ignore), src/nested/gen.py (nested
    # .gitignore), hidden files, data.bin (binary). Newest first.
    assert result.output == "\n".join(
        [
            "Found 9 files",
            "wide.txt",
            "src/view.tsx",
            "src/nested/mod.py",
            "src/main.ts",
            "src/lib.rs",
            "multi.py",
            "keep.log",
            "crlf.txt",
            "app.py",
        ]
    )
    assert result.meta["engine"] == engine and result.meta["display"] == "Found 9 files"


@pytest.mark.parametrize("engine", ENGINES)
async def test_content_with_context(tree: Path, call: Call, engine: str) -> None:
    result = await grep(
        call, engine, pattern="needle", path="src/nested", output_mode="content", **{"-C": 1}
    )
    assert result.output == "\n".join(
        [
            "src/nested/mod.py-4-line 4",
            "src/nested/mod.py:5:needle five",
            "src/nested/mod.py-6-line 6",
            "src/nested/mod.py:7:needle seven",
            "src/nested/mod.py-8-line 8",
            "--",
            "src/nested/mod.py-14-line 14",
            "src/nested/mod.py:15:needle fifteen",
            "src/nested/mod.py-16-line 16",
        ]
    )
    result = await grep(
        call,
        engine,
        pattern="fifteen",
        path="src/nested/mod.py",
        output_mode="content",
        **{"-B": 2, "-n": False},
    )
    assert (
        result.output
        == "src/nested/mod.py-line 13\nsrc/nested/mod.py-line 14\nsrc/nested/mod.py:needle fifteen"
    )


@pytest.mark.parametrize("engine", ENGINES)
async def test_count(tree: Path, call: Call, engine: str) -> None:
    result = await grep(call, engine, pattern="needle", output_mode="count", **{"-i": True})
    assert result.output == "\n".join(
        [
            "README.md:1",
            "app.py:2",
            "crlf.txt:2",
            "keep.log:1",
            "multi.py:1",
            "src/lib.rs:1",
            "src/main.ts:1",
            "src/nested/mod.py:3",
            "src/view.tsx:1",
            "wide.txt:1",
            "",
            "Found 14 total occurrences across 10 files.",
        ]
    )


@pytest.mark.parametrize("engine", ENGINES)
async def test_case_and_crlf_and_long_lines(tree: Path, call: Call, engine: str) -> None:
    result = await grep(call, engine, pattern="NEEDLE", output_mode="content")
    assert result.output == "app.py:7:    return NEEDLE + needle"
    result = await grep(call, engine, pattern="two$", path="crlf.txt", output_mode="content")
    assert result.output == "No matches found"  # like rg: the \r belongs to the line
    result = await grep(call, engine, pattern="needle", path="crlf.txt", output_mode="content")
    assert result.output == "crlf.txt:1:needle one\ncrlf.txt:3:needle two"
    result = await grep(call, engine, pattern="needle", path="wide.txt", output_mode="content")
    assert result.output == "wide.txt:1:" + "x" * 500 + "… [507 more characters]"


@pytest.mark.parametrize("engine", ENGINES)
async def test_glob_and_type_filters(tree: Path, call: Call, engine: str) -> None:
    async def files(**raw: Any) -> list[str]:
        result = await grep(call, engine, pattern="needle", **raw)
        return sorted(result.output.splitlines()[1:])

    # A matching glob overrides ignore files and hiding, as in rg.
    py_files = [".hidden.py", "app.py", "multi.py", "src/nested/gen.py", "src/nested/mod.py"]
    assert await files(glob="*.py") == py_files
    assert await files(glob="*.{ts,tsx}") == ["src/main.ts", "src/view.tsx"]
    assert await files(glob="*.ts, *.rs") == ["src/lib.rs", "src/main.ts"]
    assert await files(glob="*.py !multi.py") == [p for p in py_files if p != "multi.py"]
    assert await files(glob="!src") == ["app.py", "crlf.txt", "keep.log", "multi.py", "wide.txt"]
    assert await files(glob="*.log") == ["debug.log", "keep.log"]  # a glob beats .gitignore
    assert await files(type="py") == [".hidden.py", "app.py", "multi.py", "src/nested/mod.py"]
    assert await files(type="ts") == ["src/main.ts", "src/view.tsx"]
    assert await files(type="tsx") == ["src/view.tsx"]
    assert await files(type="rust", path="src") == ["src/lib.rs"]
    assert await files(type="markdown", **{"-i": True}) == ["README.md"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_multiline(tree: Path, call: Call, engine: str) -> None:
    result = await grep(
        call, engine, pattern=r"class A:.*?pass", multiline=True, output_mode="content"
    )
    assert (
        result.output
        == "multi.py:1:class A:\nmulti.py:2:    def needle(self):\nmulti.py:3:        pass"
    )
    result = await grep(call, engine, pattern=r"class A:\n", multiline=True, output_mode="count")
    assert result.output.splitlines()[0] == "multi.py:1"
    result = await grep(call, engine, pattern=r"class A:\n    def")
    assert result.is_error and "multiline" in result.output
    result = await grep(call, engine, pattern=r"class[^\n]*:", output_mode="content")
    assert result.output == "multi.py:1:class A:"


@pytest.mark.parametrize("engine", ENGINES)
async def test_head_limit(tree: Path, call: Call, engine: str) -> None:
    result = await grep(call, engine, pattern="needle", head_limit=2)
    assert result.output.splitlines() == [
        "Found 9 files",
        "wide.txt",
        "src/view.tsx",
        "(Showing the first 2 of 9 files, newest first.)",
    ]
    result = await grep(
        call, engine, pattern="line", path="src/nested", output_mode="content", head_limit=3
    )
    assert result.output.splitlines() == [
        "src/nested/mod.py:1:line 1",
        "src/nested/mod.py:2:line 2",
        "src/nested/mod.py:3:line 3",
        "(Showing the first 3 of 17 lines.)",
    ]
    result = await grep(call, engine, pattern="needle", output_mode="count", head_limit=1)
    assert result.output.splitlines() == [
        "app.py:2",
        "(Showing the first 1 of 9 files.)",
        "",
        "Found 13 total occurrences across 9 files.",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_no_match_and_errors(tree: Path, call: Call, engine: str) -> None:
    result = await grep(call, engine, pattern="haystack")
    assert not result.is_error and result.output == "No matches found"
    result = await grep(call, engine, pattern="needle(")
    assert result.is_error and "Invalid regular expression" in result.output
    result = await grep(call, engine, pattern="needle", path="nowhere")
    assert result.is_error and "does not exist" in result.output
    result = await grep(call, engine, pattern="needle", path="data.bin")
    assert not result.is_error and "binary" in result.output
    result = await grep(call, engine, pattern="needle", type="no-such-type")
    assert result.is_error


@pytest.mark.parametrize("engine", ENGINES)
async def test_explicit_ignored_file_is_searched(tree: Path, call: Call, engine: str) -> None:
    result = await grep(call, engine, pattern="needle", path="debug.log", output_mode="content")
    assert result.output == "debug.log:1:needle ignored by *.log"


@pytest.mark.parametrize("engine", ENGINES)
async def test_search_root_inside_an_ignored_directory(
    ctx: ToolContext, call: Call, engine: str
) -> None:
    (ctx.cwd / ".gitignore").write_text("vendor/\n")
    (ctx.cwd / "vendor" / "pkg").mkdir(parents=True)
    (ctx.cwd / "vendor" / "pkg" / "a.py").write_text("needle\n")
    result = await grep(call, engine, pattern="needle")
    assert result.output == "No matches found"
    result = await grep(call, engine, pattern="needle", path="vendor/pkg")
    assert result.output == "Found 1 file\nvendor/pkg/a.py"


@pytest.mark.parametrize("engine", ENGINES)
async def test_paths_outside_cwd_stay_absolute(tmp_path: Path, call: Call, engine: str) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.txt").write_text("needle\n")
    result = await grep(call, engine, pattern="needle", path=str(outside), output_mode="content")
    assert result.output == f"{outside / 'x.txt'}:1:needle"


@pytest.mark.parametrize("engine", ENGINES)
async def test_output_is_capped(ctx: ToolContext, call: Call, engine: str) -> None:
    (ctx.cwd / "big.txt").write_text("needle and some more text on the line\n" * 5000)
    result = await grep(call, engine, pattern="needle", output_mode="content")
    assert len(result.output) < 31_000
    assert "Output cut at 30,000 characters" in result.output


# --- both engines agree ---

AGREEMENT_QUERIES: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": "needle", "output_mode": "content"},
    {"pattern": "needle", "output_mode": "count"},
    {"pattern": "(?i)needle", "output_mode": "content", "-A": 1},
    {"pattern": "^line [0-9]+$", "output_mode": "content", "-B": 1, "-A": 2},
    {"pattern": r"\bneedle\b", "output_mode": "content", "glob": "**/*.py"},
    {"pattern": "needle", "glob": "src/**", "output_mode": "count"},
    {"pattern": "needle", "glob": "!*.py,!*.txt"},
    {"pattern": "e", "output_mode": "count", "type": "py"},
    {"pattern": "n.e", "multiline": True, "output_mode": "content"},
    {"pattern": r"five\nline 6\nneedle", "multiline": True, "output_mode": "content", "-C": 1},
    {"pattern": "needle", "path": "src", "output_mode": "content", "-n": False},
    {"pattern": "x{3}", "output_mode": "count"},
    {"pattern": "", "output_mode": "count"},
    {"pattern": "^", "path": "src/nested", "output_mode": "content", "head_limit": 4},
    {"pattern": "needle", "path": "src", "glob": "nested/*.py"},
    {"pattern": "needle", "path": "src", "glob": "src/nested/*.py"},
    {"pattern": "needle", "glob": "**/nested/*"},
    {"pattern": "needle", "glob": ".cfg/*"},
    {"pattern": "NEEDLE", "-i": True, "type": "md", "output_mode": "content"},
    {"pattern": "needle$", "output_mode": "content", "-A": 1, "-B": 1},
    {"pattern": r"[^\n]*needle", "output_mode": "count"},
    {"pattern": r"a[\n]", "output_mode": "count"},
]


@needs_rg
@pytest.mark.parametrize("raw", AGREEMENT_QUERIES, ids=lambda raw: str(raw))
async def test_engines_agree(tree: Path, call: Call, raw: dict[str, Any]) -> None:
    rg_result = await grep(call, "rg", **raw)
    py_result = await grep(call, "python", **raw)
    assert py_result.output == rg_result.output
    assert py_result.is_error == rg_result.is_error


@needs_rg
async def test_rg_falls_back_to_python_for_lookaround(tree: Path, call: Call) -> None:
    result = await grep(call, "rg", pattern="(?<=return )NEEDLE", output_mode="content")
    assert result.output == "app.py:7:    return NEEDLE + needle"
    assert result.meta["engine"] == "python"


async def test_auto_engine_uses_rg_only_when_present(tree: Path, call: Call) -> None:
    result = await call(GrepTool(), pattern="needle")
    assert result.meta["engine"] == ("rg" if RG else "python")


async def test_rg_engine_without_rg(
    tree: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_rg, "find_rg", lambda: None)
    result = await grep(call, "rg", pattern="needle")
    assert result.is_error and "not installed" in result.output
    result = await call(GrepTool(), pattern="needle")
    assert result.meta["engine"] == "python"


# --- the pure-Python engine's building blocks ---


def test_split_globs() -> None:
    assert split_globs("*.py") == ("*.py",)
    assert split_globs("*.py,*.md  !vendor/**") == ("*.py", "*.md", "!vendor/**")
    assert split_globs("*.{ts,tsx},*.js") == ("*.{ts,tsx},*.js",)
    assert split_globs(None) == ()


def test_python_engine_respects_git_info_exclude_and_parent_ignores(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git" / "info").mkdir(parents=True)
    (repo / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    (tmp_path / ".gitignore").write_text("*.txt\n")  # above the repository: does not apply
    (repo / "sub").mkdir()
    (repo / ".gitignore").write_text("sub/skip.md\n")
    for name in ("excluded.txt", "kept.txt", "sub/skip.md", "sub/keep.md"):
        (repo / name).write_text("hit\n")
    query = GrepQuery(pattern="hit", root=repo / "sub", cwd=repo)
    assert [Path(h.path).name for h in grep_python.search(query).files] == ["keep.md"]
    query = GrepQuery(pattern="hit", root=repo, cwd=repo)
    found = sorted(Path(h.path).name for h in grep_python.search(query).files)
    assert found == ["keep.md", "kept.txt"]


def test_python_engine_skips_symlinks_and_unreadable(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("hit\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    locked = tmp_path / "locked.txt"
    locked.write_text("hit\n")
    locked.chmod(0)
    try:
        query = GrepQuery(pattern="hit", root=tmp_path, cwd=tmp_path)
        names = sorted(Path(h.path).name for h in grep_python.search(query).files)
        expected = ["locked.txt", "real.txt"] if os.access(locked, os.R_OK) else ["real.txt"]
        assert names == expected
    finally:
        locked.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_python_engine_stops_when_cancelled(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"f{i}.txt").write_text("hit\n")
    cancel = threading.Event()
    cancel.set()
    query = GrepQuery(pattern="hit", root=tmp_path, cwd=tmp_path)
    assert grep_python.search(query, cancel).files == []


async def test_python_engine_timeout_is_an_error(
    tree: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[threading.Event] = []

    def slow_search(query: GrepQuery, cancel: threading.Event) -> None:
        seen.append(cancel)
        cancel.wait(5)

    monkeypatch.setattr(grep_python, "search", slow_search)
    result = await call(GrepTool(engine="python", timeout_s=0.1), pattern="needle")
    assert result.is_error and "timed out" in result.output
    assert seen and seen[0].is_set()  # the worker thread was told to stop


# --- the rg process is never left behind ---


@pytest.fixture
def slow_rg(tmp_path: Path) -> tuple[str, Path]:
    """A fake `rg` that records its pid and hangs."""
    pid_file = tmp_path / "rg.pid"
    script = tmp_path / "fake-rg"
    script.write_text(
        f"#!{sys.executable}\nimport os, time\n"
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(30)\n"
    )
    script.chmod(0o755)
    return str(script), pid_file


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _pid_of(pid_file: Path) -> int:
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            return int(pid_file.read_text())
        await asyncio.sleep(0.01)
    raise AssertionError("the fake rg never started")


async def test_rg_is_killed_on_timeout(tmp_path: Path, slow_rg: tuple[str, Path]) -> None:
    rg, pid_file = slow_rg
    query = GrepQuery(pattern="x", root=tmp_path, cwd=tmp_path)
    with pytest.raises(TimeoutError):
        await grep_rg.search(query, rg, timeout=0.3)
    assert not _alive(await _pid_of(pid_file))


async def test_rg_is_killed_on_cancel(tmp_path: Path, slow_rg: tuple[str, Path]) -> None:
    rg, pid_file = slow_rg
    query = GrepQuery(pattern="x", root=tmp_path, cwd=tmp_path)
    task = asyncio.create_task(grep_rg.search(query, rg))
    pid = await _pid_of(pid_file)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(pid)


async def test_tool_reports_rg_timeout(
    tree: Path, call: Call, slow_rg: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_rg, "find_rg", lambda: slow_rg[0])
    result = await call(GrepTool(engine="rg", timeout_s=0.3), pattern="needle")
    assert result.is_error and "timed out after 0.3 s" in result.output
