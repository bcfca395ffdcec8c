"""/login and /logout: the API key ccx keeps for the user (tui.session.login does the work).

The interactive front ends answer a typed ``/login`` themselves, asking for the
key masked; what reaches this handler is a ``/login`` nobody can answer (``-p``)
or one with the key on the line, which is refused and not stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.commands.registry import CommandResult, command
from tui.session.login import NOT_HERE, logout

if TYPE_CHECKING:
    from tui.session.runtime import Runtime


@command("login", "/login", "Store an Anthropic API key for ccx (asked for, not shown)")
async def _login(_runtime: Runtime, args: str) -> CommandResult:
    if args:
        return CommandResult("Not stored: " + NOT_HERE, is_error=True)
    return CommandResult(NOT_HERE, is_error=True)


@command("logout", "/logout", "Remove the API key /login stored")
async def _logout(runtime: Runtime, _args: str) -> CommandResult:
    try:
        return CommandResult(logout(runtime.cwd))
    except OSError as exc:
        return CommandResult(f"Could not remove the stored key: {exc}", is_error=True)
