"""The table of slash commands: each command's name, usage, help and handler, and what it returns.

The modules that define commands (builtin, inspect, prompted) register them here with
``@command``; tui.commands.builtin imports them all, so its lookups see every one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.session.runtime import Runtime


@dataclass
class CommandResult:
    text: str
    is_error: bool = False
    data: dict[str, Any] = field(default_factory=dict)
    exit: bool = False
    # A command that is done by the model (/init, /review): these instructions go with the
    # user's line as one turn, and the turn's reply is the result.
    prompt: str | None = None


Handler = Callable[["Runtime", str], Awaitable[CommandResult]]


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    help: str
    handler: Handler


COMMANDS: dict[str, Command] = {}


def command(name: str, usage: str, help_text: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        COMMANDS[name] = Command(name, usage, help_text, handler)
        return handler

    return register
