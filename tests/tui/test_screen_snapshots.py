"""Pictures of the screens a user reads, at 80x24 and 120x40: nothing clipped, nothing lost.

Each scene is built from the real widgets with fixed content (no session, no
clock), so a picture changes only when what the user would see changes: a
transcript with tool blocks and an Edit diff, a compaction (collapsed and
expanded), the permission dialog and /context. Each scene is also read back as
text at 80x24 to check that no line runs past the edge and the key words show.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from agent.core.compaction_record import CompactionRecord
from agent.core.context_state import ContextLimits, context_state
from agent.loop.tool_runner import PermissionRequest
from agent.permissions.rules import Rule
from compaction.breakdown import Breakdown, Category
from tests.tui.screen import screen_lines, screen_words
from tui.fullscreen.screens.permission import PermissionScreen
from tui.fullscreen.screens.plan_approval import PlanApprovalScreen
from tui.fullscreen.screens.trust import TrustScreen
from tui.fullscreen.widgets.compaction_block import CompactionBlock, SummaryToggle
from tui.fullscreen.widgets.context_view import ContextView
from tui.fullscreen.widgets.footer import StatusFooter
from tui.fullscreen.widgets.reply import HistoryReply
from tui.fullscreen.widgets.tool_block import ToolBlock
from tui.fullscreen.widgets.transcript import Transcript, UserPrompt
from tui.session.folder_trust import TrustQuestion

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
PROJECT = Path("/home/dev/tinyledger")
APP_PY = "RETRY_LIMIT = 3\n\n\ndef main():\n    return RETRY_LIMIT\n"
DIFF = (
    "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,4 +1,4 @@\n-RETRY_LIMIT = 3\n+RETRY_LIMIT = 5\n"
    " \n \n def main():\n"
)
SUMMARY = (
    "1. Primary request: raise the retry limit in src/app.py to 5.\n"
    "2. Files: src/app.py (RETRY_LIMIT = 3, read twice).\n"
    "3. Next: edit the constant and run the tests."
)
LIMITS = ContextLimits(window=200_000, max_output=64_000)


class Scene(App[None]):
    """The transcript over the footer, as in the app, filled by ``fill``."""

    CSS = "Screen { layout: vertical; }"

    def __init__(self, fill: Callable[[Scene], None]) -> None:
        super().__init__()
        self.fill = fill

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        yield StatusFooter()

    def on_mount(self) -> None:
        footer = self.query_one(StatusFooter)
        footer.model, footer.mode, footer.cost_usd = "claude-sonnet-4-5", "default", 0.42
        footer.state = context_state(
            41_200, LIMITS, auto_enabled=True, compact_enabled=True, failures=0, circuit_open=False
        )
        transcript = self.query_one(Transcript)
        transcript.cwd = PROJECT
        self.fill(self)


def tools_scene(app: Scene) -> None:
    transcript = app.query_one(Transcript)
    transcript.add(UserPrompt("raise the retry limit to 5 and run the tests"))
    read = ToolBlock("toolu_1", "Read", {"file_path": "src/app.py"}, label="Read src/app.py")
    grep = ToolBlock("toolu_2", "Grep", {"pattern": "RETRY"}, label='Grep "RETRY"')
    edit = ToolBlock("toolu_3", "Edit", {"file_path": "src/app.py"}, label="Edit src/app.py")
    bash = ToolBlock("toolu_4", "Bash", {"command": "pytest -q"}, label="Bash pytest -q")
    for block in (read, grep, edit, bash):
        transcript.add(block)
    read.finish(False, "Read 5 lines", "", {"display": "Read 5 lines"})
    grep.finish(
        False,
        "2 matching lines in 1 file",
        "src/app.py:1:RETRY_LIMIT = 3\nsrc/app.py:5:    return RETRY_LIMIT",
        {"display": "2 matching lines in 1 file"},
    )
    edit.finish(
        False,
        "Edited src/app.py (+1 -1)",
        "",
        {"diff": DIFF, "display": "Edited src/app.py (+1 -1)"},
    )
    bash.finish(
        False, "....\n4 passed in 0.02s", "", {"exit_code": 0, "display": "....\n4 passed in 0.02s"}
    )
    transcript.add(HistoryReply("The limit is now **5** and the 4 tests pass."))


def long_output_scene(app: Scene) -> None:
    transcript = app.query_one(Transcript)
    transcript.add(UserPrompt("count to 300"))
    bash = ToolBlock("toolu_1", "Bash", {"command": "seq 1 300"}, label="Bash seq 1 300")
    transcript.add(bash)
    bash.finish(False, "\n".join(str(n) for n in range(1, 301)), "", {"exit_code": 0})
    transcript.add(HistoryReply("Counted to 300."))


def compaction_scene(app: Scene) -> None:
    transcript = app.query_one(Transcript)
    transcript.add(UserPrompt("/compact keep the retry details"))
    block = CompactionBlock("manual", "summarizing 14 messages", 41_200)
    transcript.add(block)
    record = CompactionRecord(
        trigger="manual",
        kind="full",
        tokens_before=41_200,
        tokens_after=9_800,
        duration_s=3.2,
        messages_summarized=14,
        messages_kept=0,
        restored={"files": [f"{PROJECT}/src/app.py"]},
        restored_tokens=900,
        summary_tokens=420,
        summary=SUMMARY,
    )
    block.finish(record, PROJECT)


def expanded_compaction_scene(app: Scene) -> None:
    compaction_scene(app)

    def expand() -> None:  # on a loaded machine the toggle may mount a refresh later
        toggles = app.query(SummaryToggle)
        if toggles:
            toggles.first().expanded = True
        else:
            app.call_after_refresh(expand)

    app.call_after_refresh(expand)


def context_scene(app: Scene) -> None:
    breakdown = Breakdown(
        categories=[
            Category("System prompt", 2_900),
            Category("System tools", 11_600),
            Category("Memory files", 1_200),
            Category("Messages", 25_500),
            Category("Free space", 122_800),
            Category("Autocompact buffer", 36_000),
        ],
        used=41_200,
        window=200_000,
        auto_compact=167_000,
        keep_preview={
            "latest request (verbatim)": "raise the retry limit to 5 and run the tests",
            "files re-read": f"{PROJECT}/src/app.py",
            "skills": "none",
            "plan": "none",
        },
    )
    transcript = app.query_one(Transcript)
    transcript.add(UserPrompt("/context"))
    transcript.add(ContextView(breakdown, PROJECT))


def permission_scene(project: Path) -> Callable[[Scene], None]:
    def fill(app: Scene) -> None:
        tools_scene(app)
        request = PermissionRequest(
            "toolu_9",
            "Edit",
            {
                "file_path": "src/app.py",
                "old_string": "RETRY_LIMIT = 3",
                "new_string": "RETRY_LIMIT = 5",
            },
            "Edit src/app.py",
            f"Edit on {project}/src/app.py needs the user's approval",
            Rule("Edit", f"/{project}/src/app.py", "session"),
        )
        app.push_screen(PermissionScreen(request, project))

    return fill


PLAN = "# Plan\n\n" + "\n".join(
    f"{n}. Step {n}: change module {n} and test it." for n in range(1, 31)
)


def plan_scene(app: Scene) -> None:
    tools_scene(app)
    app.push_screen(PlanApprovalScreen(PLAN))


def trust_scene(app: Scene) -> None:
    items = [  # as tui.session.folder_trust words them
        "settings.json: hooks that run commands (SessionStart)",
        "settings.json: env (NODE_OPTIONS, PATH)",
        "settings.json: allow rules (Bash(npm test *), Bash(make …)",
        "settings.json: permission mode acceptEdits",
        "command /deploy runs shell commands (!`make deploy`)",
        "2 project skills (release, triage)",
    ]
    app.push_screen(TrustScreen(TrustQuestion(PROJECT, items)))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(APP_PY)
    return tmp_path


SCENES: dict[str, Callable[[Path], Callable[[Scene], None]]] = {
    "tools": lambda _p: tools_scene,
    "long_output": lambda _p: long_output_scene,
    "compaction_collapsed": lambda _p: compaction_scene,
    "compaction_expanded": lambda _p: expanded_compaction_scene,
    "context": lambda _p: context_scene,
    "permission": permission_scene,
    "plan": lambda _p: plan_scene,
    "trust": lambda _p: trust_scene,
}
MUST_SHOW = {
    "tools": ["Read src/app.py", "+RETRY_LIMIT = 5", "4 passed", "▸ +2 lines"],
    "long_output": ["… +295 lines (ctrl+o to expand)", "296", "300", "Counted to 300."],
    "compaction_collapsed": ["Compacted (manual)", "restored files: src/app.py", "▸ +3 lines"],
    "compaction_expanded": ["Primary request: raise the retry limit", "Next: edit the constant"],
    "context": ["Context usage", "files re-read: src/app.py", "Messages"],
    "permission": ["1. Yes, allow once (y)", "(a)", "3. No, deny (n)", "@@ -1,4 +1,4 @@"],
    "plan": ["Ready to code?", "Approve and start (y)", "keep planning (n or esc)"],
    "trust": ["Do you trust the files in", "(y)", "(n)", "Exit (q / esc)", "2 project skills"],
}


async def settle(pilot, scene: str) -> None:  # type: ignore[no-untyped-def]
    """Until the scene's words are on the screen (mounts and refreshes land in a few frames)."""
    await settle_on(pilot, MUST_SHOW[scene])


