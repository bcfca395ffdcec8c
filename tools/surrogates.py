"""Text that is not valid UTF-8: made safe for a message, and file names found again from it.

Python keeps the bytes of a file name that are not UTF-8 as lone surrogates
(``os.fsdecode``'s surrogateescape: byte 0xff becomes U+DCFF), and a model's
JSON may carry a lone surrogate too (``"\\ud800"``). Neither can be encoded as
UTF-8, so one of them in a request makes the SDK fail, and in a transcript
makes every resume fail the same way. ``escape_text`` is the one rule for
what such text becomes:

- a surrogate that stands for a byte (U+DC80..U+DCFF) becomes the visible
  escape ``\\xNN`` of that byte, so ``bad\\xff.txt`` still names the file and
  ``unescape_name`` finds it again;
- a high and low surrogate side by side become the character they encode;
- any other lone surrogate becomes U+FFFD, the replacement character every
  UTF-8 decoder shows for broken text. It stands for no byte of any name, so
  nothing needs it back, and a ``\\udXXX`` escape would only invite the model
  to copy a meaningless sequence into its next call.

Text that is already valid (all but never-seen cases) costs one ``isascii``
or one ``encode`` and comes back as the same object.
"""

from __future__ import annotations

import os
import re
from itertools import islice
from typing import Any, TypeVar

_SURROGATE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
_BYTE_ESCAPE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")
REPLACEMENT = "\ufffd"

T = TypeVar("T")


def is_encodable(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (it holds no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escape_text(text: str) -> str:
    """``text`` with every surrogate made encodable (see the module docstring)."""
    if is_encodable(text):
        return text
    return _SURROGATE.sub(_escape_match, text)


def _escape_match(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:  # a pair: the character it encodes in UTF-16
        return found.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    code = ord(found)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return REPLACEMENT


def escape_value(value: T) -> T:
    """A JSON-like value (dicts, lists, strings) with every string escaped.

    The same object comes back when nothing needed escaping, so callers can
    tell by identity whether anything changed, and nothing is copied then.
    A changed copy has the same shape (a dict the same keys, a list the same
    length), which mypy cannot see: hence the ignores below.
    """
    if isinstance(value, str):
        return escape_text(value)  # type: ignore[return-value]  # T is str here
    if isinstance(value, dict):
        escaped: dict[Any, Any] | None = None
        for index, (key, item) in enumerate(value.items()):
            new_key = escape_text(key) if isinstance(key, str) else key
            new_item = escape_value(item)
            if escaped is None and (new_key is not key or new_item is not item):
                escaped = dict(islice(value.items(), index))
            if escaped is not None:
                escaped[new_key] = new_item
        return value if escaped is None else escaped  # type: ignore[return-value]  # same keys
    if isinstance(value, list):
        items: list[Any] | None = None
        for index, item in enumerate(value):
            new_item = escape_value(item)
            if items is None and new_item is not item:
                items = list(value[:index])
            if items is not None:
                items.append(new_item)
        return value if items is None else items  # type: ignore[return-value]  # same items
    return value


def unescape_name(text: str) -> str | None:
    """``text`` with its ``\\xNN`` escapes (bytes 0x80-0xff) turned back into the bytes of a
    name (as surrogateescape keeps them), or None when it has none."""
    if "\\x" not in text:
        return None
    restored = _BYTE_ESCAPE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), text)
    return None if restored == text else restored


def existing_name(path: str) -> str:
    """The path as given when it exists; else the file its ``\\xNN`` escapes name, if that exists.

    A name that exists as written always wins, so a file really called
    ``a\\x80`` (with a backslash) is never mistaken for another.
    """
    restored = unescape_name(path)
    if restored is None or os.path.lexists(path) or not os.path.lexists(restored):
        return path
    return restored


def not_utf8_note(path: str) -> str:
    """A sentence for an error about ``path`` when it holds ``\\xNN`` escapes, else ''."""
    if unescape_name(path) is None:
        return ""
    return (
        " The name contains \\xNN escapes: that is how ccx shows bytes of a file name that "
        "are not UTF-8, and no file has those bytes either."
    )
