"""How each scalar kind is held in numpy, by name, without importing numpy: the one table behind
the runtime's dtypes (:mod:`.layout`) and the type names the generator writes; and how HLSL
spells each type, for generated docstrings and the stage checks' messages."""

from __future__ import annotations

from oneshader.reflection.model import MatrixPacking, ScalarKind, TypeKind, TypeLayout

__all__ = ["HLSL_SCALARS", "NUMPY_SCALARS", "hlsl_type"]

NUMPY_SCALARS: dict[ScalarKind, str] = {
    ScalarKind.Bool: "uint32",  # a 32-bit word in every target's buffers
    ScalarKind.Int: "int32",
    ScalarKind.UInt: "uint32",
    ScalarKind.Float: "float32",
    ScalarKind.Int16: "int16",
    ScalarKind.UInt16: "uint16",
    ScalarKind.Float16: "float16",
    ScalarKind.Int64: "int64",
    ScalarKind.UInt64: "uint64",
    ScalarKind.Float64: "float64",
}

HLSL_SCALARS: dict[ScalarKind, str] = {
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


def hlsl_type(t: TypeLayout) -> str:
    """The HLSL spelling of a layout (``float4x4``, ``row_major float3x3``, ``Item[2]``)."""
    if t.kind is TypeKind.Scalar:
        return HLSL_SCALARS[t.scalar]
    if t.kind is TypeKind.Vector:
        return f"{HLSL_SCALARS[t.scalar]}{t.rows}"
    if t.kind is TypeKind.Matrix:
        base = f"{HLSL_SCALARS[t.scalar]}{t.rows}x{t.cols}"
        return "row_major " + base if t.packing is MatrixPacking.RowMajor else base
    if t.kind is TypeKind.Array:
        assert t.element is not None
        return f"{hlsl_type(t.element)}[{t.length or ''}]"
    return t.name or "struct"
