"""The summary's words: prompt assembly, stripping the analysis, the replacement message."""

from __future__ import annotations

from agent.core.messages import Message, tool_result_block, user_text
from compaction.summary import (
    format_summary,
    has_summary_section,
    latest_user_request,
    strip_media,
    summary_message_text,
    summary_prompt,
)


def test_prompt_asks_for_nine_sections_and_appends_instructions() -> None:
    prompt = summary_prompt("keep the API notes")
    assert "Do not call any tool" in prompt and "<analysis>" in prompt and "<summary>" in prompt
    for number in range(1, 10):
        assert f"\n{number}. " in prompt
    assert prompt.endswith("keep the API notes")
    assert "newer messages" in summary_prompt(partial="up_to") and "RECENT" in summary_prompt(
        partial="from"
    )


def test_analysis_is_removed_and_summary_unwrapped() -> None:
    reply = "<analysis>thinking\nhard</analysis>\n\n<summary>\n1. Primary request: x\n\n\n\n2. y\n</summary>"
    assert format_summary(reply) == "1. Primary request: x\n\n2. y"
    assert format_summary("no tags at all") == "no tags at all"
    assert format_summary("<analysis>cut off before the summary") == ""


def test_an_unclosed_analysis_ends_where_the_summary_starts() -> None:
    assert format_summary("<analysis>x\n<summary>1. Primary request: y</summary>") == (
        "1. Primary request: y"
    )
    assert has_summary_section("<analysis>x\n<summary>1. y")
    assert not has_summary_section("<analysis>x <summary> </summary>")
    assert not has_summary_section("no tags at all")


def test_summary_message_names_transcript_and_quotes_the_request() -> None:
    text = summary_message_text(
        "S", transcript_path="/t/s.jsonl", latest_request="fix the bug", auto=True
    )
    assert "/t/s.jsonl" in text and "<user-request>\nfix the bug\n</user-request>" in text
    assert "Continue the work" in text
    assert "Continue the work" not in summary_message_text(
        "S", transcript_path=None, latest_request=None, auto=False
    )


def test_latest_request_skips_reminders_and_tool_results() -> None:
    prompt = Message(
        "user",
        [
            {"type": "text", "text": "do it"},
            {"type": "text", "text": "<system-reminder>x</system-reminder>"},
        ],
    )
    messages = [
        prompt,
        Message("assistant", [{"type": "text", "text": "ok"}]),
        user_text("note", kind="meta"),
    ]
    assert latest_user_request(messages) == "do it"


def test_media_become_placeholders_everywhere() -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
    }
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "x"},
    }
    messages = [
        Message("user", [image, {"type": "text", "text": "look"}]),
        Message(
            "user",
            [tool_result_block("t1", [image, {"type": "text", "text": "caption"}]), document],
        ),
    ]
    stripped = strip_media(messages)
    assert stripped[0].content[0] == {"type": "text", "text": "[image]"}
    assert stripped[1].content[0]["content"][0] == {"type": "text", "text": "[image]"}
    assert stripped[1].content[1] == {"type": "text", "text": "[document]"}
    assert messages[0].content[0] is image  # the conversation itself is untouched


def test_every_summary_prompt_carries_the_request_mark() -> None:
    from compaction.summary import SUMMARY_REQUEST_MARK

    for partial in (None, "from", "up_to"):
        assert SUMMARY_REQUEST_MARK in summary_prompt(partial=partial)
