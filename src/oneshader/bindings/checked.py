"""Host data checked against the shader's layout by name before it is uploaded: a numpy array
whose dtype or strides are not the struct's would be copied byte for byte into the buffer and
read as garbage, and a float written into an integer vertex attribute would be truncated.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from oneshader.bindings.layout import scalar_dtype, struct_plan
from oneshader.reflection.model import TypeKind, TypeLayout
from oneshader.reflection.validate import innermost

__all__ = ["VertexArray", "check_array", "layout_dtype"]


def layout_dtype(t: TypeLayout) -> np.dtype[Any]:
    """The numpy dtype of a struct layout (fields named after its members' positions), its
    nested structs' dtypes made the same way."""
    nested: dict[TypeLayout, np.dtype[Any]] = {}
    for m in t.members:
        inner = innermost(m.type)
        if inner.kind is TypeKind.Struct and inner not in nested:
            nested[inner] = layout_dtype(inner)
    names = tuple(f"f{i}" for i in range(len(t.members)))
    return struct_plan(t, names, nested).dtype


def _same(a: np.dtype[Any], b: np.dtype[Any]) -> bool:
    """Equal bytes: the same fields at the same offsets, shapes and scalars, names aside."""
    if a.itemsize != b.itemsize:
        return False
    if a.subdtype is not None or b.subdtype is not None:
        if a.subdtype is None or b.subdtype is None or a.shape != b.shape:
            return False
        return _same(a.subdtype[0], b.subdtype[0])
    if a.names is None or b.names is None:
        return a.names is None and b.names is None and a.str == b.str
    if len(a.names) != len(b.names):
        return False
    fa, fb = a.fields, b.fields
    assert fa is not None and fb is not None
    return all(
        fa[x][1] == fb[y][1] and _same(fa[x][0], fb[y][0])
        for x, y in zip(a.names, b.names, strict=True)
    )


def _field_text(dt: np.dtype[Any], offset: int) -> str:
    return f"{dt} at offset {offset}"


def _struct_mismatch(name: str, layout: TypeLayout, got: np.dtype[Any]) -> str | None:
    """Why ``got`` is not ``layout``'s dtype, naming the first member that differs."""
    want = layout_dtype(layout)
    if _same(want, got):
        return None
    lead = f"{name!r}: the array's dtype is not {layout.name or 'the struct'}'s"
    if got.names is None:
        return f"{lead}: it has no fields (make it with the struct's dtype or Struct.array)"
    gf, wf = got.fields, want.fields
    assert gf is not None and wf is not None
    by_offset = {gf[n][1]: (n, gf[n][0]) for n in got.names}
    for i, m in enumerate(layout.members):
        wdt = wf[f"f{i}"][0]
        found = by_offset.get(m.offset)
        if found is None:
            have = next((n for n in got.names if n == m.name), None)
            if have is not None:
                at = gf[have][1]
                return (
                    f"{lead}: field {m.name!r} is {_field_text(gf[have][0], at)}, the shader "
                    f"reads {_field_text(wdt, m.offset)}"
                )
            return f"{lead}: no field at offset {m.offset}, where the shader reads {m.name!r}"
        fname, fdt = found
        if not _same(wdt, fdt):
            return (
                f"{lead}: field {m.name!r} is {_field_text(fdt, m.offset)} ({fname!r} in the "
                f"array), the shader reads {_field_text(wdt, m.offset)}"
            )
    extra = [n for n in got.names if gf[n][1] not in {m.offset for m in layout.members}]
    if extra:
        return f"{lead}: field {extra[0]!r} at offset {gf[extra[0]][1]} is no member"
    return f"{lead}: its itemsize is {got.itemsize}, the struct's size {want.itemsize}"


def check_array(name: str, layout: TypeLayout | None, data: npt.NDArray[Any]) -> None:
    """Refuse (TypeError) an array for the buffer ``name`` whose bytes would not be the layout's:
    a struct's dtype (every member at its offset, with its type) or element scalar, and
    contiguous strides (a step or a transposed view is not what its bytes say)."""
    if not data.flags.c_contiguous:
        raise TypeError(
            f"{name!r}: the array's strides {data.strides} are not contiguous (a view with a "
            f"step or transposed); upload np.ascontiguousarray(data)"
        )
    if layout is None:
        return
    if layout.kind is TypeKind.Struct:
        problem = _struct_mismatch(name, layout, data.dtype)
        if problem is not None:
            raise TypeError(problem)
        return
    leaf = innermost(layout)
    if leaf.kind is TypeKind.Struct:
        return
    want = scalar_dtype(leaf.scalar)
    base = data.dtype.base if data.dtype.subdtype is not None else data.dtype
    if base.names is not None or base.str != want.str:
        raise TypeError(f"{name!r}: the array holds {data.dtype}, the shader reads {want}")


class VertexArray(np.ndarray):
    """Vertices of one vertex buffer (a structured array of its dtype) whose fields refuse a
    value numpy would change silently: a float that is not a whole number, or a number out of
    range, written into an integer or normalized attribute."""

    _os_field: str | None = None  # the field a view of one field holds

    def __getitem__(self, key: Any) -> Any:
        out = super().__getitem__(key)
        if isinstance(out, VertexArray):
            out._os_field = key if isinstance(key, str) else self._os_field
        return out

    def __setitem__(self, key: Any, value: Any) -> None:
        fields = self.dtype.fields
        if fields is not None and isinstance(key, str) and key in fields:
            _check_values(key, fields[key][0], value)
        elif fields is None and self._os_field is not None:  # data["Id"][3] = ...
            _check_values(self._os_field, self.dtype, value)
        super().__setitem__(key, value)


def _check_values(field: str, dtype: np.dtype[Any], value: Any) -> None:
    scalar = dtype.base if dtype.subdtype is not None else dtype
    if scalar.kind not in "iu":
        return
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.trunc(arr)):
            raise TypeError(
                f"vertex attribute {field!r} is {scalar} (integers): {arr.dtype} values that are "
                "not whole numbers would be truncated (round or convert them first)"
            )
    elif arr.dtype.kind not in "iub":
        return
    if arr.size:
        info = np.iinfo(scalar)
        if arr.min() < info.min or arr.max() > info.max:
            raise TypeError(
                f"vertex attribute {field!r} is {scalar}: values from {arr.min()} to "
                f"{arr.max()} do not fit ({info.min} to {info.max})"
            )
