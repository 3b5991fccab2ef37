"""Reflection file format version 1: the writer, the reader and their shared tables.

The writer is the definition of the canonical form; the reader accepts every file the writer can
produce plus the freedoms the specification grants (either value form, any attribute order,
unknown records and attributes) and rejects everything else with a line and column. Both work
without recursion, so deep type trees cannot reach Python's recursion limit, and in time linear in
the size of the file: each line is matched by one compiled expression, and a slow character-by-
character pass runs only to explain a line that did not match. docs/reflection-format.md is the
human description of the same rules.
"""

from __future__ import annotations

import enum
import gc
import os
import re
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from oneshader.diagnostics import UserError
from oneshader.fsutil import atomic_write, read_file
from oneshader.reflection.errors import ReflectionFormatError
from oneshader.reflection.model import (
    MAX_TYPE_BYTES,
    Access,
    BuiltIn,
    DeviceFeatures,
    EntryPoint,
    Interpolation,
    MatrixPacking,
    PushBlock,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    SpecConstant,
    SpecSlot,
    Stage,
    StageVariable,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
    VertexFormat,
    type_too_big,
)

__all__ = [
    "HEADER",
    "MAX_TYPE_BYTES",
    "MAX_UINT",
    "SPEC_SCALARS",
    "ReflectionFormat",
    "display_text",
    "read_bytes",
    "type_too_big",
]

HEADER = "oneshader-reflection 1"
MAX_UINT = 2**32 - 1
"""The largest number the format (and the model) holds; all numbers are unsigned 32-bit."""

SPEC_SCALARS = (ScalarKind.Bool, ScalarKind.Int, ScalarKind.UInt, ScalarKind.Float)
"""The scalar kinds a specialization constant may have: its default is one 32-bit pattern."""

_ALL_FEATURES = int(sum(DeviceFeatures))

E = TypeVar("E", bound=enum.Enum)


def _token(member: enum.Enum) -> str:
    token: str = getattr(member, "token", member.name)
    return token


def _tokens(enum_type: type[E]) -> dict[str, E]:
    return {_token(m): m for m in enum_type}


# --------------------------------------------------------------------------------------------
# Lexical rules, shared by the fast expressions and the slow explanation of a bad line.

_CTRL = "\x00-\x1f\x7f-\x9f"  # Unicode category Cc: never raw in a file, except the line end
_IDENT = r"[A-Za-z][A-Za-z0-9_-]*"
_QUOTED = (
    r'"(?:[^"\\' + _CTRL + r"]++"
    r'|\\[\\"nrt]'
    r"|\\u(?![dD][89a-fA-F])[0-9A-Fa-f]{4})*+\""
)
_BARE = r'[^ "\\' + _CTRL + r"]++"
_LINE_RE = re.compile(rf"( *+)({_IDENT})((?: {_IDENT}=(?:{_QUOTED}|{_BARE}))*+)")
_ATTR_RE = re.compile(rf" ({_IDENT})=({_QUOTED}|{_BARE})")
_IDENT_RE = re.compile(_IDENT)
_ESCAPE_RE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|(.))")
_UNESCAPE = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}
_NEEDS_ESCAPE_RE = re.compile(r'["\\' + _CTRL + "]")
_CTRL_RE = re.compile(f"[{_CTRL}]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_ESCAPE = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPE_TABLE = {
    c: _ESCAPE.get(chr(c), f"\\u{c:04x}") for c in [*range(0x20), *range(0x7F, 0xA0), 0x22, 0x5C]
}


def _unescape_one(m: re.Match[str]) -> str:
    hex4 = m.group(1)
    return chr(int(hex4, 16)) if hex4 is not None else _UNESCAPE[m.group(2)]


def _value(raw: str) -> str:
    """The text of a lexically valid value: a bare token as is, a quoted string unescaped."""
    if raw[0] != '"':
        return raw
    body = raw[1:-1]
    return _ESCAPE_RE.sub(_unescape_one, body) if "\\" in body else body


def _quote(text: str) -> str:
    if _NEEDS_ESCAPE_RE.search(text) is not None:
        text = text.translate(_ESCAPE_TABLE)
    if not text.isascii() and _SURROGATE_RE.search(text) is not None:
        raise _Bad("a string holds a lone surrogate, which UTF-8 cannot encode")
    return f'"{text}"'


def display_text(text: str) -> str:
    """``text`` as is if it holds no control character, else quoted with the format's escapes
    (for one-line displays such as ``oneshader reflection show``)."""
    if _CTRL_RE.search(text) is None:
        return text
    return '"' + text.translate(_ESCAPE_TABLE) + '"'


def _char_problem(ch: str, where: str) -> str | None:
    """Why ``ch`` cannot stand raw in a file, or None if it may (``where``: 'string' or other)."""
    if ch == "\t":
        if where == "indent":
            return "tab in the indentation; indent with two spaces per level"
        if where == "string":
            return "raw tab in a string; write it as \\t"
        return "tab character; separate attributes with one space"
    if ch == "\r":
        return "carriage return (CR); lines must end with \\n alone"
    if ch == "\ufeff" and where == "start":
        return "byte-order mark; the file must be UTF-8 without one"
    o = ord(ch)
    if o < 0x20 or 0x7F <= o < 0xA0:
        return f"raw control character U+{o:04X}; write it in a quoted string as \\u{o:04x}"
    return None


class _Bad(Exception):
    """A value problem without a position; the caller knows where the value stands."""


# --------------------------------------------------------------------------------------------
# Values: every converter takes the value's text and returns the model's value or raises _Bad.

