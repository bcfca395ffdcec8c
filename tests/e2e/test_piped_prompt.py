"""`echo text | ccx`: stdin piped in without -p is one prompt run, as Claude Code 2.1.328 does
it (checked against it: the whole of stdin is the prompt, the answer alone is printed, and an
argument given too comes first with stdin on the next line). The trust rule for an untrusted
folder is in tests/e2e/test_hostile_trust.py; `--plain` keeps the line-by-line REPL
(tests/e2e/test_interactive_entry.py)."""

from __future__ import annotations

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply


def test_piped_stdin_is_the_prompt_and_stdout_is_the_answer_alone(ccx: Ccx) -> None:
    ccx.api.add(text_reply("Hello from the fake model."))
    run = ccx.run(stdin="first line\nsecond line\n\n")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "Hello from the fake model.\n"  # no banner, prompt echo, meter or hint
    assert run.stderr == ""
    (request,) = ccx.api.requests  # the lines are one prompt, not two turns
    assert request.last_user_text().endswith("first line\nsecond line")
    assert len(ccx.transcripts()) == 1  # a session like any other: -c picks it up


def test_a_piped_run_can_be_continued(ccx: Ccx) -> None:
    ccx.api.add(text_reply("One."), text_reply("Two."))
    assert ccx.run(stdin="remember the word kiwi\n").stdout == "One.\n"
    again = ccx.run("-c", stdin="what was the word?\n")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "Two.\n"
    assert "remember the word kiwi" in str(ccx.api.requests[1].body["messages"])


def test_an_argument_comes_first_and_stdin_follows(ccx: Ccx) -> None:
    ccx.api.add(text_reply("A."), text_reply("B."))
    for args in (["summarise this"], ["-p", "summarise this"]):
        run = ccx.run(*args, stdin="some context\n")
        assert run.returncode == 0, run.stderr
        assert run.stdout in ("A.\n", "B.\n")
    for request in ccx.api.requests:
        assert request.last_user_text().endswith("summarise this\nsome context")


def test_piped_json_output_is_one_result(ccx: Ccx) -> None:
    ccx.api.add(text_reply("Fine."))
    run = ccx.run("--output-format", "json", stdin="how are you?")
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Fine." and run.json()["is_error"] is False


def test_empty_stdin_and_no_prompt_is_a_clear_error(ccx: Ccx) -> None:
    run = ccx.run(stdin="")
    assert run.returncode == 2
    assert "gave no prompt" in run.stderr and "--plain" in run.stderr
    assert run.stdout == ""
    assert ccx.api.requests == [] and ccx.transcripts() == []
    blank = ccx.run(stdin="   \n\t\n")
    assert blank.returncode == 2 and ccx.api.requests == []


def test_plain_keeps_the_line_by_line_repl(ccx: Ccx) -> None:
    ccx.api.add(text_reply("First."), text_reply("Second."))
    run = ccx.run("--plain", stdin="one\ntwo\n")
    assert run.returncode == 0, run.stderr
    assert "> one" in run.stdout and "> two" in run.stdout
    assert "First." in run.stdout and "Second." in run.stdout
    assert len(ccx.api.requests) == 2
