"""Queries on the source model's token stream: each file's tokens as compiled (``#if`` branches
taken, macros expanded), with where each one stands in the file's text as compiled, so that a
query finds a token and an edit or a position follows from it. The readers of the source (the
source set, precheck, varyings, the rewrites and their triggers, Slang's side) ask these rather
than apply a regular expression to the text (docs/compiler.md "The source model"); every one is
linear in the tokens it reads.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from oneshader.compiler.source.lexer import Token

__all__ = ["OPENERS", "Stream", "is_word", "template_argument", "words_of"]

# Each opening bracket and the bracket that closes it.
OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = frozenset(OPENERS.values())
_NONE = Token("", "", -1, 0, 0)  # beyond either end of a stream


@dataclass
class Stream:
    """One file's tokens as compiled and each one's offset in ``text`` (the file's text as
    compiled, ``SourceSet.texts``). ``tokens[i]`` spells ``text[offsets[i]:end(i)]``."""

    path: Path
    text: str
    tokens: Sequence[Token]
    offsets: Sequence[int]
    _starts: list[int] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.tokens)

    def at(self, i: int) -> Token:
        """Token ``i``, or an empty token past either end (so that neighbours can be asked)."""
        return self.tokens[i] if 0 <= i < len(self.tokens) else _NONE

    def is_(self, i: int, *texts: str) -> bool:
        """Whether token ``i`` is one of ``texts``."""
        return self.at(i).text in texts

    def start(self, i: int) -> int:
        """The offset of token ``i`` in the text (the text's end past the last token)."""
        return self.offsets[i] if i < len(self.offsets) else len(self.text)

    def end(self, i: int) -> int:
        """The offset just past token ``i``."""
        return self.offsets[i] + len(self.tokens[i].text)

    def line_col(self, i: int) -> tuple[int, int]:
        """The line and column (1-based) of token ``i`` in the text as compiled."""
        return self.position(self.start(i))

    def position(self, offset: int) -> tuple[int, int]:
        """The line and column (1-based) of an offset of the text."""
        starts = self._line_starts()
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    def offset_of(self, line: int, col: int) -> int:
        """The offset of a line and column (1-based) of the text (a scanned declaration's)."""
        return self._line_starts()[line - 1] + col - 1

    def _line_starts(self) -> list[int]:
        if not self._starts:
            text, starts, at = self.text, [0], self.text.find("\n")
            while at >= 0:
                starts.append(at + 1)
                at = text.find("\n", at + 1)
            self._starts = starts
        return self._starts

    def index(self, offset: int) -> int:
        """The first token that starts at or after ``offset``."""
        return bisect.bisect_left(self.offsets, offset)

    def closing(self, i: int) -> int:
        """The index just past the bracket closing the one at ``i`` (brackets of every kind
        counted together), or -1 when it is not closed."""
        depth = 0
        tokens = self.tokens
        for j in range(i, len(tokens)):
            t = tokens[j].text
            if t in OPENERS:
                depth += 1
            elif t in _CLOSERS:
                depth -= 1
                if depth == 0:
                    return j + 1
        return -1

    def opening(self, i: int) -> int:
        """The index of the bracket that the one at ``i`` closes (every kind counted together),
        or -1."""
        depth = 0
        tokens = self.tokens
        for j in range(i, -1, -1):
            t = tokens[j].text
            if t in _CLOSERS:
                depth += 1
            elif t in OPENERS:
                depth -= 1
                if depth == 0:
                    return j
        return -1

    def words(self, names: Collection[str]) -> Iterator[int]:
        """Each identifier that is one of ``names``."""
        for i, t in enumerate(self.tokens):
            if t.kind == "id" and t.text in names:
                yield i

    def calls(self, names: Collection[str]) -> Iterator[int]:
        """Each identifier of ``names`` followed by ``(`` (a call, or a declaration's name)."""
        for i in self.words(names):
            if self.at(i + 1).text == "(":
                yield i

    def free(self, i: int) -> bool:
        """Whether identifier ``i`` stands alone: not a member (after ``.``) nor qualified
        (after ``::``)."""
        return self.at(i - 1).text not in (".", "::", "->")

    def method(self, i: int) -> int:
        """For an identifier ``i``: the index of the method it calls (``i . m (``), or -1."""
        if self.at(i + 1).text == "." and self.at(i + 2).kind == "id" and self.is_(i + 3, "("):
            return i + 2
        return -1

    def object_of(self, i: int) -> int:
        """For a member ``i`` (after ``.``): the index of the identifier it is a member of,
        past one subscript (``a[k].m``: ``a``), or -1."""
        if self.at(i - 1).text != ".":
            return -1
        j = i - 2
        if self.at(j).text == "]":
            j = self.opening(j) - 1
        return j if j >= 0 and self.at(j).kind == "id" else -1

    def span_text(self, a: int, b: int) -> str:
        """The text of tokens a..b-1 as compiled."""
        if a >= b:
            return ""
        return self.text[self.start(a) : self.end(b - 1)]


def is_word(text: str) -> bool:
    """Whether ``text`` is one identifier (or a number) of word characters: what ``\\w+`` is."""
    return bool(text) and all(c.isalnum() or c == "_" for c in text) and text.isascii()


def words_of(text: str) -> list[str]:
    """The runs of word characters of a piece of text (a type as the scanner spells it)."""
    out: list[str] = []
    cur: list[str] = []
    for c in text:
        if (c.isalnum() or c == "_") and c.isascii():
            cur.append(c)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def template_argument(type_text: str) -> str | None:
    """The first word of a type's template arguments (``S`` of ``StructuredBuffer<S>``, ``int``
    of ``RWBuffer< int >``), or None without any."""
    at = type_text.find("<")
    if at < 0:
        return None
    rest = type_text[at + 1 :].lstrip()
    words = words_of(rest)
    return words[0] if words and rest.startswith(words[0]) else None
