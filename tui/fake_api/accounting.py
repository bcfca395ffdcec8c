"""How many requests every fake server in this process received, and which it refused.

A refusal here is a request the fake turned away because the real API would
have (a validation rule), never a fault a test scripted. The tests' pytest
plugin reads this after each test: an unexpected refusal fails the test.

A fake server running in a child process of the tests reports too: when
``CCX_FAKE_API_LEDGER`` names a file and this process is not the one that set
it (``CCX_FAKE_API_LEDGER_OWNER``), each request and refusal is appended to it
as a JSON line.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass

LEDGER_ENV = "CCX_FAKE_API_LEDGER"
OWNER_ENV = "CCX_FAKE_API_LEDGER_OWNER"


@dataclass(frozen=True)
class Refusal:
    path: str
    status: int
    message: str


_lock = threading.Lock()
_requests = 0
_refusals: list[Refusal] = []


def count_request(path: str) -> None:
    global _requests
    with _lock:
        _requests += 1
    _report({"request": path})


def count_refusal(path: str, status: int, message: str) -> None:
    with _lock:
        _refusals.append(Refusal(path, status, message))
    _report({"refusal": path, "status": status, "message": message})


def totals() -> tuple[int, int]:
    """(requests, refusals) seen in this process so far."""
    with _lock:
        return _requests, len(_refusals)


def refusals_since(mark: int) -> list[Refusal]:
    """The refusals recorded after ``totals()[1]`` was ``mark``."""
    with _lock:
        return list(_refusals[mark:])


def _report(record: dict[str, object]) -> None:
    path = os.environ.get(LEDGER_ENV)
    if not path or os.environ.get(OWNER_ENV) == str(os.getpid()):
        return
    line = json.dumps(record) + "\n"
    try:
        with open(path, "a", encoding="utf-8") as ledger:
            ledger.write(line)
    except OSError:
        pass  # the ledger is the tests' bookkeeping; a server never fails for it
