"""The generated ``buffer_lengths()``: the contents of Metal's companion constant buffer of
buffer lengths (docs/compiler.md "Buffer lengths on Metal"), every length a required keyword."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from test_codegen_generate import import_file, write_reflection

from oneshader.codegen import generate
from oneshader.reflection.model import (
    BUFFER_LENGTHS,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
)

_UINT = TypeLayout(TypeKind.Scalar, ScalarKind.UInt, size=4, align=4)


def _reflection(measured: tuple[str, ...]) -> ShaderReflection:
    buffers = tuple(
        Resource(
            name,
            ResourceKind.UnorderedAccess,
            ResourceTypeKind.RWStructuredBuffer,
            slots=(Slot(Target.Msl, 0, i), Slot(Target.Wgsl, 0, i)),
            layout=_UINT,
        )
        for i, name in enumerate(("Items", "class", "Other"))
    )
    lengths = Resource(
        BUFFER_LENGTHS,
        ResourceKind.ConstantBuffer,
        ResourceTypeKind.ConstantBuffer,
        slots=(Slot(Target.Msl, 0, 3),),
        layout=TypeLayout(
            TypeKind.Struct,
            name="BufferLengths",
            size=4 * len(measured),
            align=4,
            members=tuple(StructMember(n, 4 * i, _UINT) for i, n in enumerate(measured)),
        ),
    )
    return ShaderReflection(
        source="a.hlsl",
        targets=(Target.Msl, Target.Wgsl),
        resources=(*buffers, lengths) if measured else buffers,
    )


def test_buffer_lengths_takes_every_length_by_name(tmp_path: Path) -> None:
    path = write_reflection(tmp_path / "out", "a", _reflection(("Items", "class")))
    (module_path, _) = generate([path], tmp_path / "gen")
    module = import_file(module_path)
    data = module.buffer_lengths(Items=40, class_=12).to_bytes()
    assert data == struct.pack("<2I", 40, 12)
    with pytest.raises(TypeError):
        module.buffer_lengths(Items=40)  # a length left out is an error, not a zero
    with pytest.raises(TypeError):
        module.buffer_lengths(40, 12)  # keywords only: no lengths in the wrong place
    assert "[[buffer(3)]]" in (module.buffer_lengths.__doc__ or "")


def test_no_companion_no_function(tmp_path: Path) -> None:
    path = write_reflection(tmp_path / "out", "a", _reflection(()))
    (module_path, _) = generate([path], tmp_path / "gen")
    assert not hasattr(import_file(module_path), "buffer_lengths")
