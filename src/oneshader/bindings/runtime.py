"""What generated modules import (as ``_b``): one namespace for structs and shader helpers, and
the names of the types their signatures use."""

from collections.abc import Mapping
from typing import Any, TypeAlias

import numpy.typing as npt

from oneshader.bindings.bindgroups import BindGroup, set_bind_groups
from oneshader.bindings.binding import Binding, BufferRange
from oneshader.bindings.shader import Entry, Layouts, Shader, Spec, shared_class
from oneshader.bindings.stages import LinkError, VertexBuffer, VertexBuffers, check_link
from oneshader.bindings.structs import (
    LayoutError,
    Nested,
    NestedArray,
    Scalar,
    Struct,
    StructArray,
    Value,
)

ArrayLike: TypeAlias = npt.ArrayLike
Fields: TypeAlias = Mapping[str, Any]
# wgpu-py has no type information, and generated modules never import it: these name what a
# parameter takes (for the reader and the editor) and check nothing.
Device: TypeAlias = Any  # a GPUDevice, or Layouts from SHADER.layouts(device, ...)
BufferArg: TypeAlias = Any  # a GPUBuffer or a BufferRange of one
TextureViewArg: TypeAlias = Any  # a GPUTextureView
SamplerArg: TypeAlias = Any  # a GPUSampler

__all__ = [
    "ArrayLike",
    "BindGroup",
    "Binding",
    "BufferArg",
    "BufferRange",
    "Device",
    "Entry",
    "Fields",
    "LayoutError",
    "Layouts",
    "LinkError",
    "Nested",
    "NestedArray",
    "SamplerArg",
    "Scalar",
    "Shader",
    "Spec",
    "Struct",
    "StructArray",
    "TextureViewArg",
    "Value",
    "VertexBuffer",
    "VertexBuffers",
    "check_link",
    "set_bind_groups",
    "shared_class",
]