_NUMBER_HINT = f"expected an unsigned decimal number (0 to {MAX_UINT})"


def _number(text: str) -> int:
    if text.isascii() and text.isdigit():
        if len(text) > 1 and text[0] == "0":
            raise _Bad(f"{_NUMBER_HINT} without leading zeros, found {text!r}")
        if len(text) <= 10:
            n = int(text)
            if n <= MAX_UINT:
                return n
        raise _Bad(f"number {text} is beyond the range 0 to {MAX_UINT}")
    if not text:
        raise _Bad(f"{_NUMBER_HINT}, found an empty value")
    if text[0] == "-" and text[1:].isascii() and text[1:].isdigit():
        raise _Bad(f"{_NUMBER_HINT}; negative numbers are not allowed, found {text!r}")
    if text[0] == "+":
        raise _Bad(f"{_NUMBER_HINT} without a sign, found {text!r}")
    raise _Bad(f"{_NUMBER_HINT}, found {text!r}")


def _optional_number(text: str) -> int | None:
    return None if text == "-" else _number(text)


def _string(text: str) -> str:
    return text


def _flag(text: str) -> bool:
    if text in ("0", "1"):
        return text == "1"
    raise _Bad(f"expected 0 or 1, found {text!r}")


def _workgroup(text: str) -> tuple[int, int, int]:
    parts = text.split(",")
    if len(parts) != 3:
        raise _Bad(f"expected three numbers x,y,z, found {text!r}")
    x, y, z = (_number(p) for p in parts)
    return (x, y, z)


def _features(text: str) -> DeviceFeatures:
    bits = _number(text)
    unknown = bits & ~_ALL_FEATURES
    if unknown:
        raise _Bad(
            f"unknown DeviceFeatures bits {unknown}; known bits: "
            + ", ".join(f"{int(m)} {m.name}" for m in DeviceFeatures)
        )
    return DeviceFeatures(bits)


# Bare tokens whose value is known without converting them: per converter, token -> value.
_FAST: dict[Callable[[str], Any], dict[str, Any]] = {}


def _enum(enum_type: type[E]) -> Callable[[str], E]:
    table = _tokens(enum_type)
    expected = ", ".join(table)

    def convert(text: str) -> E:
        member = table.get(text)
        if member is None:
            raise _Bad(f"unknown {enum_type.__name__} {text!r}; expected one of {expected}")
        return member

    _FAST[convert] = table
    return convert


def _enum_list(enum_type: type[E]) -> Callable[[str], tuple[E, ...]]:
    one = _enum(enum_type)
    seen: dict[str, tuple[E, ...]] = {}  # the lists met so far (a few: they repeat)

    def convert(text: str) -> tuple[E, ...]:
        known = seen.get(text)
        if known is not None:
            return known
        if text == "-":
            return ()
        items = text.split(",")
        if "" in items:
            raise _Bad(f"empty item in the list {text!r}; write - for an empty list")
        result = tuple(one(item) for item in items)
        if len(seen) < 256:
            seen[text] = result
        return result

    return convert


def _spec_scalar(text: str) -> ScalarKind:
    member = _SCALAR(text)
    if member not in SPEC_SCALARS:
        raise _Bad(
            f"a specialization constant's scalar is one of Bool, Int, UInt, Float; found {text!r}"
        )
    return member


_TARGET = _enum(Target)
_SCALAR = _enum(ScalarKind)
_STAGES = _enum_list(Stage)

# Per record: (attribute, converter) in the written order; all are required unless listed in
# _OPTIONAL. A record absent from this table has no attributes.
_Conv = Callable[[str], Any]
_ATTRS: dict[str, tuple[tuple[str, _Conv], ...]] = {
    "source": (("name", _string),),
    "targets": (("list", _enum_list(Target)),),
    "resource": (
        ("name", _string),
        ("kind", _enum(ResourceKind)),
        ("count", _number),
        ("stages", _STAGES),
        ("rtype", _enum(ResourceTypeKind)),
        ("hlsl", _string),
        ("format", _string),
        ("depth", _flag),
        ("attachment", _number),
        ("access", _enum(Access)),
    ),
    "slot": (("target", _TARGET), ("set", _number), ("binding", _number)),
    "counter": (("target", _TARGET), ("set", _number), ("binding", _number)),
    "specslot": (("target", _TARGET), ("index", _number), ("name", _string)),
    "type": (
        ("kind", _enum(TypeKind)),
        ("scalar", _SCALAR),
        ("rows", _number),
        ("cols", _number),
        ("name", _string),
        ("size", _number),
        ("align", _number),
        ("length", _number),
        ("stride", _number),
        ("mstride", _number),
        ("packing", _enum(MatrixPacking)),
    ),
    "member": (("name", _string), ("offset", _number), ("doc", _string)),
    "push": (("name", _string), ("stages", _STAGES)),
    "spec": (("name", _string), ("id", _number), ("scalar", _spec_scalar), ("default", _number)),
    "entry": (
        ("name", _string),
        ("stage", _enum(Stage)),
        ("workgroup", _workgroup),
        ("stride", _number),
    ),
    "features": (("bits", _features),),
    "input": (
        ("name", _string),
        ("semantic", _string),
        ("index", _number),
        ("location", _optional_number),
        ("builtin", _enum(BuiltIn)),
        ("scalar", _SCALAR),
        ("components", _number),
        ("format", _enum(VertexFormat)),
        ("offset", _number),
        ("interp", _enum(Interpolation)),
    ),
    "uses": (("name", _string),),
}
_ATTRS["output"] = _ATTRS["input"]
_ATTRS["pushuse"] = _ATTRS["specuse"] = _ATTRS["uses"]
_OPTIONAL = {
    ("resource", "format"),
    ("resource", "depth"),
    ("resource", "attachment"),
    ("resource", "access"),
    ("member", "doc"),
}
_FAST[_number] = {str(n): n for n in range(4096)}
_FAST[_optional_number] = {**_FAST[_number], "-": None}
_FAST[_string] = {'""': ""}
_MISSING = object()
# The same attributes, each with its table of known bare tokens (or None) and its optionality.
_SPECS = {
    kind: tuple((key, _FAST.get(conv), conv, (kind, key) in _OPTIONAL) for key, conv in attrs)
    for kind, attrs in _ATTRS.items()
}

