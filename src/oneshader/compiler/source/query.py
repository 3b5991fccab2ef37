"""Queries on the source model's token stream: each file's tokens as compiled (``#if`` branches
taken, macros expanded), with where each one stands in the file's text as compiled, so that a
query finds a token and an edit or a position follows from it. The readers of the source (the
source set, precheck, varyings, the rewrites and their triggers, Slang's side) ask these rather
than apply a regular expression to the text (docs/compiler.md "The source model"); every one is
linear in the tokens it reads.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from oneshader.compiler.source.lexer import Token, lex_directives

__all__ = [
    "OPENERS",
    "Edit",
    "Stream",
    "blank",
    "blanks",
    "edited",
    "file_stream",
    "is_word",
    "lexed",
    "lexed_after",
    "lexed_from",
    "spelled",
    "template_argument",
    "words_of",
]

# Each opening bracket and the bracket that closes it.
OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = frozenset(OPENERS.values())
_NONE = Token("", "", -1, 0, 0)  # beyond either end of a stream
# An edit of a text: the offsets of the span it replaces and what replaces it.
Edit = tuple[int, int, str]


@dataclass
class Stream:
    """One file's tokens as compiled and each one's offset in ``text`` (the file's text as
    compiled, ``SourceSet.texts``). ``tokens[i]`` spells ``text[offsets[i]:end(i)]``."""

    path: Path
    text: str
    tokens: Sequence[Token]
    offsets: Sequence[int]
    _starts: list[int] = field(default_factory=list, repr=False)
    _depths: list[int] = field(default_factory=list, repr=False)
    _lines: list[int] = field(default_factory=list, repr=False)
    _cleaned: str | None = field(default=None, repr=False)
    _by_word: dict[str, list[int]] = field(default_factory=dict, repr=False)

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
        """Each identifier that is one of ``names``, in order (looked up in an index of the
        identifiers, made once: the rewrites ask for a few names each, of every file)."""
        by_word = self._by_word or self._index()
        if isinstance(names, (set, frozenset, dict)) and len(names) > len(by_word):
            # many names (each once), fewer words: each word looked up in the names
            found = [at for w, at in by_word.items() if at and w in names]
        else:
            found = list(filter(None, map(by_word.get, names)))
        if len(found) == 1:
            yield from found[0]
        elif found:
            yield from sorted(i for f in found for i in f)

    def any_word(self, names: Collection[str]) -> bool:
        """Whether an identifier is one of ``names`` (a look-up a name in the index of
        ``words``)."""
        by_word = self._by_word or self._index()
        return any(n in by_word for n in names)

    def words_hold(self, part: str) -> bool:
        """Whether an identifier holds ``part`` (upper case) in any case: one search of all
        the identifiers, joined, that rules out a test of each (``words_where``) where none
        can pass."""
        return part in "\0".join(self._by_word or self._index()).upper()

    def words_where(self, test: Callable[[str], bool]) -> Iterator[int]:
        """Each identifier whose text passes ``test`` (asked once a distinct identifier), in
        order."""
        yield from sorted(i for w, found in self._index().items() if test(w) for i in found)

    def index_of_words(self) -> Iterable[tuple[str, list[int]]]:
        """Each identifier's text and where it stands (the index ``words`` reads)."""
        return self._index().items()

    def _index(self) -> dict[str, list[int]]:
        if not self._by_word:
            by_word: dict[str, list[int]] = {}
            get = by_word.get
            for i, t in enumerate(self.tokens):
                if t.kind == "id":
                    found = get(t.text)
                    if found is None:
                        by_word[t.text] = [i]
                    else:
                        found.append(i)
            self._by_word = by_word or {"": []}
        return self._by_word

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

    def seq(self, i: int, *texts: str) -> bool:
        """Whether the tokens from ``i`` are ``texts``, in order."""
        return i >= 0 and all(self.at(i + k).text == t for k, t in enumerate(texts))

    def word(self, i: int) -> bool:
        """Whether token ``i`` is an identifier."""
        return self.at(i).kind == "id"

    def first_on_line(self, i: int) -> bool:
        """Whether token ``i`` is the first of its line."""
        return i == 0 or self.tokens[i - 1].line != self.tokens[i].line

    def index_at(self, offset: int) -> int:
        """The token that starts at ``offset``, or -1."""
        i = self.index(offset)
        return i if i < len(self.offsets) and self.offsets[i] == offset else -1

    def on_line(self, line: int) -> range:
        """The tokens written on ``line``."""
        if not self._lines:
            self._lines = [t.line for t in self.tokens]
        lines = self._lines
        return range(bisect.bisect_left(lines, line), bisect.bisect_right(lines, line))

    def depth(self, i: int) -> int:
        """How many ``{`` are open before token ``i``."""
        if not self._depths:
            depth, depths = 0, []
            for t in self.tokens:
                depths.append(depth)
                depth += t.text == "{"
                depth -= t.text == "}"
            self._depths = depths
        return self._depths[i] if i < len(self._depths) else 0

    @property
    def cleaned(self) -> str:
        """The text with its comments blanked (line breaks kept): every offset stays."""
        if self._cleaned is None:
            parts: list[str] = []
            at = 0
            for i, t in enumerate(self.tokens):
                start = self.offsets[i]
                parts += (_uncommented(self.text[at:start]), t.text)
                at = start + len(t.text)
            parts.append(_uncommented(self.text[at:]))
            self._cleaned = "".join(parts)
        return self._cleaned

    def items(self, a: int, b: int, angles: bool = True) -> list[tuple[int, int]]:
        """Each non-empty item (first index, end index) of the list of tokens a..b-1, split at
        its commas outside brackets (``angles``: each ``<``/``>`` counts as one too, so
        ``array<float, 2> x`` is one item)."""
        out, depth, first = [], 0, a
        for k in range(a, b):
            t = self.tokens[k]
            if t.kind != "punct":
                continue
            for c in t.text:
                if c in "([{" or (angles and c == "<"):
                    depth += 1
                elif c in ")]}" or (angles and c == ">"):
                    depth -= 1
                elif c == "," and depth == 0:
                    out.append((first, k))
                    first = k + 1
        out.append((first, b))
        return [(i, j) for i, j in out if j > i]

    def statement_start(self, i: int) -> int:
        """The first token of the statement holding token ``i``: after the last ``;``, ``{`` or
        ``}`` before it, or after a preprocessor line (a ``#`` first on its line)."""
        k = i - 1
        while k >= 0:
            t = self.tokens[k]
            if t.text in (";", "{", "}"):
                break
            if t.text == "#" and self.first_on_line(k):
                while k + 1 < i and self.tokens[k + 1].line == t.line:
                    k += 1
                break
            k -= 1
        return k + 1

    def one_assigned(self, i: int) -> int:
        """At an ``=`` (token ``i``): the index just past ``= 1.0;`` (``1``, ``1.``, ``1.0f``,
        ``(1.0h)``...), or -1."""
        k = i + 1 + self.is_(i + 1, "(")
        number = self.at(k).text
        digits = number.rstrip("fFhH")
        if len(number) - len(digits) > 1 or digits[:1] != "1" or digits[1:2] not in ("", "."):
            return -1
        if digits[2:].strip("0"):
            return -1
        k += 1 + self.is_(k + 1, ")")
        return k + 1 if self.is_(k, ";") else -1

    def postfix_start(self, i: int) -> int:
        """The first token of the postfix expression whose member access is token ``i`` (its
        ``.`` or ``->``): names, ``.``/``->`` and balanced ``[...]``/``(...)`` walked back over
        (a call's callee or a parenthesised base's name too)."""
        j = i
        while j > 0:
            k = j - 1
            t = self.tokens[k]
            if t.text in (")", "]"):
                k = self.opening(k)
                if k < 0:
                    return j
                if t.text == "]":
                    j = k
                    continue
                if self.word(k - 1):
                    k -= 1
            elif t.kind != "id":
                return j
            j = k
            if self.at(j - 1).text not in (".", "->"):
                return j
            j -= 1
        return j

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


