"""Shell words from tree-sitter nodes: the text as written, the value bash would pass after
quote removal, and how far the text fixes that value (see ``agent.shell.part``).

Substitutions met on the way (``$(...)``, backticks, ``<(...)``) are recorded in a
:class:`Findings`, so the part that holds the word becomes opaque and its nested commands
can be checked too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agent.shell.part import DYNAMIC, GLOB, LITERAL

if TYPE_CHECKING:
    from tree_sitter import Node

# Node types that are one shell word (or a piece of one).
WORD_TYPES = frozenset(
    {
        "word", "number", "string", "raw_string", "ansi_c_string", "translated_string",
        "concatenation", "simple_expansion", "expansion", "arithmetic_expansion",
        "command_substitution", "process_substitution", "brace_expression", "extglob_pattern",
    }
)  # fmt: skip
SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_EXPANSIONS = frozenset({"simple_expansion", "expansion", "arithmetic_expansion"})
_RANK = {LITERAL: 0, GLOB: 1, DYNAMIC: 2}
# {a,b} or {1..3} left unquoted: bash turns it into several words.
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_DOUBLE_QUOTE_ESCAPES = frozenset('$`"\\\n')
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_ANSI_NUMERIC = re.compile(r"x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}")


class Source:
    """The command line as UTF-8 bytes (tree-sitter's offsets), and text slices of it."""

    def __init__(self, text: str) -> None:
        try:  # the bytes bash gets: Python passes lone surrogates U+DC80..U+DCFF as bytes
            self.data = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            self.data = text.encode("utf-8", "surrogatepass")

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "surrogateescape")

    def of(self, node: Node) -> str:
        return self.text(node.start_byte, node.end_byte)


@dataclass
class Findings:
    """Substitutions found in a part: why it is opaque, and the commands they run."""

    reason: str = ""
    nested: list[str] = field(default_factory=list)
    misread: bool = False  # the grammar read this differently from bash: trust none of it

    def add(self, reason: str, inner: str) -> None:
        self.reason = self.reason or reason
        if inner.strip():
            self.nested.append(inner.strip())


@dataclass(frozen=True)
class Word:
    raw: str
    value: str
    kind: str
    start: int
    end: int


def evaluate(node: Node, src: Source, found: Findings) -> Word:
    """The word ``node`` stands for."""
    value, shape, kind = _piece(node, src, found)
    if kind == LITERAL and _BRACE.search(shape):
        kind = GLOB
    raw = src.of(node).replace("\\\n", "")
    return Word(raw, value, kind, node.start_byte, node.end_byte)


def literal_word(node: Node, src: Source) -> Word:
    """An operator or keyword token used as a word (``[``, ``-eq``, ``export``)."""
    text = src.of(node)
    return Word(text, text, LITERAL, node.start_byte, node.end_byte)


def scan(node: Node, src: Source, found: Findings) -> None:
    """Record every substitution inside ``node`` (assignment values, heredoc bodies...)."""
    if node.type in SUBSTITUTIONS:
        _record(node, src, found)
        return
    for child in node.named_children:
        scan(child, src, found)


def substitution_inner(node: Node, src: Source) -> str:
    """The command text of ``$(...)``, `` `...` ``, ``<(...)`` or ``>(...)``."""
    text = src.of(node)
    if text.startswith("`"):
        body = text[1:-1] if len(text) > 1 and text.endswith("`") else text[1:]
        return re.sub(r"\\([\\`$])", r"\1", body)
    body = text[2:]
    return body[:-1] if body.endswith(")") else body


def _record(node: Node, src: Source, found: Findings) -> None:
    reason = (
        "process substitution" if node.type == "process_substitution" else ("command substitution")
    )
    text = src.of(node)
    if text.startswith("`") and re.search(r"(?<!\\)`", text[1:-1]):
        found.misread = True  # `a` `b` read as one substitution by the grammar
    found.add(reason, substitution_inner(node, src))


