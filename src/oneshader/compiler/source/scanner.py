"""What the HLSL source says as written: what Slang's reflection only knows canonically.

Slang reports ``Texture2D<vector<float,4>>`` where the user wrote ``Texture2D<float4>``, and does
not report ``register()``, ``[[vk::...]]`` attributes, interpolation modifiers or where a struct
member is declared. This scanner reads the top level of a file (and the bodies of its structs and
constant buffers) just far enough to answer those questions with positions; it is not a parser and
never judges validity, which stays Slang's job.
"""

from __future__ import annotations

import bisect
import functools
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from oneshader.compiler.source.kinds import RTYPES
from oneshader.compiler.source.lexer import Token, lex_directives, strip_comments

__all__ = [
    "Attribute",
    "Declaration",
    "Field",
    "SourceFile",
    "StructDef",
    "include_named",
    "scan",
    "strip_comments",
]

_BLOCKS = ("cbuffer", "tbuffer")

# Modifiers that may precede a declaration's type and are not part of it.
_MODIFIERS = frozenset(
    {
        "static",
        "const",
        "uniform",
        "extern",
        "volatile",
        "globallycoherent",
        "groupshared",
        "shared",
        "precise",
        "row_major",
        "column_major",
        "nointerpolation",
        "linear",
        "centroid",
        "noperspective",
        "sample",
        "in",
        "out",
        "inout",
        "inline",
        "snorm",
        "unorm",
    }
)
INTERPOLATION_MODIFIERS = ("nointerpolation", "linear", "centroid", "noperspective", "sample")


