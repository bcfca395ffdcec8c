"""The read state after compactions, through `ccx -p`: an Edit whose Read is still in the context
is never refused; one whose Read was summarized away is refused, naming the file, and the model
was told which files once."""

from __future__ import annotations

import itertools
from typing import Any

from compaction.notes_writer import NOTES_REQUEST_MARK
from compaction.summary import SUMMARY_REQUEST_MARK
from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply

NOTICE = "Earlier reads of these files were summarized away"
TALK = "Reading the next module and noting what it holds before changing it. " * 60


def script_compactions(ccx: Ccx) -> None:
    # Folding (compaction/fold.py) would keep these one-prompt tool loops under the window
    # with no compaction at all; what is tested here is the read state across compactions.
    ccx.env["CCX_FOLD_ROUNDS"] = "0"
    ccx.api.on(
        lambda r: NOTES_REQUEST_MARK in r.last_user_text(),
        lambda r: text_reply("<summary>1. Goal: annotate every module.</summary>"),
    )
    ccx.api.on(
        lambda r: SUMMARY_REQUEST_MARK in r.last_user_text(),
        lambda r: text_reply("<summary>Annotating modules one by one.</summary>"),
    )


def modules(ccx: Ccx, count: int, lines: int = 300) -> list[str]:
    names = [f"mod{i:02d}.py" for i in range(count)]
    for i, name in enumerate(names):
        (ccx.repo / name).write_text(f"LIMIT_{i} = {i}\n" + "value = 1\n" * lines)
    return names


def read(name: str) -> Any:
    return tool_reply(("Read", {"file_path": name}), text=TALK)


def edit(name: str, index: int, text: str | None = TALK) -> Any:
    return tool_reply(("Edit", {"file_path": name, "old_string": f"LIMIT_{index} =", "new_string": f"LIMIT_{index}: int ="}), text=text)  # fmt: skip


def agent_requests(ccx: Ccx) -> list[Any]:
    marks = (NOTES_REQUEST_MARK, SUMMARY_REQUEST_MARK)
    return [r for r in ccx.api.requests if not any(m in r.last_user_text() for m in marks)]


def refused_edits(ccx: Ccx) -> dict[str, tuple[str, bool]]:
    """Each refused Edit (by id): its result text, and whether a Read of its file that
    returned content was in the first request that carried the refusal."""
    refused: dict[str, tuple[str, bool]] = {}
    for request in agent_requests(ccx):
        blocks = [b for m in request.messages for b in m["content"] if isinstance(b, dict)]
        uses = {b["id"]: b for b in blocks if b["type"] == "tool_use"}
        results = {b["tool_use_id"]: b for b in blocks if b["type"] == "tool_result"}
        for tool_id, result in results.items():
            use = uses.get(tool_id)
            if use is None or use["name"] != "Edit" or not result.get("is_error"):
                continue
            path = use["input"]["file_path"]
            read_there = any(
                u["name"] == "Read"
                and u["input"]["file_path"] == path
                and not results.get(u["id"], {"is_error": True}).get("is_error")
                for u in uses.values()
            )
            refused.setdefault(tool_id, (str(result["content"]), read_there))
    return refused


def compacted_between_read_and_edit(ccx: Ccx) -> int:
    """How many compactions came right after a Read, so that its Edit followed them."""
    count = 0
    requests = agent_requests(ccx)
    for before, after in itertools.pairwise(requests):
        if len(after.messages) > len(before.messages):
            continue  # the same conversation, grown: no compaction between
        uses = [b for m in after.messages for b in m["content"] if b.get("type") == "tool_use"]
        count += bool(uses) and uses[-1]["name"] == "Read"
    return count


def test_an_edit_after_a_session_memory_compaction_that_kept_its_read_succeeds(ccx: Ccx) -> None:
    names = modules(ccx, 14)
    script_compactions(ccx)
    steps = [step for i, name in enumerate(names) for step in (read(name), edit(name, i))]
    ccx.api.add(*steps, text_reply("all annotated"))
    run = ccx.run("-p", "Annotate every module's limit.", "--output-format", "json",
                  "--autocompact", "40000", "--tools", "Read,Edit", "--permission-mode", "acceptEdits")  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = run.json()
    assert result["result"] == "all annotated"
    assert "session_memory" in [c["method"] for c in result["compactions"]]
    assert compacted_between_read_and_edit(ccx) >= 1  # the case this is about happened
    assert refused_edits(ccx) == {}
    for i, name in enumerate(names):
        assert f"LIMIT_{i}: int =" in (ccx.repo / name).read_text(), name
    assert ccx.api.errors == []


