"""Checks that a reflection's buffer layouts describe memory a host struct can really have.

The one check of a reflection's meaning beyond its grammar, run by ``oneshader reflection
check``, by the generator before it writes anything (both through :func:`read_checked`, which
puts the line and column of the offending record on the error) and by the runtime when a struct
class is made, so a crafted or broken file fails with a message instead of allocating gigabytes,
recursing without end or producing a struct whose fields overlap. Standard library only; the
format reader is imported only by :func:`read_checked`.
"""

from __future__ import annotations

import os
import re

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
    "read_checked",
    "read_checked_file",
    "storage",
    "too_deep",
]

MAX_BYTES = 1 << 32  # larger than any buffer binding a GPU API allows
# How deep structs and arrays may nest (each struct member and array element is a level): one
# limit for the compiler (a positioned error at the struct), the reader and the generator.
MAX_DEPTH = 32
MAX_COUNT = 1 << 20  # resource array sizes, locations, slots

SCALAR_BYTES = {kind: kind.size for kind in ScalarKind}


class LayoutError(ValueError):
    """A layout no host struct can have; ``path`` names the member, as ``Frame.lights[].color``.

    ``node`` is the model object at fault (a type, member, resource, entry point or stage
    variable) and ``attr`` its attribute at fault, so that a reader can point at the record."""

    def __init__(self, path: str, message: str, node: object = None, attr: str = "") -> None:
        self.path = path
        self.message = message
        self.node = node
        self.attr = attr
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


def too_deep(t: TypeLayout) -> list[TypeLayout] | None:
    """The nodes from ``t`` down to the first one nested more than :data:`MAX_DEPTH` levels
    deep, as :func:`check_layout` counts them, or None (iterative: no recursion limit)."""
    stack: list[tuple[TypeLayout, tuple[TypeLayout, ...]]] = [(t, (t,))]
    while stack:
        node, chain = stack.pop()
        if len(chain) - 1 > MAX_DEPTH:
            return list(chain)
        if node.kind is TypeKind.Array and node.element is not None:
            stack.append((node.element, (*chain, node.element)))
        elif node.kind is TypeKind.Struct:
            stack.extend((m.type, (*chain, m.type)) for m in node.members)
    return None


def _too_big(n: int) -> bool:
    return n < 0 or n > MAX_BYTES


def check_layout(t: TypeLayout, path: str = "", depth: int = 0) -> int:
    """Raise :class:`LayoutError` for the first problem in ``t``; if sound, return the
    alignment its scalars need (the largest scalar in it: where ``t`` may start, and what
    an array's stride of it must be a multiple of)."""
    if depth > MAX_DEPTH:
        raise LayoutError(path, f"nested more than {MAX_DEPTH} levels deep", t)
    for label in ("size", "align", "length", "stride", "mstride", "rows", "cols"):
        value = getattr(t, label)
        if _too_big(value):
            raise LayoutError(path, f"{label}={value} is out of range (0 to {MAX_BYTES})", t, label)
    too_big = type_too_big(t)  # the reader's limit, for models made in memory
    if too_big is not None:
        raise LayoutError(path, too_big[1], t, too_big[0])
    kind = t.kind
    if kind in (TypeKind.Scalar, TypeKind.Vector, TypeKind.Matrix) and t.scalar not in SCALAR_BYTES:
        raise LayoutError(path, f"unknown scalar kind {t.scalar}", t, "scalar")
    if kind is TypeKind.Vector and not 1 <= t.rows <= 4:
        raise LayoutError(path, f"a vector has 1 to 4 components, not {t.rows}", t, "rows")
    if kind is TypeKind.Matrix:
        if not (1 <= t.rows <= 4 and 1 <= t.cols <= 4):
            raise LayoutError(path, f"a matrix is at most 4x4, not {t.rows}x{t.cols}", t, "rows")
        inner = matrix_shape(t)[1]
        bs = SCALAR_BYTES[t.scalar]
        if t.mstride < inner * bs or t.mstride % bs:
            raise LayoutError(
                path,
                f"matrix stride {t.mstride} cannot hold {inner} {t.scalar.name} components "
                f"per {'column' if t.packing is MatrixPacking.ColumnMajor else 'row'}",
                t,
                "mstride",
            )
    if kind is TypeKind.Array:
        if t.element is None:
            raise LayoutError(path, "an array without an element type", t)
        need = check_layout(t.element, path + "[]", depth + 1)
        if t.stride < storage(t.element):  # unsized arrays too: numpy cannot overlap them
            raise LayoutError(
                path,
                f"array stride {t.stride} is smaller than its element ({storage(t.element)} bytes)",
                t,
                "stride",
            )
        if t.length != 1 and t.stride % need:
            raise LayoutError(
                path,
                f"array stride {t.stride} is not a multiple of {need}, the alignment of its "
                "element's scalars: every element after the first would be misaligned",
                t,
                "stride",
            )
        if _too_big(t.length * t.stride):
            raise LayoutError(
                path,
                f"{t.length} elements of {t.stride} bytes exceed the {MAX_BYTES}-byte limit",
                t,
                "length",
            )
        return need
    if kind is TypeKind.Struct:
        return _check_members(t, path, depth)
    return SCALAR_BYTES[t.scalar]


