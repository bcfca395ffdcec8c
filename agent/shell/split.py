"""Split a shell command line into the simple commands it runs, for permission checks.

``git status && rm -rf build | tee log`` runs three commands; each is checked on its own.
The line is parsed with tree-sitter's bash grammar (the one Codex uses), so quoting,
``$'...'``, comments, heredocs, pipelines, lists, compound commands and redirections are
read as bash reads them. What cannot be judged from the text alone makes a part *opaque*,
so no allow rule can vouch for it: command and process substitution, subshells, function
definitions, assignments, loops' variables, arithmetic, a program name that is computed,
and anything the parser reports as an error. ``nested`` carries the code a part runs as
text (substitutions, ``bash -c``, ``eval``, ``find -exec``, ``xargs CMD``) so deny rules
can look inside; ``dynamic_program`` marks a part whose program is only known at run time.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from agent.shell.options import Arg
from agent.shell.part import LITERAL, CommandPart
from agent.shell.walker import Draft, Walker
from agent.shell.words import Source
from agent.shell.wrappers import analyze

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

UNREADABLE = "text the shell parser cannot read"
_SEPARATORS = " \t\n;&|"
_MAX_NESTING = 5
_OPERATOR_BYTES = frozenset(bytes([c]) for c in b";&|<>()")
_BLANKS_BASH_KEEPS = (b"\r", b"\v", b"\f", b"\x00")
# Where a backslash is part of what tree-sitter read (a word, quotes, a comment, a heredoc).
_HOLDS_BACKSLASHES = frozenset(
    {"word", "string", "raw_string", "ansi_c_string", "comment", "heredoc_body",
     "heredoc_content", "string_content", "extglob_pattern", "regex"}
)  # fmt: skip


def split_command(command: str) -> list[CommandPart]:
    """The simple commands of ``command``, in order; empty parts are dropped."""
    return list(_split(command))


def iter_all_parts(command: str, depth: int = 0) -> list[CommandPart]:
    """The parts of ``command`` and, recursively, of every command nested inside them."""
    parts = split_command(command)
    found = list(parts)
    if depth < _MAX_NESTING:
        for part in parts:
            for inner in part.nested:
                found.extend(iter_all_parts(inner, depth + 1))
    return found


@functools.lru_cache(maxsize=2048)
def _split(command: str) -> tuple[CommandPart, ...]:
    src = Source(command)
    tree = _parser().parse(src.data)
    walker = Walker(src)
    walker.statement(tree.root_node)
    unreadable = (
        _unread_errors(tree.root_node, walker)
        or _misread(src, tree.root_node, walker)
        or walker.misread
        or any(d.found.misread for d in walker.drafts)
    )
    parts = [p for p in (_finish(d, src, unreadable) for d in walker.drafts) if p is not None]
    if unreadable and not parts and command.strip(_SEPARATORS):  # "; ;;" runs nothing
        parts.append(CommandPart(command.strip(), (), (), opaque_reason=UNREADABLE,
                                 dynamic_program=True))  # fmt: skip
    return tuple(parts)


@functools.cache
def _parser() -> Parser:
    # Imported here so start-up (ccx --version) does not pay for loading the grammar.
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def _unread_errors(root: Node, walker: Walker) -> bool:
    """Whether the parse has an error the walker did not explain away."""
    if not root.has_error:
        return False
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            return True
        if node.is_error:
            span = (node.start_byte, node.end_byte)
            if span not in walker.understood_errors:
                return True
            continue
        if node.has_error:
            stack.extend(node.children)
    return False


def _misread(src: Source, root: Node, walker: Walker) -> bool:
    """Whether tree-sitter's grammar may have read the text differently from bash.

    The grammar skips ``\\<blank>`` and ``\\<newline>`` between tokens and treats ``\\r``,
    ``\\v`` and ``\\f`` as blanks, where bash reads them as parts of words: ``ls \\ #; rm x``
    is two commands to bash and one with a comment to the grammar.
    """
    data = src.data
    if any(c in data for c in _BLANKS_BASH_KEEPS):
        return True
    at = data.find(b"\\")
    while at >= 0:  # a backslash and the byte it escapes, pair by pair
        nxt = data[at + 1 : at + 2]
        if nxt in (b" ", b"\t", b"\n") and not _inside_word_or_quotes(
            root.descendant_for_byte_range(at, at + 1)
        ):
            if nxt != b"\n":
                return True  # an escaped blank the grammar skipped
            if _joins_a_word(data, at, root) and at not in walker.joined_breaks:
                return True
        at = data.find(b"\\", at + 2 if nxt else at + 1)
    return False


def _joins_a_word(data: bytes, at: int, root: Node) -> bool:
    """A backslash-newline between a word and more word characters: one word to bash
    (``a\\<newline>b`` is ``ab``, ``\\;\\<newline>#c`` is ``;#c``, not a comment)."""
    after = data[at + 2 : at + 3]
    if not after.strip() or after in _OPERATOR_BYTES or at == 0:
        return False
    return _inside_word_or_quotes(root.descendant_for_byte_range(at - 1, at))


def _inside_word_or_quotes(node: Node | None) -> bool:
    while node is not None:
        if node.type in _HOLDS_BACKSLASHES:
            return True
        node = node.parent
    return False


def _finish(draft: Draft, src: Source, unreadable: bool) -> CommandPart | None:
    words = draft.words
    # A further "!" is bash's negation keyword too (the grammar takes only the first): ! ! cmd
    while words and words[0].raw == "!" and len(words) > 1:
        words = words[1:]
    args = [Arg(w.value, w.kind, w.raw) for w in words]
    invocation = analyze(args)
    reason = draft.found.reason or draft.reason or invocation.reason
    nested = [*draft.found.nested, *invocation.nested]
    if words and words[0].kind == LITERAL and words[0].value == "alias":
        definitions = [w.value.partition("=")[2] for w in words[1:] if "=" in w.value]
        if definitions:
            reason = reason or "an alias definition"
            nested.extend(definitions)
    dynamic = invocation.dynamic or unreadable
    if unreadable:
        reason = reason or UNREADABLE
    if not (words or draft.writes or draft.assignments or reason or nested):
        return None
    return CommandPart(
        text=src.text(draft.start, draft.end).strip(),
        raw_words=tuple(w.raw for w in words),
        words=tuple(w.value for w in words),
        writes=tuple(draft.writes),
        opaque_reason=reason,
        nested=tuple(dict.fromkeys(n.strip() for n in nested if n.strip())),
        assignments=tuple(draft.assignments),
        dynamic_program=dynamic,
        word_kinds=tuple(w.kind for w in words),
        reads=tuple(draft.reads),
    )
