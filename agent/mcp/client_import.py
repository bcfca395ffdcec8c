"""The ``mcp`` package's client side, imported without the server side its ``__init__`` loads.

``import mcp.client.session`` first runs ``mcp/__init__.py`` and ``mcp/client/__init__.py``,
which re-export the whole package: the high-level client, the in-memory transport and with
it the server side (some 240 modules: starlette, uvicorn, the server's resources...). A
client session uses none of them, and they are a third of the import's CPU (0.12 of
0.41 s here), which a ``-p`` run with MCP servers waits for. So the two packages are
entered without running their ``__init__`` (``import_client``); their submodules import as
usual. Anyone who asks either package for a name of its own (``from mcp import X``,
``mcp.ClientSession``) runs its ``__init__`` then, once, and gets it: nothing is missing,
only loaded later.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

LEAN_PACKAGES = ("mcp", "mcp.client")


def import_client() -> None:
    """Import what a client session needs: ``ClientSession`` and ``SessionMessage``."""
    for name in LEAN_PACKAGES:
        if name not in sys.modules:
            _enter_without_init(name)
    import mcp.client.session
    import mcp.shared.message  # noqa: F401


def _enter_without_init(name: str) -> None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not the package this expects: imported the usual way
    module = importlib.util.module_from_spec(spec)

    def run_init(attribute: str) -> Any:
        """A name the package does not have yet: a submodule's (imported), else one its
        ``__init__`` defines (run now, once)."""
        if importlib.util.find_spec(f"{name}.{attribute}") is not None:
            return importlib.import_module(f"{name}.{attribute}")
        del module.__getattr__
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return getattr(module, attribute)

    module.__getattr__ = run_init  # type: ignore[method-assign]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
