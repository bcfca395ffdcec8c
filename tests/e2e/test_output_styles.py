"""Output styles end to end: the setting, style files, /output-style, and what stream-json says."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply

PIRATE = (
    "---\nname: Pirate\ndescription: Talk like a pirate\n---\nAnswer like a pirate. ARR-MARKER.\n"
)


def system_text(request: Any) -> str:
    system = request.body["system"]
    return "\n".join(block["text"] for block in system)


def write_settings(ccx: Ccx, data: dict[str, Any]) -> None:
    path = ccx.repo / ".claude" / "settings.local.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_the_setting_puts_a_built_in_style_into_the_system_prompt(ccx: Ccx) -> None:
    ccx.api.add(text_reply("plain"), text_reply("styled"))
    assert ccx.run("-p", "hi").returncode == 0
    write_settings(ccx, {"outputStyle": "explanatory"})  # names match without regard to case
    run = ccx.run("-p", "hi", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0, run.stderr
    plain, styled = (system_text(r) for r in ccx.api.requests)
    assert "# Output Style" not in plain
    assert "# Output Style: Explanatory" in styled and "Insight" in styled
    # the first, fixed block is the same: its cache entry is shared
    assert ccx.api.requests[0].body["system"][0] == ccx.api.requests[1].body["system"][0]
    (init,) = [e for e in run.events() if e.get("subtype") == "init"]
    assert init["output_style"] == "Explanatory"


def test_a_style_file_and_the_output_style_command(ccx: Ccx) -> None:
    styles = ccx.repo / ".claude" / "output-styles"
    styles.mkdir(parents=True)
    (styles / "pirate.md").write_text(PIRATE)
    (styles / "broken.md").write_bytes(b"\xff not text")

    listing = ccx.run("-p", "/output-style")
    assert listing.returncode == 0, listing.stderr
    assert "Output style: default" in listing.stdout and "Pirate (project)" in listing.stdout
    assert "broken.md is not UTF-8" in listing.stderr

    switched = ccx.run("-p", "/output-style pirate")
    assert switched.returncode == 0 and "Output style set to Pirate" in switched.stdout
    saved = json.loads((ccx.repo / ".claude" / "settings.local.json").read_text())
    assert saved["outputStyle"] == "Pirate"

    unknown = ccx.run("-p", "/output-style nope", "--output-format", "json")
    assert (
        unknown.returncode == 1
        and "Styles: default, Explanatory, Learning, Pirate" in (unknown.json()["result"])
    )

    ccx.api.add(text_reply("Arr."))
    assert ccx.run("-p", "hello").returncode == 0
    assert "# Output Style: Pirate\n" in system_text(ccx.api.requests[-1])
    assert "ARR-MARKER" in system_text(ccx.api.requests[-1])


def test_initialize_reports_the_styles_and_the_commands_hints(ccx: Ccx) -> None:
    styles = ccx.repo / ".claude" / "output-styles"
    styles.mkdir(parents=True)
    (styles / "pirate.md").write_text(PIRATE)
    write_settings(ccx, {"outputStyle": "Pirate"})
    commands = ccx.repo / ".claude" / "commands"
    commands.mkdir()
    (commands / "fix.md").write_text(
        "---\nargument-hint: [issue]\ndescription: Fix it\n---\nFix $0\n"
    )
    request = {"subtype": "initialize", "hooks": None}
    stdin = json.dumps({"type": "control_request", "request_id": "r1", "request": request})
    run = ccx.run(
        "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
        stdin=stdin + "\n",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (response,) = [e["response"] for e in run.events() if e["type"] == "control_response"]
    payload = response["response"]
    assert payload["output_style"] == "Pirate"
    assert payload["available_output_styles"] == ["default", "Explanatory", "Learning", "Pirate"]
    (fix,) = [c for c in payload["commands"] if c["name"] == "fix"]
    assert fix == {"name": "fix", "description": "Fix it (project)", "argumentHint": "[issue]"}
