"""The one loader of ``.claude/<kind>/`` files, judged through each kind's own discovery:
a bad file never hides the others, nothing that is not a regular file is opened, a folder
that loops or is reached twice is no trouble, and an untrusted project's folder stays out."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.instructions.agents import discover_agents
from agent.instructions.custom_commands import discover_commands
from agent.instructions.output_styles import BUILTIN_STYLES, discover_output_styles
from agent.instructions.skills import discover_skills
from tools.agent import GENERAL_PURPOSE

Found = tuple[list[tuple[str, Path]], list[str]]  # the entries from files (name, file); warnings


@dataclass(frozen=True)
class Kind:
    folder: str  # under .claude/
    max_bytes: int
    file_for: Callable[[Path, str], Path]  # (the kind's folder, an entry's name) -> its file
    discover: Callable[[Path, Path, Path, bool], Found]  # (cwd, home, config, trusted)

    def write(self, folder: Path, name: str, data: bytes | None = None) -> Path:
        path = self.file_for(folder, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"---\nname: {name}\ndescription: the {name} one\n---\nDo the {name} thing.\n"
        path.write_bytes(text.encode() if data is None else data)
        return path

    def __str__(self) -> str:
        return self.folder


def _commands(cwd: Path, home: Path, config: Path, _trusted: bool) -> Found:
    found = discover_commands(cwd, home, config)  # untrusted: gated when run, not here
    return [(command.name, command.path) for command in found], found.warnings


def _skills(cwd: Path, home: Path, config: Path, trusted: bool) -> Found:
    found = discover_skills(cwd, home, config, include_project=trusted)
    return [(skill.name, skill.path) for skill in found], found.warnings


def _agents(cwd: Path, home: Path, config: Path, trusted: bool) -> Found:
    found = discover_agents(cwd, None, home, config, include_project=trusted)
    agents = [agent for agent in found.values() if agent.name != GENERAL_PURPOSE]
    return [(agent.name, Path(agent.source)) for agent in agents], found.warnings


def _styles(cwd: Path, home: Path, config: Path, trusted: bool) -> Found:
    found = discover_output_styles(cwd, home, config, include_project=trusted)
    styles = found.styles[len(BUILTIN_STYLES) :]
    return [(style.name, style.path or Path()) for style in styles], found.warnings


COMMANDS = Kind("commands", 256 * 1024, lambda folder, name: folder / f"{name}.md", _commands)
SKILLS = Kind("skills", 1024 * 1024, lambda folder, name: folder / name / "SKILL.md", _skills)
AGENTS = Kind("agents", 256 * 1024, lambda folder, name: folder / f"{name}.md", _agents)
STYLES = Kind("output-styles", 64 * 1024, lambda folder, name: folder / f"{name}.md", _styles)
KINDS = [COMMANDS, SKILLS, AGENTS, STYLES]
TRUST_GATED = [SKILLS, AGENTS, STYLES]


@dataclass
class Places:
    repo: Path
    home: Path
    config: Path

    def project(self, kind: Kind) -> Path:
        return self.repo / ".claude" / kind.folder

    def user(self, kind: Kind) -> Path:
        return self.home / ".claude" / kind.folder

    def discover(self, kind: Kind, trusted: bool = True) -> Found:
        return kind.discover(self.repo, self.home, self.config, trusted)

    def names(self, kind: Kind, trusted: bool = True) -> tuple[list[str], list[str]]:
        entries, warnings = self.discover(kind, trusted)
        return [name for name, _path in entries], warnings


@pytest.fixture
def places(repo: Path) -> Places:
    return Places(repo, repo.parent / "home", repo.parent / "config")


BAD_FILES: dict[str, Callable[[Kind], bytes]] = {
    "unclosed front matter": lambda kind: b"---\nname: broken\nDo it.\n",
    "front matter that is a list": lambda kind: b"---\n- one\n- two\n---\nDo it.\n",
    "not UTF-8": lambda kind: b"---\nname: \xff\n---\nDo it.\n",
    "too large": lambda kind: b"Do it.\n" * (kind.max_bytes // 7 + 1),
}


@pytest.mark.parametrize("problem", BAD_FILES)
@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_bad_file_is_named_in_a_warning_and_hides_nothing_else(
    places: Places, kind: Kind, problem: str
) -> None:
    kind.write(places.project(kind), "alpha")
    broken = kind.write(places.project(kind), "broken", BAD_FILES[problem](kind))
    kind.write(places.project(kind), "zulu")
    kind.write(places.user(kind), "home")
    names, warnings = places.names(kind)
    assert names == ["alpha", "zulu", "home"]
    assert len(warnings) == 1 and str(broken) in warnings[0] and "skipped" in warnings[0]


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_fifo_named_like_a_file_is_never_opened(places: Places, kind: Kind) -> None:
    """Opening a FIFO waits for a writer: a repository's could hold ccx's start forever."""
    kind.write(places.project(kind), "alpha")
    fifo = kind.file_for(places.project(kind), "pipe")
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    result: list[Found] = []
    thread = threading.Thread(target=lambda: result.append(places.discover(kind)), daemon=True)
    thread.start()
    thread.join(timeout=10)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # lets the stuck read go
        thread.join(timeout=10)
        pytest.fail(f"discovering {kind.folder} opened the FIFO {fifo}")
    assert [([name for name, _ in entries], warnings) for entries, warnings in result] == [
        (["alpha"], [])
    ]


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_folder_that_is_a_loop_of_links_is_passed_over(places: Places, kind: Kind) -> None:
    places.project(kind).parent.mkdir(parents=True, exist_ok=True)
    places.project(kind).symlink_to(kind.folder)  # .claude/<kind> -> itself
    kind.write(places.user(kind), "home")
    assert places.names(kind) == (["home"], [])


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_folder_reached_twice_is_read_once(places: Places, kind: Kind) -> None:
    """ccx's config folder set to ~/.claude: its files are warned of once, not twice."""
    places.config = places.home / ".claude"
    kind.write(places.user(kind), "home")
    broken = kind.write(places.user(kind), "broken", b"\xff")
    names, warnings = places.names(kind)
    assert names == ["home"]
    assert len(warnings) == 1 and str(broken) in warnings[0]


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_the_project_first_then_the_config_folder_then_home(places: Places, kind: Kind) -> None:
    folders = {
        "project": places.project(kind),
        "config": places.config / kind.folder,
        "home": places.user(kind),
    }
    for label, folder in folders.items():
        kind.write(folder, "shared")
        kind.write(folder, f"only-{label}")
    entries, warnings = places.discover(kind)
    assert [name for name, _path in entries] == [
        "only-project",
        "shared",
        "only-config",
        "only-home",
    ]
    assert dict(entries)["shared"] == kind.file_for(folders["project"], "shared")
    assert warnings == []


@pytest.mark.parametrize("kind", TRUST_GATED, ids=str)
def test_an_untrusted_projects_folder_is_left_out(places: Places, kind: Kind) -> None:
    kind.write(places.project(kind), "planted")
    broken = kind.write(places.project(kind), "broken", b"\xff")
    kind.write(places.user(kind), "home")
    assert places.names(kind, trusted=False) == (["home"], [])
    names, warnings = places.names(kind, trusted=True)
    assert names == ["planted", "home"]
    assert len(warnings) == 1 and str(broken) in warnings[0]