def test_many_read_then_edit_pairs_at_a_small_window_lose_no_edit(ccx: Ccx) -> None:
    names = modules(ccx, 36, lines=500)
    script_compactions(ccx)
    # The Edits say nothing, so the context crosses the threshold on a Read: the compaction
    # then comes between that Read and its Edit.
    steps = [step for i, name in enumerate(names) for step in (read(name), edit(name, i, None))]
    ccx.api.add(*steps, text_reply("all annotated"))
    run = ccx.run("-p", "Annotate every module's limit.", "--output-format", "json",
                  "--autocompact", "45000", "--tools", "Read,Edit", "--permission-mode", "acceptEdits")  # fmt: skip
    assert run.returncode == 0, run.stderr
    compactions = run.json()["compactions"]
    assert len(compactions) >= 5, compactions
    assert [text for text, read_there in refused_edits(ccx).values() if read_there] == []
    assert compacted_between_read_and_edit(ccx) >= 3  # the case this is about happened
    edited = sum(f"LIMIT_{i}: int =" in (ccx.repo / n).read_text() for i, n in enumerate(names))
    assert edited == len(names)
    assert ccx.api.errors == []


def test_an_edit_whose_read_a_full_compaction_summarized_away_is_refused_naming_it(
    ccx: Ccx,
) -> None:
    ccx.env["CCX_SESSION_MEMORY"] = "0"  # a full summary: no messages kept
    names = modules(ccx, 10, lines=600)
    script_compactions(ccx)
    target = names[0]
    steps = [read(name) for name in names]
    ccx.api.add(*steps, edit(target, 0), read(target), edit(target, 0), text_reply("done"))
    run = ccx.run("-p", "Read the modules, then annotate the first.", "--output-format", "json",
                  "--autocompact", "30000", "--tools", "Read,Edit", "--permission-mode", "acceptEdits")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "summary" in [c["method"] for c in run.json()["compactions"]]
    (refusal,) = refused_edits(ccx).values()
    text, read_there = refusal
    assert not read_there  # its Read was summarized away
    assert str(ccx.repo / target) in text and "summarized away" in text
    # After a new Read, the same Edit goes through.
    assert "LIMIT_0: int =" in (ccx.repo / target).read_text()
    # The model was told which files before it tried, once: the line is in the request that
    # carried the refusal (and every one since the compaction), one time, naming the file.
    carrying = next(r for r in agent_requests(ccx) if text in r.all_text())
    assert carrying.all_text().count(NOTICE) == 1
    notice = next(line for line in carrying.all_text().splitlines() if NOTICE in line)
    assert str(ccx.repo / target) in notice
    assert ccx.api.errors == []


def test_a_resumed_session_follows_the_same_rule(ccx: Ccx) -> None:
    ccx.env["CCX_SESSION_MEMORY"] = "0"
    names = modules(ccx, 10, lines=600)
    script_compactions(ccx)
    ccx.api.add(*[read(name) for name in names], text_reply("read them"))
    flags = ("--output-format", "json", "--autocompact", "30000", "--tools", "Read,Edit",
             "--permission-mode", "acceptEdits")  # fmt: skip
    first = ccx.run("-p", "Read the modules.", *flags)
    assert first.returncode == 0, first.stderr
    assert "summary" in [c["method"] for c in first.json()["compactions"]]
    last = len(names) - 1  # read after the compaction
    ccx.api.add(edit(names[0], 0), edit(names[last], last), text_reply("tried both"))
    second = ccx.run("-c", "-p", "Annotate the first and the last.", *flags)
    assert second.returncode == 0, second.stderr
    refused = [text for text, _read_there in refused_edits(ccx).values()]
    assert len(refused) == 1 and str(ccx.repo / names[0]) in refused[0], refused
    assert "summarized away" in refused[0]
    assert f"LIMIT_{last}: int =" in (ccx.repo / names[last]).read_text()
    assert "LIMIT_0 = 0" in (ccx.repo / names[0]).read_text()
    # /undo-compact in a later run brings the read back with the conversation, so the same
    # Edit now goes through after another resume (in a window the conversation fits in, or
    # it would be compacted again at once).
    undo = ccx.run("-c", "-p", "/undo-compact", "--output-format", "json")
    assert undo.returncode == 0 and "Restored" in undo.json()["result"], undo.stdout
    ccx.api.add(edit(names[0], 0), text_reply("annotated"))
    third = ccx.run("-c", "-p", "Annotate the first again.", *flags[:2], *flags[4:])
    assert third.returncode == 0, third.stderr
    assert len(refused_edits(ccx)) == 1
    assert "LIMIT_0: int =" in (ccx.repo / names[0]).read_text()
    assert ccx.api.errors == []
