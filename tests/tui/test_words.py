"""The words for what ccx does on its own: clearing and retries read as plain sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.events import SERVER_CLEARING, Microcompacted
from tui.words import clearing_words, retry_cause, retry_words


def test_clearing_says_what_was_freed_and_why() -> None:
    assert clearing_words(Microcompacted("pressure", 3, 2_542)) == (
        "Cleared 3 old tool results, freed 2.5K tokens (context was near the limit)"
    )
    assert clearing_words(Microcompacted("time", 1, 900)).startswith(
        "Cleared 1 old tool result, freed 900 tokens (the prompt cache had expired"
    )
    assert clearing_words(Microcompacted("some new reason", 2, 10)).endswith("(some new reason)")
    assert clearing_words(Microcompacted(SERVER_CLEARING, 2, 34_000)).startswith("The API clears 2")


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        ("529 overloaded_error", "the API is overloaded (529)"),
        ("429 rate_limit_error", "rate limited (429)"),
        ("418 teapot_error", "teapot error (418)"),
        ("connection reset by peer", "connection reset by peer"),
    ],
)
def test_a_retry_names_its_cause(reason: str, words: str) -> None:
    assert retry_cause(reason) == words


def test_a_retry_counts_down() -> None:
    assert retry_words(2, 10, "529 overloaded_error", 8.6) == (
        "The API is overloaded (529); retrying in 9s (attempt 2 of 10)"
    )
    assert "retrying in 0s" in retry_words(2, 10, "500", -1)


def test_paths_inside_the_project_read_relative(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tui.words import relative

    text = f"restored files: {tmp_path}/src/app.py, /elsewhere/x.py"
    assert relative(text, tmp_path) == "restored files: src/app.py, /elsewhere/x.py"
    assert relative(text, None) == text
    assert relative("./a", Path(".")) == "./a"  # only an absolute project folder is cut
