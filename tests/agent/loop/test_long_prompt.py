"""A user message too long to send whole: saved to a file, sent as a pointer with its head and tail,
and the session answers the next message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from agent.core.events import Event
from agent.loop.agent import Agent, AgentConfig
from agent.loop.long_prompt import (
    HEAD_CHARS,
    MAX_BYTES,
    TAIL_CHARS,
    PromptLimit,
    PromptNotSaved,
    fit_prompt,
)
from agent.loop.tool_runner import ToolRunner
from agent.model.catalog import ModelLimits
from agent.model.client import ModelClient, RetryPolicy
from agent.permissions.gate import PermissionGate
from tools.base import ToolContext
from tools.file_state import FileStateCache
from tools.registry import default_tools
from tui.fake_api import FakeApi, text_reply

SMALL = PromptLimit(tokens=1_000)  # 4,000 characters


def numbered(lines: int, width: int = 30) -> str:
    return "".join(f"line {i:>{width - 6}}\n" for i in range(1, lines + 1))


def saved_files(folder: Path) -> list[Path]:
    return sorted((folder / "user-messages").glob("*.txt"))


def test_a_message_within_the_limit_is_sent_as_it_is(tmp_path: Path) -> None:
    content = [{"type": "text", "text": "x" * 3_999}]
    assert fit_prompt(content, SMALL, tmp_path, "m1") is content
    assert not (tmp_path / "user-messages").exists()


def test_the_limit_is_a_quarter_of_the_effective_window() -> None:
    assert PromptLimit.for_model(ModelLimits(200_000, 64_000)).tokens == 45_000
    assert PromptLimit.for_model(ModelLimits(1_000_000, 128_000)).tokens == 245_000
    assert PromptLimit.for_model(ModelLimits(1_000_000, 128_000)).max_bytes == MAX_BYTES


def test_the_limit_follows_a_smaller_compaction_window() -> None:
    """``--autocompact 200000`` on a 1M model: a quarter of 200K's effective window, not 1M's."""
    model = ModelLimits(1_000_000, 128_000)
    assert PromptLimit.for_model(model, 200_000).tokens == 45_000
    assert PromptLimit.for_model(model, 2_000_000).tokens == 245_000  # never above the model's
    assert PromptLimit.for_model(model, None).tokens == 245_000


def test_an_oversized_message_is_saved_whole_and_sent_as_a_pointer(tmp_path: Path) -> None:
    text = numbered(5_000)  # 150,000 characters
    (block,) = fit_prompt([{"type": "text", "text": text}], SMALL, tmp_path, "m1")
    (path,) = saved_files(tmp_path)
    assert path.name == "m1.txt" and path.read_text() == text
    sent = block["text"]
    assert len(sent) < HEAD_CHARS + TAIL_CHARS + 1_500
    assert str(path) in sent
    assert "150,000 bytes, 5,000 lines, about 37,500 tokens" in sent
    assert "Read that file in parts or Grep it" in sent
    first_line, last_line = text.split("\n")[0], text.split("\n")[-2]
    assert f"--- the beginning (line 1 to 266) ---\n{first_line}\n" in sent
    assert sent.endswith(f"\n{last_line}\n")
    # Whole lines on both sides of the gap; the gap's size is said.
    beginning = sent.split("---\n", 1)[1].split("\n--- ", 1)[0]
    assert beginning.endswith("\n".join(text[: len(beginning)].split("\n")[-1:]))
    assert text.startswith(beginning + "\n")
    assert "characters not shown ---" in sent and "--- the end (line " in sent


def test_the_byte_cap_counts_utf8_bytes(tmp_path: Path) -> None:
    limit = PromptLimit(tokens=10**9, max_bytes=30_000)
    text = "日本語のテキスト\n" * 1_300  # 11,700 characters, 32,500 bytes
    (block,) = fit_prompt([{"type": "text", "text": text}], limit, tmp_path, "m2")
    (path,) = saved_files(tmp_path)
    assert path.read_text(encoding="utf-8") == text
    assert "32,500 bytes" in block["text"]
    within = "日本語\n" * 1_000  # 4,000 characters, 10,000 bytes
    assert (
        fit_prompt([{"type": "text", "text": within}], limit, tmp_path, "m3")[0]["text"] == within
    )


def test_text_blocks_are_joined_and_other_blocks_kept_in_place(tmp_path: Path) -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}
    content = [
        image,
        {"type": "text", "text": "a" * 3_000},
        {"type": "text", "text": "b" * 3_000},
    ]
    out = fit_prompt(content, SMALL, tmp_path, "m4")
    assert out[0] is image and len(out) == 2 and out[1]["type"] == "text"
    (path,) = saved_files(tmp_path)
    assert path.read_text() == "a" * 3_000 + "\n\n" + "b" * 3_000


def test_a_line_longer_than_read_shows_gets_the_bash_hint(tmp_path: Path) -> None:
    (block,) = fit_prompt([{"type": "text", "text": "z" * 50_000}], SMALL, tmp_path, "m5")
    assert "use Bash (`cut -c`, `head -c`, `tail -c`)" in block["text"]
    (short,) = fit_prompt([{"type": "text", "text": numbered(500)}], SMALL, tmp_path, "m6")
    assert "use Bash" not in short["text"]


@pytest.mark.parametrize("message_id", ["../../escape", "/etc/passwd", "a b", "x" * 200, ""])
def test_a_message_id_from_a_client_never_names_a_path(tmp_path: Path, message_id: str) -> None:
    folder = tmp_path / "session"
    fit_prompt([{"type": "text", "text": "q" * 5_000}], SMALL, folder, message_id)
    (path,) = saved_files(folder)
    assert path.parent == folder / "user-messages"
    assert sorted(p.name for p in tmp_path.rglob("*.txt")) == [path.name]


def test_a_message_that_cannot_be_saved_is_not_sent(tmp_path: Path) -> None:
    blocker = tmp_path / "session"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(PromptNotSaved, match=r"could not be saved .* Nothing was sent"):
        fit_prompt([{"type": "text", "text": "q" * 5_000}], SMALL, blocker, "m7")


# -- through the loop, against the fake API --------------------------------------------


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi() as server:
        yield server


def make_agent(api: FakeApi, tmp_path: Path, events: list[Event]) -> Agent:
    client = anthropic.AsyncAnthropic(base_url=api.url, api_key="test", max_retries=0)
    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    gate = PermissionGate("bypassPermissions", [], [], [], cwd=tmp_path)
    runner = ToolRunner(default_tools(), ctx, gate, events.append)
    return Agent(
        config=AgentConfig(model="claude-sonnet-5-5"),
        client=ModelClient(client, RetryPolicy(base_delay_s=0.001), events.append),
        runner=runner,
        system=[{"type": "text", "text": "You are a test agent."}],
        emit=events.append,
        prompt_folder=lambda: tmp_path / "session",
    )


def body_size(body: dict[str, Any]) -> int:
    return len(json.dumps(body))


async def test_after_a_30_mb_message_the_next_one_is_answered(api: FakeApi, tmp_path: Path) -> None:
    api.add(text_reply("I see a pointer."), text_reply("Hello again."))
    agent = make_agent(api, tmp_path, [])
    huge = numbered(1_000_000)  # 30 MB
    first = await agent.submit(huge)
    second = await agent.submit("hello again")
    assert (first.result, second.result) == ("I see a pointer.", "Hello again.")
    assert api.errors == [] and all(r.status == 200 for r in api.requests)
    assert all(body_size(r.body) < 100_000 for r in api.requests)
    (path,) = saved_files(tmp_path / "session")
    assert path.stat().st_size == len(huge)
    assert str(path) in api.requests[0].last_user_text()
    assert api.requests[1].last_user_text().endswith("hello again")


async def test_without_a_folder_a_prompt_is_sent_as_it_is(api: FakeApi, tmp_path: Path) -> None:
    api.add(text_reply("ok"))
    agent = make_agent(api, tmp_path, [])
    agent.prompt_folder = None
    await agent.submit("y" * 300_000)
    assert "y" * 300_000 in api.requests[0].last_user_text()
