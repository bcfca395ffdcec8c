"""apiKeyHelper: the command's output is the key, kept until it expires, with clear failures."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent.model.api_key_helper import ApiKeyHelper, ApiKeyHelperError


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_the_key_is_the_output_and_is_kept(tmp_path: Path) -> None:
    count = tmp_path / "runs"
    helper = ApiKeyHelper(f"echo x >> {count}; printf '  sk-key-1 \\n'", tmp_path)

    async def twice() -> list[str]:
        return [await helper.key(), await helper.key()]

    assert run(twice()) == ["sk-key-1", "sk-key-1"]
    assert count.read_text() == "x\n"  # run once: the key is kept
    helper.invalidate()
    assert run(helper.key()) == "sk-key-1" and count.read_text() == "x\nx\n"


def test_ttl_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_API_KEY_HELPER_TTL_MS", "0")
    count = tmp_path / "runs"
    helper = ApiKeyHelper(f"echo x >> {count}; echo k", tmp_path)

    async def twice() -> None:
        await helper.key()
        await helper.key()

    run(twice())
    assert count.read_text() == "x\nx\n"  # expired at once: run for every key
    monkeypatch.setenv("CLAUDE_CODE_API_KEY_HELPER_TTL_MS", "soon")
    assert ApiKeyHelper("true", tmp_path).warning is not None


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("echo locked >&2; exit 4", "exited with status 4: locked"),
        ("true", "printed nothing"),
        ("printf 'key with spaces'", "not an API key"),
        ("sleep 5", "no key within 0.3 s"),
    ],
)
def test_failures_say_what_happened(tmp_path: Path, command: str, said: str) -> None:
    helper = ApiKeyHelper(command, tmp_path, timeout_s=0.3)
    with pytest.raises(ApiKeyHelperError) as caught:
        run(helper.key())
    assert said in str(caught.value)


def test_the_command_runs_in_the_session_folder(tmp_path: Path) -> None:
    (tmp_path / "key.txt").write_text("sk-from-file\n")
    assert run(ApiKeyHelper("cat key.txt", tmp_path).key()) == "sk-from-file"