# Per parent: the known children, each with its rank (children must come in rank order) and
# whether it may occur at most once. "specslot" is how a slot under a spec is parsed.
_ROOT = "file"
_CHILDREN: dict[str, dict[str, tuple[int, bool]]] = {
    _ROOT: {
        "source": (0, True),
        "targets": (1, True),
        "resource": (2, False),
        "push": (3, False),
        "spec": (4, False),
        "entry": (5, False),
    },
    "resource": {"slot": (0, False), "counter": (1, False), "layout": (2, True)},
    "push": {"slot": (0, False), "layout": (1, True)},
    "spec": {"slot": (0, False)},
    "entry": {
        "features": (0, True),
        "input": (1, False),
        "output": (2, False),
        "uses": (3, False),
        "pushuse": (4, False),
        "specuse": (5, False),
    },
    "layout": {"type": (0, True)},
    "element": {"type": (0, True)},
    "member": {"type": (0, True)},
    "type": {"element": (0, True), "member": (0, False)},
}
_KNOWN = {kw for table in _CHILDREN.values() for kw in table}
_NO_CHILDREN: dict[str, tuple[int, bool]] = {}


def _expected_children(kind: str) -> str:
    table = _CHILDREN.get(kind, _NO_CHILDREN)
    if not table:
        return f"'{kind}' has no known children"
    return f"expected {', '.join(repr(k) for k in table)} under '{kind}'"


# --------------------------------------------------------------------------------------------
# The reader.


class _Frame:
    """An open record: its values so far and the children it has collected."""

    __slots__ = ("kind", "last_rank", "line", "table", "vals")

    def __init__(self, kind: str, line: int, vals: dict[str, Any]) -> None:
        self.kind = kind
        self.line = line
        self.vals = vals
        self.table = _CHILDREN.get(kind, _NO_CHILDREN)
        self.last_rank = -1  # children come in rank order, so this also tells what was seen


# Records without known children share one frame per kind: nothing is ever collected in it.
_LEAVES = {
    kind: _Frame(kind, 0, {}) for kind in _ATTRS if kind not in _CHILDREN and kind != "specslot"
}
_LEAVES["specslot"] = _Frame("slot", 0, {})


# Converted attributes of the distinct lines per record kind, kept across reads: real files
# repeat many lines (the same float4, the same slot), and so do the files of one project (a
# build reads every shader's reflection its workers send), and conversion is most of the
# work. A memo never changes once made (a record that fills in its values copies them); a
# kind's is emptied when full, so it holds what is being read lately, at most this many.
_MEMO_SIZE = 2048
_MEMO: dict[str, dict[str, dict[str, Any]]] = {k: {} for k in [*_KNOWN, "specslot"]}


