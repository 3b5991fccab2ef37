"""The preprocessed unit as text: each file's lines as Slang will compile them, and the map back
to where each token is written (docs/compiler.md "The source model").

A file's text keeps its lines (a directive, a comment or a line of an ``#if`` branch not taken
is blank), and a token written outside any macro keeps its column; a macro's expansion sits where
its invocation is written, on the invocation's first line. ``Rendered.origin`` maps a line and
column of that text back to the file as written: a column inside an expansion is the
invocation's. The text handed to Slang is every inclusion's text in place of its ``#include``
line, between ``#line`` markers, so Slang's line numbers are the files' own.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

from oneshader.compiler.source.lexer import Token
from oneshader.compiler.source.preprocess import Inclusion

_OPEN_CLOSE = frozenset("()[]{},;")


@dataclass
class Rendered:
    """One inclusion's text, and for each line holding an expansion, its tokens' columns:
    (column in the text, column as written, whether the token is written there).
    ``offsets``: where each of the inclusion's tokens starts in ``text`` (the queries of the
    token stream find a token's place in the text with it: ``source/query.py``). ``plain``:
    every token is of the main file and no macro's, and stands in ``text`` where the file
    writes it, with a blank before it there where the file has one (so lexing ``text`` gives
    the tokens back as they are: ``query.lexed_from``)."""

    text: str
    columns: dict[int, list[tuple[int, int, bool]]] = field(default_factory=dict)
    offsets: list[int] = field(default_factory=list)
    plain: bool = False

    def origin(self, line: int, col: int) -> tuple[int, int]:
        """Where the text's ``line``:``col`` is written (the invocation, inside an expansion)."""
        segments = self.columns.get(line)
        if not segments or col <= 0:
            return line, col
        i = bisect.bisect_right(segments, (col, 1 << 30, True)) - 1
        if i < 0:
            return line, col
        at, written, direct = segments[i]
        return line, written + (col - at) if direct else written


@dataclass
class Edited:
    """Where the columns of a rewritten file's text (what Slang is given) were in the file's
    text as compiled: for each line a rewrite changed, its segments (column in the rewritten
    line, column before, whether the segment is kept as it was). Rewrites keep every line, so
    only columns move; a column in what a rewrite wrote is where that edit stands."""

    lines: dict[int, list[tuple[int, int, bool]]]

    def before(self, line: int, col: int) -> int:
        """The column before the rewrites of the rewritten text's ``line``:``col``."""
        segments = self.lines.get(line)
        if not segments or col <= 0:
            return col
        i = bisect.bisect_right(segments, (col, 1 << 30, True)) - 1
        if i < 0:
            return col
        at, was, kept = segments[i]
        return was + (col - at) if kept else was


def edited(before: str, after: str) -> Edited | None:
    """The map of ``after`` (``before`` rewritten, lines kept) back to ``before``: None where
    no column moved."""
    if before == after:
        return None
    old, new = before.split("\n"), after.split("\n")
    if len(old) != len(new):
        return None
    lines: dict[int, list[tuple[int, int, bool]]] = {}
    for n, (a, b) in enumerate(zip(old, new, strict=True), 1):
        if a == b or len(a) == len(b):
            continue  # the same or an edit of the same length: every column stays
        matcher = SequenceMatcher(None, a, b, autojunk=False)
        lines[n] = [(j + 1, i + 1, tag == "equal") for tag, i, _, j, _ in matcher.get_opcodes()]
    return Edited(lines) if lines else None


def _spaced(prev: Token, t: Token) -> bool:
    """Whether ``t`` needs a space after ``prev`` to stay its own token."""
    if t.space:
        return True
    a, b = prev.text[-1:], t.text[:1]
    if prev.kind == "num" and (b.isalnum() or b in "_."):
        return True
    if prev.kind == "id" and (b.isalnum() or b == "_"):
        return True
    return prev.kind == "punct" and t.kind == "punct" and not ({a, b} & _OPEN_CLOSE)


def render(inc: Inclusion, line_count: int) -> Rendered:
    """The text of one inclusion, ``line_count`` lines (linear in its tokens)."""
    lines = [""] * line_count
    columns: dict[int, list[tuple[int, int, bool]]] = {}
    current, cur = 0, 1
    parts: list[str] = []
    expanded = False
    prev: Token | None = None
    offsets: list[int] = []
    append = offsets.append
    base = -1  # the offset in the text at which line ``current`` starts
    tokens = inc.tokens
    first = 0  # the index of line ``current``'s first token
    plain = inc.file == 0
    for k, t in enumerate(tokens):
        site = t.site
        line, col, direct = (t.line, t.col, True) if site is None else (site[0], site[1], False)
        if plain and (not direct or t.hide or t.kind == "raw"):
            plain = False
        if line > current:
            if parts:
                lines[current - 1] = "".join(parts)
                if expanded:
                    columns[current] = _segments(tokens, offsets, first, k, base)
            base += (cur - 1 if current else 0) + line - current
            current, parts, cur, expanded, prev, first = line, [], 1, False, None, k
        if direct and col >= cur:
            # written apart from the token before, or after an expansion that needs a space
            # (``_spaced`` is true of a token written after a space)
            pad = col - cur
            if prev is not None and (t.space or (prev.site is not None and _spaced(prev, t))):
                pad = pad or 1
            if plain:
                # where the file writes it, after a blank in the text (an unterminated
                # literal's too) where the file has one
                blank = pad > 0 or (prev is not None and prev.text[-1] == " ")
                plain = pad == col - cur and line == current and t.space == blank
        else:
            pad = 1 if prev is not None and _spaced(prev, t) else 0
            expanded = expanded or not direct
            plain = False
        if pad:
            parts.append(" " * pad)
            cur += pad
        append(base + cur - 1)
        parts.append(t.text)
        cur += len(t.text)
        prev = t
    if parts:
        lines[current - 1] = "".join(parts)
        if expanded:
            columns[current] = _segments(tokens, offsets, first, len(tokens), base)
    return Rendered("\n".join(lines), columns, offsets, plain)


def _segments(
    tokens: list[Token], offsets: list[int], a: int, b: int, base: int
) -> list[tuple[int, int, bool]]:
    """``Rendered.columns`` of a line holding an expansion, its tokens a..b-1 (the line starts
    at ``base`` in the text): made for those lines alone, from where ``render`` placed them."""
    out = []
    for k in range(a, b):
        t = tokens[k]
        site = t.site
        col, direct = (t.col, True) if site is None else (site[1], False)
        out.append((offsets[k] - base + 1, col, direct))
    return out


def slang_text(
    inc: Inclusion,
    texts: Mapping[Path, str],
    first: Mapping[Path, Inclusion],
    rendered: Callable[[Inclusion], str],
    name: Callable[[Path], str],
) -> str:
    """The text for Slang of ``inc`` (the main file's unit's ``main``): each inclusion's text in
    place of its ``#include`` line between ``#line`` markers. A file's first inclusion is
    ``texts[path]`` (rewritten); a later one that brings text again (a file without a guard,
    included twice) is its own ``rendered`` text. (Recursive as a function of the module: a
    closure calling itself would be a cycle holding the source set for the cycle collector.)"""
    text = texts[inc.path] if first.get(inc.path) is inc else rendered(inc)
    if not inc.children:
        return text
    lines = text.split("\n")
    for line, child in inc.children:
        body = slang_text(child, texts, first, rendered, name)
        lines[line - 1] = (
            f'#line 1 "{name(child.path)}"\n{body}\n#line {line + 1} "{name(inc.path)}"'
        )
    return "\n".join(lines)
