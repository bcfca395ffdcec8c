"""The scripted audit session shared by the benchmarks: a sample repository and a 51-call model script.

40 Python modules of about 16 KiB, each with one planted fact line. The model
reads them one per step, runs `git log --stat` after modules 5, 15, 25, 35 and
`grep -rn` after 8, 18, 28, 38, edits the last module, reads README.md, and
answers: 51 model calls.
"""

from __future__ import annotations

import itertools
import random
import subprocess
from pathlib import Path
from typing import Any

from tui.fake_api import Reply, text_reply, tool_reply

MODULES = 40
MODULE_BYTES = 16 * 1024
GIT_LOG_AFTER = (5, 15, 25, 35)
GREP_AFTER = (8, 18, 28, 38)
USER_REQUEST = (
    "Audit this repository: read every module under pkg/ one by one, note the planted "
    "FACT line of each, check the history and cross-references as you go, bump the "
    "RETRY_LIMIT in the last module to 7, and finish with a table of all 40 facts."
)


def fact(index: int) -> str:
    return f"FACT_{index:02d} = 'module {index:02d} owns the {['cache', 'queue', 'parser', 'router'][index % 4]} layer'"


def module_source(index: int, rng: random.Random) -> str:
    lines = [f'"""Module {index:02d} of the sample package."""', "", "import os", ""]
    lines.append(fact(index))
    lines.append("RETRY_LIMIT = 3")
    body_index = 0
    while sum(len(line) + 1 for line in lines) < MODULE_BYTES:
        body_index += 1
        a, b = rng.randint(1, 999), rng.randint(1, 999)
        lines += [
            "",
            "",
            f"def helper_{index:02d}_{body_index:03d}(value: int, scale: int = {a}) -> int:",
            f'    """Scale value by {a} and offset it by {b}; used by section {body_index}."""',
            f"    result = value * scale + {b}",
            f"    if result % {max(2, b % 17)} == 0:",
            f"        return result // {max(2, a % 13)}",
            "    return result",
        ]
    return "\n".join(lines) + "\n"


def make_repo(root: Path, seed: int = 7) -> list[Path]:
    """Create the sample repository (a git repo with a few commits); returns the module paths."""
    rng = random.Random(seed)
    package = root / "pkg"
    package.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# Sample\n\nForty modules, each owning one layer.\n")
    paths = []
    for index in range(1, MODULES + 1):
        path = package / f"module_{index:02d}.py"
        path.write_text(module_source(index, rng))
        paths.append(path)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for chunk in range(4):
        for path in paths[chunk * 10 : (chunk + 1) * 10]:
            subprocess.run(["git", "add", str(path)], cwd=root, check=True)
        subprocess.run(
            [*git, "commit", "-qm", f"Add modules {chunk * 10 + 1}-{chunk * 10 + 10}"],
            cwd=root,
            check=True,
        )
    subprocess.run([*git, "add", "README.md"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "Add README"], cwd=root, check=True)
    return paths


def script(paths: list[Path], root: Path) -> list[Reply]:
    """The model's side of the audit: 51 replies."""
    replies: list[Reply] = []
    for index, path in enumerate(paths, start=1):
        replies.append(
            tool_reply(("Read", {"file_path": str(path)}), text=f"Reading module {index}.")
        )
        if index in GIT_LOG_AFTER:
            replies.append(
                tool_reply(("Bash", {"command": "git log --stat", "description": "History"}))
            )
        if index in GREP_AFTER:
            replies.append(
                tool_reply(("Bash", {"command": "grep -rn FACT_ pkg", "description": "Facts"}))
            )
    last = paths[-1]
    replies.append(
        tool_reply(
            (
                "Edit",
                {
                    "file_path": str(last),
                    "old_string": "RETRY_LIMIT = 3",
                    "new_string": "RETRY_LIMIT = 7",
                },
            )
        )
    )
    replies.append(tool_reply(("Read", {"file_path": str(root / "README.md")})))
    table = "\n".join(f"| {i:02d} | {fact(i)} |" for i in range(1, MODULES + 1))
    replies.append(text_reply(f"Audit complete.\n\n| module | fact |\n|---|---|\n{table}"))
    assert len(replies) == 51
    return replies


def ccx_args(model: str, extra: list[str] | None = None) -> list[str]:
    return [
        "-p",
        USER_REQUEST,
        "--output-format",
        "json",
        "--permission-mode",
        "bypassPermissions",
        "--model",
        model,
        *(extra or []),
    ]


def step_overheads(requests: list[Any]) -> list[float]:
    """Client-side time between consecutive requests: wall time outside the server, per step."""
    gaps = []
    for previous, current in itertools.pairwise(requests):
        gaps.append(current.received_at - (previous.received_at + previous.server_seconds))
    return gaps
