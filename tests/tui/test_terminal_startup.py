"""The app's start in tmux at 80x24 when its session starts before the first frame is drawn:
the arguments parsed on the session's thread still reach the app (a prompt given as an
argument is sent; a usage error is printed once the terminal is back)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from tests.tui.test_terminal import CCX, Terminal, ccx_in_clean_env, pytestmark, terminal  # noqa: F401
from tui.fake_api import FakeApi, text_reply, tool_reply


def launch(terminal: Terminal, repo: Path, args: list[str]) -> None:  # noqa: F811
    line = " ".join(shlex.quote(a) for a in args)
    command = f"{ccx_in_clean_env()} {line}; echo exit=$?; sleep 30"
    terminal.tmux(
        "new-session", "-d", "-s", "ccx", "-x", "80", "-y", "24", "-c", str(repo),
        "sh", "-c", command,
    )  # fmt: skip


def test_a_prompt_given_as_an_argument_is_sent_and_answered(
    terminal: Terminal,  # noqa: F811
    api: FakeApi,
    repo: Path,
) -> None:
    assert CCX.exists(), f"{CCX} is missing; install the project (pip install -e .)"
    api.add(text_reply("Hello from the start."))
    launch(terminal, repo, ["say hello"])
    screen = terminal.wait(lambda s: "Hello from the start." in s)
    assert "say hello" in screen and "% until auto-compact" in screen
    assert [r.last_user_text() for r in api.requests] == ["say hello"]


def test_a_usage_error_is_printed_after_the_app_has_closed(
    terminal: Terminal,  # noqa: F811
    api: FakeApi,
    repo: Path,
) -> None:
    launch(terminal, repo, ["--max-turns", "sideways"])
    screen = terminal.wait(lambda s: "exit=" in s)
    assert "exit=2" in screen and "Invalid value for '--max-turns'" in screen
    assert api.requests == []


def test_a_second_start_runs_on_what_the_first_kept_and_sends_the_same_tools(
    terminal: Terminal,  # noqa: F811
    api: FakeApi,
    repo: Path,
    tmp_path: Path,
) -> None:
    """The first start keeps the dataclasses' compiled methods and the tools' schemas; the
    second compiles none before its first frame, its request offers the very same tools, and
    a tool call works (its parameters' validator is built at that first use)."""
    api.add(
        text_reply("First answer."),
        tool_reply(("Read", {"file_path": "src/app.py"})),
        text_reply("Second answer."),
    )
    cache = Path(os.environ["CCX_CONFIG_DIR"]) / "cache"
    paint = tmp_path / "first-paint.json"
    stats = []
    terminal.tmux("new-session", "-d", "-s", "keeper", "sleep 300")  # the server outlives "ccx"
    for prompt, answer in (
        ("first question", "First answer."),
        ("second question", "Second answer."),
    ):
        paint.unlink(missing_ok=True)
        with_paint = f"env -i CCX_FIRST_PAINT_FILE={shlex.quote(str(paint))} "
        command = ccx_in_clean_env().replace("env -i ", with_paint, 1)
        terminal.tmux(
            "new-session", "-d", "-s", "ccx", "-x", "80", "-y", "24", "-c", str(repo),
            "sh", "-c", f"{command} {shlex.quote(prompt)}; sleep 30",
        )  # fmt: skip
        terminal.wait(lambda s, answer=answer: answer in s)
        painted = json.loads(paint.read_text())
        stats.append(painted["dataclass_code"] | {"bundle": painted["code_bundle"]})
        terminal.tmux("kill-session", "-t", "ccx")
        if len(stats) == 1:
            assert {p.name for p in cache.iterdir()} >= {
                f"dataclass-code.{sys.implementation.cache_tag}.marshal",
                f"code-bundle-app.{sys.implementation.cache_tag}.bin",
                "tool-schemas.json",
            }
    assert stats[0]["from_file"] == 0 and stats[0]["compiled"] > 100
    assert stats[1]["compiled"] == 0 and stats[1]["from_file"] > 100
    assert stats[0]["bundle"]["served"] == 0 and stats[1]["bundle"]["served"] > 300
    asked = [r for r in api.requests if r.path.endswith("/messages")]
    assert [r.last_user_text() for r in asked[:2]] == ["first question", "second question"]
    first, second, after_the_read = (request.body["tools"] for request in asked)
    assert first == second == after_the_read
    assert {tool["name"] for tool in first} >= {"Read", "Bash", "Edit"}
    assert "RETRY_LIMIT = 3" in asked[2].all_text()  # the Read ran
