"""Streamed text wraps at words in the plain REPL, however the stream is chunked."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tui.plain.wrap import StreamWrapper

WORDS = st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=30), min_size=1, max_size=60)


def wrap(chunks: list[str], width: int, column: int = 0) -> str:
    wrapper = StreamWrapper(lambda: width, column)
    return "".join(wrapper.feed(chunk) for chunk in chunks) + wrapper.end()


def test_a_word_that_would_cross_the_edge_starts_the_next_line() -> None:
    assert wrap(["hello wor", "ld again"], 11) == "hello world\nagain"
    assert wrap(["abc defgh"], 6, column=2) == "abc \ndefgh"  # the space stays; it is invisible
    assert wrap(["x" * 12], 5) == "xxxxx\nxxxxx\nxx"  # longer than a line: broken


@given(words=WORDS, width=st.integers(min_value=8, max_value=40), cuts=st.data())
def test_no_word_is_split_and_no_line_is_too_long(words, width, cuts) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(words)
    points = sorted(cuts.draw(st.lists(st.integers(0, len(text)), max_size=10)))
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    out = wrap(chunks, width)
    assert out.replace("\n", " ").split() == text.split() or any(len(w) >= width for w in words)
    for line in out.split("\n"):
        assert len(line) <= width
    if all(len(w) < width for w in words):
        assert out.replace("\n", " ").split() == words
