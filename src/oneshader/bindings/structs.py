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
        shape = target.shape[obj._os_data.ndim :]
        where = f"{type(obj).__name__}.{self.name}"
        if target.dtype.kind in "iu":
            _check_integers(where, target.dtype, value)
        try:
            target[...] = value
        except (ValueError, TypeError, OverflowError) as err:
            raise ValueError(
                f"{where} takes {_describe(shape)}, got {_got(value)} ({err})"
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


def _got(value: object) -> str:
    """What a bad value was: its type, and its value or shape."""
    kind = type(value).__name__
    try:
        shape = np.shape(value)  # type: ignore[call-overload]
    except Exception:  # a value numpy cannot even measure
        return kind
    if shape:
        return f"{kind} of shape {'x'.join(map(str, shape))}"
    text = repr(value)
    return f"{kind} {text if len(text) <= 40 else text[:37] + '...'}"


def _check_integers(where: str, dtype: np.dtype[Any], value: object) -> None:
    """An integer field takes integers in its range: 1.5, NaN or -1 into a uint is an error
    naming the field and the value, where numpy would store 1, 0 or 4294967295."""
    try:
        arr = np.asarray(value)
    except Exception:
        return  # numpy's own assignment reports it
    kind = arr.dtype.kind
    if kind in "fc":
        finite = np.isfinite(arr)
        if not finite.all() or (np.asarray(arr[finite]) % 1 != 0).any():
            raise ValueError(f"{where} holds {dtype.name} integers, got {_got(value)}")
        values = arr.astype(np.float64)
    elif kind in "iu":
        values = arr
    elif kind == "b":
        return
    else:
        raise ValueError(f"{where} holds {dtype.name} integers, got {_got(value)}")
    info = np.iinfo(dtype)
    if values.size and (values.min() < info.min or values.max() > info.max):
        raise ValueError(f"{where} holds {dtype.name} ({info.min}..{info.max}), got {_got(value)}")


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
        """Zeroed, then the given fields set; a field given as None stays zero (generated
        classes declare one typed keyword parameter per field, all defaulting to None)."""
        self._os_data = np.zeros((), dtype=self.dtype)
        self.set(**{k: v for k, v in fields.items() if v is not None})

    @classmethod
    def from_bytes(cls: type[S], data: bytes | bytearray | memoryview) -> S:
        raw = memoryview(data).cast("B")
        if raw.nbytes != cls.size:
            raise ValueError(f"{cls.__name__} is {cls.size} bytes, got {raw.nbytes}")
        return cls._os_wrap(_own(raw, cls.dtype).reshape(()))

    def copy(self: S) -> S:
        return type(self)._os_wrap(_own(self.to_bytes(), self._os_data.dtype).reshape(()))

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

    def __init__(self, n: int, align: int = 1) -> None:
        """n zeroed structs, each ``align``-aligned: with the device's
        min_uniform_buffer_offset_alignment, one buffer holds every object's uniform data and
        object i is bound at the dynamic offset :meth:`byte_offset` (i)."""
        if not isinstance(align, int) or align < 1:
            raise ValueError(f"align must be a positive int, not {align!r}")
        dtype = self.dtype
        stride = -(-self.size // align) * align
        if stride != self.size:
            fields = dtype.fields
            assert fields is not None
            dtype = np.dtype(
                {
                    "names": list(fields),
                    "formats": [fields[k][0] for k in fields],
                    "offsets": [fields[k][1] for k in fields],
                    "itemsize": stride,
                }
            )
        self._os_data = np.zeros(_count(n, stride), dtype=dtype)

    def byte_offset(self, index: int) -> int:
        """Where element ``index`` starts in the bytes (its dynamic offset)."""
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for {n} structs")
        return (index % n) * int(self._os_data.dtype.itemsize)

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
        data = _own(self.to_bytes(), self._os_data.dtype)
        return type(self)._os_wrap(data.reshape(self.shape))

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
