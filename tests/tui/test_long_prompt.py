"""A huge paste in the app: shown with its middle left out, sent as a pointer to the saved whole,
and the next prompt is answered."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text
from tui.fake_api import FakeApi, text_reply
from tui.fullscreen.widgets.transcript import UserPrompt


async def test_a_huge_paste_is_sent_as_a_pointer_and_the_next_prompt_answered(
    api: FakeApi, repo: Path, tmp_path: Path
) -> None:
    paste = "".join(f"pasted line {i:>10}\n" for i in range(1, 60_001))  # 1.4 MB
    api.add(text_reply("A pointer, thanks."), text_reply("Answered again."))
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        started = time.monotonic()
        await submit(pilot, paste)
        await wait_idle(pilot, timeout=60)
        assert time.monotonic() - started < 30
        shown = str(app.query(UserPrompt).first().content)
        assert len(shown) < 6_000 and "characters not shown" in shown
        assert shown.startswith("> pasted line          1\n")
        assert shown.endswith("pasted line      60000")
        await submit(pilot, "and again?")
        await wait_idle(pilot)
        assert "Answered again." in screen_text(app)
    assert api.errors == [] and [r.status for r in api.requests] == [200, 200]
    assert all(len(json.dumps(r.body)) < 200_000 for r in api.requests)
    (path,) = (tmp_path / "config").rglob("user-messages/*.txt")
    assert path.read_text().strip() == paste.strip()
    assert str(path) in api.requests[0].last_user_text()