async def settle_on(pilot, phrases: list[str]) -> None:  # type: ignore[no-untyped-def]
    for _ in range(200):
        await pilot.pause(0.02)
        words = screen_words(pilot.app).replace("█ ", "")
        if all(phrase in words for phrase in phrases):
            return


def bash_permission_scene(app: Scene) -> None:
    tools_scene(app)
    command = "pytest -q tests/test_app.py && git add -A && git commit -m 'Raise the retry limit'"
    request = PermissionRequest(
        "toolu_10",
        "Bash",
        {"command": command, "description": "Run the tests, then commit the change"},
        command,
        "`git add -A` needs approval (no allow rule matches it)",
        Rule("Bash", "git add *", "session"),
    )
    app.push_screen(PermissionScreen(request, PROJECT))


# At 60x16 the dialog still shows where the diff starts and every choice; the preview scrolls.
SMALL_DIALOGS: dict[str, tuple[Callable[[Path], Callable[[Scene], None]], list[str]]] = {
    "edit": (
        permission_scene,
        ["@@ -1,4 +1,4 @@", "-RETRY_LIMIT = 3", "(y)", "(a)", "3. No, deny (n)", "PgUp/PgDn"],
    ),
    "bash": (lambda _p: bash_permission_scene, ["$ pytest -q", "(y)", "(a)", "3. No, deny (n)"]),
}


