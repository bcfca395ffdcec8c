"""A ContextState read back from its JSON (events now carry it typed; this is the boundary's)."""

from __future__ import annotations

from agent.core.context_state import ContextState

state_from_json = ContextState.from_json
