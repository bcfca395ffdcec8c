"""What an MCP tool is called in requests: ``mcp__<server>__<tool>``, made a name the API takes.

The spelling is Claude Code's: every character outside ``[A-Za-z0-9_-]`` becomes ``_``
(a server ``my.server`` gives ``mcp__my_server__...``). A name must also be at most 64
characters (the Messages API's old limit; newer versions take 128, and 64 is what every
version and gateway takes), so a longer one keeps its first 55 characters and ends with
``_`` and 8 hex digits of a SHA-256 of the server's and the tool's real names. The hash
depends on nothing else, so a tool has the same name in every run and session (a resumed
transcript finds it), and two long names that share their start still differ. Spellings
that meet (tools ``a.b`` and ``a_b`` of one server) are told apart the same way: a name
that needed no change keeps it, the others end with their hash.

A call finds its server and real tool name through the tool object that carries the
name. Permission rules match the name sent and also the long spellings (``aliases``), so
``mcp__server``, ``mcp__server__*`` and ``mcp__server__tool`` rules keep matching a tool
whose name had to be shortened.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

PREFIX = "mcp__"
MAX_NAME_CHARS = 64
HASH_DIGITS = 8
VALID_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")

Pair = tuple[str, str]  # (server name, tool name) as the configuration and server give them


def normalize_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def full_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` in Claude Code's spelling, however long."""
    return f"{PREFIX}{normalize_name(server)}__{normalize_name(tool)}"


def hashed_name(server: str, tool: str) -> str:
    """The name cut to fit, ending with a hash of the real names (see the module docstring)."""
    real = f"{server}\0{tool}".encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(real).hexdigest()[:HASH_DIGITS]
    return f"{full_name(server, tool)[: MAX_NAME_CHARS - HASH_DIGITS - 1]}_{digest}"


def wire_names(pairs: Iterable[Pair]) -> dict[Pair, str]:
    """Each (server, tool) its name in requests: valid, unique among ``pairs``, stable."""
    spelled = {pair: full_name(*pair) for pair in dict.fromkeys(pairs)}
    holders: dict[str, list[Pair]] = {}
    for pair, name in spelled.items():
        holders.setdefault(name, []).append(pair)
    names = {}
    for pair, name in spelled.items():
        unchanged = [p for p in holders[name] if _unchanged(p)]
        clash = len(holders[name]) > 1 and unchanged != [pair]
        names[pair] = hashed_name(*pair) if clash or len(name) > MAX_NAME_CHARS else name
    return names


def aliases(server: str, tool: str, wire: str) -> tuple[str, ...]:
    """The other names a permission rule may call the tool by: its long spelling, and its real
    names joined as written (when either differs from the name sent)."""
    candidates = (full_name(server, tool), f"{PREFIX}{server}__{tool}")
    return tuple(name for name in dict.fromkeys(candidates) if name != wire)


def _unchanged(pair: Pair) -> bool:
    return full_name(*pair) == f"{PREFIX}{pair[0]}__{pair[1]}"