_LEXED: OrderedDict[str, Stream] = OrderedDict()
_LEXED_CHARS = [0]  # the length of the texts remembered
# characters: a large shader's files and their rewritten texts (FidelityFX's heaviest pass with
# its includes is about 0.4 M), within tens of MB of tokens in a worker that lives on
_LEXED_LIMIT = 1 << 21


def lexed(text: str) -> Stream:
    """The tokens of a text (a file's text as compiled, or as the rewrites before a record that
    reads their result made it): the triggers and the rewrites of a compile ask for the same
    texts, so the texts lexed last are remembered, up to 2 M characters."""
    found = _LEXED.get(text)
    if found is None:
        tokens = lex_directives(text, 0)[0]
        found = Stream(Path(), text, tokens, [])
        found.offsets = [found.offset_of(t.line, t.col) for t in tokens]
        _remember(found)
    else:
        _LEXED.move_to_end(text)
    return found


def _remember(found: Stream) -> None:
    _LEXED[found.text] = found
    _LEXED_CHARS[0] += len(found.text)
    while _LEXED_CHARS[0] > _LEXED_LIMIT and len(_LEXED) > 1:
        _LEXED_CHARS[0] -= len(_LEXED.popitem(last=False)[0])


def lexed_from(
    text: str,
    tokens: Sequence[Token],
    offsets: Sequence[int],
    moved: Collection[int],
    plain: bool = False,
) -> Stream:
    """:func:`lexed` of a file's text as compiled (``sourcemap.render``: ``tokens`` placed at
    ``offsets``, ``moved`` the lines holding an expansion), made from those tokens rather than
    by lexing the text again. A token on any other line stands where the file writes it, with
    blanks or the tokens the file writes next to it around it, so lexing gives it back with its
    text and kind; its line, column and leading blank are read off the text. A line in
    ``moved``, or holding a directive handed on as written, is lexed alone. Where a line could
    lex otherwise alone than in the whole text (a spliced line, a comment opened on a line
    lexed alone), the text is lexed whole. ``plain``: every token stands where lexing the
    text gives it (``sourcemap.Rendered.plain``): taken as it is, without a look at each."""
    found = _LEXED.get(text)
    if found is not None:
        _LEXED.move_to_end(text)
        return found
    spliced = "\\\n" in text
    made = (tokens, offsets) if plain and not spliced else _placed(text, tokens, offsets, moved)
    if made is None:
        return lexed(text)
    found = Stream(Path(), text, *made)
    _remember(found)
    return found


