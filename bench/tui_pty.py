"""Driving the real `ccx` app in a pseudo-terminal for the TUI benchmarks.

A reader thread drains the pty and keeps every chunk with the time it
arrived, so a benchmark can ask when some bytes first appeared after a
given moment (keystroke to screen, launch to first paint).
"""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path

COLUMNS, LINES = 120, 40


class PtyApp:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        env = {**env, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(LINES)}
        self.launched = time.time()
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True
        )
        os.close(slave)
        self.master = master
        self.output = bytearray()
        self.chunks: list[tuple[float, int]] = []  # (arrival time, end offset in output)
        self._lock = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                data = b""
            with self._lock:
                if not data:
                    self.chunks.append((time.time(), -1))
                    self._lock.notify_all()
                    return
                self.output += data
                self.chunks.append((time.time(), len(self.output)))
                self._lock.notify_all()

    def offset(self) -> int:
        with self._lock:
            return len(self.output)

    def contains(self, needle: bytes, start: int = 0) -> bool:
        with self._lock:
            return self.output.find(needle, start) >= 0

    def wait_for(self, needle: bytes, start: int = 0, timeout: float = 30.0) -> float:
        """The arrival time of the chunk that completed the first ``needle`` at or after ``start``."""
        deadline = time.time() + timeout
        with self._lock:
            while True:
                index = self.output.find(needle, start)
                if index >= 0:
                    end = index + len(needle)
                    return next(t for t, offset in self.chunks if offset >= end or offset < 0)
                if self.chunks and self.chunks[-1][1] < 0:
                    raise RuntimeError(f"ccx exited before {needle!r} appeared")
                remaining = deadline - time.time()
                if remaining <= 0:
                    text = bytes(self.output[-20000:]).decode("utf-8", "replace")
                    text = re.sub(
                        r"\x1b\[[0-9;?<>=$]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b\][^\x07]*\x07", " ", text
                    )
                    tail = " ".join(text.split())[-1500:]
                    raise TimeoutError(
                        f"{needle!r} did not appear; the screen's text ends:\n{tail}"
                    )
                self._lock.wait(remaining)

    def write(self, data: bytes) -> float:
        now = time.time()
        os.write(self.master, data)
        return now

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024

    def quit(self, timeout: float = 10.0) -> int:
        """ctrl+d on the (empty) prompt; the exit code."""
        if self.proc.poll() is None:
            self.write(b"\x03")  # ctrl+c: empty the prompt first (nothing is running)
            time.sleep(0.2)
            self.write(b"\x04")
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            os.close(self.master)
