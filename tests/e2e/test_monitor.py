"""Monitor through the `ccx` command: a -p run waits for the watch, and the model gets the
command's stdout lines as events (stderr left in the file) and the end of the watch."""

from __future__ import annotations

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply


def test_events_reach_the_model_after_the_turn(ccx: Ccx) -> None:
    command = "echo step-one; echo noise >&2; echo step-two; sleep 1; exit 0"  # ends after the turn
    ccx.api.add(
        tool_reply(("ToolSearch", {"query": "select:Monitor"})),  # Monitor is deferred
        tool_reply(
            ("Monitor", {"description": "build steps", "command": command, "timeout_ms": 60000})
        ),
        text_reply("Watching the build."),
        *[text_reply("Both steps passed.")] * 2,  # the lines and the end: one turn or two
    )
    run = ccx.run("-p", "watch the build", "--output-format", "json",
                  "--allowedTools", "Monitor")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Both steps passed."
    first, loaded, second, *later = ccx.api.requests
    assert "Monitor" not in [tool["name"] for tool in first.body["tools"]]
    assert "Monitor" in [tool["name"] for tool in loaded.body["tools"]]
    assert "Monitor started as job m" in second.last_user_text()
    # A fast command's lines may already ride with the Monitor's result, or come after the turn
    told = "\n".join(request.last_user_text() for request in [second, *later])
    assert 'description="build steps"' in told
    assert "step-one\nstep-two" in told and "noise" not in told
    assert "exited with code 0 after 2 events" in told
    assert ccx.api.errors == []


def test_a_command_that_changes_things_is_not_run_unasked(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("Monitor", {"description": "x", "command": "touch made.txt; echo hi"})),
        text_reply("ok"),
    )
    run = ccx.run("-p", "watch", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert not (ccx.repo / "made.txt").exists()
    assert len(ccx.api.requests) == 2
