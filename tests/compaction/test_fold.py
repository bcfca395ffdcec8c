"""Folding: old rounds whose results were cleared leave the prompt, with one note per run."""

from __future__ import annotations

from typing import Any

from agent.core.events import Microcompacted
from agent.core.invariants import find_violations
from agent.core.messages import Message, tool_result_block, user_text
from compaction.fold import FOLD_PREFIX, Fold, fold_rounds, remap
from compaction.markers import CLEARED_PREFIX
from compaction.microcompact import MicrocompactConfig
from compaction.tokens import estimate_block, estimate_message
from tests.compaction.test_thinking import final, main_requests, thinking_reads, thinking_setup
from tests.thinking_rules import violations

OLD = f"{CLEARED_PREFIX}: old output.]"
READ_MARKER = f"{CLEARED_PREFIX}: this Read (40 lines); Read the file again for its current text.]"
BIG = "line of output\n" * 400


def round_(
    tool_id: str, name: str, tool_input: dict[str, Any], result: str, text: str | None = None
) -> list[Message]:
    content: list[Any] = [{"type": "text", "text": text}] if text else []
    content.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
    return [
        Message("assistant", content, kind="response", api_id=f"msg_{tool_id}"),
        Message("user", [tool_result_block(tool_id, result)], kind="tool_result"),
    ]


def fold(messages: list[Message], start: int, end: int, base: str | None = "/repo"):
    return fold_rounds(
        messages,
        start,
        end,
        estimate_message=estimate_message,
        estimate_block=estimate_block,
        min_tokens=50,
        base=base,
    )


def session() -> list[Message]:
    return [
        user_text("fix the parser"),  # 0
        *round_("t0", "Bash", {"command": "make"}, OLD, text="Building first."),  # 1, 2
        *round_("t1", "Read", {"file_path": "/repo/a.py"}, READ_MARKER),  # 3, 4
        *round_("t2", "Edit", {"file_path": "/repo/a.py"}, f"{CLEARED_PREFIX}: succeeded.]"),
        *round_("t3", "Bash", {"command": "make test"}, BIG),  # 7, 8: not cleared
        *round_("t4", "Grep", {"pattern": "x"}, "2 matches"),  # 9, 10: too small to clear
        *round_("t5", "Bash", {"command": "git status"}, "clean"),  # 11, 12: the last round
    ]


def texts(message: Message) -> list[str]:
    return [b["text"] for b in message.content if b["type"] == "text"]


def test_cleared_rounds_fold_into_a_note_on_the_results_before_them() -> None:
    messages = session()
    folded = fold(messages, 0, 10)
    out = folded.messages
    assert [m.role for m in out] == ["user", *["assistant", "user"] * 3]
    assert find_violations(out) == []  # every kept call keeps its result
    # The first round stays: a note never goes on what the user typed.
    assert out[:2] == messages[:2] and texts(out[0]) == ["fix the parser"]
    assert texts(out[2]) == [
        f"{FOLD_PREFIX}2 earlier calls (Edit 1, Read 1) and your words beside them; "
        "their results had been cleared. Edited: a.py.]"
    ]
    assert out[3] is messages[7] and texts(out[4])[-1].startswith(f"{FOLD_PREFIX}1 earlier call ")
    assert out[5:] == messages[11:]  # the last round never folds
    assert folded.rounds == 3
    assert folded.tokens == sum(map(estimate_message, messages)) - sum(map(estimate_message, out))
    assert folded.moved[5] == 2 and folded.moved[7] == 3 and folded.moved[10] == 4
    assert remap((0, 4, 8, 10), folded.moved) == (0, 2, 4)  # a folded anchor: the note's message
    assert messages[2].content == [tool_result_block("t0", OLD)]  # copies only


