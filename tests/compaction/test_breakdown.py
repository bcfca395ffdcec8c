"""/context: where the tokens go, scaled to the counter's figure, and its text rendering."""

from __future__ import annotations

from agent.core.messages import Message, tool_result_block, user_text
from compaction.breakdown import context_breakdown, render_breakdown
from compaction.thresholds import ContextLimits

LIMITS = ContextLimits(window=200_000, max_output=64_000)
MEMORY = "# CLAUDE.md\n" + "always run the tests\n" * 20
SKILLS = "- pdf: read and fill PDF forms\n" * 10


def conversation() -> list[Message]:
    return [
        user_text("x" * 4_000),
        Message(
            role="assistant",
            content=[
                {"type": "text", "text": "reading"},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}},
                {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}},
                {"type": "tool_use", "id": "t3", "name": "Read", "input": {"file_path": "b"}},
            ],
            kind="response",
            api_id="m1",
        ),
        Message(
            role="user",
            content=[
                tool_result_block("t1", "r" * 8_000),
                tool_result_block("t2", "b" * 400),
                tool_result_block("t3", "r" * 4_000),
            ],
            kind="tool_result",
        ),
    ]


def build(used: int, **kw):
    system = [
        {"type": "text", "text": "You are ccx." * 100},
        {"type": "text", "text": MEMORY + SKILLS},
    ]
    tools = [{"name": "Read", "description": "d" * 2_000, "input_schema": {"type": "object"}}]
    return context_breakdown(
        system_blocks=system,
        memory_texts=[MEMORY],
        skills_text=SKILLS,
        tools_api=tools,
        messages=conversation(),
        limits=LIMITS,
        used=used,
        **kw,
    )


def test_categories_in_order_and_scaled_to_used() -> None:
    b = build(used=50_000)
    names = [c.name for c in b.categories]
    assert names == [
        "System prompt",
        "Tools",
        "Memory files",
        "Skills",
        "Messages",
        "Tool results: Read",
        "Tool results: Bash",
        "Free space",
        "Auto-compact buffer",
    ]
    assert sum(c.tokens for c in b.categories[:-2]) == 50_000
    assert b.tokens("Auto-compact buffer") == 33_000
    assert b.tokens("Free space") == 200_000 - 50_000 - 33_000


def test_proportions_follow_the_estimates() -> None:
    b = build(used=50_000)
    # Read results are 3,000 raw tokens, Bash 100: the ratio survives scaling
    assert abs(b.tokens("Tool results: Read") / b.tokens("Tool results: Bash") - 30) < 0.1
    # memory and skills found inside the system blocks are not counted twice
    assert b.tokens("System prompt") < b.tokens("Messages")
    unscaled = build(used=0)
    assert unscaled.tokens("System prompt") == round(len("You are ccx." * 100) / 4)


def test_free_space_is_never_negative() -> None:
    b = build(used=190_000)
    assert b.tokens("Free space") == 0


def test_render() -> None:
    b = build(used=50_000, keep_preview={"files": "a.py, b.py", "skills": "pdf"})
    text = render_breakdown(b, width=20)
    lines = text.splitlines()
    read_line = next(line for line in lines if line.startswith("Tool results: Read"))
    assert "█" in read_line and "░" in read_line and "%" in read_line
    assert sum(line.count("█") + line.count("░") for line in lines[:9]) == 9 * 20
    assert "50K / 200K (25.0%) — auto-compact at 167K" in text
    assert "A compaction now would keep:" in text
    assert "  files: a.py, b.py" in text
    assert "would keep" not in render_breakdown(build(used=50_000))


def test_to_json() -> None:
    data = build(used=50_000).to_json()
    assert data["used"] == 50_000 and data["auto_compact_at"] == 167_000
    assert data["categories"][0]["name"] == "System prompt"


def test_orphan_results_are_counted_under_unknown() -> None:
    messages = [Message(role="user", content=[tool_result_block("zz", "q" * 400)])]
    b = context_breakdown(
        system_blocks=[],
        memory_texts=[],
        skills_text="",
        tools_api=[],
        messages=messages,
        limits=LIMITS,
        used=1_000,
    )
    assert b.tokens("Tool results: unknown") == 1_000
