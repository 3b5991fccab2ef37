"""One layout for every target: where two targets' layouts disagree, and how to write it portably.

Offsets, array strides, matrix strides and the size of a structured buffer's element must agree.
The size of a vector leaf may differ (Metal's ``float3`` takes 16 bytes where SPIR-V's takes 12, at
the same offset), which is harmless to a host that writes by offset; so may the size of a struct
nested in another or in an array (it matters only through the offsets and strides, compared
themselves) and of a constant buffer's or push block's own struct (tail padding only: the
reflection records the largest, a buffer valid on every target).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from oneshader.reflection.model import ScalarKind, TypeKind, TypeLayout

__all__ = ["Mismatch", "compare"]

_SCALAR_NAMES = {
    ScalarKind.Float: "float",
    ScalarKind.Int: "int",
    ScalarKind.UInt: "uint",
    ScalarKind.Bool: "bool",
    ScalarKind.Float16: "half",
}


@dataclass(frozen=True)
class Mismatch:
    """``struct``/``member`` name where the difference is declared (``member`` empty when the
    resource itself is meant); ``node`` the layout that differs, ``before`` the member preceding
    a moved one."""

    path: str
    what: str
    a: int
    b: int
    struct: str = ""
    member: str = ""
    node: TypeLayout | None = None
    before: TypeLayout | None = None

    @property
    def hint(self) -> str:
        return "write it portably: " + _hint(self)


def compare(a: TypeLayout, b: TypeLayout, path: str, sized: bool = True) -> Mismatch | None:
    """The first disagreement between two targets' layouts of one type, or None; ``sized``
    False for a block (constant buffer, push block) whose size may differ in tail padding."""
    if a.kind is TypeKind.Struct:
        previous: TypeLayout | None = None
        for ma, mb in zip(a.members, b.members, strict=False):
            p = f"{path}.{ma.name}"
            d = compare(ma.type, mb.type, p, sized=False)
            if ma.offset != mb.offset and not (d is not None and d.what == "the array stride"):
                # (an array whose stride differs is also aligned by its own rule: the stride is
                # the cause, and padding before it would not fix it)
                return Mismatch(
                    p, "the offset", ma.offset, mb.offset, a.name, ma.name, ma.type, previous
                )
            if d is not None:
                if not d.struct and not d.member:
                    return replace(d, struct=a.name, member=ma.name)
                return d
            previous = ma.type
        if sized and a.size != b.size:
            return Mismatch(path, "the struct size", a.size, b.size, node=a)
        return None
    if a.kind is TypeKind.Array:
        if a.stride != b.stride:
            return Mismatch(path, "the array stride", a.stride, b.stride, node=a)
        if a.element is not None and b.element is not None:
            return compare(a.element, b.element, path + "[]", sized=False)
        return None
    if a.kind is TypeKind.Matrix and a.mstride != b.mstride:
        return Mismatch(path, "the matrix stride", a.mstride, b.mstride, node=a)
    if sized and _stride(a) != _stride(b):  # a structured buffer of vectors, matrices
        return Mismatch(path, "the element stride", _stride(a), _stride(b), node=a)
    return None


def _stride(t: TypeLayout) -> int:
    """How far apart elements of ``t`` lie in a buffer (C's ``sizeof``, std430's stride)."""
    return -(-t.size // max(t.align, 1)) * max(t.align, 1)


def _spelling(t: TypeLayout) -> str:
    name = _SCALAR_NAMES.get(t.scalar, t.scalar.name.lower())
    if t.kind is TypeKind.Vector:
        return f"{name}{t.rows}"
    if t.kind is TypeKind.Matrix:
        return f"{name}{t.rows}x{t.cols}"
    if t.kind is TypeKind.Struct:
        return f"struct {t.name}" if t.name else "struct"
    if t.kind is TypeKind.Array and t.element is not None:
        return f"{_spelling(t.element)}[{t.length or ''}]"
    return name


def _is_vector3(t: TypeLayout) -> bool:
    return t.kind is TypeKind.Vector and t.rows == 3


def _hint(m: Mismatch) -> str:
    node = m.node
    if m.what == "the array stride" and node is not None and node.element is not None:
        el = node.element
        if el.kind in (TypeKind.Scalar, TypeKind.Vector) and el.size < 16:
            per = max(16 // max(el.size, 1), 1)
            n = (node.length + per - 1) // per if node.length else 0
            scalar = _SCALAR_NAMES.get(el.scalar, "float")
            count = f"[{n}]" if n else "[]"
            return (
                f"declare an array of 16-byte elements, {scalar}4 {m.path.rsplit('.', 1)[-1]}"
                f"{count} instead of {_spelling(node)}, and index it as "
                f"[i / {per}]" + ("[i % 4]" if el.kind is TypeKind.Scalar else "")
            )
        if el.kind is TypeKind.Struct:
            return (
                f"make {_spelling(el)} a multiple of 16 bytes with only 16-byte-aligned members "
                "(float4 instead of float3, explicit padding members)"
            )
    before = m.before
    if m.what == "the offset" and before is not None and _is_vector3(before):
        spelled = _spelling(before)
        return (
            f"the member before it is a {spelled}; make it a {spelled[:-1]}4 "
            "(or move this member in front of it)"
        )
    if m.what == "the offset":
        moved = f" ({_spelling(node)})" if node is not None else ""
        return (
            f"this member{moved} is aligned differently per target; start it at a multiple of "
            "16 bytes with explicit padding members before it, or use 16-byte types "
            "(float4, float4x4, arrays of float4)"
        )
    if m.what == "the matrix stride" and node is not None:
        return (
            f"use a matrix whose stored vectors have 4 components (for example {_spelling(node)} "
            "declared so its columns, or rows with row_major, are 4 long; float4x4 always is)"
        )
    if m.what == "the struct size":
        return "pad the struct to a multiple of 16 bytes with explicit members"
    return "use float4/int4/uint4 members, float4x4 matrices and arrays of 16-byte elements"