class _Reader:
    def __init__(self, text: str, file: str, lines: dict[int, int] | None = None) -> None:
        self.text = text
        self.file = file
        self.where = lines  # id() of a model object -> the line of its record, if asked
        self.lines = text.split("\n")
        self.names: dict[str, set[str]] = {"uses": set(), "pushuse": set(), "specuse": set()}

    def locate(self, node: object, line: int) -> None:
        """Note the line of a model object's record, if the caller asked for lines."""
        if self.where is not None:
            self.where[id(node)] = line

    # -- errors ----------------------------------------------------------------------------

    def fail(self, message: str, line: int, column: int) -> NoReturn:
        raise ReflectionFormatError(message, line, column, self.file)

    def fail_attr(self, line: int, key: str, message: str) -> NoReturn:
        """An error at the value of attribute ``key`` on line ``line``."""
        text = self.lines[line - 1]
        for m in _ATTR_RE.finditer(text):
            if m.group(1) == key:
                self.fail(message, line, m.start(2) + 1)
        self.fail(message, line, 1)  # pragma: no cover - the key was found on this line

    def explain(self, text: str, line: int) -> NoReturn:
        """Find and report the first lexical error of a line that the fast expression refused."""
        n = len(text)
        pos = 0
        if line == 1 and text.startswith("\ufeff"):
            self.fail(_char_problem("\ufeff", "start") or "", line, 1)
        while pos < n and text[pos] == " ":
            pos += 1
        if pos == n:
            self.fail("empty line; every line holds one record", line, 1)
        problem = _char_problem(text[pos], "indent")
        if problem:
            self.fail(problem, line, pos + 1)
        m = _IDENT_RE.match(text, pos)
        if m is None:
            self.fail(
                "expected a record keyword (a letter, then letters, digits, '_' or '-'), "
                f"found {text[pos]!r}",
                line,
                pos + 1,
            )
        pos = m.end()
        while pos < n:
            ch = text[pos]
            if ch != " ":
                problem = _char_problem(ch, "")
                self.fail(
                    problem or f"expected a space before the next attribute, found {ch!r}",
                    line,
                    pos + 1,
                )
            pos += 1
            if pos == n:
                self.fail("trailing space at the end of the line", line, pos)
            m = _IDENT_RE.match(text, pos)
            if m is None:
                ch = text[pos]
                problem = _char_problem(ch, "")
                if ch == " ":
                    problem = "two spaces; separate attributes with one space"
                self.fail(
                    problem or f"expected an attribute name (key=value), found {ch!r}",
                    line,
                    pos + 1,
                )
            key = m.group()
            pos = m.end()
            if pos == n or text[pos] != "=":
                self.fail(f"expected '=' after the attribute name '{key}'", line, pos + 1)
            pos += 1
            if pos == n or text[pos] == " ":
                self.fail(f"expected a value after '{key}='", line, pos + 1)
            if text[pos] == '"':
                pos = self.explain_string(text, pos, line)
                if pos < n and text[pos] != " ":
                    self.fail(
                        "expected a space or the end of the line after the closing quote",
                        line,
                        pos + 1,
                    )
            else:
                while pos < n and text[pos] != " ":
                    ch = text[pos]
                    if ch == '"':
                        self.fail(
                            "a '\"' inside a bare value; quote the whole value", line, pos + 1
                        )
                    if ch == "\\":
                        self.fail(
                            "a backslash in a bare value; quote the value to use escapes",
                            line,
                            pos + 1,
                        )
                    problem = _char_problem(ch, "")
                    if problem:
                        self.fail(problem, line, pos + 1)
                    pos += 1
        self.fail("malformed line", line, 1)  # pragma: no cover - the expressions disagree

    def explain_string(self, text: str, start: int, line: int) -> int:
        """Check the quoted string at ``start``; return the position after its closing quote."""
        pos = start + 1
        n = len(text)
        while pos < n:
            ch = text[pos]
            if ch == '"':
                return pos + 1
            if ch == "\\":
                esc = text[pos + 1 : pos + 2]
                if esc == "u":
                    hex4 = text[pos + 2 : pos + 6]
                    if len(hex4) < 4 or any(c not in "0123456789abcdefABCDEF" for c in hex4):
                        self.fail("expected four hex digits after \\u", line, pos + 1)
                    if 0xD800 <= int(hex4, 16) <= 0xDFFF:
                        self.fail(
                            f"\\u{hex4} is a surrogate; write the character itself", line, pos + 1
                        )
                    pos += 6
                    continue
                if esc not in ("\\", '"', "n", "r", "t"):
                    self.fail(
                        f"bad escape '\\{esc}'; expected one of \\\\ \\\" \\n \\r \\t \\uXXXX",
                        line,
                        pos + 1,
                    )
                pos += 2
                continue
            problem = _char_problem(ch, "string")
            if problem:
                self.fail(problem, line, pos + 1)
            pos += 1
        self.fail(
            "unterminated string: expected a closing '\"' before the end of the line",
            line,
            start + 1,
        )

    # -- structure -------------------------------------------------------------------------

    def read(self) -> ShaderReflection:
        lines = self.lines
        header = lines[0]
        if header != HEADER or len(lines) == 1:
            self.check_header(header, len(lines) == 1)
        root = _Frame(_ROOT, 0, {"resources": [], "pushes": [], "specs": [], "entries": []})
        stack = [root]
        skip_depth = -1  # >= 0 while inside an unknown record's subtree
        prev_depth = -1
        line_re = _LINE_RE.fullmatch
        close = self.close
        # A text after the last \n is read as a line too, so that its own errors come first.
        last = len(lines) - 1 if lines[-1] == "" else len(lines)
        for lineno in range(2, last + 1):
            text = lines[lineno - 1]
            m = line_re(text)
            if m is None:
                self.explain(text, lineno)
            spaces, keyword, rest = m.groups()
            indent = len(spaces)
            depth = indent >> 1
            if indent & 1:
                self.fail(
                    f"indentation of {indent} spaces is not a multiple of two", lineno, indent + 1
                )
            if depth > prev_depth + 1:
                self.fail(
                    f"indentation jumps from level {max(prev_depth, 0)} to level {depth}; "
                    f"expected at most level {prev_depth + 1}",
                    lineno,
                    indent + 1,
                )
            prev_depth = depth
            if skip_depth >= 0:
                if depth > skip_depth:
                    continue
                skip_depth = -1
            while len(stack) > depth + 1:
                frame = stack.pop()
                close(frame, stack[-1])
            parent = stack[-1]
            rule = parent.table.get(keyword)
            if rule is None:
                if keyword in _KNOWN:
                    self.fail(
                        f"'{keyword}' is not allowed under '{parent.kind}'; "
                        + _expected_children(parent.kind),
                        lineno,
                        indent + 1,
                    )
                skip_depth = depth
                continue
            rank, once = rule
            if rank != parent.last_rank:
                self.check_order(parent, root, keyword, rank, lineno, indent)
            elif once:
                self.fail(
                    f"a second '{keyword}' under '{parent.kind}'; only one is allowed",
                    lineno,
                    indent + 1,
                )
            kind = "specslot" if keyword == "slot" and parent.kind == "spec" else keyword
            memo = _MEMO[kind]
            vals = memo.get(rest)
            if vals is None:
                vals = self.convert(kind, keyword, rest, lineno, text)
                if len(memo) >= _MEMO_SIZE:
                    memo.clear()
                memo[rest] = vals
            stack.append(self.open(kind, vals, parent, lineno, indent))
        while len(stack) > 1:
            self.close(stack.pop(), stack[-1])
        end = len(lines)
        if lines[-1] != "":
            self.fail("missing newline at the end of the file", end, len(lines[-1]) + 1)
        if root.last_rank < 0:
            self.fail("expected the 'source' record first", end, 1)
        if root.last_rank < 1:
            self.fail("expected a 'targets' record after 'source'", end, 1)
        v = root.vals
        return ShaderReflection(
            source=v["source"],
            targets=v["targets"],
            resources=tuple(v["resources"]),
            push_blocks=tuple(v["pushes"]),
            spec_constants=tuple(v["specs"]),
            entry_points=tuple(v["entries"]),
        )

    def check_order(
        self, parent: _Frame, root: _Frame, keyword: str, rank: int, line: int, indent: int
    ) -> None:
        if rank < parent.last_rank:
            self.fail(
                f"'{keyword}' is out of order under '{parent.kind}'; the order is "
                + ", ".join(parent.table),
                line,
                indent + 1,
            )
        if parent is root:
            if rank >= 1 and parent.last_rank < 0:
                self.fail("expected the 'source' record first", line, indent + 1)
            if rank >= 2 and parent.last_rank < 1:
                self.fail("expected a 'targets' record after 'source'", line, indent + 1)
        parent.last_rank = rank

    def check_header(self, header: str, no_newline: bool) -> None:
        for i, ch in enumerate(header):
            problem = _char_problem(ch, "start" if i == 0 else "")
            if problem:
                self.fail(problem, 1, i + 1)
        prefix = HEADER[:-1]
        if header.startswith(prefix) and header[len(prefix) :] not in ("", "1"):
            version = header[len(prefix) :]
            self.fail(
                f"unsupported version {version!r}; this reader reads version 1 "
                f"(expected the header {HEADER!r})",
                1,
                len(prefix) + 1,
            )
        if header != HEADER:
            self.fail(f"expected the header {HEADER!r} on the first line", 1, 1)
        if no_newline:
            self.fail("missing newline at the end of the file", 1, len(header) + 1)

    def convert(self, kind: str, keyword: str, rest: str, line: int, text: str) -> dict[str, Any]:
        """The converted attributes of a record; the caller memoises them per (kind, text)."""
        attrs = _ATTR_RE.findall(rest)
        raw = dict(attrs)
        if len(raw) != len(attrs):
            self.duplicate(attrs, line)
        spec = _SPECS.get(kind)
        if spec is None:
            return {}
        vals: dict[str, Any] = {}
        get = raw.get
        missing = _MISSING
        for key, table, conv, optional in spec:
            value = get(key)
            if value is None:
                if optional:
                    vals[key] = None
                    continue
                self.fail(f"'{keyword}' is missing the attribute '{key}'", line, len(text) + 1)
            if table is not None:
                known = table.get(value, missing)
                if known is not missing:
                    vals[key] = known
                    continue
            try:
                vals[key] = conv(_value(value))
            except _Bad as bad:
                self.fail_attr(line, key, f"{key}: {bad}")
        return vals

    def duplicate(self, attrs: list[tuple[str, str]], line: int) -> NoReturn:
        seen: set[str] = set()
        text = self.lines[line - 1]
        for m in _ATTR_RE.finditer(text):
            key = m.group(1)
            if key in seen:
                self.fail(f"duplicate attribute '{key}'", line, m.start(1) + 1)
            seen.add(key)
        self.fail("duplicate attribute", line, 1)  # pragma: no cover

    def open(
        self, kind: str, vals: dict[str, Any], parent: _Frame, line: int, indent: int
    ) -> _Frame:
        """Start a record: leaves go straight into their parent; others get a frame (with a copy
        of ``vals``, which may be memoised)."""
        pv = parent.vals
        if kind == "type":
            vals = dict(vals)
            vals["element"] = None
            vals["members"] = [] if vals["kind"] is TypeKind.Struct else None
            return _Frame(kind, line, vals)
        if kind in ("slot", "counter", "specslot"):
            siblings = pv["counters" if kind == "counter" else "slots"]
            target = vals["target"]
            if any(s.target is target for s in siblings):
                word = "counter" if kind == "counter" else "slot"
                self.fail_attr(line, "target", f"a second {word} for {target.name}: one per target")
            if kind == "specslot":
                siblings.append(SpecSlot(target, vals["index"], vals["name"]))
            else:
                siblings.append(Slot(target, vals["set"], vals["binding"]))
            return _LEAVES[kind]
        if kind in ("input", "output"):
            variable = StageVariable(**vals)
            pv[kind + "s"].append(variable)
            self.locate(variable, line)
            return _LEAVES[kind]
        if kind in ("uses", "pushuse", "specuse"):
            name = vals["name"]
            if name not in self.names[kind]:
                what = {"uses": "resource", "pushuse": "push block", "specuse": "spec constant"}
                self.fail_attr(line, "name", f"name: {name!r} is not a {what[kind]} of this file")
            pv[kind].append(name)
            return _LEAVES[kind]
        if kind == "features":
            pv["features"] = vals["bits"]
            return _LEAVES[kind]
        if kind in ("source", "targets"):
            pv[kind] = vals["name" if kind == "source" else "list"]
            return _LEAVES[kind]
        vals = dict(vals)
        if kind == "resource":
            vals["slots"] = []
            vals["counters"] = []
            vals["layout"] = None
        elif kind == "push":
            vals["slots"] = []
            vals["layout"] = None
        elif kind == "spec":
            vals["slots"] = []
        elif kind == "entry":
            vals["features"] = DeviceFeatures(0)
            for key in ("inputs", "outputs", "uses", "pushuse", "specuse"):
                vals[key] = []
        elif kind == "element":
            if parent.vals["kind"] is not TypeKind.Array:
                self.fail(
                    f"'element' is only allowed under a type of kind Array, "
                    f"not {parent.vals['kind'].name}",
                    line,
                    indent + 1,
                )
            vals["type"] = None
        elif kind == "member":
            if parent.vals["kind"] is not TypeKind.Struct:
                self.fail(
                    f"'member' is only allowed under a type of kind Struct, "
                    f"not {parent.vals['kind'].name}",
                    line,
                    indent + 1,
                )
            vals["type"] = None
        elif kind == "layout":
            vals["type"] = None
        return _Frame(kind, line, vals)

    def close(self, frame: _Frame, parent: _Frame) -> None:
        kind = frame.kind
        v = frame.vals
        pv = parent.vals
        if kind == "type":
            if v["kind"] is TypeKind.Array and v["element"] is None:
                self.fail("a type of kind Array needs an 'element' child", frame.line, 1)
            members = v.pop("members")
            node = TypeLayout(**v, members=tuple(members) if members else ())
            too_big = type_too_big(node)
            if too_big is not None:
                self.fail_attr(frame.line, *too_big)
            pv["type"] = node
            self.locate(node, frame.line)
        elif kind in ("layout", "element", "member"):
            node = v["type"]
            if node is None:
                self.fail(f"'{kind}' needs one 'type' child", frame.line, 1)
            if kind == "layout":
                pv["layout"] = node
            elif kind == "element":
                pv["element"] = node
            else:
                doc = v["doc"] or ""
                member = StructMember(v["name"], v["offset"], node, doc)
                pv["members"].append(member)
                self.locate(member, frame.line)
        elif kind == "resource":
            self.names["uses"].add(v["name"])
            made = Resource(
                name=v["name"],
                kind=v["kind"],
                rtype=v["rtype"],
                count=v["count"],
                stages=v["stages"],
                hlsl=v["hlsl"],
                format=v["format"],
                depth=bool(v["depth"]),
                attachment=v["attachment"],
                access=v["access"] or Access.ReadWrite,
                slots=tuple(v["slots"]),
                counters=tuple(v["counters"]),
                layout=v["layout"],
            )
            pv["resources"].append(made)
            self.locate(made, frame.line)
        elif kind == "push":
            self.names["pushuse"].add(v["name"])
            pv["pushes"].append(
                PushBlock(v["name"], v["stages"], layout=v["layout"], slots=tuple(v["slots"]))
            )
        elif kind == "spec":
            self.names["specuse"].add(v["name"])
            pv["specs"].append(
                SpecConstant(v["name"], v["id"], v["scalar"], v["default"], tuple(v["slots"]))
            )
        elif kind == "entry":
            entry = EntryPoint(
                name=v["name"],
                stage=v["stage"],
                workgroup=v["workgroup"],
                stride=v["stride"],
                features=v["features"],
                inputs=tuple(v["inputs"]),
                outputs=tuple(v["outputs"]),
                uses=tuple(v["uses"]),
                pushuse=tuple(v["pushuse"]),
                specuse=tuple(v["specuse"]),
            )
            pv["entries"].append(entry)
            self.locate(entry, frame.line)


