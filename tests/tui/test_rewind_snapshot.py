"""Pictures of the rewind picker (Esc Esc) at 80x24 and 60x16: the prompts to go back to, and
the question about the files, with every choice in sight and nothing cut at the edge."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.tui.screen import screen_lines, screen_words
from tests.tui.test_screen_snapshots import PROJECT, Scene, settle_on, tools_scene
from tui.fullscreen.screens.rewind import RewindScreen
from tui.session.rewind import RewindPoint

POINTS = [
    RewindPoint(
        1, "u3", "now run the tests and commit", ("/home/dev/tinyledger/src/app.py",), True
    ),
    RewindPoint(2, "u2", "raise the retry limit to 5\nand say why", (), True),
    RewindPoint(3, "u1", "what does src/app.py do? " * 6, (), True),
]
SIZES = {"80x24": (80, 24), "60x16": (60, 16)}
STAGES: dict[str, list[str]] = {
    "prompts": ["Rewind", "1. now run the tests and commit", "2. raise the retry limit to 5 …"],
    "files": [
        "Conversation only",
        "Conversation and files (put back 1 file)",
        "since then: src/app.py.",
    ],
}


def rewind_scene(app: Scene) -> None:
    tools_scene(app)
    app.push_screen(RewindScreen(POINTS, PROJECT))


def run_to(stage: str) -> Callable[..., object]:
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle_on(pilot, STAGES["prompts"])
        if stage == "files":
            await pilot.press("enter")
        await settle_on(pilot, STAGES[stage])

    return run_before


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("stage", list(STAGES))
def test_rewind_picture(snap_compare, stage: str, size: str) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(Scene(rewind_scene), terminal_size=SIZES[size], run_before=run_to(stage))


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("stage", list(STAGES))
async def test_rewind_picker_fits(stage: str, size: str) -> None:
    app = Scene(rewind_scene)
    async with app.run_test(size=SIZES[size]) as pilot:
        await run_to(stage)(pilot)
        words = screen_words(app)
        for phrase in STAGES[stage]:
            assert phrase in words, f"{phrase!r} not on the screen:\n" + "\n".join(
                screen_lines(app)
            )
        assert all(len(line.rstrip()) <= SIZES[size][0] for line in screen_lines(app))
        assert "until auto-compact" in screen_lines(app)[-1]  # the meter stays whole under it
