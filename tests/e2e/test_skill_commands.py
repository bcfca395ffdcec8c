"""A skill typed as a slash command (`/pdf fill the form`), as Claude Code users type them."""

from __future__ import annotations

import json

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply


def _skill(ccx: Ccx, name: str, body: str) -> None:
    folder = ccx.config / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} work\n---\n{body}")


def test_a_skill_runs_as_a_slash_command_with_its_arguments(ccx: Ccx) -> None:
    _skill(ccx, "pdf", "Fill the PDF with $ARGUMENTS using forms.py.\n")
    _skill(ccx, "help", "A skill named like a built-in command never runs as one.\n")
    ccx.api.add(text_reply("Filled."))

    run = ccx.run("-p", "/pdf the tax form", "--output-format", "json")

    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Filled."
    (request,) = ccx.api.requests
    sent = json.dumps(request.messages[-1])
    assert "/pdf the tax form" in sent
    assert "skill is now loaded" in sent and "Fill the PDF with the tax form" in sent
    assert "Arguments: the tax form" in sent


def test_an_unknown_name_is_still_an_unknown_command(ccx: Ccx) -> None:
    _skill(ccx, "pdf", "Fill it.\n")
    run = ccx.run("-p", "/pfd oops")
    assert ccx.api.requests == []
    assert "Unknown command" in run.stdout + run.stderr
