"""Checks that a reflection's buffer layouts describe memory a host struct can really have.

Run by the generator before it writes anything and by the runtime when a struct class is made,
so a crafted or broken file fails with a message instead of allocating gigabytes, recursing
without end or producing a struct whose fields overlap. Standard library only.
"""

from __future__ import annotations

from oneshader.reflection.model import (
    MatrixPacking,
    ScalarKind,
    ShaderReflection,
    TypeKind,
    TypeLayout,
    type_too_big,
)

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "LayoutError",
    "check_layout",
    "check_reflection",
    "innermost",
    "storage",
]

MAX_BYTES = 1 << 32  # larger than any buffer binding a GPU API allows
MAX_DEPTH = 32
MAX_COUNT = 1 << 20  # resource array sizes, locations, slots

SCALAR_BYTES = {kind: kind.size for kind in ScalarKind}


class LayoutError(ValueError):
    """A layout no host struct can have; ``path`` names the member, as ``Frame.lights[].color``."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)


def innermost(t: TypeLayout) -> TypeLayout:
    """The element type under every array level (``t`` itself if it is no array)."""
    while t.kind is TypeKind.Array and t.element is not None:
        t = t.element
    return t


def matrix_shape(t: TypeLayout) -> tuple[int, int]:
    """(stored vectors, components per stored vector)."""
    if t.packing is MatrixPacking.ColumnMajor:
        return t.cols, t.rows
    return t.rows, t.cols


def storage(t: TypeLayout) -> int:
    """Bytes a numpy dtype for ``t`` spans: padding of every element included."""
    if t.kind is TypeKind.Scalar:
        return SCALAR_BYTES[t.scalar]
    if t.kind is TypeKind.Vector:
        return SCALAR_BYTES[t.scalar] * t.rows
    if t.kind is TypeKind.Matrix:
        return matrix_shape(t)[0] * t.mstride
    if t.kind is TypeKind.Array:
        return t.length * t.stride
    return t.size


def _extent(t: TypeLayout) -> int:
    """Bytes up to the end of the last data byte (trailing padding left out)."""
    if t.kind is TypeKind.Matrix:
        outer, inner = matrix_shape(t)
        return (outer - 1) * t.mstride + inner * SCALAR_BYTES[t.scalar]
    if t.kind is TypeKind.Array:
        assert t.element is not None
        return 0 if t.length == 0 else (t.length - 1) * t.stride + _extent(t.element)
    return storage(t)


def _too_big(n: int) -> bool:
    return n < 0 or n > MAX_BYTES


def check_layout(t: TypeLayout, path: str = "", depth: int = 0) -> None:
    """Raise :class:`LayoutError` for the first problem in ``t``; return normally if sound."""
    if depth > MAX_DEPTH:
        raise LayoutError(path, f"nested more than {MAX_DEPTH} levels deep")
    for label in ("size", "align", "length", "stride", "mstride", "rows", "cols"):
        value = getattr(t, label)
        if _too_big(value):
            raise LayoutError(path, f"{label}={value} is out of range (0 to {MAX_BYTES})")
    too_big = type_too_big(t)  # the reader's limit, for models made in memory
    if too_big is not None:
        raise LayoutError(path, too_big[1])
    kind = t.kind
    if kind in (TypeKind.Scalar, TypeKind.Vector, TypeKind.Matrix) and t.scalar not in SCALAR_BYTES:
        raise LayoutError(path, f"unknown scalar kind {t.scalar}")
    if kind is TypeKind.Vector and not 1 <= t.rows <= 4:
        raise LayoutError(path, f"a vector has 1 to 4 components, not {t.rows}")
    if kind is TypeKind.Matrix:
        if not (1 <= t.rows <= 4 and 1 <= t.cols <= 4):
            raise LayoutError(path, f"a matrix is at most 4x4, not {t.rows}x{t.cols}")
        inner = matrix_shape(t)[1]
        bs = SCALAR_BYTES[t.scalar]
        if t.mstride < inner * bs or t.mstride % bs:
            raise LayoutError(
                path,
                f"matrix stride {t.mstride} cannot hold {inner} {t.scalar.name} components "
                f"per {'column' if t.packing is MatrixPacking.ColumnMajor else 'row'}",
            )
    if kind is TypeKind.Array:
        if t.element is None:
            raise LayoutError(path, "an array without an element type")
        check_layout(t.element, path + "[]", depth + 1)
        if t.length and t.stride < storage(t.element):
            raise LayoutError(
                path,
                f"array stride {t.stride} is smaller than its element ({storage(t.element)} bytes)",
            )
        if _too_big(t.length * t.stride):
            raise LayoutError(
                path,
                f"{t.length} elements of {t.stride} bytes exceed the {MAX_BYTES}-byte limit",
            )
    if kind is TypeKind.Struct:
        _check_members(t, path, depth)


def _check_members(t: TypeLayout, path: str, depth: int) -> None:
    end = 0
    previous = ""
    for m in sorted(t.members, key=lambda m: m.offset):
        where = f"{path}.{m.name}" if path else m.name
        check_layout(m.type, where, depth + 1)
        leaf = innermost(m.type)
        if leaf.kind is not TypeKind.Struct and m.offset % SCALAR_BYTES[leaf.scalar]:
            raise LayoutError(where, f"offset {m.offset} is not aligned to its scalar type")
        if m.offset < end:
            raise LayoutError(where, f"offset {m.offset} overlaps {previous!r} (ends at {end})")
        if m.offset + storage(m.type) > t.size:
            raise LayoutError(
                where,
                f"offset {m.offset} + {storage(m.type)} bytes runs past the struct's size {t.size}",
            )
        end = m.offset + _extent(m.type)
        previous = m.name


def check_reflection(r: ShaderReflection) -> None:
    """Every layout and count of a reflection; the path starts at the resource or block name."""
    for res in r.resources:
        if not 0 <= res.count <= MAX_COUNT:
            raise LayoutError(res.name, f"count={res.count} is out of range (0 to {MAX_COUNT})")
        if res.layout is not None:
            check_layout(res.layout, res.name)
    for pb in r.push_blocks:
        if pb.layout is not None:
            check_layout(pb.layout, pb.name)
    for e in r.entry_points:
        if _too_big(e.stride):
            raise LayoutError(e.name, f"vertex stride {e.stride} is out of range")
        for v in e.inputs:
            if _too_big(v.offset) or not 0 <= (v.location or 0) <= MAX_COUNT:
                raise LayoutError(f"{e.name}.{v.name}", "offset or location out of range")
        if any(not 0 <= w <= MAX_COUNT for w in e.workgroup):
            raise LayoutError(e.name, f"workgroup size {e.workgroup} is out of range")
