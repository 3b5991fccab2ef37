"""Property: for any sound layout, every value set by name lands at the byte offset the reflection
gives (checked with struct, an oracle independent of numpy), and padding is never written."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import codegen_samples as samples
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneshader.bindings import from_reflection
from oneshader.bindings.runtime import Struct, StructArray
from oneshader.reflection.model import (
    MatrixPacking,
    ScalarKind,
    StructMember,
    TypeKind,
    TypeLayout,
)

BYTES = {
    ScalarKind.Float: 4,
    ScalarKind.Int: 4,
    ScalarKind.UInt: 4,
    ScalarKind.Bool: 4,
    ScalarKind.Float16: 2,
    ScalarKind.Int16: 2,
    ScalarKind.Float64: 8,
    ScalarKind.UInt64: 8,
}
PACK = {
    ScalarKind.Float: "<f",
    ScalarKind.Int: "<i",
    ScalarKind.UInt: "<I",
    ScalarKind.Bool: "<I",
    ScalarKind.Float16: "<e",
    ScalarKind.Int16: "<h",
    ScalarKind.Float64: "<d",
    ScalarKind.UInt64: "<Q",
}
PAD = 0xAB


def _round(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@st.composite
def leaf_types(draw: st.DrawFn) -> TypeLayout:
    kind = draw(st.sampled_from(sorted(BYTES, key=lambda k: k.name)))
    bs = BYTES[kind]
    shape = draw(st.sampled_from(["scalar", "vector", "matrix"]))
    if shape == "scalar":
        return TypeLayout(TypeKind.Scalar, kind, size=bs, align=bs)
    rows = draw(st.integers(1, 4))
    if shape == "vector":
        return TypeLayout(TypeKind.Vector, kind, rows=rows, size=rows * bs, align=bs)
    cols = draw(st.integers(1, 4))
    packing = draw(st.sampled_from([MatrixPacking.ColumnMajor, MatrixPacking.RowMajor]))
    outer, inner = (cols, rows) if packing is MatrixPacking.ColumnMajor else (rows, cols)
    mstride = inner * bs + bs * draw(st.integers(0, 3))
    return TypeLayout(
        TypeKind.Matrix,
        kind,
        rows=rows,
        cols=cols,
        size=outer * mstride,
        align=bs,
        mstride=mstride,
        packing=packing,
    )


def _storage(t: TypeLayout) -> int:
    if t.kind is TypeKind.Matrix:
        return (t.cols if t.packing is MatrixPacking.ColumnMajor else t.rows) * t.mstride
    if t.kind is TypeKind.Array:
        return t.length * t.stride
    if t.kind is TypeKind.Struct:
        return t.size
    return BYTES[t.scalar] * max(t.rows, 1)


def _align(t: TypeLayout) -> int:
    while t.kind is TypeKind.Array and t.element is not None:
        t = t.element
    return 16 if t.kind is TypeKind.Struct else BYTES[t.scalar]


@st.composite
def member_types(draw: st.DrawFn, depth: int) -> TypeLayout:
    base = draw(leaf_types()) if depth >= 2 or draw(st.booleans()) else draw(structs(depth + 1))
    if draw(st.integers(0, 3)) == 0:  # an array, possibly of arrays (not of struct arrays)
        levels = 1 if base.kind is TypeKind.Struct else draw(st.integers(1, 2))
        for _ in range(levels):
            stride = _round(_storage(base), _align(base)) + _align(base) * draw(st.integers(0, 2))
            length = draw(st.integers(1, 3))
            base = TypeLayout(
                TypeKind.Array,
                size=length * stride,
                align=_align(base),
                length=length,
                stride=stride,
                element=base,
            )
    return base


@st.composite
def structs(draw: st.DrawFn, depth: int = 0) -> TypeLayout:
    n = draw(st.integers(1, 4))
    offset = 0
    members = []
    for i in range(n):
        t = draw(member_types(depth))
        offset = _round(offset, _align(t)) + _align(t) * draw(st.integers(0, 2))
        members.append(StructMember(f"m{i}", offset, t))
        offset += _storage(t)
    size = _round(offset, 16) + 16 * draw(st.integers(0, 1))
    return TypeLayout(
        TypeKind.Struct, name=f"S{depth}_{draw(st.integers(0, 9))}", size=size, align=16,
        members=tuple(members),
    )  # fmt: skip


Path = tuple[tuple[str, tuple[int, ...]], ...]


def leaves(t: TypeLayout, base: int = 0) -> Iterator[tuple[int, ScalarKind, Path]]:
    """(byte offset, scalar, path) of every value of a struct, computed from the reflection's
    rules alone: a path step is (member name, indices into it)."""
    for m in t.members:
        yield from _member(m.type, base + m.offset, m.name, ())


def _member(
    t: TypeLayout, at: int, name: str, idx: tuple[int, ...]
) -> Iterator[tuple[int, ScalarKind, Path]]:
    if t.kind is TypeKind.Array:
        assert t.element is not None
        for i in range(t.length):
            yield from _member(t.element, at + i * t.stride, name, (*idx, i))
    elif t.kind is TypeKind.Struct:
        for off, kind, path in leaves(t, at):
            yield off, kind, ((name, idx), *path)
    elif t.kind is TypeKind.Scalar:
        yield at, t.scalar, ((name, idx),)
    elif t.kind is TypeKind.Vector:
        for r in range(t.rows):
            yield at + r * BYTES[t.scalar], t.scalar, ((name, (*idx, r)),)
    else:
        bs = BYTES[t.scalar]
        for r in range(t.rows):
            for c in range(t.cols):
                if t.packing is MatrixPacking.ColumnMajor:
                    off = at + c * t.mstride + r * bs
                else:
                    off = at + r * t.mstride + c * bs
                yield off, t.scalar, ((name, (*idx, r, c)),)


def _value(i: int, kind: ScalarKind) -> Any:
    if kind is ScalarKind.Bool:
        return i % 2
    if kind in (ScalarKind.Float, ScalarKind.Float16, ScalarKind.Float64):
        return float(i % 1000) - 500.0
    if kind is ScalarKind.Int16:
        return (i % 60000) - 30000
    return i * 7 + 1


def _walk(obj: Struct | StructArray[Any], path: Path) -> tuple[Any, str, tuple[int, ...]]:
    """The holder of the last step, its field name and the indices into that field."""
    for name, idx in path[:-1]:
        obj = getattr(obj, name)
        for i in idx:
            assert isinstance(obj, StructArray)
            obj = obj[i]
    name, idx = path[-1]
    return obj, name, idx


def _module(layout: TypeLayout) -> Any:
    return from_reflection(samples.one_buffer(layout), "p")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(structs())
def test_values_land_at_reflection_offsets(layout: TypeLayout) -> None:
    mod = _module(layout)
    cls = getattr(mod, layout.name)
    assert cls.size == layout.size
    obj = cls.from_bytes(bytes([PAD]) * layout.size)
    expected = bytearray([PAD]) * layout.size
    for i, (off, kind, path) in enumerate(leaves(layout)):
        value = _value(i, kind)
        holder, name, idx = _walk(obj, path)
        if idx:
            getattr(holder, name)[idx] = value
        else:
            setattr(holder, name, value)
        struct.pack_into(PACK[kind], expected, off, value)
    assert obj.to_bytes() == bytes(expected)

    # and back: bytes written by the oracle read back by name
    again = cls.from_bytes(bytes(expected))
    for i, (_, kind, path) in enumerate(leaves(layout)):
        holder, name, idx = _walk(again, path)
        got = getattr(holder, name)
        got = got[idx] if idx else got
        assert float(got) == float(_value(i, kind)), path


def test_bulk_matrix_assignment_is_math_order_for_both_packings() -> None:
    for packing in MatrixPacking:
        m = TypeLayout(
            TypeKind.Matrix, ScalarKind.Float, rows=3, cols=3, size=48, align=16, mstride=16,
            packing=packing,
        )  # fmt: skip
        layout = TypeLayout(
            TypeKind.Struct, name="M", size=64, align=16,
            members=(StructMember("m", 0, m), StructMember("after", 44, samples.scalar())),
        )  # fmt: skip
        mod = _module(layout)
        obj = mod.M.from_bytes(bytes([PAD]) * 64)
        obj.after = 7.0
        value = np.arange(9, dtype=np.float32).reshape(3, 3) + 1  # m[row][col]
        obj.m = value
        raw = obj.to_bytes()
        for r in range(3):
            for c in range(3):
                off = c * 16 + r * 4 if packing is MatrixPacking.ColumnMajor else r * 16 + c * 4
                assert struct.unpack_from("<f", raw, off)[0] == value[r, c]
        assert struct.unpack_from("<f", raw, 44)[0] == 7.0  # in the padding of column/row 2
        assert raw[12:16] == bytes([PAD]) * 4 and raw[28:32] == bytes([PAD]) * 4
        np.testing.assert_array_equal(obj.m, value)