def lexed_after(before: Stream, text: str) -> Stream:
    """:func:`lexed` of ``text``, ``before``'s text edited within its lines (the rewrites keep
    every line), made from ``before``'s tokens: a line the edits left as it was keeps its
    tokens, moved by what the lines above it grew or shrank; a line they changed is lexed
    alone. Lexed whole where a line could lex otherwise alone than in the whole text (a block
    comment, a spliced line) or the lines are not the same in number."""
    found = _LEXED.get(text)
    if found is not None:
        _LEXED.move_to_end(text)
        return found
    old = before.text
    if "/*" in text or "/*" in old or "\\\n" in text or "\\\n" in old:
        return lexed(text)
    old_lines, new_lines = old.split("\n"), text.split("\n")
    if len(old_lines) != len(new_lines):
        return lexed(text)
    tokens: list[Token] = []
    offsets: list[int] = []
    was, at = before.tokens, before.offsets
    i = old_base = new_base = 0
    for n, (a, b) in enumerate(zip(old_lines, new_lines, strict=True), 1):
        j = bisect.bisect_left(at, old_base + len(a) + 1, i)  # past line n's tokens
        if a == b:
            tokens += was[i:j]
            shift = new_base - old_base
            offsets += at[i:j] if not shift else [k + shift for k in at[i:j]]
        else:
            _lex_line(b, n, new_base, tokens, offsets)
        i, old_base, new_base = j, old_base + len(a) + 1, new_base + len(b) + 1
    found = Stream(Path(), text, tokens, offsets)
    _remember(found)
    return found