def test_what_never_folds() -> None:
    thinking = {"type": "thinking", "thinking": "hm", "signature": "s"}
    saved = f"{CLEARED_PREFIX}: output (400 lines). Saved in full at /s/t.txt; Read or Grep it.]"
    messages = [
        user_text("go"),
        *round_("t_", "Bash", {"command": "make"}, BIG),  # its results take the note
        *round_("t0", "Bash", {"command": "a"}, OLD),
        *round_("t1", "Bash", {"command": "b"}, saved),  # the marker points at a saved file
        *round_("t2", "Read", {"file_path": "/repo/tiny.py"}, "x = 1"),  # a small file's text
        *round_("t3", "Bash", {"command": "c"}, OLD),
        *round_("t4", "Bash", {"command": "d"}, OLD),
        *round_("t5", "Bash", {"command": "e"}, OLD),
    ]
    messages[9].content.insert(0, thinking)  # t3's response still holds its thinking
    messages[12].content.append({"type": "text", "text": "the user, meanwhile"})  # t4's answer
    assert fold(messages, 0, len(messages) - 1).rounds == 1  # t0 only
    kept = fold_rounds(
        messages,
        0,
        len(messages) - 1,
        estimate_message=estimate_message,
        estimate_block=estimate_block,
        min_tokens=50,
        keep=frozenset({messages[4].uuid}),  # where session notes end, say
    )
    assert kept.rounds == 0 and kept.messages is messages
    assert fold(messages, 3, len(messages) - 1).rounds == 0  # its note would go before start
    assert fold(messages, 0, 3).rounds == 0  # its results are after the newest cleared one


def test_a_later_fold_adds_to_the_note_already_there() -> None:
    messages = session()
    first = fold(messages, 0, 10).messages
    later = [
        *first[:3],  # the prompt, t0's round with the note
        *round_("t6", "Write", {"file_path": "/repo/b.py"}, OLD),
        *round_("t7", "Edit", {"file_path": "/repo/a.py"}, OLD),
        *round_("t8", "Bash", {"command": "make"}, "ok"),
    ]
    out = fold(later, 2, 6).messages
    assert len(out) == 5
    note = Fold.parse(texts(out[2])[-1])
    assert note is not None and sum(note.calls.values()) == 4
    assert note.calls == {"Edit": 2, "Read": 1, "Write": 1} and note.edited == ["a.py", "b.py"]
    assert len([t for t in texts(out[2]) if t.startswith(FOLD_PREFIX)]) == 1
    outside = fold(session(), 0, 10, base="/elsewhere").messages
    assert texts(outside[2])[-1].endswith("Edited: /repo/a.py.]")


async def test_a_session_with_thinking_folds_what_it_cleared_and_sends_nothing_refused(
    api, tmp_path
) -> None:
    setup = thinking_setup(api, tmp_path, window=200_000)
    # Every gap cold: each request clears all it may, and folds the rounds that leaves.
    setup.manager.config = MicrocompactConfig(cache_ttl_s=0.0, keep_recent_files=1)
    api.add(*thinking_reads(setup, 8), final(8))
    outcome = await setup.agent.submit("Read the modules.")
    assert outcome.result == "done" and api.errors == []
    assert violations(api.requests) == []  # the loop's thought goes back, nothing is refused
    last = main_requests(api)[-1].body
    notes = [
        b["text"]
        for m in last["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "text" and b["text"].startswith(FOLD_PREFIX)
    ]
    assert notes == [
        f"{FOLD_PREFIX}6 earlier calls (Read 6) and your words beside them; "
        "their results had been cleared.]"
    ]
    sent = [
        b["input"]["file_path"]
        for m in last["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    # the first round (after the prompt, which takes no note) and the read kept in view
    assert [p.rsplit("/", 1)[-1] for p in sent] == ["m00.py", "m07.py"]
    assert last["messages"][0]["content"][0]["text"] == "Read the modules."
    assert any(isinstance(e, Microcompacted) for e in setup.events)
    assert len(setup.agent.messages) == 6  # the prompt, two rounds, the final reply
