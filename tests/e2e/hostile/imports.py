"""CLAUDE.md imports that reach for a secret, one route each, for the e2e and app tests.

Each route plants the same secret where a project's CLAUDE.md must not reach it (outside
the project by ``..``, ``~``, an absolute path, a symlinked file or directory, or under a
Read deny rule), and says how the same import becomes legitimate (an added directory, or
no deny rule), so a test can show the route is live before showing it is closed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.hostile.repo import write_file

SECRET = "SECRET-0f3a9c"
ROUTES = ("dotdot", "dotdot-deep", "home", "absolute", "symlink", "symlinked-dir", "denied")


@dataclass(frozen=True)
class PlantedImport:
    reference: str  # as CLAUDE.md writes it after the @
    live_args: list[str]  # ccx arguments that make the same file readable
    denied: bool  # refused by a deny rule rather than for being outside

    @property
    def notice(self) -> str:
        why = "a Read deny rule covers it" if self.denied else "outside the project"
        return f"CLAUDE.md imports {self.reference}: not read ({why})"


def plant_import(repo: Path, home: Path, route: str) -> PlantedImport:
    """The secret, and ``repo``'s CLAUDE.md importing it by ``route``; the repo's parent
    folder holds ``outside/``."""
    outside = repo.parent / "outside"
    write_file(outside / "secret.txt", f"OUTSIDE={SECRET}\n")
    write_file(home / ".ssh" / "id_rsa", f"-----KEY {SECRET}-----\n")
    write_file(repo / ".env", f"API_KEY={SECRET}\n")
    reference, live = {
        "dotdot": ("../outside/secret.txt", ["--add-dir", str(outside)]),
        "dotdot-deep": ("src/../../outside/secret.txt", ["--add-dir", str(outside)]),
        "home": ("~/.ssh/id_rsa", ["--add-dir", str(home / ".ssh")]),
        "absolute": (str(outside / "secret.txt"), ["--add-dir", str(outside)]),
        "symlink": ("notes.md", ["--add-dir", str(outside)]),
        "symlinked-dir": ("shared/secret.txt", ["--add-dir", str(outside)]),
        "denied": (".env", []),
    }[route]
    if route == "symlink":
        (repo / "notes.md").symlink_to(outside / "secret.txt")
    if route == "symlinked-dir":
        (repo / "shared").symlink_to(outside)
    if route == "denied":
        rules = {"permissions": {"deny": ["Read(./.env)"]}}
        write_file(repo / ".claude" / "settings.json", json.dumps(rules))
    write_file(repo / "CLAUDE.md", f"Project rules: be brief.\n@{reference}\n")
    return PlantedImport(reference, live, route == "denied")
