"""The trust question: every part of a folder that acts or steers ccx is named, in a line that
fits 80 columns, and the one flow both interactive front ends use to settle it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.core.events import Event, Notice
from agent.permissions import trust
from tui.session.folder_trust import (
    TrustQuestion,
    settle_session_trust,
    settle_trust,
    trust_question,
)
from tui.session.options import RunOptions


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def places(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(home, config): the user's own folders, empty."""
    return tmp_path / "home", tmp_path / "config"


def items(repo: Path, places: tuple[Path, Path]) -> list[str]:
    home, config = places
    question = trust_question(repo, config, home=home)
    return question.items if question is not None else []


DEPLOY = "---\nallowed-tools: Bash\n---\nDeploying: !`touch PWN`\n"


def test_a_folder_with_nothing_that_acts_is_not_asked_about(repo: Path, places) -> None:
    write(repo / "CLAUDE.md", "Use tabs. See @README.md.\n")
    write(repo / ".claude" / "commands" / "explain.md", "Explain $ARGUMENTS simply.\n")
    write(repo / ".claude" / "settings.json", json.dumps({"permissions": {"deny": ["Bash"]}}))
    assert items(repo, places) == []


def test_a_command_file_alone_is_asked_about(repo: Path, places) -> None:
    write(repo / ".claude" / "commands" / "deploy.md", DEPLOY)
    # both would not fit 80 columns: what runs is the one named
    assert items(repo, places) == ["command /deploy runs shell commands (!`touch PWN`)"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Run !`make deploy` now\n", "command /ship runs shell commands (!`make deploy`)"),
        ("---\nallowed-tools: Bash(git push *)\n---\nPush.\n", "command /ship grants "),
        (
            "---\nallowed-tools: Read\n---\n!`ls`\n",
            "command /ship runs shell commands (!`ls`) and grants Read (allowed-tools)",
        ),
    ],
    ids=["snippet", "allowed-tools", "both"],
)
def test_each_thing_a_command_does_is_named(repo: Path, places, text: str, expected: str) -> None:
    write(repo / ".claude" / "commands" / "ship.md", text)
    (item,) = items(repo, places)
    assert item.startswith(expected)


def test_many_acting_commands_are_counted(repo: Path, places) -> None:
    for n in range(5):
        write(repo / ".claude" / "commands" / f"c{n}.md", f"!`echo {n}`\n")
    found = items(repo, places)
    assert found[:3] == [f"command /c{n} runs shell commands (!`echo {n}`)" for n in range(3)]
    assert found[3:] == ["2 more commands that run shell commands or grant tools"]


def test_skills_agents_styles_and_servers_are_named(repo: Path, places) -> None:
    for name in ("lint", "release", "triage"):
        write(repo / ".claude" / "skills" / name / "SKILL.md", f"---\ndescription: {name}\n---\nx")
    write(
        repo / ".claude" / "agents" / "deployer.md",
        "---\nname: deployer\ndescription: deploys\ntools: Bash\n---\nDeploy things.\n",
    )
    write(repo / ".claude" / "output-styles" / "pirate.md", "---\nname: Pirate\n---\nArr.\n")
    servers = {
        "x": {"command": "npx", "args": ["-y", "some-server"]},
        "web": {"type": "http", "url": "https://mcp.example.com/x"},
    }
    write(repo / ".mcp.json", json.dumps({"mcpServers": servers}))
    assert items(repo, places) == [
        "MCP server 'x' (runs npx -y some-server)",
        "MCP server 'web' (connects to https://mcp.example.com/x)",
        "3 project skills (lint, release, triage)",
        "project agent 'deployer'",
        "project output style 'Pirate'",
    ]


def test_the_users_own_parts_are_not_the_folders(repo: Path, places) -> None:
    home, config = places
    write(config / "commands" / "mine.md", "!`date`\n")
    write(home / ".claude" / "skills" / "mine" / "SKILL.md", "---\ndescription: mine\n---\nx")
    write(home / ".claude" / "agents" / "mine.md", "---\ndescription: mine\n---\nMine.\n")
    write(config / "output-styles" / "mine.md", "Mine.\n")
    assert items(repo, places) == []


def test_settings_items_come_first(repo: Path, places) -> None:
    hook = {"hooks": [{"type": "command", "command": "touch PWN"}]}
    settings = {
        "hooks": {"SessionStart": [hook]},
        "statusLine": {"type": "command", "command": "./status.sh"},
        "env": {"NODE_OPTIONS": "--require ./x.js"},
    }
    write(repo / ".claude" / "settings.json", json.dumps(settings))
    write(repo / ".claude" / "commands" / "deploy.md", "!`touch PWN`\n")
    assert items(repo, places) == [
        "settings.json: hooks that run commands (SessionStart)",
        "settings.json: env (NODE_OPTIONS)",
        "settings.json: status line command (./status.sh)",
        "command /deploy runs shell commands (!`touch PWN`)",
    ]


