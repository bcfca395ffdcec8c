"""Each tool's one-line label (Tool.label), pinned: the text a front end shows for a call.

The label comes from the validated parameters and the session's working
directory; paths inside that directory are shown relative to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tools.base import Tool, ToolResult
from tools.bash import BashTool
from tools.edit import EditTool
from tools.exit_plan_mode import ExitPlanModeTool
from tools.glob import GlobTool
from tools.grep import GrepTool
from tools.read import ReadTool
from tools.skill import SkillTool
from tools.write import WriteTool

CWD = Path("/home/dev/project")
LONG = "x" * 100


def label(tool: Tool[Any], cwd: Path | None = CWD, **raw: Any) -> str:
    params = tool.parse(raw)
    assert not isinstance(params, ToolResult), params.output
    return tool.label(params, cwd)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"file_path": "src/app.py"}, "Read src/app.py"),
        ({"file_path": f"{CWD}/src/app.py"}, "Read src/app.py"),
        ({"file_path": "/etc/hosts"}, "Read /etc/hosts"),
        ({"file_path": f"{CWD.parent}/other/a.py"}, f"Read {CWD.parent}/other/a.py"),
        ({"file_path": "src/app.py", "offset": 10, "limit": 5}, "Read src/app.py (lines 10-14)"),
        ({"file_path": "src/app.py", "offset": 10}, "Read src/app.py (lines 10-)"),
        ({"file_path": "src/app.py", "limit": 5}, "Read src/app.py (lines 1-5)"),
        ({"file_path": "src/app.py", "offset": 1}, "Read src/app.py"),
        ({"file_path": "src/app.py", "offset": 0}, "Read src/app.py"),
    ],
)
def test_read(raw: dict[str, Any], expected: str) -> None:
    assert label(ReadTool(), **raw) == expected


def test_write_and_edit() -> None:
    assert label(WriteTool(), file_path=f"{CWD}/src/a.py", content="") == "Write src/a.py"
    assert label(WriteTool(), file_path="/tmp/out.txt", content="") == "Write /tmp/out.txt"
    edit = EditTool()
    assert label(edit, file_path=f"{CWD}/a.py", old_string="a", new_string="b") == "Edit a.py"
    assert label(edit, file_path="b.py", old_string="a", new_string="", replace_all=True) == (
        "Edit b.py"
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"command": "npm test -- --watch=false"}, "npm test -- --watch=false"),
        ({"command": "npm test", "description": "Run the tests"}, "npm test"),  # what runs
        ({"command": "  cd src\n  make all\n"}, "cd src"),
        ({"command": LONG}, "x" * 79 + "…"),
        ({"command": "", "description": "List files\nin the root"}, "List files"),
        ({"command": "ls -la", "description": "   "}, "ls -la"),
        ({"command": "   "}, ""),
    ],
)
def test_bash(raw: dict[str, Any], expected: str) -> None:
    assert label(BashTool(), **raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"pattern": "TODO"}, 'Grep "TODO"'),
        ({"pattern": "TODO", "path": "src", "glob": "*.py"}, 'Grep "TODO" in src (*.py)'),
        ({"pattern": "x", "path": f"{CWD}/src", "type": "py"}, 'Grep "x" in src (py)'),
        ({"pattern": "x", "path": "undefined"}, 'Grep "x"'),
        ({"pattern": "def f", "path": "/usr/lib"}, 'Grep "def f" in /usr/lib'),
        ({"pattern": " TODO "}, 'Grep " TODO "'),
    ],
)
def test_grep(raw: dict[str, Any], expected: str) -> None:
    assert label(GrepTool(), **raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"pattern": "**/*.py"}, "Glob **/*.py"),
        ({"pattern": "**/*.py", "path": "src"}, "Glob **/*.py in src"),
        ({"pattern": "*.md", "path": f"{CWD}/docs"}, "Glob *.md in docs"),
        ({"pattern": "*.md", "path": "null"}, "Glob *.md"),
    ],
)
def test_glob(raw: dict[str, Any], expected: str) -> None:
    assert label(GlobTool(), **raw) == expected


def test_skill_and_exit_plan_mode() -> None:
    assert label(SkillTool([]), skill=" /release-notes ") == "Skill release-notes"
    assert label(SkillTool([]), skill="pdf", args="a.pdf") == "Skill pdf"
    plan_mode = ExitPlanModeTool(lambda: CWD / "plan.md", None, lambda: None)
    assert label(plan_mode, plan="# Plan\n1. Do it") == "Present the plan for approval"
    assert label(plan_mode) == "Present the plan for approval"


def test_without_a_cwd_paths_are_relative_to_the_process_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert label(ReadTool(), None, file_path=str(tmp_path / "a.py")) == "Read a.py"
    assert label(ReadTool(), CWD, file_path=str(tmp_path / "a.py")) == f"Read {tmp_path}/a.py"


def test_a_label_is_one_line_whatever_the_input() -> None:
    assert label(GrepTool(), pattern="a\nb", path="src") == 'Grep "a" in src'
    assert label(GlobTool(), pattern="*.py\n*.md") == "Glob *.py"
    assert label(ReadTool(), file_path="odd\nname.py") == "Read odd"
    assert label(SkillTool([]), skill="pdf\nextra") == "Skill pdf"
    calls: list[tuple[Tool[Any], dict[str, Any]]] = [
        (BashTool(), {"command": "a\nb\nc", "description": "x\ny"}),
        (WriteTool(), {"file_path": "a\nb", "content": ""}),
        (EditTool(), {"file_path": "a\nb", "old_string": "a", "new_string": "b"}),
    ]
    for tool, raw in calls:
        assert "\n" not in label(tool, **raw)
