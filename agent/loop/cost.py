"""Running totals of tokens, cost and API time for a session, also split by what each call was for.

Every call counts in the totals; ``by_purpose`` splits them: ``agent`` (the
loop's own requests), ``summary`` (full compactions) and ``notes`` (the
background session-notes updates), so /cost and the json result can show
what context management itself cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.model.catalog import cost_usd

USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def _empty() -> dict[str, int]:
    return dict.fromkeys(USAGE_KEYS, 0)


@dataclass
class CostTracker:
    totals: dict[str, int] = field(default_factory=_empty)
    by_model: dict[str, dict[str, int]] = field(default_factory=dict)
    # purpose -> usage keys, plus "requests"; cost per purpose in ``cost_by_purpose``
    by_purpose: dict[str, dict[str, int]] = field(default_factory=dict)
    cost_by_purpose: dict[str, float] = field(default_factory=dict)
    total_cost_usd: float = 0.0
    api_seconds: float = 0.0
    requests: int = 0

    def add(
        self, model: str, usage: dict[str, int], seconds: float = 0.0, purpose: str = "agent"
    ) -> float:
        """Record one response's usage; returns its cost in USD."""
        per_model = self.by_model.setdefault(model, _empty())
        per_purpose = self.by_purpose.setdefault(purpose, {**_empty(), "requests": 0})
        for key in USAGE_KEYS:
            value = int(usage.get(key) or 0)
            self.totals[key] += value
            per_model[key] += value
            per_purpose[key] += value
        per_purpose["requests"] += 1
        cost = cost_usd(model, usage)
        self.cost_by_purpose[purpose] = self.cost_by_purpose.get(purpose, 0.0) + cost
        self.total_cost_usd += cost
        self.api_seconds += seconds
        self.requests += 1
        return cost

    def purposes_json(self) -> dict[str, dict[str, Any]]:
        """``by_purpose`` with each purpose's cost, for the json result."""
        return {
            purpose: {**usage, "cost_usd": round(self.cost_by_purpose.get(purpose, 0.0), 6)}
            for purpose, usage in self.by_purpose.items()
        }