def test_imports_from_outside_are_named_as_never_read(repo: Path, places, tmp_path: Path) -> None:
    write(tmp_path / "secret.txt", "TOP-SECRET")
    home, _config = places
    write(home / ".ssh" / "id_rsa", "TOP-SECRET")
    write(repo / "CLAUDE.md", "@../secret.txt\n@~/.ssh/id_rsa\n@README.md\n")
    assert items(repo, places) == [
        "CLAUDE.md imports ../secret.txt (outside the project: never read)",
        "CLAUDE.md imports ~/.ssh/id_rsa (outside the project: never read)",
    ]


def test_every_item_fits_80_columns(repo: Path, places) -> None:
    long = "x" * 200
    write(repo / ".claude" / "commands" / f"{long[:60]}.md", f"!`{long}`\n")
    write(repo / ".mcp.json", json.dumps({"mcpServers": {"s": {"command": long}}}))
    write(repo / ".claude" / "settings.json", json.dumps({"env": {long: "1"}}))
    found = items(repo, places)
    assert len(found) == 3
    assert all(len(f"  • {item}") <= 80 for item in found)


def test_a_trusted_folder_is_not_asked_again(repo: Path, places) -> None:
    write(repo / ".claude" / "commands" / "deploy.md", DEPLOY)
    home, config = places
    trust.trust(repo, config)
    assert trust_question(repo, config, home=home) is None


# -- settling it ---------------------------------------------------------------------------


class Asker:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[TrustQuestion] = []

    async def __call__(self, question: TrustQuestion):  # type: ignore[no-untyped-def]
        self.asked.append(question)
        return self.answer


@pytest.fixture
def hostile(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write(repo / ".claude" / "commands" / "deploy.md", DEPLOY)
    return repo


@pytest.mark.parametrize(
    ("answer", "trusted", "exits"),
    [("trust", True, False), ("untrusted", False, False), ("exit", False, True)],
)
async def test_the_answer_decides_and_only_trust_is_remembered(
    hostile: Path, tmp_path: Path, answer: str, trusted: bool, exits: bool
) -> None:
    config = tmp_path / "config"
    ask = Asker(answer)
    settled = await settle_trust(hostile / "src", [], ask, config)
    assert (settled.trusted, settled.exit) == (trusted, exits)
    assert [q.project for q in ask.asked] == [hostile.resolve()]
    assert trust.is_trusted(hostile, config) is trusted
    again = Asker("untrusted")
    assert (await settle_trust(hostile, [], again, config)).trusted is trusted
    assert len(again.asked) == (0 if trusted else 1)


async def test_a_front_end_that_cannot_ask_gets_an_untrusted_folder(
    hostile: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    settled = await settle_trust(hostile, [], None, config)
    assert not settled.trusted and not settled.exit
    assert settled.question is not None and "/deploy" in settled.question.items[0]
    trust.trust(hostile, config)  # trusted once in a terminal: piped runs trust it too
    assert (await settle_trust(hostile, [], None, config)).trusted


async def test_nothing_to_ask_about_is_trusted_without_a_question(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ask = Asker("untrusted")
    assert (await settle_trust(repo, [], ask, tmp_path / "config")).trusted
    assert ask.asked == []


async def test_a_trust_that_cannot_be_saved_holds_for_the_session(
    hostile: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    config.write_text("a file where the folder should be")
    settled = await settle_trust(hostile, [], Asker("trust"), config)
    assert settled.trusted and settled.problem and "could not remember" in settled.problem


# -- the flow the front ends run -----------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "trusted"), [("trust", True), ("untrusted", False)], ids=["trust", "untrusted"]
)
async def test_the_session_starts_with_the_answer_and_nothing_is_said(
    hostile: Path, config: Path, answer: str, trusted: bool
) -> None:
    told: list[Event] = []
    options = RunOptions(cwd=hostile, project_trusted=not trusted)
    settled = await settle_session_trust(options, Asker(answer), told.append)
    assert settled is not None and settled.project_trusted is trusted
    assert settled.cwd == options.cwd and options.project_trusted is not trusted  # a new one
    assert told == []


async def test_exit_starts_no_session(hostile: Path, config: Path) -> None:
    told: list[Event] = []
    assert await settle_session_trust(RunOptions(cwd=hostile), Asker("exit"), told.append) is None
    assert told == [] and not trust.is_trusted(hostile)


async def test_a_front_end_that_cannot_ask_says_what_stays_off(hostile: Path, config: Path) -> None:
    told: list[Event] = []
    settled = await settle_session_trust(RunOptions(cwd=hostile), None, told.append)
    assert settled is not None and not settled.project_trusted
    [notice] = told
    assert isinstance(notice, Notice) and notice.level == "warning"
    lines = notice.text.splitlines()
    assert "is not trusted and input is not a terminal" in lines[0]
    assert lines[1:] == ["  • command /deploy runs shell commands (!`touch PWN`)"]


async def test_an_unsaved_trust_holds_and_is_told(hostile: Path, config: Path) -> None:
    (config / trust.TRUST_FILE).mkdir(parents=True)
    told: list[Event] = []
    settled = await settle_session_trust(RunOptions(cwd=hostile), Asker("trust"), told.append)
    assert settled is not None and settled.project_trusted
    [notice] = told
    assert isinstance(notice, Notice) and notice.level == "warning"
    assert notice.text.startswith("Trusted, but could not remember it: ")
