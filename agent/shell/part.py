"""The unit a permission check judges: one simple command of a command line."""

from __future__ import annotations

from dataclasses import dataclass

# How much of a word's value the text fixes: exactly, up to glob / brace expansion (file
# names, possibly ones that look like options), or not at all ($x, $(...), ${...}).
LITERAL, GLOB, DYNAMIC = "literal", "glob", "dynamic"
_UNSURE_CHARS = frozenset("$`*?[{\\'\"")


@dataclass(frozen=True)
class CommandPart:
    """One simple command of a command line."""

    text: str  # as written, redirections included
    raw_words: tuple[str, ...]  # as written, without assignments, keywords or redirections
    words: tuple[str, ...]  # the same words with quotes and escapes removed
    writes: tuple[str, ...] = ()  # files written by output redirections (/dev/null etc. not)
    opaque_reason: str = ""  # why the text cannot be trusted to say what runs
    nested: tuple[str, ...] = ()  # command lines run inside: $(...), bash -c, find -exec...
    assignments: tuple[str, ...] = ()  # VAR=value prefixes as written, in order
    dynamic_program: bool = False  # what runs is decided at run time ($x, eval "$y"...)
    word_kinds: tuple[str, ...] = ()  # LITERAL / GLOB / DYNAMIC for each word
    reads: tuple[str, ...] = ()  # files read by input redirections (< file, <> file)

    def __post_init__(self) -> None:
        if len(self.word_kinds) != len(self.words):
            # Built by hand: only a word written without any shell syntax counts as literal.
            kinds = tuple(
                LITERAL if not _UNSURE_CHARS & set(raw) else DYNAMIC for raw in self.raw_words
            )
            if len(kinds) != len(self.words):
                kinds = (DYNAMIC,) * len(self.words)
            object.__setattr__(self, "word_kinds", kinds)

    @property
    def command(self) -> str:
        """The command as permission rules see it: its words, one space apart."""
        return " ".join(self.raw_words)

    @property
    def opaque(self) -> bool:
        return bool(self.opaque_reason)
