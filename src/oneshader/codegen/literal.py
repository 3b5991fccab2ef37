"""Python source literals for untrusted values, already in ``ruff format``'s canonical form.

Only ints, enum members, None, ASCII-escaped strings and calls of the model's own dataclasses are
ever written, so no value read from a file can become code. Calls and tuples of two or more items
are always split one item per line with a trailing comma (ruff keeps those split), which makes the
layout independent of line width except for one-item tuples, handled by :func:`_fits`.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

LINE_LENGTH = 100
INDENT = "    "
MISSING = dataclasses.MISSING


def py_doc(s: str) -> str:
    """A docstring: triple-quoted when ``s`` is plain printable ASCII that cannot close or
    escape it, else :func:`py_str`'s escaped literal (still a docstring to Python and editors)."""
    plain = s.isascii() and s.isprintable() and "\\" not in s and '"' not in s
    return f'"""{s}"""' if plain else py_str(s)


def py_str(s: str) -> str:
    """A string literal that reads back as ``s``, all ASCII, with ruff's preferred quotes."""
    quote = "'" if s.count('"') > s.count("'") else '"'
    if s.isascii() and s.isprintable() and quote not in s and "\\" not in s:
        return quote + s + quote
    out = []
    for ch in s:
        if ch == "\\" or ch == quote:
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        else:
            code = ord(ch)
            if code < 0x100:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    return quote + "".join(out) + quote


_FIELDS: dict[type, tuple[tuple[str, Any], ...] | None] = {}


def _fields(cls: type) -> tuple[tuple[str, Any], ...] | None:
    """(name, default) of a dataclass (``dataclasses.MISSING`` for none), None for other types;
    cached per type, since rendering asks for every node."""
    try:
        return _FIELDS[cls]
    except KeyError:
        pass
    got = None
    if dataclasses.is_dataclass(cls):
        got = tuple((f.name, f.default) for f in dataclasses.fields(cls))
    _FIELDS[cls] = got
    return got


_ENUMS: dict[tuple[int, str], str] = {}  # by id(): members are singletons, and hashing an
# enum member runs Python code


def _atom(value: object, module: str) -> str | None:
    """The one-line form of a leaf value, or None for calls and tuples."""
    kind = type(value)
    if kind is int:
        return str(value)
    if kind is str:
        return py_str(value)  # type: ignore[arg-type]
    if value is None or kind is bool:
        return repr(value)
    if isinstance(value, enum.Enum):
        key = (id(value), module)
        text = _ENUMS.get(key)
        if text is None:
            if isinstance(value, enum.IntFlag):
                text = f"{module}.{kind.__name__}({int(value)})"
            else:
                text = f"{module}.{kind.__name__}.{value.name}"
            _ENUMS[key] = text
        return text
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, str):
        return py_str(str(value))
    return None


def _fits(prefix: str, text: str, level: int) -> bool:
    return len(INDENT * level) + len(prefix) + len(text) + 1 <= LINE_LENGTH


def render(
    value: object,
    module: str,
    level: int = 0,
    prefix: str = "",
    names: Mapping[int, str] | None = None,
) -> str:
    """Source for ``value`` whose first line follows ``prefix`` at indent ``level``; the text
    returned starts after the prefix and its continuation lines carry their own indentation.
    A dataclass value whose ``id()`` is in ``names`` is written as that name (a module constant).
    """
    atom = _atom(value, module)
    if atom is not None:
        return atom
    if names:
        name = names.get(id(value))
        if name is not None:
            return name
    inner = INDENT * (level + 1)
    if type(value) is tuple:
        if not value:
            return "()"
        if len(value) == 1:
            one = _atom(value[0], module)
            if one is not None and _fits(prefix, f"({one},)", level):
                return f"({one},)"
        items = [inner + render(v, module, level + 1, "", names) + ",\n" for v in value]
        return "(\n" + "".join(items) + INDENT * level + ")"
    fields = _fields(type(value))
    if fields is None:
        raise TypeError(f"cannot write a literal for {type(value).__name__}")
    head = f"{module}.{type(value).__name__}("
    args = []
    for name, default in fields:
        v = getattr(value, name)
        if v is default or (default is not MISSING and type(v) is type(default) and v == default):
            continue
        args.append(f"{inner}{name}={render(v, module, level + 1, name + '=', names)},\n")
    if not args:
        return head + ")"
    return head + "\n" + "".join(args) + INDENT * level + ")"
