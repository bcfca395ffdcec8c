"""The suite's refusal accounting (accounting_plugin.py): a refused request fails its test.

Runs pytest on a small test file with that plugin, so the plugin itself is what
is tested: a refusal the test swallowed still fails it, a marked test may be
refused, a fake server in a child process is counted, and the session ends with
the totals.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fake_api.conftest import PROXY_VARIABLES

ROOT = Path(__file__).resolve().parents[2]

INNER_TESTS = '''
import subprocess
import sys

import anthropic
import pytest

from tui.fake_api import FakeApi, text_reply

WHITESPACE = [{"role": "user", "content": "  "}]
CHILD = """
import anthropic
from tui.fake_api import FakeApi
with FakeApi() as api:
    client = anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=0)
    try:
        client.messages.create(model="claude-sonnet-5-5", max_tokens=10, messages=%r)
    except anthropic.BadRequestError:
        pass
""" % (WHITESPACE,)


def send(api, messages):
    client = anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=0)
    try:
        return client.messages.create(model="claude-sonnet-5-5", max_tokens=10, messages=messages)
    except anthropic.BadRequestError:
        return None  # swallowed: only the accounting can notice


def test_swallowed_refusal():
    with FakeApi() as api:
        send(api, WHITESPACE)


@pytest.mark.refusal_expected
def test_marked_refusal():
    with FakeApi() as api:
        send(api, WHITESPACE)


def test_clean():
    with FakeApi([text_reply("hi")]) as api:
        assert send(api, [{"role": "user", "content": "Hello"}]).content[0].text == "hi"


def test_refusal_in_a_child_process():
    subprocess.run([sys.executable, "-c", CHILD], check=True)
'''


def test_refusals_fail_unmarked_tests_and_are_totalled(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    env = {k: v for k, v in os.environ.items() if k.upper() not in PROXY_VARIABLES}
    env["PYTHONPATH"] = str(ROOT)
    for name in ("CCX_FAKE_API_LEDGER", "CCX_FAKE_API_LEDGER_OWNER", "PYTEST_XDIST_WORKER"):
        env.pop(name, None)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.fake_api.accounting_plugin",
            "-q",
            "-p",
            "no:xdist",
            "-rf",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = run.stdout
    assert "2 failed, 2 passed" in out, out
    assert "FAILED test_inner.py::test_swallowed_refusal" in out
    assert "FAILED test_inner.py::test_refusal_in_a_child_process" in out
    assert "messages: text content blocks must contain non-whitespace text" in out
    assert "mark the test `refusal_expected`" in out
    assert "fake API: 4 requests, 3 refused by validation (2 outside tests marked" in out
