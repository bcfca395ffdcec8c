"""The catalogue of issue 17's attempts ("the edges"): every scenario, the attempts they
carry, and which client each applies to."""

from __future__ import annotations

from tests.e2e.hostile.edges import EdgeAttempt, Scenario
from tests.e2e.hostile.edges_input import input_scenarios
from tests.e2e.hostile.edges_sandbox import sandbox_scenarios
from tests.e2e.hostile.edges_untrusted import untrusted_scenarios
from tests.e2e.hostile.edges_warm import warm_scenarios

SCENARIOS: tuple[Scenario, ...] = (
    *warm_scenarios(), *sandbox_scenarios(), *untrusted_scenarios(), *input_scenarios(),
)  # fmt: skip


def _attempts(scenarios: tuple[Scenario, ...]) -> dict[str, tuple[Scenario, EdgeAttempt]]:
    found: dict[str, tuple[Scenario, EdgeAttempt]] = {}
    for scenario in scenarios:
        for attempt in scenario.attempts:
            if attempt.id in found:
                raise ValueError(f"two attempts have the id {attempt.id!r}")
            found[attempt.id] = (scenario, attempt)
    return found


# attempt id -> the scenario that carries it, and the attempt
BY_ID = _attempts(SCENARIOS)
ATTEMPTS: tuple[EdgeAttempt, ...] = tuple(a for _s, a in BY_ID.values())
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(a.family for a in ATTEMPTS))
SCENARIOS_BY_ID = {s.id: s for s in SCENARIOS}
