"""The between-turns decision on a 1,000-message, ~200K-token conversation.

A session appends a tool round before each request; these figures are the
medians over those turns:

- microcompact + accounting: planning what to clear (find the candidates,
  protect the recent ones, weigh the batch against the cache rewrite) plus
  counting the context; target <= 1 ms;
- the whole decision the loop waits for: the context manager's
  ``before_request`` (growth, microcompact, count, threshold check, state
  event); target <= 5 ms;
- and, once, the worst turn: the cache has gone cold and every old result is
  cleared at once (markers, copy-on-write messages, saved outputs).

    .venv/bin/python bench/between_turns.py [--turns 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.core.conversation import Conversation
from agent.core.messages import Message, tool_result_block
from bench.accounting import OVERHEAD, sized_conversation
from compaction.manager import ContextManager
from compaction.microcompact import plan_clearing
from compaction.result_index import ResultIndex
from compaction.services import CompactionServices
from compaction.thresholds import ContextLimits, WindowConfig
from compaction.tokens import TokenCounter, estimate_block, estimate_message
from tools.file_state import FileStateCache

TOTAL_MESSAGES = 1_000


class Host:
    """The parts of an agent the manager reads (its PolicyHost)."""

    def __init__(self, messages: list[Message]) -> None:
        self.conversation = Conversation(messages)
        self.request_extra: dict[str, object] = {}
        self.system = [{"type": "text", "text": "s" * int(OVERHEAD * 2)}]
        self.tools_api = [
            {"name": "Read", "description": "d" * int(OVERHEAD * 2), "input_schema": {}}
        ]
        self.model = "claude-sonnet-5-5"
        self.client = None
        self.costs = None

    @property
    def messages(self) -> Sequence[Message]:
        return self.conversation.messages


def add_round(append: Callable[[Message], None], index: int) -> None:
    tool_id = f"toolu_new_{index}"
    append(
        Message(
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": "Grep",
                    "input": {"pattern": f"n{index}"},
                }
            ],
            kind="response",
            api_id=f"msg_new_{index}",
        )
    )
    append(
        Message(
            "user", [tool_result_block(tool_id, "src/m.py:12: match\n" * 90)], kind="tool_result"
        )
    )


def manager(clock: float, auto: bool = True) -> ContextManager:
    return ContextManager(
        limits_for=lambda model: ContextLimits(1_000_000, 128_000),
        window=WindowConfig(1_000_000, auto, True, "model"),
        services=CompactionServices(file_state=FileStateCache()),
        emit=lambda event: None,
        clock=lambda: clock,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args()
    base = sized_conversation()[
        : TOTAL_MESSAGES - 2 * args.turns - 1
    ]  # ~200K tokens at 1,000 messages
    if base[-1].role == "assistant":
        base.pop()
    messages = list(base)
    counter = TokenCounter()
    index = ResultIndex(estimate_message, estimate_block)
    host = Host(list(base))
    warm = manager(1_000.0, auto=False)  # no threshold pressure on a 1M window
    warm.last_response_at = 999.0
    warm.growth = (
        1e9  # a batch is never worth it here: the every-turn path where nothing is cleared
    )
    loop = asyncio.new_event_loop()
    used = 0
    plan_times, decision_times = [], []
    for turn in range(args.turns):
        add_round(messages.append, turn)
        add_round(host.conversation.append, turn)
        # As in a session: the response that asked for this round reported its usage.
        position = len(messages) - 2
        usage = {
            "input_tokens": 10,
            "cache_read_input_tokens": round(used or 150_000),
            "output_tokens": 50,
        }
        counter.observe_response(
            messages[:position], usage, messages[position], OVERHEAD, position=position
        )
        warm.counter.observe_response(
            list(host.messages[:position]),
            usage,
            host.messages[position],
            OVERHEAD,
            position=position,
        )
        started = time.perf_counter()
        used = counter.count(messages, OVERHEAD)
        plan = plan_clearing(
            messages,
            now=1_000.0,
            last_response_at=999.0,
            used_tokens=used,
            auto_threshold=None,
            growth_per_request=1e9,
            message_tokens=estimate_message,
            estimate_block=estimate_block,
            index=index,
        )
        plan_times.append(time.perf_counter() - started)
        assert not plan.clear
        started = time.perf_counter()
        loop.run_until_complete(warm.before_request(host))
        decision_times.append(time.perf_counter() - started)

    cold = manager(1_000.0)
    cold.last_response_at = 0.0
    worst = Host(list(messages))
    started = time.perf_counter()
    loop.run_until_complete(cold.before_request(worst))
    worst_ms = (time.perf_counter() - started) * 1000
    loop.close()
    report = {
        "messages": len(messages),
        "estimated_tokens": counter.count(messages, OVERHEAD),
        "microcompact_plus_accounting_median_ms": round(statistics.median(plan_times) * 1000, 3),
        "microcompact_plus_accounting_p95_ms": round(
            sorted(plan_times)[int(len(plan_times) * 0.95)] * 1000, 3
        ),
        "before_request_median_ms": round(statistics.median(decision_times) * 1000, 3),
        "before_request_p95_ms": round(
            sorted(decision_times)[int(len(decision_times) * 0.95)] * 1000, 3
        ),
        "worst_turn_clear_everything_ms": round(worst_ms, 2),
        "worst_turn_results_cleared": sum(
            1
            for m in worst.messages
            for b in m.tool_results()
            if "[Cleared" in str(b.get("content"))
        ),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
