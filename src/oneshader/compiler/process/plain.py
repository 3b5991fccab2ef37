"""Frozen dataclasses as plain data (JSON's objects, lists, strings, numbers, booleans) and
back, field by field, each by its annotated type: what crosses a process boundary (the worker
wire) or keys a build (``buildtask.sources.options_key``) holds every field of the options by
construction, so that a field added to ``CompileOptions`` (or to a type it holds) is carried
without a change anywhere, and a type this cannot carry fails the first encode instead of
being dropped on the way. Decoding is strict: a missing or unknown field, or a value not of its
field's type, is a :class:`ValueError`; nothing is ever evaluated (no pickle).

Each type's fields are read once, into a function per field that encodes or decodes its value
(every request and every build key goes through here: reading the annotations again for each
value cost a worker ~40 us a request).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from enum import Enum
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

__all__ = ["from_plain", "list_of", "object_with", "to_plain"]

_T = TypeVar("_T")
_Codec = Callable[[Any], Any]  # one value to plain data, or back


def list_of(v: object, n: int | None = None) -> list[Any]:
    if type(v) is not list or (n is not None and len(v) != n):
        raise ValueError(f"expected a list{f' of {n}' if n is not None else ''}")
    return v


def object_with(v: object, keys: set[str]) -> dict[str, Any]:
    if type(v) is not dict or v.keys() != keys:
        raise ValueError(f"expected an object with the keys {sorted(keys)}")
    return v


def to_plain(value: Any) -> dict[str, object]:
    """A dataclass instance as a JSON object of its fields; TypeError for a field of a type
    the wire cannot carry (a float, a set, a class that is not a dataclass or an Enum)."""
    encode = _ENCODERS.get(type(value))
    if encode is None:
        encode = _ENCODERS[type(value)] = _dataclass_encoder(type(value))
    return encode(value)  # type: ignore[no-any-return]


def from_plain(value: object, cls: type[_T]) -> _T:
    """What :func:`to_plain` made of a ``cls``; ValueError for a missing or unknown field or
    a value not of its field's type (an int is not a bool, nor a bool an int)."""
    decode = _DECODERS.get(cls)
    if decode is None:
        decode = _DECODERS[cls] = _dataclass_decoder(cls)
    return decode(value)  # type: ignore[no-any-return]


_ENCODERS: dict[type, _Codec] = {}
_DECODERS: dict[type, _Codec] = {}


def _dataclass_encoder(cls: type) -> _Codec:
    fields = tuple((name, _encoder(hint)) for name, hint in _field_hints(cls).items())

    def encode(value: Any) -> dict[str, object]:
        return {name: enc(getattr(value, name)) for name, enc in fields}

    return encode


def _dataclass_decoder(cls: type) -> _Codec:
    fields = tuple((name, _decoder(hint)) for name, hint in _field_hints(cls).items())
    keys = {name for name, _ in fields}

    def decode(value: object) -> Any:
        doc = object_with(value, keys)
        return cls(**{name: dec(doc[name]) for name, dec in fields})

    return decode


def _encoder(hint: Any) -> _Codec:
    """The function that makes plain data of a value of type ``hint``; TypeError for a type the
    wire cannot carry."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, UnionType):
        inner = _encoder(_not_none(args))
        return lambda value: None if value is None else inner(value)
    if origin is tuple:
        if args[1:] == (...,):
            item = _encoder(args[0])

            def encode_items(value: Any) -> list[object]:
                assert isinstance(value, tuple)
                return [item(v) for v in value]

            return encode_items
        items = tuple(_encoder(a) for a in args)

        def encode_fixed(value: Any) -> list[object]:
            assert isinstance(value, tuple)
            return [enc(v) for enc, v in zip(items, value, strict=True)]

        return encode_fixed
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return to_plain
    if isinstance(hint, type) and issubclass(hint, Enum):
        enum: type[Enum] = hint

        def encode_member(value: Any) -> object:
            assert isinstance(value, enum)
            return value.value

        return encode_member
    if hint in (str, int, bool):
        scalar: type = hint

        def encode_scalar(value: Any) -> object:
            assert type(value) is scalar, (value, scalar)
            return value

        return encode_scalar
    raise TypeError(f"the wire cannot carry a {hint!r}")


def _decoder(hint: Any) -> _Codec:
    """The function that reads back what :func:`_encoder` made of a ``hint``; it raises
    ValueError for a value of another shape."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, UnionType):
        inner = _decoder(_not_none(args))
        return lambda value: None if value is None else inner(value)
    if origin is tuple:
        if args[1:] == (...,):
            item = _decoder(args[0])
            return lambda value: tuple([item(v) for v in list_of(value)])
        items = tuple(_decoder(a) for a in args)
        n = len(items)
        return lambda value: tuple(
            [dec(v) for dec, v in zip(items, list_of(value, n), strict=True)]
        )
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        cls: type = hint
        return lambda value: from_plain(value, cls)
    if isinstance(hint, type) and issubclass(hint, Enum):
        members = {m.value: m for m in hint}
        name = hint.__name__

        def decode_member(value: object) -> Enum:
            try:
                return members[value]
            except (KeyError, TypeError):  # TypeError: a list or an object, unhashable
                raise ValueError(f"not a {name}: {value!r}") from None

        return decode_member
    if hint in (str, int, bool):
        scalar: type = hint

        def decode_scalar(value: object) -> object:
            if type(value) is not scalar:
                raise ValueError(f"expected a {scalar.__name__}, not {type(value).__name__}")
            return value

        return decode_scalar
    raise TypeError(f"the wire cannot carry a {hint!r}")


def _field_hints(cls: type) -> dict[str, Any]:
    """The fields of a dataclass the wire carries, with their types resolved."""
    hints = get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}


def _not_none(args: tuple[Any, ...]) -> Any:
    rest = [a for a in args if a is not type(None)]
    if len(rest) != 1:
        raise TypeError(f"the wire cannot carry a union of {rest!r}")
    return rest[0]
