"""The writer refuses (ValueError) every model it could not read back."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from reflection_strategies import rich_model

from oneshader.diagnostics import UserError
from oneshader.reflection import (
    DeviceFeatures,
    ReflectionFormatError,
    ScalarKind,
    ShaderReflection,
    Stage,
    TypeKind,
    TypeLayout,
)
from oneshader.reflection.format import MAX_UINT, ReflectionFormat

RICH = rich_model()


def change(obj: Any, **fields: Any) -> Any:
    return dataclasses.replace(obj, **fields)


def with_resource(index: int, **fields: Any) -> ShaderReflection:
    res = list(RICH.resources)
    res[index] = change(res[index], **fields)
    return change(RICH, resources=tuple(res))


def with_entry(index: int, **fields: Any) -> ShaderReflection:
    entries = list(RICH.entry_points)
    entries[index] = change(entries[index], **fields)
    return change(RICH, entry_points=tuple(entries))


def with_layout(layout: object) -> ShaderReflection:
    return with_resource(0, layout=layout)


FLOAT = TypeLayout(TypeKind.Scalar, ScalarKind.Float, size=4)
CASES = [
    ("number too big", with_resource(1, count=MAX_UINT + 1), "resources[1] ('Out'): count"),
    ("negative", with_resource(1, count=-1), "count must be an int from 0 to 4294967295"),
    ("bool for a number", with_resource(1, count=True), "count must be an int"),
    ("str for a number", with_resource(1, count="1"), "count must be an int"),
    ("wrong enum", with_resource(1, kind=Stage.Vertex), "kind must be a ResourceKind"),
    ("str for an enum", with_resource(1, kind="ConstantBuffer"), "kind must be a ResourceKind"),
    ("list not tuple", with_resource(1, stages=[Stage.Vertex]), "stages must be a tuple"),
    ("non-str name", with_resource(1, name=3), "name must be a str"),
    ("lone surrogate", change(RICH, source="a\ud800"), "lone surrogate"),
    ("dangling uses", with_entry(0, uses=("Nope",)), "uses names 'Nope', which is not a resource"),
    ("dangling pushuse", with_entry(0, pushuse=("Scene",)), "not a push block"),
    ("dangling specuse", with_entry(0, specuse=("Push",)), "not a spec constant"),
    ("unknown features", with_entry(0, features=DeviceFeatures(1024)), "features must be known"),
    ("workgroup of two", with_entry(1, workgroup=(1, 2)), "workgroup must be a tuple of three"),
    ("location out of range", with_entry(
        0, inputs=(change(RICH.entry_points[0].inputs[0], location=2**32),)), "location"),
    ("array without element", with_layout(TypeLayout(TypeKind.Array, length=2)),
     "an Array needs an element type"),
    ("element on a struct", with_layout(TypeLayout(TypeKind.Struct, element=FLOAT)),
     "only an Array has an element"),
    ("members on a vector", with_layout(change(FLOAT, kind=TypeKind.Vector, members=(
        RICH.resources[0].layout.members[0],))),  # type: ignore[union-attr]
     "only a Struct has members"),
    ("not a layout", with_layout("float4"), "type must be a TypeLayout"),
    ("deep bad size", with_layout(TypeLayout(TypeKind.Array, element=TypeLayout(
        TypeKind.Array, element=change(FLOAT, size=-4)))), "type.element.element.size"),
    ("spec scalar", change(RICH, spec_constants=(change(
        RICH.spec_constants[0], scalar=ScalarKind.Float64),)), "Float64 is not one of"),
    ("not a model", "oneshader", "expected a ShaderReflection"),
    ("two slots for one target", with_resource(1, slots=RICH.resources[1].slots[:1] * 2),
     "one entry per target"),
]  # fmt: skip


@pytest.mark.parametrize(("model", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_writer_refuses(model: Any, message: str) -> None:
    with pytest.raises(ValueError, match="cannot write this reflection") as info:
        ReflectionFormat.write(model)
    assert message in str(info.value)


def test_the_base_model_writes() -> None:
    assert ReflectionFormat.read(ReflectionFormat.write(RICH)) == RICH


def test_write_file_is_atomic_and_read_file_names_the_file(tmp_path: Any) -> None:
    path = tmp_path / "sub" / "a.reflection"
    ReflectionFormat.write_file(path, RICH)
    assert path.read_bytes() == ReflectionFormat.write(RICH)
    assert ReflectionFormat.read_file(path) == RICH
    assert [p.name for p in path.parent.iterdir()] == ["a.reflection"]  # no temporary left
    with pytest.raises(ValueError):
        ReflectionFormat.write_file(path, with_resource(1, count=-1))
    assert ReflectionFormat.read_file(path) == RICH  # a refused write leaves the old file
    path.write_bytes(b"oneshader-reflection 2\n")
    with pytest.raises(ReflectionFormatError) as info:
        ReflectionFormat.read_file(path)
    assert info.value.file == str(path)
    with pytest.raises(UserError, match="cannot read"):
        ReflectionFormat.read_file(tmp_path / "missing.reflection")
