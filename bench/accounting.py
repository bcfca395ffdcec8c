"""Token accounting on a 1,000-message, ~200K-token synthetic conversation.

Measures the median time of ``TokenCounter.count`` right after one message is
appended (anchored on the last response's usage: the every-request path), the
fallback that estimates everything with the memo warm and cold, and
``observe_response``. The per-request budget is 1 ms for accounting plus
microcompact together, so accounting alone should be far below it.

    .venv/bin/python bench/accounting.py [--iterations 2000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.core.messages import Message, tool_result_block, user_text
from compaction.tokens import (
    TokenCounter,
    clear_estimate_memo,
    estimate_messages,
)

MESSAGES = 1_000
TARGET_TOKENS = 200_000
OVERHEAD = 12_000.0  # raw estimate of a system prompt and tool definitions
TOOLS = ("Read", "Bash", "Grep", "Glob", "Edit")


def synthetic_conversation(output_chars: int) -> list[Message]:
    """A prompt, 499 tool rounds (a response with thinking, text and a tool_use, then its result), a last response."""
    messages = [user_text("Refactor the accounting module and keep the tests green.")]
    round_index = 0
    while len(messages) < MESSAGES - 1:
        round_index += 1
        tool_id = f"toolu_{round_index:05d}"
        name = TOOLS[round_index % len(TOOLS)]
        response = Message(
            role="assistant",
            content=[
                {
                    "type": "thinking",
                    "thinking": "Considering the next step. " * 4,
                    "signature": "s" * 200,
                },
                {"type": "text", "text": f"Step {round_index}: checking the code."},
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": name,
                    "input": {"file_path": f"src/m{round_index}.py"},
                },
            ],
            kind="response",
            api_id=f"msg_{round_index:05d}",
        )
        output = "\n".join(
            f"{i:>6}\tline {i} of module {round_index}" for i in range(output_chars // 32)
        )
        result = Message(
            role="user", content=[tool_result_block(tool_id, output)], kind="tool_result"
        )
        messages += [response, result]
    messages.append(
        Message(
            role="assistant",
            content=[{"type": "text", "text": "Done."}],
            kind="response",
            api_id="msg_last",
        )
    )
    return messages


def sized_conversation() -> list[Message]:
    """The synthetic conversation with tool outputs sized so the padded estimate is ~200K tokens."""
    small, large = (estimate_messages(synthetic_conversation(c)) for c in (320, 640))
    chars = 320 + int((TARGET_TOKENS - small) * 320 / (large - small))
    return synthetic_conversation(chars)


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def measure(iterations: int) -> dict[str, float]:
    messages = sized_conversation()
    counter = TokenCounter()
    usage = {"input_tokens": 5, "cache_read_input_tokens": 190_000, "output_tokens": 300}
    clear_estimate_memo()
    cold = timed(lambda: counter.count(messages, OVERHEAD))
    observe = [
        timed(lambda: counter.observe_response(messages[:-1], usage, messages[-1], OVERHEAD))
        for _ in range(iterations)
    ]

    anchored = []
    for index in range(iterations):
        messages.append(user_text(f"Now also update the docs ({index})."))
        anchored.append(timed(lambda: counter.count(messages, OVERHEAD)))
        assert counter.source == "api"
        messages.pop()

    counter.invalidate()
    estimated = []
    for index in range(iterations):
        messages.append(user_text(f"Now also update the docs ({index})."))
        estimated.append(timed(lambda: counter.count(messages, OVERHEAD)))
        messages.pop()

    return {
        "messages": len(messages),
        "estimated_tokens": estimate_messages(messages),
        "count_after_append_anchored_median_us": round(median_us(anchored), 2),
        "count_after_append_anchored_p99_us": round(
            sorted(anchored)[int(iterations * 0.99)] * 1e6, 2
        ),
        "count_full_estimate_warm_memo_median_us": round(median_us(estimated), 2),
        "count_full_estimate_cold_memo_us": round(cold * 1e6, 2),
        "observe_response_median_us": round(median_us(observe), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iterations", type=int, default=2_000)
    args = parser.parse_args()
    figures = measure(args.iterations)
    print(json.dumps(figures, indent=2))
    print(
        f"\nTokenCounter.count after a one-message append: median "
        f"{figures['count_after_append_anchored_median_us']:.1f} µs anchored, "
        f"{figures['count_full_estimate_warm_memo_median_us']:.1f} µs estimating all "
        f"(budget with microcompact: 1,000 µs)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
