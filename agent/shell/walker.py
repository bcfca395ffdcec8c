"""Walk tree-sitter's bash syntax tree into the simple commands a command line runs.

Each simple command becomes a :class:`Draft`: its words, assignment prefixes, the files its
redirections write and the substitutions inside it. Compound commands (if, while, case,
``{ }``) contribute the commands inside them; subshells, function definitions, loops'
variables and arithmetic become opaque drafts of their own. Where tree-sitter's grammar
is known to part from bash (words after a redirection, ``<>``, ``$"..."``, a
backslash-newline inside a word) the walker reads what bash would.

Redirections are read as bash reads them: which files a command reads and writes, the
words tree-sitter files under a redirection although they are arguments, ``<>`` (which the
grammar lacks), and heredocs (whose bodies may hold substitutions and after which the
grammar nests the rest of the line).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from agent.shell.part import GLOB, LITERAL
from agent.shell.words import (
    WORD_TYPES,
    Findings,
    Source,
    Word,
    evaluate,
    join_adjacent,
    literal_word,
    scan,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from tree_sitter import Node

CONTAINERS = frozenset(
    {"program", "list", "pipeline", "do_group", "if_statement", "elif_clause", "else_clause",
     "while_statement", "negated_command", "case_statement", "case_item", "ERROR"}
)  # fmt: skip
_EXPRESSIONS = frozenset(
    {"unary_expression", "binary_expression", "parenthesized_expression",
     "ternary_expression", "postfix_expression"}
)  # fmt: skip
_TEST_LITERALS = frozenset({"test_operator", "regex", "variable_name"})
_CASE_ENDS = frozenset({";;", ";&", ";;&"})
ASSIGNMENT_REASON = "a variable assignment, which changes what the commands after it do"
WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
READ_OPERATORS = frozenset({"<", "<&"})
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


@dataclass
class Draft:
    """A simple command while the walker collects it."""

    start: int
    end: int
    words: list[Word] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    found: Findings = field(default_factory=Findings)
    reason: str = ""  # opaque for a reason other than a substitution

    def opaque(self, reason: str) -> None:
        self.reason = self.reason or reason


class Walker:
    """Collects the drafts of a command line, in the order they appear."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.drafts: list[Draft] = []
        self.understood_errors: set[tuple[int, int]] = set()  # ERROR nodes read as "<>"
        self.joined_breaks: set[int] = set()  # backslash-newlines inside words, rejoined
        self._read_write: set[int] = set()  # file_redirect starts that are really "<>"
        self.misread = False  # the grammar accepted what bash refuses (;; outside a case)
        self._handlers: dict[str, Callable[[Node], None]] = {
            "command": lambda n: self._command(n, n, []),
            "redirected_statement": self._redirected,
            "declaration_command": self._keyword_command,
            "unset_command": self._keyword_command,
            "test_command": self._test,
            "variable_assignment": self._bare_assignment,
            "variable_assignments": self._bare_assignment,
            "subshell": self._subshell,
            "function_definition": self._function,
            "for_statement": self._for,
            "c_style_for_statement": self._arithmetic,
            "compound_statement": self._compound,
            "comment": lambda n: None,
        }

    def statement(self, node: Node) -> None:
        if node.type in CONTAINERS:
            self._container(node)
        else:
            self._handlers.get(node.type, self._unknown)(node)

    # -- containers -----------------------------------------------------

    def _container(self, node: Node) -> None:
        if node.type not in ("case_item", "ERROR") and any(
            c.type in _CASE_ENDS for c in node.children
        ):
            self.misread = True
        header: list[Node] = []
        for child in node.named_children:
            if child.type in WORD_TYPES or child.type == "heredoc_body":
                header.append(child)  # case subjects and patterns
            else:
                self.statement(child)
        self._header(header)

    def _header(self, nodes: list[Node]) -> None:
        """Words that are not a command (case patterns...): only their substitutions count."""
        found = Findings()
        for node in nodes:
            scan(node, self.src, found)
        if found.nested:
            draft = self._new(nodes[0].start_byte, nodes[-1].end_byte)
            draft.found = found

    def _compound(self, node: Node) -> None:
        if node.children and node.children[0].type == "((":
            self._arithmetic(node)
        else:
            self._container(node)

    # -- simple commands ------------------------------------------------

    def _command(self, node: Node, span: Node, redirects: list[Node]) -> None:
        draft = self._new(span.start_byte, span.end_byte)
        pieces: list[Word] = []
        commented = False
        for child in node.children:
            kind = child.type
            if commented:
                draft.found.misread = True  # bash's comment ends the command at its newline
            if kind == "comment":
                commented = True
            elif kind == "variable_assignment":
                draft.assignments.append(self.src.of(child))
                scan(child, self.src, draft.found)
            elif kind == "command_name":
                pieces.extend(self._word(c, draft) for c in child.children)
            elif kind in REDIRECTS:
                self._redirect(child, [draft], pieces)
            elif kind in WORD_TYPES or not child.is_named:
                pieces.append(self._word(child, draft))
            else:
                self._not_read(child, draft)
        for redirect in redirects:
            self._redirect(redirect, [draft], pieces)
        draft.words = self._rejoin(pieces)
        self._check_one_line(span, draft)

    def _keyword_command(self, node: Node) -> None:
        """``export A=1 B``, ``local x``, ``unset y``: the keyword is the command's name."""
        draft = self._new(node.start_byte, node.end_byte)
        pieces: list[Word] = []
        for child in node.children:
            if child.type == "variable_assignment":
                scan(child, self.src, draft.found)
                pieces.append(self._assignment_word(child, draft))
            elif child.type == "variable_name" or not child.is_named:
                pieces.append(literal_word(child, self.src))
            elif child.type in WORD_TYPES:
                pieces.append(self._word(child, draft))
            elif child.type != "comment":
                self._not_read(child, draft)
        draft.words = self._rejoin(pieces)
        self._check_one_line(node, draft)

    def _test(self, node: Node) -> None:
        """``[ ... ]`` and ``[[ ... ]]``: the brackets, operators and operands as words."""
        draft = self._new(node.start_byte, node.end_byte)
        pieces: list[Word] = []
        double = bool(node.children) and node.children[0].type == "[["

        def flatten(parent: Node) -> None:
            for child in parent.children:
                if child.type in WORD_TYPES:
                    word = self._word(child, draft)
                    if double and word.kind == GLOB:  # [[ ]] expands no file names
                        word = replace(word, kind=LITERAL)
                    pieces.append(word)
                elif child.type in _EXPRESSIONS:
                    flatten(child)
                elif not child.is_named or child.type in _TEST_LITERALS:
                    pieces.append(literal_word(child, self.src))
                elif child.type != "comment":
                    self._not_read(child, draft)

        flatten(node)
        draft.words = self._rejoin(pieces)
        if not double:
            self._check_one_line(node, draft)  # [[ ... ]] may span lines; [ ... ] may not

    def _check_one_line(self, node: Node, draft: Draft) -> None:
        """A simple command ends at an unquoted newline. The grammar sometimes reads on (after
        a backslash-newline and a blank line, or into a word), hiding the next command."""
        data = self.src.data
        at = data.find(b"\n", draft.start, draft.end)
        while at >= 0:
            backslashes = at - len(data[draft.start : at].rstrip(b"\\")) - draft.start
            if backslashes % 2 == 0:
                inner = node.descendant_for_byte_range(at, at + 1)
                if not _quoted_or_nested(inner, node):
                    draft.found.misread = True
                    return
            at = data.find(b"\n", at + 1, draft.end)

    def _assignment_word(self, node: Node, draft: Draft) -> Word:
        value_node = node.child_by_field_name("value")
        if value_node is None:
            return literal_word(node, self.src)
        head = self.src.text(node.start_byte, value_node.start_byte)
        value = evaluate(value_node, self.src, draft.found)
        raw = self.src.of(node)
        return Word(raw, head + value.value, value.kind, node.start_byte, node.end_byte)

    def _rejoin(self, pieces: list[Word]) -> list[Word]:
        """Pieces in text order; pieces with nothing (or only backslash-newlines) between
        them are one word to bash."""
        words: list[Word] = []
        for piece in sorted(pieces, key=lambda w: w.start):
            if words:
                gap = self.src.text(words[-1].end, piece.start)
                if gap == "" or (gap and gap.replace("\\\n", "") == ""):
                    if gap:
                        self.joined_breaks.update(_breaks(words[-1].end, gap))
                    words[-1] = join_adjacent(words[-1], piece)
                    continue
            words.append(piece)
        return words

    # -- redirections ---------------------------------------------------

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

    # -- opaque statements ----------------------------------------------

    def _bare_assignment(self, node: Node) -> None:
        draft = self._new(node.start_byte, node.end_byte)
        assignments = [node] if node.type == "variable_assignment" else node.named_children
        for assignment in assignments:
            draft.assignments.append(self.src.of(assignment))
            scan(assignment, self.src, draft.found)
        draft.opaque(ASSIGNMENT_REASON)

    def _subshell(self, node: Node) -> None:
        draft = self._new(node.start_byte, node.end_byte)
        draft.opaque("a subshell")
        inner = self.src.text(node.children[0].end_byte, node.children[-1].start_byte)
        if inner.strip():
            draft.found.nested.append(inner.strip())

    def _function(self, node: Node) -> None:
        draft = self._new(node.start_byte, node.end_byte)
        draft.opaque("a function definition")
        body = node.child_by_field_name("body")
        if body is not None:
            draft.found.nested.append(self.src.of(body))

    def _for(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        draft = self._new(node.start_byte, body.start_byte if body else node.end_byte)
        variable = node.child_by_field_name("variable")
        values = node.children_by_field_name("value")
        for value in values:
            scan(value, self.src, draft.found)
        name = self.src.of(variable) if variable else ""
        draft.assignments.append(f"{name}=" + " ".join(self.src.of(v) for v in values))
        draft.opaque("a for loop, whose variable can change what the commands in it do")
        if body is not None:
            self.statement(body)

    def _arithmetic(self, node: Node) -> None:
        """``((...))`` and ``for ((...))``: arithmetic can expand variables into code."""
        body = node.child_by_field_name("body")
        draft = self._new(node.start_byte, body.start_byte if body else node.end_byte)
        for child in node.named_children:
            if child != body:
                scan(child, self.src, draft.found)
        draft.opaque("an arithmetic expression")
        if body is not None:
            self.statement(body)

    def _unknown(self, node: Node) -> None:
        draft = self._new(node.start_byte, node.end_byte)
        self._not_read(node, draft)

    def _not_read(self, node: Node, draft: Draft) -> None:
        draft.opaque(f"{node.type.replace('_', ' ')}, which ccx does not read")
        scan(node, self.src, draft.found)

    def _new(self, start: int, end: int) -> Draft:
        draft = Draft(start, end)
        self.drafts.append(draft)
        return draft


def _breaks(start: int, gap: str) -> list[int]:
    """Byte offsets of the backslash-newlines in a gap that starts at ``start``."""
    return [start + 2 * k for k in range(len(gap) // 2)]


_NEWLINE_HOLDERS = frozenset(
    {"string", "raw_string", "ansi_c_string", "translated_string", "command_substitution",
     "process_substitution", "heredoc_body", "heredoc_redirect", "arithmetic_expansion",
     "expansion"}
)  # fmt: skip


def _quoted_or_nested(node: Node | None, top: Node) -> bool:
    """Whether a newline inside ``top`` sits in quotes, a substitution or a heredoc."""
    while node is not None and node != top:
        if node.type in _NEWLINE_HOLDERS:
            return True
        node = node.parent
    return False
