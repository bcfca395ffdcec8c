"""SIGINT and SIGTERM in `ccx -p`: the running work is cancelled and ccx exits as the signal's.

The shell's convention is 128 + the signal's number: 130 after Ctrl-C (SIGINT),
143 after SIGTERM (a `timeout`, a supervisor). The work stops where it waits,
whatever it waits on (a model stream, a compaction, a hook, a tool, a retry's
back-off); the conversation keeps what it had, so `ccx -c` goes on from there.

A stop signal ccx was started with ignored stays ignored (a script's background job
has SIGINT ignored; a supervisor may ignore SIGTERM), as it does in a run through the
warm worker (tui/warm/client.py) and in any program that keeps its parent's choice.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
WORDS = {signal.SIGINT: "Interrupted by the user", signal.SIGTERM: "Stopped by SIGTERM"}


class SignalStop:
    """Which stop signal came first, once one has."""

    def __init__(self) -> None:
        self.signal: signal.Signals | None = None

    @property
    def exit_code(self) -> int:
        """128 + the signal's number (130 when the work was cancelled otherwise)."""
        return 128 + (self.signal or signal.SIGINT)

    @property
    def words(self) -> str:
        return WORDS[self.signal or signal.SIGINT]


@contextmanager
def cancel_on_signals(task: asyncio.Future[Any]) -> Iterator[SignalStop]:
    """While inside: SIGINT and SIGTERM cancel ``task`` (the first one is remembered), each
    unless this process has it ignored."""
    loop = asyncio.get_running_loop()
    stop = SignalStop()
    caught = [number for number in STOP_SIGNALS if signal.getsignal(number) is not signal.SIG_IGN]

    def received(number: signal.Signals) -> None:
        if stop.signal is None:
            stop.signal = number
        task.cancel()

    for number in caught:
        loop.add_signal_handler(number, received, number)
    try:
        yield stop
    finally:
        for number in caught:
            loop.remove_signal_handler(number)
