"""Host structs whose bytes are a shader buffer's: what generated struct classes derive from.

A :class:`Struct` is one value (a constant buffer, a push block, one element); a
:class:`StructArray` is n of them back to back (a structured buffer). Both wrap a numpy
structured array built by :mod:`oneshader.bindings.layout` and expose members through the field
descriptors below, which generated classes declare with their offsets: a class checks, when it is
created, that its fields are exactly the layout's members at exactly those offsets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar, overload

import numpy as np
import numpy.typing as npt

from oneshader.bindings.layout import MemberPlan, StructPlan, scalar_dtype, struct_plan
from oneshader.reflection.model import ScalarKind, TypeKind, TypeLayout
from oneshader.reflection.validate import MAX_BYTES, LayoutError

__all__ = [
    "LayoutError",
    "Nested",
    "NestedArray",
    "Scalar",
    "Struct",
    "StructArray",
    "Value",
]

P = TypeVar("P", int, float, bool)
N = TypeVar("N", bound=np.generic)
S = TypeVar("S", bound="Struct")
A = TypeVar("A", bound="StructArray[Any]")
D = TypeVar("D", bound="_Field")


class _Field:
    """A member of a struct class; ``offset`` is the byte offset the generator saw."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.name = ""
        self.plan: MemberPlan | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def _view(self, obj: _Holder) -> npt.NDArray[Any]:
        plan = self.plan
        if plan is None:  # only a class that skipped __init_subclass__ gets here
            raise TypeError(f"field {self.name!r} is not bound to a layout")
        return plan.view(obj._os_data)

    def _assign(self, obj: _Holder, value: object) -> None:
        target = self._view(obj)
        try:
            target[...] = value
        except (ValueError, TypeError, OverflowError) as err:
            shape = target.shape[obj._os_data.ndim :]
            try:
                got = _describe(np.shape(value))  # type: ignore[call-overload]
            except Exception:  # a value numpy cannot even measure
                got = type(value).__name__
            raise ValueError(
                f"{type(obj).__name__}.{self.name} takes {_describe(shape)}, got {got} ({err})"
            ) from None

    def _check(self, plan: MemberPlan, owner: str) -> None:
        if plan.offset != self.offset:
            raise LayoutError(
                f"{owner}.{self.name}",
                f"declared at offset {self.offset}, the layout's member is at {plan.offset}",
            )
        self._check_kind(plan, f"{owner}.{self.name}")

    def _check_kind(self, plan: MemberPlan, where: str) -> None:
        """Subclasses check that the declared type is the layout's."""


def _what(t: TypeLayout) -> str:
    return t.kind.name if t.kind is TypeKind.Struct else f"{t.kind.name} of {t.scalar.name}"


def _describe(shape: tuple[int, ...]) -> str:
    return "a scalar" if not shape else "shape " + "x".join(map(str, shape))


class Scalar(_Field, Generic[P]):
    """A scalar member of one struct: reads as a Python number."""

    def __init__(self, offset: int, kind: type[P]) -> None:
        super().__init__(offset)
        self.kind: type[P] = kind

    def _check_kind(self, plan: MemberPlan, where: str) -> None:
        t = plan.type
        expected: type = bool if t.scalar is ScalarKind.Bool else int
        if scalar_dtype(t.scalar).kind == "f":
            expected = float
        if t.kind is not TypeKind.Scalar or self.kind is not expected:
            raise LayoutError(where, f"declared {self.kind.__name__}, the layout has {_what(t)}")

    @overload
    def __get__(self: D, obj: None, owner: type) -> D: ...
    @overload
    def __get__(self, obj: Struct, owner: type) -> P: ...
    def __get__(self, obj: Struct | None, owner: type) -> Any:
        if obj is None:
            return self
        value = self._view(obj).item()
        assert self.plan is not None
        return bool(value) if self.plan.type.scalar is ScalarKind.Bool else value

    def __set__(self, obj: Struct, value: P | npt.ArrayLike) -> None:
        self._assign(obj, value)


class Value(_Field, Generic[N]):
    """Vectors, matrices and arrays (and every scalar of a StructArray): a writable numpy view.

    Matrices read and write in math order, m[row][col], whatever their packing.
    """

    def __init__(self, offset: int, kind: type[N]) -> None:
        super().__init__(offset)
        self.kind = kind

    def _check_kind(self, plan: MemberPlan, where: str) -> None:
        leaf = plan.leaf
        if leaf.kind is TypeKind.Struct or np.dtype(self.kind) != scalar_dtype(leaf.scalar):
            raise LayoutError(where, f"declared {self.kind.__name__}, the layout has {_what(leaf)}")

    @overload
    def __get__(self: D, obj: None, owner: type) -> D: ...
    @overload
    def __get__(self, obj: _Holder, owner: type) -> npt.NDArray[N]: ...
    def __get__(self, obj: _Holder | None, owner: type) -> Any:
        if obj is None:
            return self
        return self._view(obj)

    def __set__(self, obj: _Holder, value: npt.ArrayLike) -> None:
        self._assign(obj, value)


