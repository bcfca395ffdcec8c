"""Hooks: user shell commands run at points of a session, with Claude Code's settings schema.

``config`` parses settings' ``hooks`` (events, matchers, timeouts; a warning for what is
malformed or unknown), ``runner`` runs one event's hooks with its JSON payload, and
``outcome`` says what their exits and outputs mean for each event. A broken hook or a
malformed configuration is reported, never raised.
"""

from agent.instructions.hooks.config import EVENTS, HookCommand, HookGroup, parse_hooks
from agent.instructions.hooks.outcome import HookOutcome, additional_context_text
from agent.instructions.hooks.runner import HookRunner

__all__ = [
    "EVENTS",
    "HookCommand",
    "HookGroup",
    "HookOutcome",
    "HookRunner",
    "additional_context_text",
    "parse_hooks",
]
