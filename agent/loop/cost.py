"""Running totals of tokens, cost and API time for a session."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.model.catalog import cost_usd

USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


@dataclass
class CostTracker:
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(USAGE_KEYS, 0))
    by_model: dict[str, dict[str, int]] = field(default_factory=dict)
    total_cost_usd: float = 0.0
    api_seconds: float = 0.0
    requests: int = 0

    def add(self, model: str, usage: dict[str, int], seconds: float = 0.0) -> float:
        """Record one response's usage; returns its cost in USD."""
        per_model = self.by_model.setdefault(model, dict.fromkeys(USAGE_KEYS, 0))
        for key in USAGE_KEYS:
            value = int(usage.get(key) or 0)
            self.totals[key] += value
            per_model[key] += value
        cost = cost_usd(model, usage)
        self.total_cost_usd += cost
        self.api_seconds += seconds
        self.requests += 1
        return cost