def line_offsets(text: str) -> list[int]:
    """The offset at which each line of ``text`` starts (index 0: line 1)."""
    starts, at = [0], text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def line_col(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of an offset into ``text``."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def closing(text: str, i: int) -> int:
    """The offset just past the bracket that closes the one at ``i`` (any of ``([{``, counting
    every kind), or -1 when it is not closed. For comment-free text."""
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def comma_spans(text: str, a: int, b: int, keep_empty: bool = False) -> list[tuple[int, int]]:
    """The (start, end) offsets of each non-empty item of the list in ``text[a:b]``, split at
    its commas outside brackets (``<...>`` too: ``array<float, 2> x`` is one item);
    ``keep_empty``: every item, blank ones too (a WGSL patch counts arguments by position).
    Plain text, no tokens: the MSL and WGSL patches split emitted code with it too."""
    out, depth, start = [], 0, a
    for j in range(a, b):
        c = text[j]
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            out.append((start, j))
            start = j + 1
    out.append((start, b))
    return out if keep_empty else [(i, j) for i, j in out if text[i:j].strip()]


@dataclass(frozen=True)
class Attribute:
    """``[[vk::binding(1, 0)]]`` is name ``vk::binding`` with args ``("1", "0")``."""

    name: str
    args: tuple[str, ...]
    line: int
    column: int


@dataclass(frozen=True)
class Field:
    name: str
    type_text: str
    line: int
    column: int
    modifiers: tuple[str, ...] = ()
    semantic: str = ""
    attributes: tuple[Attribute, ...] = ()
    array: int | None = None  # the element count of ``x[N]`` (the product for x[N][M]; 0: unsized)


@dataclass(frozen=True)
class StructDef:
    """A struct, a cbuffer/tbuffer body, or a function's parameter list (``kind`` says which)."""

    name: str
    kind: str
    fields: tuple[Field, ...]
    line: int
    column: int
    returns: str = ""  # a function's result type as written (with its modifiers)

    def field(self, name: str) -> Field | None:
        return self._by_name.get(name)

    @functools.cached_property
    def _by_name(self) -> dict[str, Field]:
        """The first field of each name (a lookup per member: a scan each cost a square)."""
        out: dict[str, Field] = {}
        for f in self.fields:
            out.setdefault(f.name, f)
        return out


@dataclass(frozen=True)
class Declaration:
    """A global declaration: a resource, a cbuffer/tbuffer block, a push block or a constant.

    ``type_text`` is the type as written (whitespace collapsed), ``base`` its name without
    template arguments (``cbuffer``/``tbuffer`` for blocks). ``register`` is (class, number,
    space) from ``: register(...)``; ``space`` is M of DXC's ``register(spaceM)`` (no class
    or number: the next free binding of set M).
    """

    name: str
    base: str
    type_text: str
    file: str
    line: int
    column: int
    array: int | None = None  # None: not an array; 0: unsized (the product for x[N][M])
    dimensions: int = 0  # of the array: 2 for x[N][M]
    register: tuple[str, int, int] | None = None
    register_pos: tuple[int, int] = (0, 0)
    space: int | None = None
    attributes: tuple[Attribute, ...] = ()
    modifiers: tuple[str, ...] = ()
    initializer: str = ""

    def attribute(self, name: str) -> Attribute | None:
        return next((a for a in self.attributes if a.name == name), None)


@dataclass(frozen=True)
class EntryAttribute:
    name: str
    stage: str
    line: int
    column: int


@dataclass
class SourceFile:
    """Everything scanned from one file."""

    path: str
    declarations: list[Declaration] = field(default_factory=list)
    structs: dict[str, StructDef] = field(default_factory=dict)
    functions: dict[str, StructDef] = field(default_factory=dict)
    entries: list[EntryAttribute] = field(default_factory=list)
    # Resources declared in a cbuffer/tbuffer body, which DXC makes global resources (declared
    # before the block): (offset of the block's statement, start, end of the member's text,
    # ";" included), and the blocks holding nothing else, which DXC drops: (start, end) of the
    # header (to the "{") and of the closing "}" (";" included). Offsets into the file's text.
    block_resources: list[tuple[int, int, int]] = field(default_factory=list)
    resource_only_blocks: list[tuple[int, int, int, int]] = field(default_factory=list)


# A punctuator of more than one character, as the scanner reads it: one token a character
# (``>>`` closes two template argument lists, ``::`` is two colons).
_CHARS = {c: Token("punct", c, 0, 0, 0) for c in string.punctuation}


class _Positions:
    def __init__(self, text: str) -> None:
        self.starts = line_offsets(text)

    def at(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


# Blocks whose contents the scanner reads; any other block (a function's body, an initializer)
# is skipped whole: only its braces are kept.
_READ_INSIDE = frozenset({"struct", "cbuffer", "tbuffer", "namespace"})


def _header_word(toks: list[Token]) -> str:
    """The first word of the statement the tokens end with, past its attributes."""
    i = len(toks)
    while i > 0 and toks[i - 1].text not in (";", "{", "}"):
        i -= 1
    depth = 0
    for t in toks[i:]:
        if t.text == "[":
            depth += 1
        elif t.text == "]":
            depth -= 1
        elif depth == 0 and t.kind == "id":
            return t.text
    return ""


def _lexed(text: str) -> tuple[list[Token], list[int]]:
    """The source model's tokens of ``text`` (``lexer.lex_directives``) but for preprocessor
    lines, each with its offset."""
    starts = line_offsets(text)
    lexed, directives = lex_directives(text, 0)
    tokens: list[Token] = []
    a = 0
    for start, end in [*directives, (len(lexed), len(lexed))]:
        tokens += lexed[a:start]
        a = end
    return tokens, [starts[t.line - 1] + t.col - 1 for t in tokens]


def _tokens(
    text: str, tokens: Sequence[Token] | None = None, offsets: Sequence[int] | None = None
) -> tuple[list[Token], list[int]]:
    """The tokens the scanner reads and their offsets in ``text``: the source model's own
    (``tokens`` with their ``offsets`` in ``text`` where the caller has them, else lexed here),
    a punctuator of more than one character as one token a character, and of the blocks the
    scanner skips only their braces. Linear."""
    if tokens is None or offsets is None:
        tokens, offsets = _lexed(text)
    toks: list[Token] = []
    offs: list[int] = []
    keep, at_ = toks.append, offs.append
    skipping = 0  # brace depth inside a skipped block (0: reading)
    for t, at in zip(tokens, offsets, strict=True):
        word = t.text
        if skipping:
            if word == "{":
                skipping += 1
            elif word == "}":
                skipping -= 1
                if not skipping:
                    keep(t)
                    at_(at)
            continue
        kind = t.kind
        if kind == "punct":
            if word == "{" and _header_word(toks) not in _READ_INSIDE:
                skipping = 1
            if len(word) == 1:
                keep(t)
                at_(at)
            else:
                toks += [_CHARS[c] for c in word]
                offs += range(at, at + len(word))
        elif kind != "raw":  # a directive handed on as written
            keep(t)
            at_(at)
    return toks, offs


def _match(toks: list[Token], i: int, open_: str, close: str) -> int:
    """Index just past the bracket closing the one at ``i``."""
    depth = 0
    n = len(toks)
    while i < n:
        t = toks[i].text
        if t == open_:
            depth += 1
        elif t == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


# The characters of an attribute's name.
_NAME_CHARACTERS = string.ascii_letters + string.digits + "_:"


def _args(text: str) -> tuple[str, ...]:
    """An attribute's arguments, split at the commas outside brackets (``(``, ``[``, ``<``),
    each stripped of blanks and quotes (the brackets counted between one comma and the
    next)."""
    text = text.strip()
    if not text:
        return ()
    parts: list[str] = []
    depth = begin = 0
    at, k = 0, text.find(",")
    while k >= 0:
        depth += sum(text.count(c, at, k) for c in "([<") - sum(text.count(c, at, k) for c in ")]>")
        if depth == 0:
            parts.append(text[begin:k].strip())
            begin = k + 1
        at, k = k, text.find(",", k + 1)
    parts.append(text[begin:].strip())
    return tuple(p.strip('"') for p in parts)


def _top_level_parts(text: str, offset: int) -> list[tuple[int, str]]:
    """``text`` split at the commas outside parentheses, each part with its offset (``text``
    starting at ``offset``): the parentheses counted between one comma and the next."""
    parts: list[tuple[int, str]] = []
    depth = begin = 0
    at, k = 0, text.find(",")
    while k >= 0:
        depth += text.count("(", at, k) - text.count(")", at, k)
        if depth == 0:
            parts.append((offset + begin, text[begin:k]))
            begin = k + 1
        at, k = k, text.find(",", k + 1)
    parts.append((offset + begin, text[begin:]))
    return parts


class _Scanner:
    def __init__(
        self,
        path: str,
        text: str,
        tokens: Sequence[Token] | None = None,
        offsets: Sequence[int] | None = None,
        position: Callable[[int], tuple[int, int]] | None = None,
    ) -> None:
        self.path = path
        self.text = strip_comments(text)
        self.position = position or _Positions(self.text).at
        self.toks, self.offs = _tokens(self.text, tokens, offsets)
        self.out = SourceFile(path)

    def at(self, k: int) -> tuple[int, int]:
        """The line and column of token ``k``."""
        return self.position(self.offs[k])

    def span(self, a: int, b: int) -> str:
        """Source text of tokens a..b-1, whitespace collapsed."""
        if a >= b:
            return ""
        start = self.offs[a]
        end = self.offs[b - 1] + len(self.toks[b - 1].text)
        return " ".join(self.text[start:end].split())

    def attributes(self, i: int, end: int) -> tuple[list[Attribute], int]:
        attrs: list[Attribute] = []
        toks = self.toks
        while i < end and toks[i].text == "[":
            close = _match(toks, i, "[", "]")
            double = i + 1 < end and toks[i + 1].text == "["
            inner_a = i + 2 if double else i + 1
            inner_b = close - 2 if double else close - 1
            if inner_a < inner_b:
                start = self.offs[inner_a]
                stop = self.offs[inner_b - 1] + len(toks[inner_b - 1].text)
                # [[a(1), b(2)]] holds two attributes, as DXC reads it
                for at, part in _top_level_parts(self.text[start:stop], start):
                    parsed = _attribute(part)
                    if parsed is not None:
                        lead, name, args = parsed
                        line, col = self.position(at + lead)
                        attrs.append(Attribute(name, _args(args), line, col))
            i = close
        return attrs, i

    def run(self) -> SourceFile:
        toks = self.toks
        i, n = 0, len(toks)
        while i < n:
            # One top-level statement: up to ';' at depth 0, or a '{...}' block (and its ';').
            j = i
            while j < n and toks[j].text not in (";", "{"):
                if toks[j].text in "([":
                    j = _match(toks, j, toks[j].text, ")" if toks[j].text == "(" else "]")
                    continue
                j += 1
            if j < n and toks[j].text == "{":
                close = _match(toks, j, "{", "}")
                self.block(i, j, close)
                i = close
                if i < n and toks[i].text == ";":
                    i += 1
                continue
            self.statement(i, j)
            i = j + 1
        return self.out

    def block(self, a: int, brace: int, close: int) -> None:
        toks = self.toks
        attrs, k = self.attributes(a, brace)
        words = [t.text for t in toks[k:brace]]
        if not words:
            return
        if words[0] in ("struct", "cbuffer", "tbuffer") and len(words) >= 2:
            name_tok = toks[k + 1]
            line, col = self.at(k + 1)
            fields = self.fields(brace + 1, close - 1)
            kind = words[0]
            self.out.structs.setdefault(
                name_tok.text, StructDef(name_tok.text, kind, fields, line, col)
            )
            if kind in ("cbuffer", "tbuffer"):
                kept = self.block_resources(k, brace, close, fields)
                self.out.structs[name_tok.text] = StructDef(name_tok.text, kind, kept, line, col)
                if fields and not kept:
                    return  # only resources: DXC has no such block
                reg, reg_pos = self.register(k + 2, brace)
                self.out.declarations.append(
                    Declaration(
                        name_tok.text,
                        kind,
                        "",
                        self.path,
                        line,
                        col,
                        register=reg,
                        register_pos=reg_pos,
                        space=self.space_only(k + 2, brace),
                        attributes=tuple(attrs),
                    )
                )
            return
        if words[0] in ("namespace",):
            # Declarations inside a namespace are still global; scan the body as top level.
            inner = _Scanner.__new__(_Scanner)
            inner.__dict__.update(self.__dict__)
            inner.toks = toks[brace + 1 : close - 1]
            inner.offs = self.offs[brace + 1 : close - 1]
            inner.run()
            return
        # A function definition: Type Name ( params ) [: SEM] { body }
        paren = next((x for x in range(k, brace) if toks[x].text == "("), None)
        if paren is None or paren == k:
            return
        name_tok = toks[paren - 1]
        line, col = self.at(paren - 1)
        params_end = _match(toks, paren, "(", ")")
        params = self.fields(paren + 1, params_end - 1, separator=",")
        returns = " ".join(t.text for t in toks[k : paren - 1])
        self.out.functions.setdefault(
            name_tok.text, StructDef(name_tok.text, "function", params, line, col, returns)
        )
        for attr in attrs:
            if attr.name == "shader" and attr.args:
                self.out.entries.append(EntryAttribute(name_tok.text, attr.args[0], line, col))

    def segments(self, a: int, b: int, separator: str = ";") -> list[tuple[int, int]]:
        """The token ranges between ``separator``s at depth 0 in tokens a..b-1."""
        toks = self.toks
        out: list[tuple[int, int]] = []
        i = a
        while i < b:
            j = i
            while j < b and toks[j].text != separator:
                if toks[j].text in "([{<":
                    close = {"(": ")", "[": "]", "{": "}", "<": ">"}[toks[j].text]
                    j = min(_match(toks, j, toks[j].text, close), b)
                    continue
                j += 1
            out.append((i, j))
            i = j + 1
        return out

    def fields(self, a: int, b: int, separator: str = ";") -> tuple[Field, ...]:
        out = (self.field(i, j) for i, j in self.segments(a, b, separator))
        return tuple(f for f in out if f is not None)

    def block_resources(
        self, k: int, brace: int, close: int, fields: tuple[Field, ...]
    ) -> tuple[Field, ...]:
        """A cbuffer's members that are resources, declared as globals before the block (as
        DXC does), recorded for the rewrite; the members that stay in the block are returned."""
        toks = self.toks
        moved: set[tuple[int, int]] = set()
        found = 0
        for i, j in self.segments(brace + 1, close - 1):
            before = len(self.out.declarations)
            self.statement(i, j)
            new = self.out.declarations[before:]
            del self.out.declarations[before:]
            resources = [
                d for d in new if d.base in RTYPES and d.base not in ("cbuffer", "tbuffer")
            ]
            if not resources:
                continue
            self.out.declarations.extend(resources)
            moved |= {(d.line, d.column) for d in resources}
            offs = self.offs
            end = offs[j] + 1 if j < close - 1 else offs[j - 1] + len(toks[j - 1].text)
            self.out.block_resources.append((offs[k], offs[i], end))
            found += 1
        kept = tuple(f for f in fields if (f.line, f.column) not in moved)
        if found and not kept:
            tail = close + 1 if close < len(toks) and toks[close].text == ";" else close
            self.out.resource_only_blocks.append(
                (
                    self.offs[k],
                    self.offs[brace] + 1,
                    self.offs[close - 1],
                    self.offs[tail - 1] + len(toks[tail - 1].text),
                )
            )
        return kept

    def field(self, a: int, b: int) -> Field | None:
        toks = self.toks
        attrs, i = self.attributes(a, b)
        mods: list[str] = []
        while i < b and toks[i].text in _MODIFIERS:
            mods.append(toks[i].text)
            i += 1
        # Split off ": SEMANTIC" and "= default" and array suffixes.
        end = b
        semantic = ""
        for x in range(i, b):
            if toks[x].text in (":", "="):
                if toks[x].text == ":" and x + 1 < b:
                    semantic = toks[x + 1].text
                end = x
                break
        k = end
        array: int | None = None
        while k > i and toks[k - 1].text == "]":
            open_ = next(y for y in range(k - 1, i - 1, -1) if toks[y].text == "[")
            size = self.span(open_ + 1, k - 1)
            array = (array or 1) * (int(size) if size.isdigit() else 0)
            k = open_
        if k - 1 <= i or toks[k - 1].kind != "id":
            return None
        name_tok = toks[k - 1]
        line, col = self.at(k - 1)
        return Field(
            name_tok.text,
            self.span(i, k - 1),
            line,
            col,
            tuple(mods),
            semantic,
            tuple(attrs),
            array,
        )

    def register(self, a: int, b: int) -> tuple[tuple[str, int, int] | None, tuple[int, int]]:
        toks = self.toks
        for x in range(a, b - 1):
            if toks[x].text == "register" and toks[x + 1].text == "(":
                close = _match(toks, x + 1, "(", ")")
                found = _register(self.span(x + 2, close - 1))
                if found is not None:
                    return found, self.at(x)
        return None, (0, 0)

    def space_only(self, a: int, b: int) -> int | None:
        """M of ``register(spaceM)`` between tokens a and b, if that is the form."""
        toks = self.toks
        for x in range(a, b - 1):
            if toks[x].text == "register" and toks[x + 1].text == "(":
                space = _space(self.span(x + 2, _match(toks, x + 1, "(", ")") - 1))
                if space is not None:
                    return space
        return None

    def statement(self, a: int, b: int) -> None:
        toks = self.toks
        attrs, i = self.attributes(a, b)
        if i >= b:
            return
        first = toks[i].text
        if first in ("typedef", "using", "return") or first.startswith("#"):
            return
        mods: list[str] = []
        while i < b and toks[i].text in _MODIFIERS:
            mods.append(toks[i].text)
            i += 1
        if i >= b or toks[i].kind != "id":
            return
        # Type: an identifier with optional template arguments (possibly nested, possibly "a::b").
        t = i + 1
        while t + 1 < b and toks[t].text == ":" and toks[t + 1].text == ":":
            t += 3
        if t < b and toks[t].text == "<":
            t = _match(toks, t, "<", ">")
        if t >= b or toks[t].kind != "id":
            return  # a function declaration, an expression, or something else
        if t + 1 < b and toks[t + 1].text == "(":
            return  # function prototype
        # One or more declarators: name [N] [: register(...)] [= init], separated by commas.
        starts = [t]
        depth = 0
        for x in range(t, b):
            if toks[x].text in "([{<":
                depth += 1
            elif toks[x].text in ")]}>":
                depth -= 1
            elif toks[x].text == "," and depth == 0 and x + 1 < b:
                starts.append(x + 1)
        ends = [*[s_ - 1 for s_ in starts[1:]], b]
        for d0, d1 in zip(starts, ends, strict=True):
            if toks[d0].kind == "id":
                self.declarator(i, t, d0, d1, attrs, mods)

    def declarator(
        self, i: int, t: int, k: int, b: int, attrs: list[Attribute], mods: list[str]
    ) -> None:
        toks = self.toks
        name_tok = toks[k]
        line, col = self.at(k)
        k += 1
        array: int | None = None
        dimensions = 0
        while k < b and toks[k].text == "[":
            close = _match(toks, k, "[", "]")
            inner = self.span(k + 1, close - 1)
            array = (1 if array is None else array) * (int(inner) if inner.isdigit() else 0)
            dimensions += 1
            k = close
        reg, reg_pos = self.register(k, b)
        init = ""
        for x in range(k, b):
            if toks[x].text == "=":
                init = self.span(x + 1, b)
                break
        self.out.declarations.append(
            Declaration(
                name_tok.text,
                toks[i].text,
                self.span(i, t),
                self.path,
                line,
                col,
                array=array,
                dimensions=dimensions,
                register=reg,
                register_pos=reg_pos,
                space=self.space_only(k, b),
                attributes=tuple(attrs),
                modifiers=tuple(mods),
                initializer=init,
            )
        )


def scan(
    path: str,
    text: str,
    tokens: Sequence[Token] | None = None,
    offsets: Sequence[int] | None = None,
    position: Callable[[int], tuple[int, int]] | None = None,
) -> SourceFile:
    """Scan one file's text; ``path`` is only recorded (as the name diagnostics use).
    ``tokens``/``offsets``: the text's tokens as the source model has them (its stream), where
    the caller has them (else the text is lexed here); ``position``: the line and column of an
    offset of the text, where the caller has its lines (``Stream.position``)."""
    return _Scanner(path, text, tokens, offsets, position).run()


def _attribute(part: str) -> tuple[int, str, str] | None:
    """One attribute of a list, ``name`` or ``name(args)`` (a name of word characters and
    ``:``): where its name starts in ``part``, the name and the text of its arguments; None
    for anything else."""
    lead = len(part) - len(part.lstrip())
    rest = part[lead:]
    end = len(rest) - len(rest.lstrip(_NAME_CHARACTERS))
    name, after = rest[:end], rest[end:].strip()
    if not name or not (name[0].isalpha() or name[0] == "_") or not name[0].isascii():
        return None
    if not after:
        return lead, name, ""
    if after[0] != "(" or after[-1] != ")":
        return None
    return lead, name, after[1:-1]


def _number(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() else None


def _space(text: str) -> int | None:
    """M of ``spaceM`` (spaces around it allowed), or None."""
    text = text.strip()
    return _number(text[5:]) if text.startswith("space") else None


def _register(text: str) -> tuple[str, int, int] | None:
    """The class, number and space of a register's arguments (``t3``, ``b0, space1``), or
    None for any other form."""
    head, comma, tail = text.strip().partition(",")
    head = head.rstrip()
    number = _number(head[1:])
    if not head or head[0] not in "btsuBTSU" or number is None:
        return None
    space = _space(tail) if comma else 0
    return None if space is None else (head[0].lower(), number, space)


def include_named(path: Path, name: str, include_dirs: tuple[str, ...]) -> Path | None:
    """The file ``#include "name"`` in ``path`` finds (relative to ``path``, then in the include
    dirs), absolute but as named: a link in it is not resolved (what a build records, so that
    retargeting the link is a change). None when no such file exists."""
    for base in (path.parent, *map(Path, include_dirs)):
        candidate = (base / name).absolute()
        if candidate.exists() and not candidate.is_dir():  # a FIFO too: reading refuses it
            return candidate
    return None