@pytest.mark.parametrize("dialog", list(SMALL_DIALOGS))
def test_dialog_at_60x16(snap_compare, project: Path, dialog: str) -> None:  # type: ignore[no-untyped-def]
    scene, phrases = SMALL_DIALOGS[dialog]

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle_on(pilot, phrases)

    assert snap_compare(Scene(scene(project)), terminal_size=(60, 16), run_before=run_before)


@pytest.mark.parametrize("dialog", list(SMALL_DIALOGS))
async def test_dialog_at_60x16_shows_the_start_and_every_choice(project: Path, dialog: str) -> None:
    scene, phrases = SMALL_DIALOGS[dialog]
    app = Scene(scene(project))
    async with app.run_test(size=(60, 16)) as pilot:
        await settle_on(pilot, phrases)
        words = screen_words(app)
        for phrase in phrases:
            assert phrase in words, f"{phrase!r} not on the screen:\n" + "\n".join(
                screen_lines(app)
            )


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("scene", list(SCENES))
def test_screen(snap_compare, project: Path, scene: str, size: str) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot, scene)

    app = Scene(SCENES[scene](project))
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("scene", list(SCENES))
async def test_nothing_is_clipped_at_80x24(project: Path, scene: str) -> None:
    app = Scene(SCENES[scene](project))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, scene)
        lines = screen_lines(app)
        assert all(len(line) <= 80 for line in lines)
        words = screen_words(app).replace("█ ", "")  # the compaction block's left border
        for phrase in MUST_SHOW[scene]:
            assert phrase in words, f"{phrase!r} not on the screen:\n" + "\n".join(lines)
        assert lines[-1].endswith("75% until auto-compact")  # the meter, whole
        if scene != "trust":  # the trust question names the folder it is about
            assert str(project) not in words and str(PROJECT) not in words  # relative paths