class Nested(_Field, Generic[S]):
    """A struct member of one struct: a view sharing the outer struct's memory."""

    def __init__(self, offset: int, cls: type[S]) -> None:
        super().__init__(offset)
        self.cls = cls

    def _check_kind(self, plan: MemberPlan, where: str) -> None:
        if plan.type.kind is not TypeKind.Struct or plan.type != self.cls.layout:
            raise LayoutError(where, f"declared {self.cls.__name__}, the layout differs")

    @overload
    def __get__(self: D, obj: None, owner: type) -> D: ...
    @overload
    def __get__(self, obj: Struct, owner: type) -> S: ...
    def __get__(self, obj: Struct | None, owner: type) -> Any:
        if obj is None:
            return self
        return self.cls._os_wrap(self._view(obj))

    def __set__(self, obj: Struct, value: S | Mapping[str, Any]) -> None:
        target = self.cls._os_wrap(self._view(obj))
        if isinstance(value, Mapping):
            target.set(**value)
        elif isinstance(value, self.cls):
            target._os_data[...] = value._os_data
        else:
            raise TypeError(f"{self.name} takes a {self.cls.__name__} or a mapping of its fields")


class NestedArray(_Field, Generic[A]):
    """An array of structs, or a struct member of a StructArray: a StructArray view."""

    def __init__(self, offset: int, cls: type[A]) -> None:
        super().__init__(offset)
        self.cls = cls

    def _check_kind(self, plan: MemberPlan, where: str) -> None:
        if plan.leaf != self.cls.layout:
            raise LayoutError(where, f"declared {self.cls.__name__}, the layout differs")

    @overload
    def __get__(self: D, obj: None, owner: type) -> D: ...
    @overload
    def __get__(self, obj: _Holder, owner: type) -> A: ...
    def __get__(self, obj: _Holder | None, owner: type) -> Any:
        if obj is None:
            return self
        return self.cls._os_wrap(self._view(obj))

    def __set__(self, obj: _Holder, value: A) -> None:
        if not isinstance(value, self.cls):
            raise TypeError(f"{self.name} takes a {self.cls.__name__}")
        self._view(obj)[...] = value._os_data


class _Holder:
    """What Struct and StructArray share: a structured numpy array and byte access to it."""

    __slots__ = ("_os_data",)
    _os_plan: ClassVar[StructPlan]
    _os_fields: ClassVar[dict[str, _Field]]
    layout: ClassVar[TypeLayout]
    dtype: ClassVar[np.dtype[Any]]
    size: ClassVar[int]

    _os_data: npt.NDArray[Any]

    @classmethod
    def _os_bind(cls, layout: TypeLayout | None) -> None:
        """Build the dtype and check the class's fields against the layout (at import)."""
        if layout is None or layout.kind is not TypeKind.Struct:
            raise LayoutError(cls.__name__, "a struct class needs a struct layout")
        fields: dict[str, _Field] = {}
        for klass in reversed(cls.__mro__):
            for key, value in vars(klass).items():
                if isinstance(value, _Field):
                    fields[key] = value
        members = layout.members
        if len(fields) != len(members):
            raise LayoutError(
                cls.__name__,
                f"the class declares {len(fields)} fields, the layout has {len(members)} members",
            )
        names = tuple(fields)
        base = getattr(cls, "element", None)
        if base is not None and base.layout == layout and tuple(base._os_fields) == names:
            plan = base._os_plan  # an array class shares its element's dtype
        else:
            nested = {}
            for f in fields.values():
                if isinstance(f, Nested | NestedArray):
                    nested[f.cls.layout] = f.cls.dtype
            plan = struct_plan(layout, names, nested)
        for f, member in zip(fields.values(), plan.members, strict=True):
            f._check(member, cls.__name__)
            f.plan = member
        cls._os_plan = plan
        cls._os_fields = fields
        cls.layout = layout
        cls.dtype = plan.dtype
        cls.size = plan.dtype.itemsize

    @classmethod
    def _os_wrap(cls: type[H], data: npt.NDArray[Any]) -> H:
        obj = object.__new__(cls)
        obj._os_data = data
        return obj

    @property
    def data(self) -> npt.NDArray[Any]:
        """The structured numpy array (it supports the buffer protocol: upload it directly)."""
        return self._os_data

    @property
    def nbytes(self) -> int:
        return int(self._os_data.nbytes)

    def to_bytes(self) -> bytes:
        return self._os_data.tobytes()

    def __buffer__(self, flags: int) -> memoryview:
        return self.bytes_view()

    def bytes_view(self) -> memoryview:
        """The bytes as a flat unsigned-byte memoryview: shared memory when the struct is
        contiguous (the usual case), else a copy. What ``queue.write_buffer`` takes."""
        data = self._os_data
        if data.flags.c_contiguous:
            raw: Any = data.reshape(-1).view(np.uint8)
            return memoryview(raw)
        return memoryview(self.to_bytes())

    def set(self: H, **fields: Any) -> H:
        """Set many members at once, by (Python) name; returns self."""
        known = self._os_fields
        for key, value in fields.items():
            if key not in known:
                raise AttributeError(
                    f"{type(self).__name__} has no field {key!r}; it has {', '.join(known)}"
                )
            setattr(self, key, value)
        return self

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Holder)
        return self.to_bytes() == other.to_bytes()

    __hash__ = None  # type: ignore[assignment]


