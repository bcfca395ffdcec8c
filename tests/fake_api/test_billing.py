"""The token estimate and the prompt-cache simulation bill requests the way the API does."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tests.fake_api.conftest import HELLO, MODEL
from tui.fake_api import (
    Billing,
    FakeApi,
    Fault,
    PromptCache,
    RequestBilling,
    estimate_output_tokens,
    estimate_request_tokens,
    text_reply,
    tool_reply,
)
from tui.fake_api.billing import block_tokens

CACHED = {"type": "ephemeral"}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def words(tokens: int, letter: str = "a") -> str:
    """A text of exactly `tokens` estimated tokens."""
    return letter * (4 * tokens)


def text(tokens: int, letter: str = "a", cached: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": words(tokens, letter)}
    if cached:
        block["cache_control"] = CACHED
    return block


def conversation(*blocks: dict[str, Any], system: Any = None) -> dict[str, Any]:
    """One user message holding `blocks`, after an optional system prompt."""
    body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": list(blocks)}]}
    if system is not None:
        body["system"] = system
    return body


def test_block_estimates() -> None:
    assert block_tokens({"type": "text", "text": "abcde"}) == 2
    assert block_tokens("abcd") == 1
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "ab"}}
    assert block_tokens(tool_use) == 6  # "Read" + '{"file_path":"ab"}' = 4 + 18 chars
    assert block_tokens({"type": "image", "source": {"data": "x" * 100_000}}) == 1_600
    assert block_tokens({"type": "document", "source": {}}) == 1_600
    thinking = {"type": "thinking", "thinking": "abcdefgh", "signature": "s" * 400}
    assert block_tokens(thinking) == 2  # the signature is not counted
    nested = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "abcd"}, {"type": "image", "source": {}}],
    }
    assert block_tokens(nested) == 1 + 1_600


def test_request_estimate_counts_tools_system_and_messages() -> None:
    tool = {"name": "Read", "input_schema": {"type": "object"}}
    tool_chars = len('{"name":"Read","input_schema":{"type":"object"}}')
    body = {
        "model": MODEL,
        "tools": [{**tool, "cache_control": CACHED}],  # the marker is not counted
        "system": "s" * 40,
        "messages": [{"role": "user", "content": "u" * 41}],
    }
    assert estimate_request_tokens(body) == -(-tool_chars // 4) + 10 + 11


def test_output_estimate() -> None:
    content = [{"type": "text", "text": "abcdef"}, {"type": "tool_use", "name": "Go", "input": {}}]
    assert estimate_output_tokens(content) == 3  # 6 + 2 + 2 characters


def test_without_breakpoints_everything_is_input() -> None:
    cache = PromptCache(clock=Clock())
    body = conversation(text(2_000), system="s" * 400)
    for _ in range(2):
        charge = cache.charge(body)
        assert charge.usage() == {
            "input_tokens": 2_100,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 0,
        }
        assert charge.estimated_tokens == 2_100


def test_identical_request_reads_what_the_first_wrote() -> None:
    cache = PromptCache(clock=Clock())
    body = conversation(text(100), system=[text(2_000, "s", cached=True)])
    first = cache.charge(body)
    assert (first.cache_creation_input_tokens, first.input_tokens) == (2_000, 100)
    assert first.cache_read_input_tokens == 0
    second = cache.charge(body)
    assert (second.cache_read_input_tokens, second.cache_creation_input_tokens) == (2_000, 0)
    assert second.input_tokens == 100


def test_moving_breakpoint_reads_the_old_prefix_and_writes_the_new_tail() -> None:
    cache = PromptCache(clock=Clock())
    system = [text(1_500, "s")]
    turn_one = [{"role": "user", "content": [text(200, "u", cached=True)]}]
    cache.charge({"model": MODEL, "system": system, "messages": turn_one})
    turn_two = [
        {"role": "user", "content": [text(200, "u")]},  # same block, marker moved on
        {"role": "assistant", "content": [text(50, "r")]},
        {"role": "user", "content": [text(30, "v", cached=True)]},
    ]
    charge = cache.charge({"model": MODEL, "system": system, "messages": turn_two})
    assert charge.cache_read_input_tokens == 1_700
    assert charge.cache_creation_input_tokens == 80
    assert charge.input_tokens == 0


def test_an_early_change_writes_the_whole_prefix_again() -> None:
    cache = PromptCache(clock=Clock())
    cache.charge(conversation(text(100, cached=True), system=[text(2_000, "s")]))
    changed = cache.charge(conversation(text(100, cached=True), system=[text(2_000, "t")]))
    assert changed.cache_read_input_tokens == 0
    assert changed.cache_creation_input_tokens == 2_100


@pytest.mark.parametrize(("distance", "hit"), [(20, True), (21, False)])
def test_lookback_reaches_twenty_blocks_before_a_breakpoint(distance: int, hit: bool) -> None:
    cache = PromptCache(clock=Clock())
    blocks = [text(100, chr(ord("a") + n % 26)) for n in range(40)]
    first = [*blocks[:15], {**blocks[15], "cache_control": CACHED}]
    cache.charge(conversation(*first))
    later = blocks[: 16 + distance]
    later[-1] = {**later[-1], "cache_control": CACHED}
    charge = cache.charge(conversation(*later))
    assert charge.cache_read_input_tokens == (1_600 if hit else 0)
    assert charge.cache_creation_input_tokens == (16 + distance) * 100 - (1_600 if hit else 0)


def test_ttl_expires_and_hits_refresh_it() -> None:
    clock = Clock()
    cache = PromptCache(clock=clock)
    body = conversation(text(1_200, cached=True))
    assert cache.charge(body).cache_creation_input_tokens == 1_200
    clock.now += 299
    assert cache.charge(body).cache_read_input_tokens == 1_200  # and refreshed
    clock.now += 299
    assert cache.charge(body).cache_read_input_tokens == 1_200
    clock.now += 301
    expired = cache.charge(body)
    assert (expired.cache_read_input_tokens, expired.cache_creation_input_tokens) == (0, 1_200)


def test_one_hour_ttl_outlives_five_minutes() -> None:
    clock = Clock()
    cache = PromptCache(clock=clock)
    block = {**text(1_200), "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    cache.charge(conversation(block))
    clock.now += 3_000
    assert cache.charge(conversation(block)).cache_read_input_tokens == 1_200


@pytest.mark.parametrize(
    ("tokens", "min_tokens", "cached"),
    [(1_023, 1_024, False), (1_024, 1_024, True), (10, 0, True)],
)
def test_minimum_cacheable_prefix(tokens: int, min_tokens: int, cached: bool) -> None:
    cache = PromptCache(min_tokens=min_tokens, clock=Clock())
    body = conversation(text(tokens, cached=True), text(5))
    first = cache.charge(body)
    second = cache.charge(body)
    assert first.cache_creation_input_tokens == (tokens if cached else 0)
    assert second.cache_read_input_tokens == (tokens if cached else 0)
    assert second.input_tokens == 5 + (0 if cached else tokens)


def test_models_do_not_share_a_cache() -> None:
    cache = PromptCache(clock=Clock())
    body = conversation(text(1_200, cached=True))
    cache.charge(body)
    other = cache.charge({**body, "model": "claude-haiku-5-5"})
    assert other.cache_read_input_tokens == 0


def test_tools_and_system_stay_cached_while_messages_change() -> None:
    cache = PromptCache(clock=Clock())
    tools = [{"name": "Read", "description": words(600), "input_schema": {"type": "object"}}]
    tools[0]["cache_control"] = CACHED
    system = [text(800, "s", cached=True)]
    tool_tokens = estimate_request_tokens({"tools": tools})  # the marker is not counted
    for letter in "xy":
        body = conversation(text(300, letter, cached=True), system=system)
        charge = cache.charge({**body, "tools": tools})
    assert charge.cache_read_input_tokens == tool_tokens + 800
    assert charge.cache_creation_input_tokens == 300


def test_billing_totals_and_equivalents() -> None:
    billing = Billing()
    billing.add(RequestBilling(100, 1_000, 0, 10, 1_100))
    billing.add(RequestBilling(50, 0, 400, 20, 450))
    assert billing.requests == 2
    assert billing.usage() == {
        "input_tokens": 150,
        "cache_creation_input_tokens": 400,
        "cache_read_input_tokens": 1_000,
        "output_tokens": 30,
    }
    assert billing.input_equivalent == pytest.approx(150 + 100 + 500)
    assert billing.with_output == pytest.approx(750 + 150)


def test_usage_on_the_wire_follows_the_cache(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("first answer"), text_reply("second answer"))
    system = [{"type": "text", "text": words(1_500), "cache_control": CACHED}]
    usages = []
    for _ in range(2):
        events = list(
            client.messages.create(
                model=MODEL, max_tokens=10, system=system, messages=HELLO, stream=True
            )
        )
        start, delta = events[0].message.usage, events[-2].usage
        assert (start.input_tokens, start.output_tokens) == (2, 1)
        assert start.cache_read_input_tokens == delta.cache_read_input_tokens
        assert start.cache_creation_input_tokens == delta.cache_creation_input_tokens
        usages.append(delta)
    assert (usages[0].cache_creation_input_tokens, usages[0].cache_read_input_tokens) == (1_500, 0)
    assert (usages[1].cache_creation_input_tokens, usages[1].cache_read_input_tokens) == (0, 1_500)
    assert [usage.output_tokens for usage in usages] == [3, 4]
    assert api.requests[1].billing.cache_read_input_tokens == 1_500
    assert api.requests[1].estimated_tokens == 1_502
    assert api.billing.requests == 2
    assert api.billing.input_equivalent == pytest.approx(4 + 1.25 * 1_500 + 0.1 * 1_500)
    assert api.billing.with_output == pytest.approx(api.billing.input_equivalent + 5 * 7)


def test_scripted_usage_is_sent_as_given_and_billing_stays_simulated(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    api.add(text_reply("big context", usage={"input_tokens": 150_000, "output_tokens": 9}))
    message = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert message.usage.input_tokens == 150_000 and message.usage.output_tokens == 9
    assert message.usage.cache_read_input_tokens == 0
    assert api.billing.input_tokens == 2


@pytest.mark.refusal_expected
def test_faults_and_rejections_are_not_billed(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(Fault(529), tool_reply(("Read", {"file_path": "x"})))
    with pytest.raises(anthropic.OverloadedError):
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": ""}]
        )
    client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert api.billing.requests == 1
    assert [request.billing.estimated_tokens for request in api.requests] == [2, 0, 2]
