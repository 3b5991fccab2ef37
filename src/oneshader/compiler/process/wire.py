"""The worker channel, on both sides of it: frames (an 8-byte length, then the bytes) holding
compile requests and results as plain data (JSON).

The other end of that channel may be a process forked by the compile server, which a build
finds by a path in a folder: a reply (or a request) must not be able to run code, as a pickle
can. Decoding accepts exactly the shapes encoding produces and raises :class:`ValueError` for
anything else; the reflection travels in its own file format, whose reader checks it.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import struct
from enum import Enum
from types import UnionType
from typing import IO, Any, TypeVar, Union, get_args, get_origin, get_type_hints

from oneshader.compiler.api import CompileOptions, CompileResult, InputFile, OutputFile
from oneshader.diagnostics import Diagnostic, Severity
from oneshader.reflection.errors import ReflectionFormatError
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import Target

__all__ = [
    "decode_request",
    "decode_result",
    "diagnostic_from_row",
    "diagnostic_row",
    "encode_request",
    "encode_result",
    "from_plain",
    "receive",
    "send",
    "to_plain",
]

_T = TypeVar("_T")
_HEADER = struct.Struct("<Q")
_MAX_FRAME = 1 << 30  # a bigger frame is a broken or hostile peer, not a shader's outputs


def send(stream: IO[bytes], data: bytes) -> None:
    """One frame; an empty one ends the conversation."""
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def receive(stream: IO[bytes]) -> bytes:
    """One frame; EOFError at end of file, or for a frame no worker would send."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(header)
    if size > _MAX_FRAME:
        raise EOFError
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return data


def _dumps(doc: object) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def _loads(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, RecursionError) as err:
        raise ValueError(f"not a message: {err}") from None


def _str(v: object) -> str:
    if type(v) is not str:
        raise ValueError(f"expected a string, not {type(v).__name__}")
    return v


def _int(v: object) -> int:
    if type(v) is not int:
        raise ValueError(f"expected an int, not {type(v).__name__}")
    return v


def _list(v: object, n: int | None = None) -> list[Any]:
    if type(v) is not list or (n is not None and len(v) != n):
        raise ValueError(f"expected a list{f' of {n}' if n is not None else ''}")
    return v


def _object(v: object, keys: set[str]) -> dict[str, Any]:
    if type(v) is not dict or set(v) != keys:
        raise ValueError(f"expected an object with the keys {sorted(keys)}")
    return v


# --- requests ------------------------------------------------------------------------------
#
# CompileOptions crosses the wire by its dataclass fields, each encoded by its annotated type:
# a field added to CompileOptions (or to a type it holds) travels without a change here, and a
# type this codec cannot carry fails the first encode instead of being dropped on the way.


def _encode_value(value: object, hint: Any) -> object:
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, UnionType):
        return None if value is None else _encode_value(value, _not_none(args))
    if origin is tuple:
        assert isinstance(value, tuple)
        hints = [args[0]] * len(value) if args[1:] == (...,) else list(args)
        return [_encode_value(v, h) for v, h in zip(value, hints, strict=True)]
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return to_plain(value)
    if isinstance(hint, type) and issubclass(hint, Enum):
        assert isinstance(value, hint)
        return value.value
    if hint in (str, int, bool):
        assert type(value) is hint, (value, hint)
        return value
    raise TypeError(f"the wire cannot carry a {hint!r}")


def to_plain(value: Any) -> dict[str, object]:
    """A dataclass instance as a JSON object of its fields; TypeError for a field of a type
    the wire cannot carry (a float, a set, a class that is not a dataclass or an Enum)."""
    hints = _field_hints(type(value))
    return {name: _encode_value(getattr(value, name), hint) for name, hint in hints.items()}


def _decode_value(value: object, hint: Any) -> Any:
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, UnionType):
        return None if value is None else _decode_value(value, _not_none(args))
    if origin is tuple:
        items = _list(value, None if args[1:] == (...,) else len(args))
        hints = [args[0]] * len(items) if args[1:] == (...,) else list(args)
        return tuple(_decode_value(v, h) for v, h in zip(items, hints, strict=True))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_plain(value, hint)
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(value)
        except ValueError:
            raise ValueError(f"not a {hint.__name__}: {value!r}") from None
    if hint in (str, int, bool):
        if type(value) is not hint:
            raise ValueError(f"expected a {hint.__name__}, not {type(value).__name__}")
        return value
    raise TypeError(f"the wire cannot carry a {hint!r}")