H = TypeVar("H", bound=_Holder)


class Struct(_Holder):
    """One struct value; generated subclasses pass ``layout=`` and declare their fields."""

    __slots__ = ()

    def __init_subclass__(cls, layout: TypeLayout | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if layout is None and hasattr(cls, "_os_plan"):
            return  # a user's subclass of a generated struct
        cls._os_bind(layout)

    def __init__(self, **fields: Any) -> None:
        self._os_data = np.zeros((), dtype=self.dtype)
        self.set(**fields)

    @classmethod
    def from_bytes(cls: type[S], data: bytes | bytearray | memoryview) -> S:
        raw = memoryview(data).cast("B")
        if raw.nbytes != cls.size:
            raise ValueError(f"{cls.__name__} is {cls.size} bytes, got {raw.nbytes}")
        return cls._os_wrap(_own(raw, cls.dtype).reshape(()))

    def copy(self: S) -> S:
        return type(self)._os_wrap(_own(self.to_bytes(), self.dtype).reshape(()))

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._os_fields)
        return f"{type(self).__name__}({parts})"


class StructArray(_Holder, Generic[S]):
    """``n`` structs back to back at the layout's size (a structured buffer's contents)."""

    __slots__ = ()
    element: ClassVar[type[Struct]]

    def __init_subclass__(cls, element: type[Struct] | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if element is None and hasattr(cls, "_os_plan"):
            return
        if element is None:
            raise TypeError(f"{cls.__name__} needs element=")
        cls.element = element
        cls._os_bind(element.layout)

    def __init__(self, n: int) -> None:
        self._os_data = np.zeros(_count(n, self.size), dtype=self.dtype)

    @classmethod
    def zeros(cls: type[A], n: int) -> A:
        return cls(n)

    @classmethod
    def from_bytes(cls: type[A], data: bytes | bytearray | memoryview) -> A:
        raw = memoryview(data).cast("B")
        if raw.nbytes % cls.size:
            raise ValueError(f"{raw.nbytes} bytes is not a whole number of {cls.size}-byte structs")
        return cls._os_wrap(_own(raw, cls.dtype))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._os_data.shape)

    def __len__(self) -> int:
        return int(self._os_data.shape[0]) if self._os_data.ndim else 1

    @overload
    def __getitem__(self, index: int) -> S: ...
    @overload
    def __getitem__(self: A, index: slice) -> A: ...
    def __getitem__(self, index: int | slice) -> Any:
        """One element (a view), or a slice of the array (a view)."""
        if self._os_data.ndim != 1:
            raise TypeError("index a multi-dimensional struct array through its fields")
        if isinstance(index, slice):
            return type(self)._os_wrap(self._os_data[index])
        return self.element._os_wrap(self._os_data[index, ...])

    def copy(self: A) -> A:
        return type(self)._os_wrap(_own(self.to_bytes(), self.dtype).reshape(self.shape))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self.shape})"


def _own(raw: bytes | memoryview, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """A writable array over a private copy of ``raw``, padding bytes included (numpy's own
    copy of a structured array copies the fields only and leaves padding uninitialised)."""
    return np.frombuffer(bytearray(raw), dtype=dtype)


def _count(n: int, size: int) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"a struct array needs a count >= 0, not {n!r}")
    if n * size > MAX_BYTES:
        raise ValueError(
            f"{n} structs of {size} bytes would be {n * size} bytes, more than the "
            f"{MAX_BYTES}-byte limit of a GPU buffer"
        )
    return n
