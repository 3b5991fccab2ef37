"""Frozen dataclasses as plain data (JSON's objects, lists, strings, numbers, booleans) and
back, field by field, each by its annotated type: what crosses a process boundary (the worker
wire) or keys a build (``buildtask.sources.options_key``) holds every field of the options by
construction, so that a field added to ``CompileOptions`` (or to a type it holds) is carried
without a change anywhere, and a type this cannot carry fails the first encode instead of
being dropped on the way. Decoding is strict: a missing or unknown field, or a value not of its
field's type, is a :class:`ValueError`; nothing is ever evaluated (no pickle).
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

__all__ = ["from_plain", "list_of", "object_with", "to_plain"]

_T = TypeVar("_T")


def list_of(v: object, n: int | None = None) -> list[Any]:
    if type(v) is not list or (n is not None and len(v) != n):
        raise ValueError(f"expected a list{f' of {n}' if n is not None else ''}")
    return v


def object_with(v: object, keys: set[str]) -> dict[str, Any]:
    if type(v) is not dict or set(v) != keys:
        raise ValueError(f"expected an object with the keys {sorted(keys)}")
    return v


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
        items = list_of(value, None if args[1:] == (...,) else len(args))
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
    doc = object_with(value, set(hints))
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
