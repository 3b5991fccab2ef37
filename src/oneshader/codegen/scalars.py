"""How each scalar kind is held in numpy, by name, without importing numpy: the one table behind
the runtime's dtypes (:mod:`oneshader.bindings.layout`) and the type names the generator writes."""

from __future__ import annotations

from oneshader.reflection.model import ScalarKind

__all__ = ["NUMPY_SCALARS"]

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
