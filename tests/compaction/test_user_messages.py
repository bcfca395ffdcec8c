"""Every message the user typed survives any compaction verbatim, within a budget scaled to the window."""

from __future__ import annotations

from agent.core.context_state import ContextLimits
from agent.core.events import CompactionFinished
from agent.core.messages import Message, user_text
from compaction.microcompact import MicrocompactConfig
from compaction.notes import NotesStore
from compaction.notes_writer import SessionNotes
from compaction.summary import SUMMARY_REQUEST_MARK
from compaction.user_messages import budget_for, collect, fit, for_summary, typed_text
from tests.compaction.manager_harness import Setup, summary_reply
from tests.compaction.test_notes import early_policy, is_notes, notes_reply
from tui.fake_api import text_reply

PROMPTS = [
    "Audit every module. Never touch tests/ without asking.",
    "Correction: FACT_3 is the important one, not FACT_2.",
    "Use tabs, not spaces, in anything you write.",
]


def test_only_typed_prompts_count_and_reminders_are_dropped() -> None:
    prompt = Message(
        "user",
        [
            {"type": "text", "text": "do it"},
            {"type": "text", "text": "<system-reminder>file changed</system-reminder>"},
        ],
    )
    assert typed_text(prompt) == "do it"
    assert typed_text(user_text("continue", kind="meta")) is None
    assert typed_text(Message("assistant", [{"type": "text", "text": "ok"}])) is None


def test_the_first_stays_and_the_oldest_after_it_are_trimmed_with_a_count() -> None:
    texts = ["the task", *[f"message {i} " + "x" * 400 for i in range(10)]]
    fitted = fit(texts, budget_tokens=400)  # 1,600 characters: the task and the newest three
    assert fitted.texts[0] == "the task" and fitted.texts[-1] == texts[-1]
    assert fitted.texts[1:] == texts[-3:] and fitted.omitted == 7
    block = fitted.render("/t/s.jsonl")
    assert block is not None
    assert "7 of them, after the first, are left out" in block and "/t/s.jsonl" in block
    assert all(f"<user-message>\n{text}\n</user-message>" in block for text in fitted.texts)


def test_a_message_over_the_budget_keeps_its_start_and_says_so() -> None:
    fitted = fit(["a" * 10_000], budget_tokens=500)
    (text,) = fitted.texts
    assert text.startswith("a" * 1_000) and "more characters of this message" in text
    assert len(text) <= 2_000


def test_messages_survive_compaction_after_compaction_with_the_trimmed_count() -> None:
    limits = ContextLimits(200_000, 64_000)
    assert budget_for(limits) == 9_000
    first = [user_text(PROMPTS[0]), user_text(PROMPTS[1])]
    block = for_summary(first, [], None, limits).render()
    summary = user_text(f"<summary>\nS\n</summary>\n\n{block}", kind="summary")
    later = [summary, user_text(PROMPTS[2])]
    texts, omitted = collect(later, [])
    assert texts == PROMPTS and omitted == 0
    kept = later[1:]  # a prompt the compaction keeps verbatim is not repeated
    assert collect(later, kept) == (PROMPTS[:2], 0)
    # The latest request has its own block: it is not listed twice.
    assert for_summary(later, [], PROMPTS[2], limits).texts == PROMPTS[:2]


async def run_three_prompts(setup: Setup) -> None:
    for prompt in PROMPTS:
        setup.api.add(*setup.read_script(2), text_reply("ok"))
        await setup.agent.submit(prompt)


def assert_every_prompt_in(text: str) -> None:
    for prompt in PROMPTS:
        assert prompt in text, prompt


async def test_every_prompt_verbatim_after_a_full_compaction(api, tmp_path) -> None:
    setup = Setup(api, tmp_path, window=200_000)
    await run_three_prompts(setup)
    api.add(text_reply("<summary>a paraphrase that names no prompt</summary>"))
    await setup.manager.compact(setup.agent)
    api.add(text_reply("next"))
    await setup.agent.submit("and now?")
    assert_every_prompt_in(api.requests[-1].all_text())
    # A second compaction still carries them, from the first one's summary message.
    api.add(text_reply("<summary>shorter still</summary>"))
    await setup.manager.compact(setup.agent)
    api.add(text_reply("again"))
    await setup.agent.submit("still there?")
    text = api.requests[-1].all_text()
    assert_every_prompt_in(text)
    assert "and now?" in text and api.errors == []


async def test_every_prompt_verbatim_after_a_partial_compaction(api, tmp_path) -> None:
    setup = Setup(api, tmp_path, window=200_000)
    await run_three_prompts(setup)
    api.add(text_reply("<summary>the older rounds, paraphrased</summary>"))
    record = await setup.manager.compact(setup.agent, partial="up_to", keep_rounds=1)
    assert record.method == "partial"
    api.add(text_reply("next"))
    await setup.agent.submit("and now?")
    text = api.requests[-1].all_text()
    assert_every_prompt_in(text)
    assert text.count(PROMPTS[0]) == 1  # listed once


async def test_every_prompt_verbatim_after_a_session_memory_compaction(api, tmp_path) -> None:
    notes = SessionNotes(NotesStore(tmp_path / "session"), policy=early_policy())
    setup = Setup(api, tmp_path, window=40_000, session_memory=notes)
    setup.manager.config = MicrocompactConfig(
        keep_recent_files=100, read_budget=1.0
    )  # leave it to compaction
    api.on(is_notes, notes_reply)
    api.on(lambda r: SUMMARY_REQUEST_MARK in r.last_user_text(), summary_reply)
    for prompt in PROMPTS:
        api.add(text_reply("ok"))
        await setup.agent.submit(prompt)
    api.add(*setup.read_script(12), text_reply("done"))
    await setup.agent.submit("Now read all of them.")
    methods = [e.record.method for e in setup.events if isinstance(e, CompactionFinished)]
    assert "session_memory" in methods
    text = api.requests[-1].all_text()
    assert_every_prompt_in(text)
    assert "Now read all of them." in text and api.errors == []
