"""The collector paused through start-up: nested pauses, across threads, resumed once."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agent.core import gc_pause
from agent.core.gc_pause import collection_paused, pause_for_start_up, start_up_done

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _collector_on():
    gc.enable()
    yield
    start_up_done()
    gc.enable()


def test_a_pause_ends_with_its_block_and_nested_ones_with_the_outer() -> None:
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still holds
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collection_paused():
        pass
    assert not gc.isenabled()


def test_start_up_pause_outlives_a_block_on_another_thread_and_ends_once() -> None:
    pause_for_start_up()
    pause_for_start_up()  # a second call is the same pause
    inside = threading.Event()
    leave = threading.Event()

    def import_elsewhere() -> None:
        with collection_paused():
            inside.set()
            leave.wait(5)

    worker = threading.Thread(target=import_elsewhere)
    worker.start()
    inside.wait(5)
    start_up_done()
    assert not gc.isenabled()  # the other thread's block still holds
    leave.set()
    worker.join(5)
    assert gc.isenabled()
    start_up_done()  # again: nothing
    assert gc.isenabled() and gc_pause._state["pauses"] == 0


def test_the_sdk_imported_meanwhile_leaves_the_collector_on() -> None:
    code = (
        "import gc, sys, time\n"
        "from agent.model.client import import_sdk_meanwhile, make_client\n"
        "import_sdk_meanwhile()\n"
        "deadline = time.monotonic() + 30\n"
        "while 'anthropic' not in sys.modules and time.monotonic() < deadline:\n"
        "    time.sleep(0.001)\n"  # the thread has begun: its block holds the collector
        "while not gc.isenabled() and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"  # until the SDK is imported
        "imported = 'anthropic.types' in sys.modules\n"
        "client = make_client('anthropic')\n"
        "print(imported, type(client).__name__, gc.isenabled())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.split() == ["True", "AsyncAnthropic", "True"]


def test_a_freezing_pause_moves_what_it_made_out_of_later_collections() -> None:
    code = (
        "import gc\n"
        "from agent.core.gc_pause import collection_paused\n"
        "gc.collect(); gc.enable()\n"
        "with collection_paused():\n"
        "    plain = [[] for _ in range(5000)]\n"
        "unfrozen = gc.get_freeze_count()\n"
        "with collection_paused(freeze=True):\n"
        "    with collection_paused(freeze=True):\n"
        "        kept = [[] for _ in range(5000)]\n"
        "    inner = gc.get_freeze_count()\n"  # the outer pause still holds: nothing yet
        "print(unfrozen, inner, gc.get_freeze_count() >= 5000, gc.isenabled())\n"
        "gc.disable()\n"
        "with collection_paused(freeze=True):\n"  # off before: stays off, nothing frozen
        "    pass\n"
        "gc.unfreeze(); gc.enable()\n"
        "with collection_paused():\n"  # the flag of a pause that did not freeze is gone
        "    more = [[] for _ in range(100)]\n"
        "print(gc.get_freeze_count())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.split() == ["0", "0", "True", "True", "0"]
