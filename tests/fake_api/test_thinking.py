"""Extended thinking in the fake API: the request rules, signed blocks, the tool-loop rule, emission."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic.types import Message

from tests.fake_api.conftest import HELLO, MODEL, make_client, refused_then_accepted
from tests.fake_api.test_validation import assistant, request, text, user
from tui.fake_api import FakeApi, Reply, text_reply, tool_reply
from tui.fake_api.models import ModelSpec
from tui.fake_api.thinking import sign, verify

ENABLED = {"type": "enabled", "budget_tokens": 2_000}
ADAPTIVE = {"type": "adaptive"}
CONTEXT_BETA = {"anthropic-beta": "context-management-2025-06-27"}
CLEAR_THINKING = {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}
CLEAR_TOOLS = {"type": "clear_tool_uses_20250919"}
READ = {"name": "Read", "input_schema": {"type": "object"}}
EXPECTED_THINKING = (
    "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. "
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
    "include thinking blocks from previous turns. To avoid this requirement, disable `thinking`."
)


def thought(words: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": words, "signature": sign(words)}


CASES = [
    (
        "budget under 1,024",
        request(max_tokens=4_000, thinking={"type": "enabled", "budget_tokens": 1_023}),
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        request(max_tokens=4_000, thinking={"type": "enabled", "budget_tokens": 1_024}),
    ),
    (
        "budget equal to max_tokens",
        request(max_tokens=8_000, thinking={"type": "enabled", "budget_tokens": 8_000}),
        "`max_tokens` must be greater than `thinking.budget_tokens`",
        request(max_tokens=8_001, thinking={"type": "enabled", "budget_tokens": 8_000}),
    ),
    (
        "enabled without a budget",
        request(max_tokens=4_000, thinking={"type": "enabled"}),
        "thinking.enabled.budget_tokens: Field required",
        request(max_tokens=4_000, thinking=ENABLED),
    ),
    (
        "a thinking type the API does not have",
        request(thinking={"type": "on"}),
        "thinking: Input tag 'on' found using 'type' does not match any of the expected tags: "
        "'enabled', 'disabled', 'adaptive'",
        request(thinking={"type": "disabled"}),
    ),
    (
        "a budget with adaptive thinking",
        request(thinking={"type": "adaptive", "budget_tokens": 2_000}),
        "thinking.adaptive.budget_tokens: Extra inputs are not permitted",
        request(thinking=ADAPTIVE),
    ),
    (
        "a display the API does not have",
        request(thinking={"type": "adaptive", "display": "full"}),
        "thinking.adaptive.display: Input should be 'summarized' or 'omitted'",
        request(thinking={"type": "adaptive", "display": "omitted"}),
    ),
    (
        "adaptive thinking on a model without it",
        request(model="claude-sonnet-4-5", max_tokens=4_000, thinking=ADAPTIVE),
        "adaptive thinking is not supported on this model",
        request(model="claude-sonnet-4-5", max_tokens=4_000, thinking=ENABLED),
    ),
    (
        "budgeted thinking on fable",
        request(model="claude-fable-5-2", max_tokens=4_000, thinking=ENABLED),
        '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" '
        'and "output_config.effort" to control thinking behavior.',
        request(model="claude-fable-5-2", max_tokens=4_000, thinking=ADAPTIVE),
    ),
    (
        "thinking disabled on fable",
        request(model="claude-fable-5-2", thinking={"type": "disabled"}),
        '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" '
        'and "output_config.effort" to control thinking behavior.',
        request(model="claude-fable-5-2"),
    ),
    (
        "effort on a model without it",
        request(model="claude-sonnet-4-5", output_config={"effort": "high"}),
        "This model does not support the effort parameter.",
        request(model="claude-sonnet-4-5"),
    ),
    (
        "an effort level no model has",
        request(output_config={"effort": "extreme"}),
        "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
        request(output_config={"effort": "low"}),
    ),
    (
        "thinking with a forced tool",
        request(tools=[READ], tool_choice={"type": "any"}, thinking=ADAPTIVE),
        "Thinking may not be enabled when tool_choice forces tool use.",
        request(tools=[READ], tool_choice={"type": "auto"}, thinking=ADAPTIVE),
    ),
    (
        "a thinking block whose text changed",
        request(
            messages=[
                user("Hi"),
                assistant({**thought("I greet back."), "thinking": "I greet back!"}, text("Hi")),
                user("Again"),
            ]
        ),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
        request(
            messages=[user("Hi"), assistant(thought("I greet back."), text("Hi")), user("Again")]
        ),
    ),
    (
        "a thinking block with a made-up signature",
        request(
            messages=[
                user("Hi"),
                assistant({"type": "thinking", "thinking": "x", "signature": "sig_x"}, text("Hi")),
                user("Again"),
            ]
        ),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
        request(messages=[user("Hi"), assistant(text("Hi")), user("Again")]),
    ),
    (
        "redacted thinking the server never sent",
        request(
            messages=[
                user("Hi"),
                assistant({"type": "redacted_thinking", "data": "Zm9v"}, text("Hi")),
                user("Again"),
            ]
        ),
        "messages.1.content.0: Invalid `data` in `redacted_thinking` block",
        request(messages=[user("Hi"), assistant(text("Hi")), user("Again")]),
    ),
    (
        "cache_control on a thinking block",
        request(
            messages=[
                user("Hi"),
                assistant({**thought("ok"), "cache_control": {"type": "ephemeral"}}, text("Hi")),
                user("Again"),
            ]
        ),
        "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted",
        request(messages=[user("Hi"), assistant(thought("ok"), text("Hi")), user("Again")]),
    ),
    (
        "a thinking block in a final assistant prefill",
        request(messages=[user("Hi"), assistant(thought("I will say hello"), text("Hello"))]),
        "messages.1.content.0: `thinking` blocks cannot be used in a final `assistant` message "
        "(prefill); the model writes its own thinking",
        request(messages=[user("Hi"), assistant(text("Hello"))]),
    ),
]


@pytest.mark.refusal_expected
@pytest.mark.parametrize(
    ("bad", "message", "good"),
    [pytest.param(bad, message, good, id=name) for name, bad, message, good in CASES],
)
def test_thinking_rule_refuses_bad_and_accepts_fixed_request(
    api: FakeApi,
    client: anthropic.Anthropic,
    bad: dict[str, Any],
    message: str,
    good: dict[str, Any],
) -> None:
    refused_then_accepted(api, client, bad, message, good)


@pytest.mark.refusal_expected
@pytest.mark.parametrize(
    ("edits", "thinking", "message"),
    [
        (
            [CLEAR_THINKING],
            None,
            "context_management.edits.0.type: `clear_thinking_20251015` strategy requires "
            "`thinking` to be enabled or adaptive",
        ),
        (
            [CLEAR_TOOLS, CLEAR_THINKING],
            ADAPTIVE,
            "context_management.edits.1.type: `clear_thinking_20251015` must be the first "
            "strategy in `context_management.edits`",
        ),
    ],
)
def test_clear_thinking_needs_thinking_and_comes_first(
    api: FakeApi, edits: list[dict[str, Any]], thinking: dict[str, Any] | None, message: str
) -> None:
    api.add(text_reply("accepted"))
    extra = {"thinking": thinking} if thinking else {}
    with make_client(api, default_headers=CONTEXT_BETA) as client:
        body = {"context_management": {"edits": edits}, **extra}
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(model=MODEL, max_tokens=10, messages=HELLO, extra_body=body)
        assert caught.value.api_message == message
        good = {
            "context_management": {"edits": [CLEAR_THINKING, CLEAR_TOOLS]},
            "thinking": ADAPTIVE,
        }
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO, extra_body=good)


def run_tool_turn(api: FakeApi, client: anthropic.Anthropic, **kw: Any) -> Message:
    """One request that gets a tool call back, with the thinking the server adds."""
    api.add(tool_reply(("Read", {"file_path": "a.py"}, "toolu_read")))
    return client.messages.create(
        model=MODEL, max_tokens=4_000, messages=[user("Read a.py")], tools=[READ], **kw
    )


def answer(first: Message, assistant_content: list[Any]) -> list[dict[str, Any]]:
    result = {"type": "tool_result", "tool_use_id": "toolu_read", "content": "x = 1"}
    return [user("Read a.py"), assistant(*assistant_content), user(result)]


def as_params(message: Message) -> list[dict[str, Any]]:
    return [block.model_dump(exclude_none=True) for block in message.content]


def test_emission_is_off_by_default(api: FakeApi, client: anthropic.Anthropic) -> None:
    first = run_tool_turn(api, client, thinking=ADAPTIVE)
    assert [block.type for block in first.content] == ["tool_use"]


@pytest.mark.refusal_expected
def test_the_tool_loop_keeps_its_thinking() -> None:
    with FakeApi(thinking_tokens=300) as api, make_client(api) as client:
        first = run_tool_turn(api, client, thinking=ENABLED)
        thinking, call = first.content
        assert thinking.type == "thinking" and call.type == "tool_use"
        assert 1_100 <= len(thinking.thinking) <= 1_200  # about 300 tokens
        assert verify(thinking.thinking, thinking.signature)
        api.add(text_reply("x is 1"), text_reply("x is 1"), text_reply("x is 1"))
        without = answer(first, [call.model_dump(exclude_none=True)])
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(
                model=MODEL, max_tokens=4_000, messages=without, tools=[READ], thinking=ENABLED
            )
        assert caught.value.api_message == EXPECTED_THINKING
        kept = answer(first, as_params(first))
        done = client.messages.create(
            model=MODEL, max_tokens=4_000, messages=kept, tools=[READ], thinking=ENABLED
        )
        assert done.content[0].type == "thinking"  # the next response thinks too
        # with thinking off, dropping the thinking is allowed
        client.messages.create(model=MODEL, max_tokens=4_000, messages=without, tools=[READ])
    assert api.errors == [EXPECTED_THINKING]
    assert api.billing.output_tokens >= 2 * 300


@pytest.mark.refusal_expected
def test_a_changed_thinking_block_in_the_loop_is_refused() -> None:
    with FakeApi(thinking_tokens=50) as api, make_client(api) as client:
        first = run_tool_turn(api, client, thinking=ADAPTIVE)
        changed = as_params(first)
        changed[0]["thinking"] += " And one more thought."
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(
                model=MODEL,
                max_tokens=4_000,
                messages=answer(first, changed),
                tools=[READ],
                thinking=ADAPTIVE,
            )
        assert (
            caught.value.api_message
            == "messages.1.content.0: Invalid `signature` in `thinking` block"
        )


@pytest.mark.refusal_expected
def test_dropping_one_of_two_thinking_blocks_is_a_modification(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    scripted = Reply(
        [
            {"type": "thinking", "thinking": "First I look at the file."},
            {"type": "thinking", "thinking": "Then I read it."},
            {
                "type": "tool_use",
                "id": "toolu_read",
                "name": "Read",
                "input": {"file_path": "a.py"},
            },
        ],
        stop_reason="tool_use",
    )
    api.add(scripted, text_reply("x is 1"))
    first = client.messages.create(
        model=MODEL, max_tokens=4_000, messages=[user("Read a.py")], tools=[READ], thinking=ADAPTIVE
    )
    blocks = as_params(first)
    assert all(verify(b["thinking"], b["signature"]) for b in blocks[:2])  # signed when sent
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(
            model=MODEL,
            max_tokens=4_000,
            messages=answer(first, [blocks[0], blocks[2]]),
            tools=[READ],
            thinking=ADAPTIVE,
        )
    assert caught.value.api_message == (
        "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant "
        "message cannot be modified. These blocks must remain as they were in the original response."
    )
    done = client.messages.create(
        model=MODEL,
        max_tokens=4_000,
        messages=answer(first, blocks),
        tools=[READ],
        thinking=ADAPTIVE,
    )
    assert done.content[0].text == "x is 1"


def test_a_response_without_thinking_needs_none_in_the_loop(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    first = run_tool_turn(api, client, thinking=ADAPTIVE)  # adaptive: the model chose not to think
    api.add(text_reply("x is 1"))
    done = client.messages.create(
        model=MODEL,
        max_tokens=4_000,
        messages=answer(first, as_params(first)),
        tools=[READ],
        thinking=ADAPTIVE,
    )
    assert done.content[0].text == "x is 1"


def test_a_scripted_signature_is_kept_and_accepted_back(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    block = {"type": "thinking", "thinking": "scripted", "signature": "EqQBCkYIARgCIkD"}
    api.add(Reply([block, {"type": "text", "text": "Hi"}]), text_reply("again"))
    first = client.messages.create(model=MODEL, max_tokens=4_000, messages=HELLO, thinking=ENABLED)
    assert first.content[0].signature == "EqQBCkYIARgCIkD"
    messages = [*HELLO, assistant(*as_params(first)), user("Again")]
    second = client.messages.create(
        model=MODEL, max_tokens=4_000, messages=messages, thinking=ENABLED
    )
    assert second.content[0].text == "again"


def test_omitted_display_sends_empty_thinking_and_bills_it() -> None:
    with FakeApi([text_reply("Hi")] * 2, thinking_tokens=400) as api, make_client(api) as client:
        omitted = {"type": "adaptive", "display": "omitted"}
        with client.messages.stream(
            model=MODEL, max_tokens=4_000, messages=HELLO, thinking=omitted
        ) as stream:
            first = stream.get_final_message()
        thinking = first.content[0]
        assert (thinking.type, thinking.thinking) == ("thinking", "")
        assert verify("", thinking.signature)
        assert first.usage.output_tokens == 400 + 1  # the hidden thinking and "Hi"
        messages = [*HELLO, assistant(*as_params(first)), user("Again")]
        client.messages.create(model=MODEL, max_tokens=4_000, messages=messages, thinking=omitted)
    assert api.errors == []


@pytest.mark.refusal_expected
def test_every_kth_response_thinks_redacted() -> None:
    with (
        FakeApi(
            [text_reply("one"), text_reply("two"), text_reply("three")],
            thinking_tokens=100,
            redacted_every=2,
        ) as api,
        make_client(api) as client,
    ):
        first = client.messages.create(
            model=MODEL, max_tokens=4_000, messages=HELLO, thinking=ADAPTIVE
        )
        history = [*HELLO, assistant(*as_params(first)), user("More")]
        second = client.messages.create(
            model=MODEL, max_tokens=4_000, messages=history, thinking=ADAPTIVE
        )
        assert [b.type for b in first.content] == ["thinking", "text"]
        assert [b.type for b in second.content] == ["redacted_thinking", "text"]
        assert second.usage.output_tokens == 100 + 1
        history += [assistant(*as_params(second)), user("More")]
        forged = [
            *history[:-2],
            assistant({"type": "redacted_thinking", "data": "QUFBQQ=="}, text("two")),
            user("More"),
        ]
        with pytest.raises(
            anthropic.BadRequestError, match="Invalid `data` in `redacted_thinking` block"
        ):
            client.messages.create(
                model=MODEL, max_tokens=4_000, messages=forged, thinking=ADAPTIVE
            )
        third = client.messages.create(
            model=MODEL, max_tokens=4_000, messages=history, thinking=ADAPTIVE
        )
    assert third.content[-1].text == "three"


def test_no_thinking_is_emitted_when_the_request_has_it_off() -> None:
    with FakeApi([text_reply("Hi")] * 2, thinking_tokens=100) as api, make_client(api) as client:
        plain = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
        disabled = client.messages.create(
            model=MODEL, max_tokens=10, messages=HELLO, thinking={"type": "disabled"}
        )
    assert [b.type for b in plain.content] == [b.type for b in disabled.content] == ["text"]


def test_clear_thinking_clears_all_but_the_last_thinking_turn() -> None:
    with (
        FakeApi(
            [text_reply("one"), text_reply("two"), text_reply("three")], thinking_tokens=200
        ) as api,
        make_client(api, default_headers=CONTEXT_BETA) as client,
    ):
        history = list(HELLO)
        for _ in range(3):
            reply = client.messages.create(
                model=MODEL,
                max_tokens=4_000,
                messages=history,
                thinking=ADAPTIVE,
                extra_body={"context_management": {"edits": [CLEAR_THINKING]}},
            )
            history += [assistant(*as_params(reply)), user("More")]
    last = api.requests[-1]
    assert last.applied_edits == [
        {
            "type": "clear_thinking_20251015",
            "cleared_thinking_turns": 1,
            "cleared_input_tokens": 200,
        }
    ]
    assert last.context_editing is not None
    seen = [
        b["type"]
        for m in last.context_editing.body["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
    ]
    assert seen == ["text", "thinking", "text"]
    assert api.errors == []


@pytest.mark.refusal_expected
def test_results_with_more_words_still_continue_the_loop() -> None:
    with FakeApi(thinking_tokens=50) as api, make_client(api) as client:
        first = run_tool_turn(api, client, thinking=ADAPTIVE)
        call = first.content[1].model_dump(exclude_none=True)
        result = {"type": "tool_result", "tool_use_id": "toolu_read", "content": "x = 1"}
        messages = [user("Read a.py"), assistant(call), user(result, text("Also check b.py"))]
        with pytest.raises(anthropic.BadRequestError, match="Expected `thinking` or"):
            client.messages.create(
                model=MODEL, max_tokens=4_000, messages=messages, tools=[READ], thinking=ADAPTIVE
            )


def test_emission_can_be_turned_on_for_a_whole_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CCX_FAKE_API_THINKING_TOKENS", "64")
    monkeypatch.setenv("CCX_FAKE_API_REDACTED_EVERY", "3")
    with FakeApi([text_reply("Hi")]) as api, make_client(api) as client:
        reply = client.messages.create(
            model=MODEL, max_tokens=4_000, messages=HELLO, thinking=ADAPTIVE
        )
    assert (api.thinking_tokens, api.redacted_every) == (64, 3)
    assert reply.content[0].type == "thinking" and len(reply.content[0].thinking) == 256
    assert FakeApi(thinking_tokens=0).thinking_tokens == 0  # an explicit value wins


@pytest.mark.refusal_expected
def test_an_effort_level_the_model_does_not_take_is_refused() -> None:
    """Levels are per model: one that takes three refuses a fourth (the 5.x models take all five)."""
    spec = ModelSpec("claude-test-3", 200_000, 64_000, efforts=("low", "medium", "high"))
    with FakeApi(models={spec.id: spec}) as server:
        server.add(text_reply("accepted"))
        client = make_client(server)
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.post(
                "/v1/messages", cast_to=Message,
                body=request(model=spec.id, output_config={"effort": "xhigh"}),
            )  # fmt: skip
        assert caught.value.api_message == (
            "This model does not support effort level 'xhigh'. Supported levels: high, low, medium."
        )
        accepted = client.post(
            "/v1/messages", cast_to=Message,
            body=request(model=spec.id, output_config={"effort": "high"}),
        )  # fmt: skip
        assert accepted.content[0].text == "accepted"
