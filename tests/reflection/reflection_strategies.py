"""Hypothesis strategies for random, valid reflection models (shared by the reflection tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from oneshader.reflection import (
    BuiltIn,
    DeviceFeatures,
    EntryPoint,
    Interpolation,
    MatrixPacking,
    PushBlock,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    SpecConstant,
    SpecSlot,
    Stage,
    StageVariable,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
    VertexFormat,
)
from oneshader.reflection.format import MAX_UINT, SPEC_SCALARS

# Every escape, control characters, quotes, spaces, '=' and ',' and non-ASCII text; no lone
# surrogates (UTF-8 cannot hold them; the writer refuses them, see the writer tests).
SPECIAL = '\\"\n\r\t\x00\x1b\x7f\x85 =,-ä€😀\u2028\ufeff'
texts = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
    st.text(alphabet=SPECIAL, max_size=8),
)
numbers = st.one_of(st.integers(0, 300), st.integers(0, MAX_UINT), st.just(MAX_UINT))


def enum_tuple(enum_type: type) -> st.SearchStrategy[tuple[object, ...]]:
    return st.lists(st.sampled_from(list(enum_type)), max_size=4).map(tuple)


slots = st.builds(Slot, st.sampled_from(list(Target)), numbers, numbers)


def leaf_types() -> st.SearchStrategy[TypeLayout]:
    return st.builds(
        TypeLayout,
        kind=st.sampled_from([TypeKind.Scalar, TypeKind.Vector, TypeKind.Matrix]),
        scalar=st.sampled_from(list(ScalarKind)),
        rows=numbers,
        cols=numbers,
        name=texts,
        size=numbers,
        align=numbers,
        length=numbers,
        stride=numbers,
        mstride=numbers,
        packing=st.sampled_from(list(MatrixPacking)),
    )


def _extend(children: st.SearchStrategy[TypeLayout]) -> st.SearchStrategy[TypeLayout]:
    array = st.builds(
        lambda e, n, s, size: TypeLayout(
            TypeKind.Array, size=size, align=4, length=n, stride=s, element=e
        ),
        children,
        numbers,
        numbers,
        numbers,
    )
    struct = st.builds(
        lambda name, members, size: TypeLayout(
            TypeKind.Struct, name=name, size=size, align=16, members=tuple(members)
        ),
        texts,
        st.lists(st.builds(StructMember, texts, numbers, children, texts), max_size=4),
        numbers,
    )
    return st.one_of(array, struct)


types = st.recursive(leaf_types(), _extend, max_leaves=12)

stage_vars = st.builds(
    StageVariable,
    name=texts,
    semantic=texts,
    index=numbers,
    location=st.one_of(st.none(), numbers),
    builtin=st.sampled_from(list(BuiltIn)),
    scalar=st.sampled_from(list(ScalarKind)),
    components=numbers,
    format=st.sampled_from(list(VertexFormat)),
    offset=numbers,
    interp=st.sampled_from(list(Interpolation)),
)

resources = st.builds(
    Resource,
    name=texts,
    kind=st.sampled_from(list(ResourceKind)),
    rtype=st.sampled_from(list(ResourceTypeKind)),
    count=numbers,
    stages=enum_tuple(Stage),
    hlsl=texts,
    format=st.one_of(st.none(), texts),
    depth=st.booleans(),
    attachment=st.one_of(st.none(), numbers),
    slots=st.lists(slots, max_size=3, unique_by=lambda s: s.target).map(tuple),
    counters=st.lists(slots, max_size=3, unique_by=lambda s: s.target).map(tuple),
    layout=st.one_of(st.none(), types),
)

push_blocks = st.builds(
    PushBlock,
    name=texts,
    stages=enum_tuple(Stage),
    layout=st.one_of(st.none(), types),
    slots=st.lists(slots, max_size=3, unique_by=lambda s: s.target).map(tuple),
)

spec_constants = st.builds(
    SpecConstant,
    name=texts,
    id=numbers,
    scalar=st.sampled_from(SPEC_SCALARS),
    default=numbers,
    slots=st.lists(
        st.builds(SpecSlot, st.sampled_from(list(Target)), numbers, texts),
        max_size=3,
        unique_by=lambda s: s.target,
    ).map(tuple),
)

features = st.lists(st.sampled_from(list(DeviceFeatures))).map(
    lambda fs: DeviceFeatures(sum(set(fs)))
)


@st.composite
def models(draw: st.DrawFn) -> ShaderReflection:
    res = tuple(draw(st.lists(resources, max_size=3)))
    pushes = tuple(draw(st.lists(push_blocks, max_size=2)))
    specs = tuple(draw(st.lists(spec_constants, max_size=2)))

    def names_of(items: tuple[Resource | PushBlock | SpecConstant, ...]) -> tuple[str, ...]:
        if not items:
            return ()
        return tuple(draw(st.lists(st.sampled_from([i.name for i in items]), max_size=3)))

    entries = []
    for _ in range(draw(st.integers(0, 3))):
        entries.append(
            EntryPoint(
                name=draw(texts),
                stage=draw(st.sampled_from(list(Stage))),
                workgroup=draw(st.tuples(numbers, numbers, numbers)),
                stride=draw(numbers),
                features=draw(features),
                inputs=tuple(draw(st.lists(stage_vars, max_size=3))),
                outputs=tuple(draw(st.lists(stage_vars, max_size=3))),
                uses=names_of(res),
                pushuse=names_of(pushes),
                specuse=names_of(specs),
            )
        )
    return ShaderReflection(
        source=draw(texts),
        targets=draw(enum_tuple(Target)),
        resources=res,
        push_blocks=pushes,
        spec_constants=specs,
        entry_points=tuple(entries),
    )


def deep_array(depth: int) -> TypeLayout:
    """An array of arrays ... of float, ``depth`` levels, built without recursion."""
    t = TypeLayout(TypeKind.Scalar, ScalarKind.Float, size=4, align=4)
    for i in range(depth):
        t = TypeLayout(TypeKind.Array, size=4, align=4, length=1, stride=4 + i, element=t)
    return t


def deep_struct(depth: int) -> TypeLayout:
    t = TypeLayout(TypeKind.Scalar, ScalarKind.UInt, size=4, align=4)
    for i in range(depth):
        t = TypeLayout(
            TypeKind.Struct, name=f"S{i}", size=4, align=4, members=(StructMember(f"m{i}", 0, t),)
        )
    return t


def rich_model() -> ShaderReflection:
    """One of everything: every record kind, optional attributes, escapes, non-ASCII text."""
    f = TypeLayout(TypeKind.Scalar, ScalarKind.Float, size=4, align=4)
    v3 = TypeLayout(TypeKind.Vector, ScalarKind.Float, rows=3, size=12, align=16)
    m = TypeLayout(
        TypeKind.Matrix, ScalarKind.Float16, rows=3, cols=4, size=48, align=16, mstride=16,
        packing=MatrixPacking.RowMajor,
    )  # fmt: skip
    light = TypeLayout(
        TypeKind.Struct, name="Light", size=32, align=16,
        members=(StructMember("pos", 0, v3), StructMember("power", 12, f),
                 StructMember("color", 16, v3)),
    )  # fmt: skip
    lights = TypeLayout(TypeKind.Array, size=256, align=16, length=8, stride=32, element=light)
    runtime = TypeLayout(TypeKind.Array, align=4, length=0, stride=4, element=f)
    block = TypeLayout(
        TypeKind.Struct, name='Sc"ene\\ä', size=320, align=16,
        members=(StructMember("lights", 0, lights), StructMember("tint\n", 256, m)),
    )  # fmt: skip
    all_targets = tuple(Target)
    slot3 = tuple(Slot(t, 1, 2) for t in all_targets)
    return ShaderReflection(
        source="Shaders/Räum \"scene\".hlsl",
        targets=all_targets,
        resources=(
            Resource("Scene", ResourceKind.ConstantBuffer, ResourceTypeKind.ConstantBuffer,
                     stages=(Stage.Vertex, Stage.Pixel), hlsl="ConstantBuffer<Scene>",
                     slots=slot3, layout=block),
            Resource("Out", ResourceKind.UnorderedAccess, ResourceTypeKind.RWTexture2D,
                     count=4, stages=(Stage.Compute,), hlsl="RWTexture2D<float4>",
                     format="rgba16f", slots=slot3, layout=v3),
            Resource("Append", ResourceKind.UnorderedAccess,
                     ResourceTypeKind.AppendStructuredBuffer, stages=(Stage.Compute,),
                     slots=slot3, counters=slot3, layout=runtime),
            Resource("Samp", ResourceKind.Sampler, ResourceTypeKind.SamplerComparisonState),
        ),
        push_blocks=(
            PushBlock("Push", (Stage.Vertex,), light,
                      (Slot(Target.Msl, 0, 30), Slot(Target.Wgsl, 3, 0))),
        ),
        spec_constants=(
            SpecConstant("Quality", 7, ScalarKind.Float, 0x3F800000,
                         tuple(SpecSlot(t, 7, "Quality") for t in all_targets)),
        ),
        entry_points=(
            EntryPoint(
                "VSMain", Stage.Vertex, stride=28,
                features=DeviceFeatures.Float16 | DeviceFeatures.InputOutput16,
                inputs=(
                    StageVariable("pos", "POSITION", 0, 0, components=3,
                                  format=VertexFormat.Float32x3),
                    StageVariable("uv", "TEXCOORD", 1, 1, scalar=ScalarKind.Float16,
                                  components=2, format=VertexFormat.Float16x2, offset=12),
                    StageVariable("vid", "SV_VertexID", builtin=BuiltIn.VertexId,
                                  scalar=ScalarKind.UInt),
                ),
                outputs=(
                    StageVariable("pos", "SV_Position", builtin=BuiltIn.Position, components=4),
                    StageVariable("id", "TEXCOORD", 0, 0, scalar=ScalarKind.UInt,
                                  interp=Interpolation.Flat),
                ),
                uses=("Scene",), pushuse=("Push",), specuse=("Quality",),
            ),
            EntryPoint("CSMain", Stage.Compute, workgroup=(8, 8, 1),
                       uses=("Out", "Append", "Scene")),
        ),
    )  # fmt: skip
