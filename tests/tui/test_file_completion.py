"""``@`` completion of the project's paths in the prompt (Pilot, the real app and index).

Typing ``@`` and letters lists matching files and directories under the prompt;
up/down move, tab or enter put ``@path`` in; a directory keeps its ``/`` and the
list goes on inside it; what .gitignore ignores is never listed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.conftest import make_app, wait_for, wait_idle
from tests.tui.screen import screen_lines, screen_text
from tui.fake_api import FakeApi
from tui.fullscreen.widgets.prompt_box import PromptBox, PromptInput


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "src" / "models").mkdir()
    (repo / "src" / "models" / "user.py").write_text("class User: ...\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("# Guide\n")
    (repo / ".gitignore").write_text("build/\n*.log\n")
    (repo / "build").mkdir()
    (repo / "build" / "app_bundle.js").write_text("bundle\n")
    (repo / "app_debug.log").write_text("noise\n")
    return repo


async def type_text(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*("space" if c == " " else c for c in text))


def listed(app) -> list[str]:  # type: ignore[no-untyped-def]
    """The paths the list under the prompt shows, read from the screen."""
    return [line.strip() for line in screen_lines(app) if line.strip().startswith("@")]


async def index_ready(pilot) -> None:  # type: ignore[no-untyped-def]
    """The session up; the first ``@`` typed starts the listing: one is typed and erased."""
    await wait_idle(pilot)
    box = pilot.app.query_one(PromptBox)
    assert box.file_index is not None and box.file_index.matcher is None
    await pilot.press("@")
    await wait_for(
        pilot, lambda: "listing the project's files" in screen_text(pilot.app) or listed(pilot.app)
    )
    await wait_for(pilot, lambda: box.file_index.matcher and listed(pilot.app))
    await pilot.press("backspace")


async def test_at_lists_matching_paths_and_enter_puts_the_path_in(
    api: FakeApi, project: Path
) -> None:
    app = make_app(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await index_ready(pilot)
        prompt = app.query_one(PromptInput)
        await type_text(pilot, "look at @ap")
        await wait_for(pilot, lambda: listed(app))
        shown = listed(app)
        assert shown[0] == "@src/app.py"  # the name starts with the query
        assert "@build/app_bundle.js" not in shown and "@app_debug.log" not in shown
        await pilot.press("enter")
        assert prompt.text == "look at @src/app.py "
        # enter picked the path: nothing was sent
        assert not any(r.path.endswith("/messages") for r in api.requests)
        await pilot.pause()
        assert listed(app) == []  # the list closed


async def test_a_directory_keeps_its_slash_and_lists_what_it_holds(
    api: FakeApi, project: Path
) -> None:
    app = make_app(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await index_ready(pilot)
        prompt = app.query_one(PromptInput)
        await type_text(pilot, "@mod")
        await wait_for(pilot, lambda: listed(app))
        assert listed(app)[0] == "@src/models/"
        await pilot.press("tab")
        assert prompt.text == "@src/models/"
        await wait_for(pilot, lambda: listed(app) == ["@src/models/user.py"])
        await pilot.press("tab")
        assert prompt.text == "@src/models/user.py "


async def test_arrows_move_the_highlight_and_ignored_files_never_show(
    api: FakeApi, project: Path
) -> None:
    app = make_app(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await index_ready(pilot)
        prompt = app.query_one(PromptInput)
        await type_text(pilot, "@")
        await wait_for(pilot, lambda: listed(app))
        everything = listed(app)
        assert "@README.md" in everything and "@src/" in everything
        assert not any("build" in p or ".log" in p or ".git" in p for p in everything)
        await pilot.press("down", "down")
        assert prompt.selected == 2
        chosen = prompt.matches[2][0]
        await pilot.press("tab")
        assert prompt.text.startswith(f"@{chosen}")
        # the ignored names match nothing at all
        prompt.text = ""
        await type_text(pilot, "@bundle")
        await pilot.pause()
        await pilot.pause()
        assert listed(app) == []


async def test_esc_closes_the_list_and_enter_then_sends(api: FakeApi, project: Path) -> None:
    from tui.fake_api import text_reply

    api.add(text_reply("Read it."))
    app = make_app(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await index_ready(pilot)
        await type_text(pilot, "@guide")
        await wait_for(pilot, lambda: listed(app) == ["@docs/guide.md"])
        await pilot.press("escape")
        await pilot.pause()
        assert listed(app) == []
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(r.path.endswith("/messages") for r in api.requests))
        await wait_idle(pilot)
        sent = next(r for r in api.requests if r.path.endswith("/messages"))
        assert sent.last_user_text().endswith("@guide")
        assert "Read it." in screen_text(app)


def test_completion_list_snapshot(snap_compare, project: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The list under the prompt at 80x24, the first entry highlighted."""
    from textual.app import App, ComposeResult

    from tui.path_match import PathMatcher
    from tui.project_index import list_project_files, with_directories

    matcher = PathMatcher(with_directories(list_project_files(project)))

    class Index:  # the real matcher over the real listing, ready at once for the picture
        def match(self, query: str, limit: int = 30) -> list[str]:
            return matcher.match(query, limit)

    class Scene(App[None]):
        CSS = "Screen { layout: vertical; align: left bottom; }"

        def compose(self) -> ComposeResult:
            yield PromptBox(id="prompt")

        def on_mount(self) -> None:
            box = self.query_one(PromptBox)
            box.file_index = Index()  # type: ignore[assignment]
            box.input.focus()

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("@", "s")
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(Scene(), terminal_size=(80, 24), run_before=run_before)


async def test_a_completed_path_sends_the_file_with_the_prompt(api: FakeApi, project: Path) -> None:
    from tui.fake_api import text_reply

    api.add(text_reply("It is 3."))
    app = make_app(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await index_ready(pilot)
        await type_text(pilot, "what is the limit in @app")
        await wait_for(pilot, lambda: listed(app))
        await pilot.press("enter")  # picks src/app.py
        await type_text(pilot, "? ask @someone")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(r.path.endswith("/messages") for r in api.requests))
        await wait_idle(pilot)
    request = next(r for r in api.requests if r.path.endswith("/messages"))
    texts = [b["text"] for b in request.body["messages"][-1]["content"] if b["type"] == "text"]
    assert texts[0] == "what is the limit in @src/app.py ? ask @someone"
    assert len(texts) == 2  # the file; @someone names none and stays text
    assert "Contents of src/app.py" in texts[1] and "RETRY_LIMIT = 3" in texts[1]
