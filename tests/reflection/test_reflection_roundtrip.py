"""Round trips both ways, byte determinism, every escape, deep and wide inputs."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reflection_strategies import SPECIAL, deep_array, deep_struct, models, texts

from oneshader.reflection import (
    EntryPoint,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Stage,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
)
from oneshader.reflection.format import ReflectionFormat

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(models())
def test_read_of_write_is_identity(model: ShaderReflection) -> None:
    data = ReflectionFormat.write(model)
    assert ReflectionFormat.read(data) == model
    assert ReflectionFormat.try_read(data) == model
    assert ReflectionFormat.read(data.decode("utf-8")) == model


@FAST
@given(models())
def test_write_is_canonical_and_deterministic(model: ShaderReflection) -> None:
    data = ReflectionFormat.write(model)
    assert ReflectionFormat.write(model) == data
    # An equal model built separately (no shared objects) gives the same bytes.
    assert ReflectionFormat.write(ReflectionFormat.read(data)) == data
    assert data.endswith(b"\n") and b"\r" not in data and b"\t" not in data
    assert not data.startswith(b"\xef\xbb\xbf")
    for line in data.split(b"\n")[1:-1]:
        indent = len(line) - len(line.lstrip(b" "))
        assert indent % 2 == 0
        assert not line.endswith(b" ")


@FAST
@given(st.lists(texts, min_size=1, max_size=4))
def test_strings_survive_with_every_escape(names: list[str]) -> None:
    model = ShaderReflection(
        source=names[0],
        resources=tuple(
            Resource(n, ResourceKind.Sampler, ResourceTypeKind.SamplerState, hlsl=n, format=n)
            for n in names
        ),
        entry_points=(EntryPoint(names[-1], Stage.Pixel, uses=tuple(names)),),
    )
    data = ReflectionFormat.write(model)
    assert ReflectionFormat.read(data) == model
    assert data.count(b"\n") == len(data.split(b"\n")) - 1  # no raw newline in a value


def test_escapes_are_the_documented_ones() -> None:
    model = ShaderReflection(source=SPECIAL)
    line = ReflectionFormat.write(model).decode().split("\n")[1]
    assert line == 'source name="\\\\\\"\\n\\r\\t\\u0000\\u001b\\u007f\\u0085 =,-ä€😀\u2028\ufeff"'


def test_empty_lists_and_empty_model() -> None:
    empty = ShaderReflection(source="")
    data = ReflectionFormat.write(empty)
    assert data == b'oneshader-reflection 1\nsource name=""\ntargets list=-\n'
    assert ReflectionFormat.read(data) == empty
    r = Resource("r", ResourceKind.Sampler, ResourceTypeKind.SamplerState)
    data = ReflectionFormat.write(ShaderReflection("s", resources=(r,)))
    assert b"stages=- " in data
    assert ReflectionFormat.read(data).resources == (r,)


def _wrap(layout: TypeLayout) -> ShaderReflection:
    return ShaderReflection(
        source="deep",
        targets=(Target.SpirV,),
        resources=(
            Resource(
                "B",
                ResourceKind.ConstantBuffer,
                ResourceTypeKind.ConstantBuffer,
                layout=layout,
            ),
        ),
    )


def test_deep_type_trees_do_not_recurse() -> None:
    # Far deeper than the recursion limit: writer and reader are iterative. Model equality
    # itself recurses (dataclass __eq__), so the round trip is checked through the bytes.
    for layout in (deep_array(3000), deep_struct(3000)):
        data = ReflectionFormat.write(_wrap(layout))
        model = ReflectionFormat.read(data)
        assert ReflectionFormat.write(model) == data
        node = model.resources[0].layout
        depth = 0
        while node is not None and node.kind is not TypeKind.Scalar:
            node = node.element if node.element is not None else node.members[0].type
            depth += 1
        assert depth == 3000


def test_moderately_deep_trees_compare_equal() -> None:
    for layout in (deep_array(60), deep_struct(60)):
        model = _wrap(layout)
        assert ReflectionFormat.read(ReflectionFormat.write(model)) == model


def test_wide_inputs() -> None:
    members = tuple(
        StructMember(f"m{i}", 4 * i, TypeLayout(TypeKind.Scalar, ScalarKind.Float, size=4))
        for i in range(20000)
    )
    model = _wrap(TypeLayout(TypeKind.Struct, name="W", size=80000, members=members))
    assert ReflectionFormat.read(ReflectionFormat.write(model)) == model
    long_name = "x" * 1_000_000
    model = ShaderReflection(source=long_name)
    assert ReflectionFormat.read(ReflectionFormat.write(model)) == model
