from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot
from tools import grep_python, rg_binary
from tools.base import ToolContext, ToolResult
from tools.grep import GrepParams, GrepTool

RG = rg_binary.find_rg()
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep (rg) is not installed")
ENGINES = ["python", pytest.param("rg", marks=needs_rg)]


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
    assert tool.label(params) == 'Grep "TODO" in src (*.py)'


# --- output, pinned; the same for both engines ---


@pytest.mark.parametrize("engine", ENGINES)
async def test_files_with_matches(grep_tree: Path, call: Call, engine: str) -> None:
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
async def test_content_with_context(grep_tree: Path, call: Call, engine: str) -> None:
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
async def test_count(grep_tree: Path, call: Call, engine: str) -> None:
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
async def test_case_and_crlf_and_long_lines(grep_tree: Path, call: Call, engine: str) -> None:
    result = await grep(call, engine, pattern="NEEDLE", output_mode="content")
    assert result.output == "app.py:7:    return NEEDLE + needle"
    result = await grep(call, engine, pattern="two$", path="crlf.txt", output_mode="content")
    assert result.output == "No matches found"  # like rg: the \r belongs to the line
    result = await grep(call, engine, pattern="needle", path="crlf.txt", output_mode="content")
    assert result.output == "crlf.txt:1:needle one\ncrlf.txt:3:needle two"
    result = await grep(call, engine, pattern="needle", path="wide.txt", output_mode="content")
    assert result.output == "wide.txt:1:" + "x" * 500 + "… [507 more characters]"


@pytest.mark.parametrize("engine", ENGINES)
async def test_glob_and_type_filters(grep_tree: Path, call: Call, engine: str) -> None:
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
async def test_multiline(grep_tree: Path, call: Call, engine: str) -> None:
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
async def test_head_limit(grep_tree: Path, call: Call, engine: str) -> None:
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
async def test_no_match_and_errors(grep_tree: Path, call: Call, engine: str) -> None:
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
async def test_explicit_ignored_file_is_searched(grep_tree: Path, call: Call, engine: str) -> None:
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
async def test_engines_agree(grep_tree: Path, call: Call, raw: dict[str, Any]) -> None:
    rg_result = await grep(call, "rg", **raw)
    py_result = await grep(call, "python", **raw)
    assert py_result.output == rg_result.output
    assert py_result.is_error == rg_result.is_error


BLOCK_QUERIES: list[dict[str, Any]] = [
    *(q for q in AGREEMENT_QUERIES if not q.get("multiline")),
    {"pattern": "needle", "path": "src/nested", "output_mode": "content", "-C": 3},
    {"pattern": "needle", "path": "src/nested", "output_mode": "content", "-B": 6},
    {"pattern": "line 1[0-9]", "path": "src/nested", "output_mode": "content", "-A": 4},
    {"pattern": "^line", "path": "src/nested", "output_mode": "count"},
]


@needs_rg
@pytest.mark.parametrize("raw", BLOCK_QUERIES, ids=lambda raw: str(raw))
async def test_python_engine_agrees_across_block_boundaries(
    grep_tree: Path, call: Call, raw: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks of a few bytes put a boundary inside every context window and long line."""
    monkeypatch.setattr(grep_python, "BLOCK_BYTES", 7)
    monkeypatch.setattr(grep_python, "MAX_LINE_BYTES", 4096)
    rg_result = await grep(call, "rg", **raw)
    py_result = await grep(call, "python", **raw)
    assert py_result.output == rg_result.output


@needs_rg
async def test_rg_falls_back_to_python_for_lookaround(grep_tree: Path, call: Call) -> None:
    result = await grep(call, "rg", pattern="(?<=return )NEEDLE", output_mode="content")
    assert result.output == "app.py:7:    return NEEDLE + needle"
    assert result.meta["engine"] == "python"


async def test_auto_engine_uses_rg_only_when_present(grep_tree: Path, call: Call) -> None:
    result = await call(GrepTool(), pattern="needle")
    assert result.meta["engine"] == ("rg" if RG else "python")


async def test_rg_engine_without_rg(
    grep_tree: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rg_binary, "find_rg", lambda: None)
    result = await grep(call, "rg", pattern="needle")
    assert result.is_error and "not installed" in result.output
    result = await call(GrepTool(), pattern="needle")
    assert result.meta["engine"] == "python"


@pytest.mark.parametrize("engine", ENGINES)
async def test_respect_gitignore_off_searches_what_gitignore_lists(
    grep_tree: Path, ctx: ToolContext, call: Call, engine: str
) -> None:
    """respectGitignore false: build/ and the nested .gitignore's file are searched; .ignore
    (not git's) still applies, as Claude Code's setting leaves it."""
    ctx.respect_gitignore = False
    result = await grep(call, engine, pattern="needle")
    found = result.output.splitlines()[1:]
    assert "src/nested/gen.py" in found and "debug.log" in found
    assert any(line.startswith("build/") for line in found)
    assert "src/secret.txt" not in found