# --------------------------------------------------------------------------------------------
# The writer.


def _u32(value: object, what: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_UINT:
        return str(int(value))
    raise _Bad(f"{what} must be an int from 0 to {MAX_UINT}, not {value!r}")


def _member(value: object, enum_type: type[enum.Enum], what: str) -> str:
    if type(value) is enum_type:
        return _token(value)
    raise _Bad(f"{what} must be a {enum_type.__name__}, not {value!r}")


def _members(values: object, enum_type: type[enum.Enum], what: str) -> str:
    if not isinstance(values, tuple):
        raise _Bad(f"{what} must be a tuple of {enum_type.__name__}, not {values!r}")
    if not values:
        return "-"
    return ",".join(_member(v, enum_type, what) for v in values)


def _str(value: object, what: str) -> str:
    if type(value) is not str:
        raise _Bad(f"{what} must be a str, not {value!r}")
    return _quote(value)


def _tuple_of(values: object, cls: type, what: str) -> tuple[Any, ...]:
    if not isinstance(values, tuple) or any(type(v) is not cls for v in values):
        raise _Bad(f"{what} must be a tuple of {cls.__name__}, not {values!r}")
    return values


def _one_per_target(slots: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    targets = [s.target for s in slots]
    if len(set(targets)) != len(targets):
        raise _Bad(f"{what} must hold one entry per target, not {slots!r}")
    return slots


def _slot_lines(out: list[str], pad: str, keyword: str, slots: object, what: str) -> None:
    for s in _one_per_target(_tuple_of(slots, Slot, what), what):
        out.append(
            f"{pad}{keyword} target={_member(s.target, Target, 'target')} "
            f"set={_u32(s.set, 'set')} binding={_u32(s.binding, 'binding')}"
        )


def _write_type_tree(out: list[str], depth: int, root: object) -> None:
    """Pre-order over type trees, iteratively: member lines and type subtrees interleave."""
    # Work items: ("t", depth, node, where) writes a type; ("m", depth, member, where) a member.
    work: list[tuple[str, int, Any, str]] = [("t", depth, root, "type")]
    while work:
        what, d, node, where = work.pop()
        pad = "  " * d
        if what == "m":
            if type(node) is not StructMember:
                raise _Bad(f"{where} must be a StructMember, not {node!r}")
            line = (
                f"{pad}member name={_str(node.name, where + '.name')} "
                f"offset={_u32(node.offset, where + '.offset')}"
            )
            if node.doc:
                line += f" doc={_str(node.doc, where + '.doc')}"
            out.append(line)
            work.append(("t", d + 1, node.type, where + ".type"))
            continue
        if what == "e":
            out.append(f"{pad}element")
            work.append(("t", d + 1, node, where))
            continue
        if type(node) is not TypeLayout:
            raise _Bad(f"{where} must be a TypeLayout, not {node!r}")
        t = node
        kind = _member(t.kind, TypeKind, where + ".kind")
        out.append(
            f"{pad}type kind={kind} scalar={_member(t.scalar, ScalarKind, where + '.scalar')} "
            f"rows={_u32(t.rows, where + '.rows')} cols={_u32(t.cols, where + '.cols')} "
            f"name={_str(t.name, where + '.name')} size={_u32(t.size, where + '.size')} "
            f"align={_u32(t.align, where + '.align')} length={_u32(t.length, where + '.length')} "
            f"stride={_u32(t.stride, where + '.stride')} "
            f"mstride={_u32(t.mstride, where + '.mstride')} "
            f"packing={_member(t.packing, MatrixPacking, where + '.packing')}"
        )
        too_big = type_too_big(t)
        if too_big is not None:
            raise _Bad(f"{where}: {too_big[1]}")
        if t.element is not None and t.kind is not TypeKind.Array:
            raise _Bad(f"{where}: only an Array has an element, not a {kind}")
        if t.kind is TypeKind.Array and t.element is None:
            raise _Bad(f"{where}: an Array needs an element type")
        if not isinstance(t.members, tuple):
            raise _Bad(f"{where}.members must be a tuple, not {t.members!r}")
        if t.members and t.kind is not TypeKind.Struct:
            raise _Bad(f"{where}: only a Struct has members, not a {kind}")
        if t.element is not None:
            work.append(("e", d + 1, t.element, where + ".element"))
        for i in range(len(t.members) - 1, -1, -1):
            work.append(("m", d + 1, t.members[i], f"{where}.members[{i}]"))


def _stage_var(out: list[str], keyword: str, v: object, where: str) -> None:
    if type(v) is not StageVariable:
        raise _Bad(f"{where} must be a StageVariable, not {v!r}")
    location = "-" if v.location is None else _u32(v.location, "location")
    out.append(
        f"  {keyword} name={_str(v.name, 'name')} semantic={_str(v.semantic, 'semantic')} "
        f"index={_u32(v.index, 'index')} location={location} "
        f"builtin={_member(v.builtin, BuiltIn, 'builtin')} "
        f"scalar={_member(v.scalar, ScalarKind, 'scalar')} "
        f"components={_u32(v.components, 'components')} "
        f"format={_member(v.format, VertexFormat, 'format')} offset={_u32(v.offset, 'offset')} "
        f"interp={_member(v.interp, Interpolation, 'interp')}"
    )


def _names(values: object, known: set[str], what: str, where: str) -> tuple[str, ...]:
    if not isinstance(values, tuple) or any(type(v) is not str for v in values):
        raise _Bad(f"{where} must be a tuple of str, not {values!r}")
    for name in values:
        if name not in known:
            raise _Bad(f"{where} names {name!r}, which is not a {what} of this shader")
    return values


def _write(model: ShaderReflection) -> list[str]:
    if type(model) is not ShaderReflection:
        raise _Bad(f"expected a ShaderReflection, not {model!r}")
    out = [HEADER, f"source name={_str(model.source, 'source')}"]
    out.append(f"targets list={_members(model.targets, Target, 'targets')}")
    groups: list[tuple[str, object, type]] = [
        ("resources", model.resources, Resource),
        ("push_blocks", model.push_blocks, PushBlock),
        ("spec_constants", model.spec_constants, SpecConstant),
        ("entry_points", model.entry_points, EntryPoint),
    ]
    names: dict[type, set[str]] = {}
    for field, items, cls in groups:
        for i, item in enumerate(_tuple_of(items, cls, field)):
            try:
                _write_item(out, item, names)
            except _Bad as bad:
                raise _Bad(f"{field}[{i}] ({getattr(item, 'name', '?')!r}): {bad}") from None
            if cls is not EntryPoint:
                names.setdefault(cls, set()).add(item.name)
    return out


def _write_item(out: list[str], item: Any, names: dict[type, set[str]]) -> None:
    if type(item) is Resource:
        r = item
        line = (
            f"resource name={_str(r.name, 'name')} kind={_member(r.kind, ResourceKind, 'kind')} "
            f"count={_u32(r.count, 'count')} stages={_members(r.stages, Stage, 'stages')} "
            f"rtype={_member(r.rtype, ResourceTypeKind, 'rtype')} hlsl={_str(r.hlsl, 'hlsl')}"
        )
        if r.format is not None:
            line += f" format={_str(r.format, 'format')}"
        if type(r.depth) is not bool:
            raise _Bad(f"depth must be a bool, not {r.depth!r}")
        if r.depth:
            line += " depth=1"
        if r.attachment is not None:
            line += f" attachment={_u32(r.attachment, 'attachment')}"
        if r.access is not Access.ReadWrite:
            line += f" access={_member(r.access, Access, 'access')}"
        out.append(line)
        _slot_lines(out, "  ", "slot", r.slots, "slots")
        _slot_lines(out, "  ", "counter", r.counters, "counters")
        if r.layout is not None:
            out.append("  layout")
            _write_type_tree(out, 2, r.layout)
    elif type(item) is PushBlock:
        p = item
        out.append(f"push name={_str(p.name, 'name')} stages={_members(p.stages, Stage, 'stages')}")
        _slot_lines(out, "  ", "slot", p.slots, "slots")
        if p.layout is not None:
            out.append("  layout")
            _write_type_tree(out, 2, p.layout)
    elif type(item) is SpecConstant:
        s = item
        scalar = _member(s.scalar, ScalarKind, "scalar")
        if s.scalar not in SPEC_SCALARS:
            raise _Bad(f"scalar {scalar} is not one of Bool, Int, UInt, Float")
        out.append(
            f"spec name={_str(s.name, 'name')} id={_u32(s.id, 'id')} scalar={scalar} "
            f"default={_u32(s.default, 'default')}"
        )
        for slot in _one_per_target(_tuple_of(s.slots, SpecSlot, "slots"), "slots"):
            out.append(
                f"  slot target={_member(slot.target, Target, 'target')} "
                f"index={_u32(slot.index, 'index')} name={_str(slot.name, 'name')}"
            )
    else:
        e = item
        wg = e.workgroup
        if not isinstance(wg, tuple) or len(wg) != 3:
            raise _Bad(f"workgroup must be a tuple of three ints, not {wg!r}")
        out.append(
            f"entry name={_str(e.name, 'name')} stage={_member(e.stage, Stage, 'stage')} "
            f"workgroup={','.join(_u32(n, 'workgroup') for n in wg)} "
            f"stride={_u32(e.stride, 'stride')}"
        )
        features = e.features
        if not isinstance(features, DeviceFeatures) or int(features) & ~_ALL_FEATURES:
            raise _Bad(f"features must be known DeviceFeatures flags, not {features!r}")
        if features:
            out.append(f"  features bits={int(features)}")
        for i, v in enumerate(_tuple_of(e.inputs, StageVariable, "inputs")):
            _stage_var(out, "input", v, f"inputs[{i}]")
        for i, v in enumerate(_tuple_of(e.outputs, StageVariable, "outputs")):
            _stage_var(out, "output", v, f"outputs[{i}]")
        for keyword, values, cls, what in (
            ("uses", e.uses, Resource, "resource"),
            ("pushuse", e.pushuse, PushBlock, "push block"),
            ("specuse", e.specuse, SpecConstant, "spec constant"),
        ):
            for name in _names(values, names.get(cls, set()), what, keyword):
                out.append(f"  {keyword} name={_quote(name)}")


# --------------------------------------------------------------------------------------------


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """A file's bytes, read bounded (a link to /dev/zero, a FIFO or a huge file is refused, not
    read); an unreadable file is a UserError naming ``path``."""
    name = os.fspath(path)
    try:
        return read_file(name)
    except OSError as err:
        raise UserError.at(name, 0, 0, f"cannot read: {err.strerror or err}") from None


class ReflectionFormat:
    """Reflection file format version 1 (see docs/reflection-format.md)."""

    @staticmethod
    def write(model: ShaderReflection) -> bytes:
        """The canonical bytes of ``model``; ValueError if the format could not read them back
        (a number out of range, a wrong type, a dangling name, an Array without element...)."""
        try:
            lines = _write(model)
        except _Bad as bad:
            raise ValueError(f"cannot write this reflection: {bad}") from None
        lines.append("")
        return "\n".join(lines).encode("utf-8")

    @staticmethod
    def read(
        data: bytes | str, *, file: str = "<reflection>", lines: dict[int, int] | None = None
    ) -> ShaderReflection:
        """Parse a reflection file; ReflectionFormatError (1-based line and column) if it breaks
        the format. ``file`` only names the input in the error. ``lines``, if given, receives
        the line of the record of each type, member, resource, entry point and stage variable,
        by ``id()`` of the model object (for positioning later checks of the model)."""
        if not isinstance(data, str):
            data = bytes(data)  # also a bytearray or memoryview
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as err:
                start = err.start
                line_start = data.rfind(b"\n", 0, start) + 1
                column = len(data[line_start:start].decode("utf-8", "replace")) + 1
                raise ReflectionFormatError(
                    f"invalid UTF-8 (byte 0x{data[start]:02x}); the file must be UTF-8",
                    data.count(b"\n", 0, start) + 1,
                    column,
                    file,
                ) from None
        else:
            text = data
            if not text.isascii():
                bad = _SURROGATE_RE.search(text)
                if bad is not None:
                    at = bad.start()
                    raise ReflectionFormatError(
                        "a lone surrogate, which UTF-8 cannot hold; the file must be UTF-8",
                        text.count("\n", 0, at) + 1,
                        at - text.rfind("\n", 0, at),
                        file,
                    )
        # The reader allocates many small acyclic objects; the cyclic collector would only
        # rescan them again and again (a third of the time on a 10 MB file), so it pauses.
        paused = gc.isenabled()
        gc.disable()
        try:
            return _Reader(text, file, lines).read()
        finally:
            if paused:
                gc.enable()

    @staticmethod
    def try_read(data: bytes | str) -> ShaderReflection | None:
        """The model, or None for anything that is not a valid reflection file."""
        try:
            return ReflectionFormat.read(data)
        except ReflectionFormatError:
            return None

    @staticmethod
    def read_file(path: str | os.PathLike[str]) -> ShaderReflection:
        """Read a file; errors (unreadable, or invalid) are UserErrors naming ``path``."""
        name = os.fspath(path)
        return ReflectionFormat.read(read_bytes(name), file=name)

    @staticmethod
    def write_file(path: str | os.PathLike[str], model: ShaderReflection) -> None:
        """Write atomically: readers see the old file or the new one, never a part."""
        atomic_write(path, ReflectionFormat.write(model))
