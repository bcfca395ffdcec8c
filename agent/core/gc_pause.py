"""Python's cyclic garbage collector paused while start-up imports and builds run.

Start-up makes objects that all live as long as the process: the API client's import
alone makes some 1,500 pydantic classes. A collection in the middle of that walks them
and frees nothing; paused, `ccx -p` spends ~0.2 s less CPU before its first request
(~0.15 s of it in `import anthropic`). Pauses nest, across threads too (the SDK may be
imported on one while the session is built on another): collection resumes when the
last one ends. Only cycles can leak while paused, and only until then.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_state = {"pauses": 0, "resume": False, "start_up": False, "freeze": False}


def _pause() -> None:
    with _lock:
        if _state["pauses"] == 0:
            _state["resume"] = gc.isenabled()
            gc.disable()
        _state["pauses"] += 1


def _release() -> None:
    with _lock:
        _state["pauses"] -= 1
        if _state["pauses"] > 0:
            return
        freeze, _state["freeze"] = _state["freeze"], False
        if _state["resume"]:
            _state["resume"] = False
            if freeze:  # what start-up made lives on: out of later collections
                gc.freeze()
            gc.enable()


@contextmanager
def collection_paused(freeze: bool = False) -> Iterator[None]:
    """No collection inside the block (nor after it while another pause holds).

    ``freeze``: what is alive when the last pause ends lives as long as the process (a
    session's modules and parts), so it is moved out of all later collections instead of
    being walked by the first one: with collection paused every new object waits in the
    youngest generation, and the first collection after a session's build walks them all
    (some 20 ms, on the thread that happens to allocate next, the UI's too). The few
    cycles that became garbage meanwhile are kept (start-up's, once)."""
    _pause()
    try:
        yield
    finally:
        if freeze:
            with _lock:
                _state["freeze"] = True
        _release()


def pause_for_start_up() -> None:
    """Pause until ``start_up_done`` (a headless run's imports, parse and build)."""
    with _lock:
        if _state["start_up"]:
            return
        _state["start_up"] = _state["freeze"] = True
    _pause()


def start_up_done() -> None:
    """End the pause ``pause_for_start_up`` began; nothing without one, or the second time."""
    with _lock:
        if not _state["start_up"]:
            return
        _state["start_up"] = False
    _release()
