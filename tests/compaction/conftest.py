"""Fixtures of the compaction tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tui.fake_api import FakeApi


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi() as server:
        yield server
