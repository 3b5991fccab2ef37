"""How HLSL spells the model's types, for one-line displays, generated docstrings and messages
(standard library only, and cheap to import: the bindings runtime uses it)."""

from __future__ import annotations

from collections.abc import Callable

from oneshader.reflection.model import ScalarKind, TypeKind, TypeLayout

__all__ = ["SCALAR_NAMES", "describe_type", "describe_variable"]

SCALAR_NAMES = {
    ScalarKind.Bool: "bool",
    ScalarKind.Int: "int",
    ScalarKind.UInt: "uint",
    ScalarKind.Float: "float",
    ScalarKind.Int16: "int16_t",
    ScalarKind.UInt16: "uint16_t",
    ScalarKind.Float16: "half",
    ScalarKind.Int64: "int64_t",
    ScalarKind.UInt64: "uint64_t",
    ScalarKind.Float64: "double",
}


def describe_type(t: TypeLayout, show_name: Callable[[str], str] = str) -> str:
    """HLSL-like spelling: ``float4x4``, ``Light[8]``, ``float[]`` (unsized); ``show_name``
    renders a struct's name (which comes from an untrusted file)."""
    dims = ""
    while t.kind is TypeKind.Array and t.element is not None:
        dims += f"[{t.length or ''}]"
        t = t.element
    scalar = SCALAR_NAMES[t.scalar]
    if t.kind is TypeKind.Vector:
        base = f"{scalar}{t.rows}"
    elif t.kind is TypeKind.Matrix:
        base = f"{scalar}{t.rows}x{t.cols}"
    elif t.kind is TypeKind.Struct:
        base = show_name(t.name) or "struct"
    else:
        base = scalar
    return base + dims


def describe_variable(scalar: ScalarKind, components: int) -> str:
    """A stage variable's type: ``float2``, ``uint``."""
    return SCALAR_NAMES[scalar] + (str(components) if components > 1 else "")
