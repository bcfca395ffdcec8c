"""/login and /logout in the plain REPL: the key typed unseen, checked, stored 0600 and used from
the next request; a bad key refused with nothing stored; /logout removes it."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from agent.model.stored_key import stored_key_path
from tests.tui.plain.test_repl import ENTER, plain_session, workspace  # noqa: F401
from tui.fake_api import FakeApi, text_reply

KEY = "sk-ant-api03-" + "Q" * 40


def credential(headers: dict[str, str]) -> str | None:
    """The key a request carried (x-api-key, or a bearer token)."""
    bearer = headers.get("authorization", "")
    return headers.get("x-api-key") or (bearer.removeprefix("Bearer ") if bearer else None)


async def test_login_stores_the_key_unseen_and_the_next_request_uses_it(
    workspace: tuple[FakeApi, Path],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api, root = workspace
    # The environment's key wins over a stored one: without it, the stored key is used.
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ccx-local-endpoint")  # a local endpoint's stand-in
    api.add(text_reply("first"), text_reply("second"))
    async with plain_session(root) as session:
        await session.type("hello" + ENTER)
        assert credential(api.requests[-1].headers) == "ccx-local-endpoint"
        await session.until(lambda: session.repl.waiting == "prompt")
        session.pipe.send_text("/login" + ENTER)
        await session.until(lambda: session.repl.waiting == "secret")
        session.pipe.send_text(KEY + ENTER)
        await session.until(lambda: "API key stored in" in session.text)
        assert KEY not in session.text  # never echoed
        await session.type("again" + ENTER)
        assert credential(api.requests[-1].headers) == KEY
    path = stored_key_path()
    assert json.loads(path.read_text()) == {"apiKey": KEY}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list(path.parent.glob("*.ccx-tmp"))
    history = (root.parent / "history").read_text() if (root.parent / "history").exists() else ""
    assert KEY not in history
    assert api.errors == []


async def test_a_bad_key_is_refused_and_logout_removes_a_stored_one(
    workspace: tuple[FakeApi, Path],  # noqa: F811
) -> None:
    _api, root = workspace
    async with plain_session(root) as session:
        session.pipe.send_text("/login" + ENTER)
        await session.until(lambda: session.repl.waiting == "secret")
        session.pipe.send_text("not-a-key" + ENTER)
        await session.until(lambda: "Not stored:" in session.text)
        assert "sk-ant-" in session.text and not stored_key_path().exists()
        await session.type("/login " + KEY + ENTER)  # on the line: refused, not stored
        assert not stored_key_path().exists()
        session.pipe.send_text("/login" + ENTER)
        await session.until(lambda: session.repl.waiting == "secret")
        session.pipe.send_text(KEY + ENTER)
        await session.until(lambda: "API key stored in" in session.text)
        assert "environment is used first" in session.text  # the test's ANTHROPIC_API_KEY
        await session.type("/logout" + ENTER)
        assert "Removed the API key" in session.text
        assert not stored_key_path().exists()
        await session.type("/logout" + ENTER)
        assert "nothing to remove" in session.text
