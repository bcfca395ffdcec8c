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


def test_setting_sources_limit_commands_skills_and_agents_too(ccx: Ccx) -> None:
    """--setting-sources names whose files are read at all: without ``project`` the
    project's commands and skills are unknown; without ``user`` the user's are."""
    _skill(ccx, "mine", "The user's skill.\n")
    project_skill = ccx.repo / ".claude" / "skills" / "theirs"
    project_skill.mkdir(parents=True)
    (project_skill / "SKILL.md").write_text("---\nname: theirs\ndescription: x\n---\nProject's.\n")
    (ccx.repo / ".claude" / "commands").mkdir()
    (ccx.repo / ".claude" / "commands" / "deploy.md").write_text("Deploy it.\n")

    for line in ("/theirs go", "/deploy now"):
        run = ccx.run("-p", line, "--setting-sources", "user")
        assert "Unknown command" in run.stdout + run.stderr, line
    run = ccx.run("-p", "/mine go", "--setting-sources", "")
    assert "Unknown command" in run.stdout + run.stderr
    assert ccx.api.requests == []

    ccx.api.add(text_reply("ok"))
    run = ccx.run("-p", "/theirs go", "--setting-sources", "project")
    assert run.returncode == 0 and "Project's." in json.dumps(ccx.api.requests[-1].messages)
