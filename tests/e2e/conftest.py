"""Fixtures for end-to-end tests: the real `ccx` command against the fake Messages API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tui.fake_api import FakeApi

CCX = str(Path(sys.executable).with_name("ccx"))


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def ccx_events(self) -> list[dict[str, Any]]:
        """The stream-json lines with ccx's own events (system/ccx_X) under their type X."""
        return [ccx_event(event) for event in self.events()]


def ccx_event(line: dict[str, Any]) -> dict[str, Any]:
    """A system/ccx_X line as the ccx event {"type": X, ...}; any other line as it is."""
    subtype = str(line.get("subtype", ""))
    if line.get("type") != "system" or not subtype.startswith("ccx_"):
        return line
    fields = {k: v for k, v in line.items() if k not in ("type", "subtype")}
    return {"type": subtype.removeprefix("ccx_"), **fields}


class Ccx:
    """Runs `ccx` as a subprocess in a sample repository, talking to the fake API."""

    def __init__(self, api: FakeApi, repo: Path, config: Path):
        self.api = api
        self.repo = repo
        self.config = config
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_"))},
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key",
            "CCX_CONFIG_DIR": str(config),
            "HOME": str(config.parent / "home"),
            # No machine's managed policy: a test writes one here when it wants one.
            "CCX_MANAGED_SETTINGS_FILE": str(config.parent / "managed-settings.json"),
            "CCX_STRICT_INVARIANTS": "1",
            "CCX_RETRY_BASE_DELAY_MS": "5",
            "CCX_WARM": "0",  # no warm worker left behind (tests/e2e/test_warm_worker.py has one)
        }

    def run(self, *args: str, stdin: str | None = None, timeout: float = 60) -> Run:
        proc = subprocess.run(
            [CCX, *args],
            cwd=self.repo,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [CCX, *args],
            cwd=self.repo,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def transcripts(self) -> list[Path]:
        return sorted((self.config / "projects").glob("*/*.jsonl"))

    def transcript_records(self) -> list[dict[str, Any]]:
        (path,) = self.transcripts()
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi() as server:
        yield server


@pytest.fixture
def ccx(api: FakeApi, repo: Path, tmp_path: Path) -> Ccx:
    return Ccx(api, repo, tmp_path / "config")