def _piece(node: Node, src: Source, found: Findings) -> tuple[str, str, str]:
    """(value, shape, kind); the shape keeps unquoted characters and blanks out quoted ones,
    so brace expansion can be told from quoted braces."""
    kind = node.type
    text = src.of(node)
    if kind in ("word", "extglob_pattern"):
        value, shape, glob = _unquoted(text)
        if "\n" in value and "\n" in shape:
            found.misread = True  # bash ends a command at an unquoted newline; the grammar not
        return value, shape, GLOB if glob or kind == "extglob_pattern" else LITERAL
    if kind == "number":
        return text, text, LITERAL
    if kind == "raw_string":
        inner = text[1:-1]
        return inner, "q" * len(inner), LITERAL
    if kind == "ansi_c_string":
        inner = ansi_c(text[2:-1])
        return inner, "q" * len(inner), LITERAL
    if kind in ("string", "translated_string", "concatenation"):
        return _joined(node, src, found)
    if kind in SUBSTITUTIONS:
        _record(node, src, found)
        return text, "q", DYNAMIC
    if kind in _EXPANSIONS:
        scan(node, src, found)
        return text, "q", DYNAMIC
    if kind == "brace_expression":
        return text, text, GLOB
    if kind == "comment":
        found.misread = True  # inside a word bash reads # as a character, the grammar a comment
    scan(node, src, found)
    return text, "q", DYNAMIC


def _joined(node: Node, src: Source, found: Findings) -> tuple[str, str, str]:
    """A double-quoted string or a concatenation: its pieces in order, gaps as written."""
    quoted = node.type != "concatenation"
    values: list[str] = []
    shapes: list[str] = []
    kind = LITERAL
    pos = node.start_byte
    children = node.children
    for index, child in enumerate(children):
        if child.start_byte > pos:
            _gap(src.text(pos, child.start_byte), quoted, values, shapes)
        pos = max(pos, child.end_byte)
        if not child.is_named:
            text = src.of(child)
            if child.type == '"':
                text = text[:-1] if text.endswith('"') else text  # may carry a \<newline> too
            if _translation_mark(child, children, index):
                text = text[:-1]  # the token may carry the word before the $ too
            if text:
                _gap(text, quoted, values, shapes)
            continue
        if child.type == "string_content":
            text = _double_quoted(src.of(child))
            values.append(text)
            shapes.append("q" * len(text))
            continue
        value, shape, piece_kind = _piece(child, src, found)
        values.append(value)
        shapes.append("q" * len(shape) if quoted else shape)
        kind = max(kind, piece_kind, key=_RANK.__getitem__)
    if node.end_byte > pos:
        _gap(src.text(pos, node.end_byte), quoted, values, shapes)
    return "".join(values), "".join(shapes), kind


def _translation_mark(child: Node, children: list[Node], index: int) -> bool:
    """The ``$`` of ``$"..."`` (a string to translate): not part of the value."""
    if child.type != "$" or index + 1 >= len(children):
        return False
    nxt = children[index + 1]
    return nxt.type == "string" and nxt.start_byte == child.end_byte


def _gap(text: str, quoted: bool, values: list[str], shapes: list[str]) -> None:
    if quoted:
        text = _double_quoted(text)
        values.append(text)
        shapes.append("q" * len(text))
    else:
        value, shape, _ = _unquoted(text)
        values.append(value)
        shapes.append(shape)


def _unquoted(text: str) -> tuple[str, str, bool]:
    """Backslash escapes removed; whether an unescaped glob character is left."""
    out: list[str] = []
    shape: list[str] = []
    glob = False
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            i += 2
            if nxt != "\n":
                out.append(nxt)
                shape.append("q")
            continue
        if c in "*?" or (c == "[" and "]" in text[i + 1 :]):
            glob = True
        out.append(c)
        shape.append(c)
        i += 1
    return "".join(out), "".join(shape), glob


def _double_quoted(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in _DOUBLE_QUOTE_ESCAPES:
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def ansi_c(body: str) -> str:
    """The value of ``$'...'``: backslash escapes as bash decodes them."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
        elif nxt == "c" and i + 2 < len(body):
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        elif match := _ANSI_NUMERIC.match(body, i + 1):
            digits = match.group()
            code = int(digits, 8) if digits[0].isdigit() else int(digits[1:], 16)
            if code == 0:
                break  # bash ends the string at a NUL
            out.append(chr(code) if code < 0x110000 else "\ufffd")
            i = match.end()
        else:
            out.append(c + nxt)
            i += 2
    return "".join(out)


def join_adjacent(first: Word, second: Word) -> Word:
    """One word from two pieces tree-sitter split although bash reads them as one
    (``$"..."``, a backslash-newline inside a word)."""
    if first.raw.endswith("$") and not first.raw.endswith("\\$") and second.raw[:1] == '"':
        value = first.value[:-1] + second.value  # $"..." is a translated string
    else:
        value = first.value + second.value
    kind = max(first.kind, second.kind, key=_RANK.__getitem__)
    return Word(first.raw + second.raw, value, kind, first.start, second.end)