def _lex_line(piece: str, line: int, base: int, tokens: list[Token], offsets: list[int]) -> None:
    """The tokens of line ``line`` (``piece``, at offset ``base`` of its text), lexed alone."""
    for u in lex_directives(piece, 0)[0]:
        u.line = line
        tokens.append(u)
        offsets.append(base + u.col - 1)


def _placed(
    text: str, tokens: Sequence[Token], offsets: Sequence[int], moved: Collection[int]
) -> tuple[Sequence[Token], Sequence[int]] | None:
    """The tokens and offsets of :func:`lexed_from` (``tokens`` and ``offsets`` themselves
    where every token is kept), or None where lexing is needed."""
    if "\\\n" in text:
        return None
    lines = text.split("\n")
    out: list[Token] = []
    at_: list[int] = []
    line, base, end = 1, 0, len(lines[0])  # the current line, its start and its end's offset
    alone = 1 in moved
    relexed = 0  # the last line lexed alone
    kept = True  # every token as made
    for t, at in zip(tokens, offsets, strict=True):
        if at >= end:
            while at >= end:
                line, base = line + 1, end + 1
                end = base + len(lines[line - 1])
            alone = line in moved
        if alone or t.kind == "raw":
            if relexed == line:
                continue
            if at_ and at_[-1] >= base:
                return None  # (a directive shares its line with no other token)
            piece = lines[line - 1]
            if "/*" in piece:
                return None
            relexed, kept = line, False
            _lex_line(piece, line, base, out, at_)
            continue
        col, space = at - base + 1, at > base and text[at - 1] == " "
        made = not (t.file or t.hide or t.site)  # of the main file, by no macro
        if made and t.col == col and t.line == line and t.space == space:
            out.append(t)  # the token as made, in its place: the same
        else:
            out.append(Token(t.kind, t.text, 0, line, col, space))
            kept = False
        at_.append(at)
    return (tokens, offsets) if kept else (out, at_)


def file_stream(path: Path, text: str, tokens: Sequence[Token], offsets: Sequence[int]) -> Stream:
    """A file's stream as compiled (``SourceSet.stream``), sharing the index of words of the
    stream :func:`lexed_from` made of its text where that one holds these very tokens (a
    file without expansions): the queries of both read words."""
    s = Stream(path, text, tokens, offsets)
    found = _LEXED.get(text)
    if found is not None and found.tokens is tokens:
        s._by_word = found._index()
    return s


def spelled(s: Stream, a: int, b: int) -> str:
    """Tokens a..b-1 on one line: one space where the text has white space, a comment or a
    line break between two of them, none elsewhere."""
    out: list[str] = []
    for k in range(a, b):
        t = s.tokens[k]
        if out and (t.space or s.first_on_line(k)):
            out.append(" ")
        out.append(t.text)
    return "".join(out)


def edited(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` offset span replaced (from the last back; the
    spans do not overlap)."""
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def blank(text: str, start: int, end: int) -> tuple[int, int, str]:
    """The edit that blanks ``text[start:end]`` but its line breaks."""
    return start, end, "".join(c if c == "\n" else " " for c in text[start:end])


def blanks(text: str, spans: Iterable[tuple[int, int]]) -> list[Edit]:
    """The edits that blank each ``(start, end)`` span of ``text`` but its line breaks, spans
    that overlap or touch merged into one (so that the edits never overlap)."""
    out: list[Edit] = []
    for start, end in sorted(spans):
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = blank(text, out[-1][0], end)
            continue
        out.append(blank(text, start, end))
    return out


def _uncommented(gap: str) -> str:
    """The white space between two tokens with its comments blanked (line breaks kept)."""
    if "/" not in gap:
        return gap
    out: list[str] = []
    i, n = 0, len(gap)
    while i < n:
        if gap.startswith("//", i):
            end = gap.find("\n", i)
            end = n if end < 0 else end
        elif gap.startswith("/*", i):
            end = gap.find("*/", i + 2)
            end = n if end < 0 else end + 2
        else:
            out.append(gap[i])
            i += 1
            continue
        out.append("".join(c if c == "\n" else " " for c in gap[i:end]))
        i = end
    return "".join(out)
