"""Redirections as bash reads them, for the walker: which files a command writes, the
words tree-sitter files under a redirection although they are arguments, ``<>`` (which the
grammar lacks), and heredocs (whose bodies may hold substitutions and after which the
grammar nests the rest of the line).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.shell.draft import Draft
from agent.shell.part import LITERAL
from agent.shell.words import WORD_TYPES, Findings, Source, Word, evaluate, literal_word, scan

if TYPE_CHECKING:
    from tree_sitter import Node

WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
READ_OPERATORS = frozenset({"<", "<&"})
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


class Redirections:
    """The redirection half of the walker; it needs the walker's statements and drafts."""

    src: Source
    drafts: list[Draft]
    understood_errors: set[tuple[int, int]]  # ERROR nodes read as "<>"
    _read_write: set[int]  # file_redirect starts that are really "<>"

    def statement(self, node: Node) -> None:
        raise NotImplementedError

    def _command(self, node: Node, span: Node, redirects: list[Node]) -> None:
        raise NotImplementedError

    def _new(self, start: int, end: int) -> Draft:
        raise NotImplementedError

    def _word(self, node: Node, draft: Draft) -> Word:
        if node.is_named:
            return evaluate(node, self.src, draft.found)
        return literal_word(node, self.src)

    def _redirected(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        redirects = self._redirect_nodes(node, body)
        if body is not None and body.type == "command":
            self._command(body, node, redirects)
            return
        before = len(self.drafts)
        if body is not None:
            self.statement(body)
        targets = self.drafts[before:] or [self._new(node.start_byte, node.end_byte)]
        pieces: list[Word] = []
        for redirect in redirects:
            self._redirect(redirect, targets, pieces)
        if pieces:  # bash gives them to a command inside; the grammar lost track of which
            for draft in targets:
                draft.found.misread = True

    def _redirect_nodes(self, node: Node, body: Node | None) -> list[Node]:
        """The redirections of a statement; an ERROR ``<`` just before ``> file`` is the
        ``<>`` operator, which tree-sitter's grammar lacks."""
        found: list[Node] = []
        children = node.children
        for i, child in enumerate(children):
            if child.type in REDIRECTS:
                found.append(child)
            elif child.type == "ERROR" and self.src.of(child) == "<" and i + 1 < len(children):
                nxt = children[i + 1]
                if nxt.type == "file_redirect" and nxt.start_byte == child.end_byte:
                    self.understood_errors.add((child.start_byte, child.end_byte))
                    self._read_write.add(nxt.start_byte)
            elif child != body and child.is_named and child.type != "comment":
                self.statement(child)
        return found

    def _redirect(self, node: Node, drafts: list[Draft], pieces: list[Word]) -> None:
        if node.type == "heredoc_redirect":
            self._heredoc(node, drafts, pieces)
            return
        if node.type == "herestring_redirect":
            for child in node.named_children:
                evaluate(child, self.src, drafts[0].found)  # its substitutions still run
            return
        operator = "<" if node.start_byte in self._read_write else ""
        destinations: list[Node] = []
        for child in node.children:
            if child.type == "file_descriptor":
                if not self.src.of(child).isdigit():
                    # "-o2>x": bash reads the word -o2 and then >x; the grammar, a descriptor
                    pieces.append(literal_word(child, self.src))
                continue
            if child.type == "ERROR" and self.src.of(child) == ">" and operator.endswith("<"):
                self.understood_errors.add((child.start_byte, child.end_byte))
                operator += ">"
            elif not child.is_named:
                operator += child.type
            else:
                destinations.append(child)
        if not destinations:
            return  # 2>&-: closes a descriptor
        target = evaluate(destinations[0], self.src, drafts[0].found)
        # tree-sitter files the words after "< file" as more destinations: they are arguments
        for extra in destinations[1:]:
            pieces.append(self._word(extra, drafts[0]))
        self._target(operator, target, drafts)

    def _target(self, operator: str, target: Word, drafts: list[Draft]) -> None:
        if target.kind != LITERAL:
            for draft in drafts:
                draft.opaque("a redirection to a computed path")
            return
        duplicates = operator in (">&", "<&") and (target.value.isdigit() or target.value == "-")
        if duplicates:
            return
        if operator in READ_OPERATORS or operator == "<>":
            for draft in drafts:
                draft.reads.append(target.value)
        if operator in READ_OPERATORS:
            return
        if operator not in WRITE_OPERATORS:
            for draft in drafts:
                draft.opaque(f"the redirection {operator}, which ccx does not read")
        elif target.value not in HARMLESS_TARGETS:
            for draft in drafts:
                draft.writes.append(target.value)

    def _heredoc(self, node: Node, drafts: list[Draft], pieces: list[Word]) -> None:
        quoted = False
        for index, child in enumerate(node.children):
            kind = child.type
            if kind == "heredoc_start":
                quoted = any(q in self.src.of(child) for q in "'\"\\")
            elif kind == "heredoc_body":
                for draft in drafts:
                    draft.end = min(draft.end, child.start_byte)  # the text stops at the body
                if not quoted:
                    found = Findings()
                    scan(child, self.src, found)
                    for inner in found.nested:
                        drafts[0].found.add("command substitution in a heredoc", inner)
            elif kind in REDIRECTS:
                self._redirect(child, drafts, pieces)
            elif kind in WORD_TYPES and node.field_name_for_child(index) == "argument":
                pieces.append(self._word(child, drafts[0]))  # cat <<EOF file: an argument
            elif child.is_named and kind not in ("heredoc_end", "comment"):
                self.statement(child)  # cat <<EOF && next: tree-sitter nests what follows