def _check_members(t: TypeLayout, path: str, depth: int) -> int:
    """The members of a struct; the alignment its scalars need (1 for an empty one)."""
    end = 0
    previous = ""
    need_all = 1
    for m in sorted(t.members, key=lambda m: m.offset):
        where = f"{path}.{m.name}" if path else m.name
        need = check_layout(m.type, where, depth + 1)
        need_all = max(need_all, need)
        if m.offset % need:
            leaf = innermost(m.type)
            what = (
                f"its scalar type {leaf.scalar.name}"
                if leaf.kind is not TypeKind.Struct
                else f"the largest scalar of {leaf.name or 'its struct'}"
            )
            raise LayoutError(
                where,
                f"offset {m.offset} is not aligned to {what} (a multiple of {need})",
                m,
                "offset",
            )
        if m.offset < end:
            raise LayoutError(
                where, f"offset {m.offset} overlaps {previous!r} (ends at {end})", m, "offset"
            )
        if m.offset + storage(m.type) > t.size:
            raise LayoutError(
                where,
                f"offset {m.offset} + {storage(m.type)} bytes runs past the struct's size {t.size}",
                m,
                "offset",
            )
        end = m.offset + _extent(m.type)
        previous = m.name
    return need_all


def check_reflection(r: ShaderReflection) -> None:
    """Every layout and count of a reflection; the path starts at the resource or block name."""
    for res in r.resources:
        if not 0 <= res.count <= MAX_COUNT:
            raise LayoutError(
                res.name, f"count={res.count} is out of range (0 to {MAX_COUNT})", res, "count"
            )
        if res.layout is not None:
            check_layout(res.layout, res.name)
    for pb in r.push_blocks:
        if pb.layout is not None:
            check_layout(pb.layout, pb.name)
    for e in r.entry_points:
        if _too_big(e.stride):
            raise LayoutError(e.name, f"vertex stride {e.stride} is out of range", e, "stride")
        for v in e.inputs:
            if _too_big(v.offset) or not 0 <= (v.location or 0) <= MAX_COUNT:
                raise LayoutError(f"{e.name}.{v.name}", "offset or location out of range", v)
        if any(not 0 <= w <= MAX_COUNT for w in e.workgroup):
            raise LayoutError(
                e.name, f"workgroup size {e.workgroup} is out of range", e, "workgroup"
            )


_ATTRIBUTE = re.compile(r" ([A-Za-z][A-Za-z0-9_-]*)=")


def read_checked(data: bytes | str, *, file: str = "<reflection>") -> ShaderReflection:
    """Read a reflection file and check its layouts: a ReflectionFormatError at the record (and
    the attribute) at fault for either kind of problem, so ``oneshader reflection check`` and
    the generator refuse the same files with the same line:col."""
    from oneshader.reflection.errors import ReflectionFormatError
    from oneshader.reflection.format import ReflectionFormat

    lines: dict[int, int] = {}
    model = ReflectionFormat.read(data, file=file, lines=lines)
    try:
        check_reflection(model)
    except LayoutError as err:
        line = lines.get(id(err.node), 0)
        column = 1 if line else 0
        if line and err.attr:
            text = data if isinstance(data, str) else bytes(data).decode("utf-8")
            record = text.split("\n", line)[line - 1]
            for m in _ATTRIBUTE.finditer(record):
                if m.group(1) == err.attr:
                    column = m.end() + 1
                    break
        raise ReflectionFormatError(str(err), line, column, file) from None
    return model


def read_checked_file(path: str | os.PathLike[str]) -> ShaderReflection:
    """:func:`read_checked` of a file; an unreadable file is a UserError naming it."""
    from oneshader.reflection.format import read_bytes

    name = os.fspath(path)
    return read_checked(read_bytes(name), file=name)
