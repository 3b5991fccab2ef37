"""What generated modules import (as ``_b``): one namespace for structs and shader helpers."""

from oneshader.bindings.shader import Binding, Entry, Shader, Spec
from oneshader.bindings.structs import (
    LayoutError,
    Nested,
    NestedArray,
    Scalar,
    Struct,
    StructArray,
    Value,
)

__all__ = [
    "Binding",
    "Entry",
    "LayoutError",
    "Nested",
    "NestedArray",
    "Scalar",
    "Shader",
    "Spec",
    "Struct",
    "StructArray",
    "Value",
]
