"""The suite's accounting of fake Messages API requests: a refused request fails its test.

Every request a fake server receives during a test is counted (in this process,
or in a child process through a ledger file, see tui/fake_api/accounting.py).
A test during which the fake refused a request by a validation rule, as the
real API would have, fails with the refusal, unless it is marked
``refusal_expected`` because it sends a bad request on purpose; the refusals a
failing test caused are shown with it. The session ends with "fake API: N
requests, M refused by validation (K outside tests marked refusal_expected)",
summed over pytest-xdist workers.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui.fake_api import accounting

REFUSAL_MARKER = "refusal_expected"
_REFUSAL_MARK = pytest.StashKey[int]()
_LEDGER_SEEN = pytest.StashKey[int]()
_SESSION_TOTALS = pytest.StashKey[list[int]]()  # (requests, refusals, unexpected) of workers
_UNEXPECTED = pytest.StashKey[list[int]]()  # refusals in tests not marked, in this process


class FakeApiLedger:
    """Requests and refusals of fake servers in child processes, read from a JSON-lines file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.requests = 0
        self.refusals: list[str] = []

    def read(self) -> None:
        try:
            with self.path.open("rb") as ledger:
                ledger.seek(self.offset)
                data = ledger.read()
        except FileNotFoundError:
            return
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        for line in complete.splitlines():
            record = json.loads(line)
            if "request" in record:
                self.requests += 1
            else:
                self.refusals.append(f"{record['status']} {record['message']}")


_LEDGER = pytest.StashKey[FakeApiLedger]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{REFUSAL_MARKER}: the test sends requests the fake API refuses on purpose "
        "(a refused request fails any other test)",
    )
    ledger = Path(tempfile.gettempdir(), f"ccx-fake-api-ledger-{os.getpid()}.jsonl")
    ledger.unlink(missing_ok=True)
    os.environ[accounting.LEDGER_ENV] = str(ledger)
    os.environ[accounting.OWNER_ENV] = str(os.getpid())
    config.stash[_LEDGER] = FakeApiLedger(ledger)
    config.stash[_SESSION_TOTALS] = [0, 0, 0]
    config.stash[_UNEXPECTED] = [0]


def _refusals(item: pytest.Item) -> list[str]:
    ledger = item.config.stash[_LEDGER]
    ledger.read()
    found = [
        f"{r.status} {r.message}" for r in accounting.refusals_since(item.stash[_REFUSAL_MARK])
    ]
    return found + ledger.refusals[item.stash[_LEDGER_SEEN] :]


def _check_refusals(item: pytest.Item, when: str) -> None:
    if item.get_closest_marker(REFUSAL_MARKER) is not None:
        return
    refusals = _refusals(item)
    item.stash[_REFUSAL_MARK] = accounting.totals()[1]
    item.stash[_LEDGER_SEEN] = len(item.config.stash[_LEDGER].refusals)
    if refusals:
        item.config.stash[_UNEXPECTED][0] += len(refusals)
        listed = "\n".join(f"  {message}" for message in refusals)
        pytest.fail(
            f"the fake API refused {len(refusals)} request(s) during {when}, as the real API "
            f"would (mark the test `{REFUSAL_MARKER}` if it sends them on purpose):\n{listed}",
            pytrace=False,
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    item.config.stash[_LEDGER].read()
    item.stash[_REFUSAL_MARK] = accounting.totals()[1]
    item.stash[_LEDGER_SEEN] = len(item.config.stash[_LEDGER].refusals)
    yield
    _check_refusals(item, "setup")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        yield
    except BaseException:
        # the test failed on its own; the refusals are most likely why: show them with it
        if refusals := _refusals(item):
            item.add_report_section("call", "fake API refusals", "\n".join(refusals))
        raise
    _check_refusals(item, "the test")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield
    _check_refusals(item, "teardown")


def _local_totals(config: pytest.Config) -> tuple[int, int, int]:
    ledger = config.stash[_LEDGER]
    ledger.read()
    requests, refusals = accounting.totals()
    unexpected = config.stash[_UNEXPECTED][0]
    return requests + ledger.requests, refusals + len(ledger.refusals), unexpected


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints the sum
        workeroutput["fake_api_totals"] = _local_totals(session.config)
    ledger = session.config.stash[_LEDGER]
    ledger.read()
    ledger.path.unlink(missing_ok=True)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    totals = getattr(node, "workeroutput", {}).get("fake_api_totals")
    if totals:
        session = node.config.stash[_SESSION_TOTALS]  # type: ignore[attr-defined]
        for index, value in enumerate(totals):
            session[index] += value


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    config = terminalreporter.config
    if getattr(config, "workeroutput", None) is not None:
        return
    requests, refusals, unexpected = (
        local + workers
        for local, workers in zip(_local_totals(config), config.stash[_SESSION_TOTALS], strict=True)
    )
    terminalreporter.write_line(
        f"fake API: {requests} requests, {refusals} refused by validation "
        f"({unexpected} outside tests marked {REFUSAL_MARKER})"
    )