def from_plain(value: object, cls: type[_T]) -> _T:
    """What :func:`to_plain` made of a ``cls``; ValueError for a missing or unknown field or
    a value not of its field's type (an int is not a bool, nor a bool an int)."""
    hints = _field_hints(cls)
    doc = _object(value, set(hints))
    return cls(**{name: _decode_value(doc[name], hint) for name, hint in hints.items()})


_HINTS: dict[type, dict[str, Any]] = {}


def _field_hints(cls: type) -> dict[str, Any]:
    """The fields of a dataclass the wire carries, with their types resolved (once per type)."""
    if cls not in _HINTS:
        hints = get_type_hints(cls)
        _HINTS[cls] = {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}
    return _HINTS[cls]


def _not_none(args: tuple[Any, ...]) -> Any:
    rest = [a for a in args if a is not type(None)]
    if len(rest) != 1:
        raise TypeError(f"the wire cannot carry a union of {rest!r}")
    return rest[0]


def encode_request(path: str, options: CompileOptions) -> bytes:
    return _dumps({"path": path, "options": to_plain(options)})


def decode_request(data: bytes) -> tuple[str, CompileOptions]:
    doc = _object(_loads(data), {"path", "options"})
    return _str(doc["path"]), from_plain(doc["options"], CompileOptions)


# --- results -------------------------------------------------------------------------------

_RESULT_KEYS = {"diagnostics", "reflection", "outputs", "inputs", "crashed"}


def encode_result(result: CompileResult) -> bytes:
    r = result
    return _dumps(
        {
            "diagnostics": [diagnostic_row(d) for d in r.diagnostics],
            "reflection": (
                None
                if r.reflection is None
                else ReflectionFormat.write(r.reflection).decode("utf-8")
            ),
            "outputs": [[o.target.value, base64.b64encode(o.data).decode()] for o in r.outputs],
            "inputs": [
                [f.path, f.mtime_ns, f.size, f.sha256, f.read_ns, f.named, f.identity]
                for f in r.inputs
            ],
            "crashed": r.crashed,
        }
    )


def diagnostic_row(d: Diagnostic) -> list[Any]:
    """A diagnostic as plain data (what :func:`diagnostic_from_row` reads back)."""
    return [d.file, d.line, d.column, d.severity.value, d.message, d.code, d.excerpt]


def diagnostic_from_row(v: object) -> Diagnostic:
    """The diagnostic of a :func:`diagnostic_row`; ValueError for any other shape."""
    file, line, col, severity, message, code, excerpt = _list(v, 7)
    return Diagnostic(
        _str(file),
        _int(line),
        _int(col),
        Severity(_str(severity)),
        _str(message),
        _str(code),
        _str(excerpt),
    )


def _output(v: object) -> OutputFile:
    target, data = _list(v, 2)
    return OutputFile(Target(_str(target)), base64.b64decode(_str(data), validate=True))


def _input(v: object) -> InputFile:
    path, mtime, size, digest, read_ns, named, identity = _list(v, 7)
    return InputFile(
        _str(path),
        _int(mtime),
        _int(size),
        _str(digest),
        _int(read_ns),
        _str(named),
        _str(identity),
    )


def decode_result(data: bytes) -> CompileResult:
    doc = _object(_loads(data), _RESULT_KEYS)
    text = doc["reflection"]
    try:
        reflection = None if text is None else ReflectionFormat.read(_str(text))
    except ReflectionFormatError as err:
        raise ValueError(f"bad reflection: {err}") from None
    crashed = doc["crashed"]
    if type(crashed) is not bool:
        raise ValueError("expected a bool")
    return CompileResult(
        diagnostics=tuple(diagnostic_from_row(d) for d in _list(doc["diagnostics"])),
        reflection=reflection,
        outputs=tuple(_output(o) for o in _list(doc["outputs"])),
        inputs=tuple(_input(f) for f in _list(doc["inputs"])),
        crashed=crashed,
    )
