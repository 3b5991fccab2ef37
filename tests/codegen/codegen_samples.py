"""Reflection models built in Python, shaped like what the compiler writes for real shaders."""

from __future__ import annotations

from oneshader.reflection.model import (
    BuiltIn,
    EntryPoint,
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

F = ScalarKind.Float
ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def scalar(kind: ScalarKind = F) -> TypeLayout:
    size = {ScalarKind.Float16: 2, ScalarKind.Int16: 2, ScalarKind.UInt16: 2}.get(kind, 4)
    size = {ScalarKind.Float64: 8, ScalarKind.Int64: 8, ScalarKind.UInt64: 8}.get(kind, size)
    return TypeLayout(TypeKind.Scalar, kind, size=size, align=size)


def vector(n: int, kind: ScalarKind = F) -> TypeLayout:
    return TypeLayout(TypeKind.Vector, kind, rows=n, size=4 * n, align=16 if n > 2 else 4 * n)


def matrix(
    rows: int, cols: int, mstride: int = 16, packing: MatrixPacking = MatrixPacking.ColumnMajor
) -> TypeLayout:
    outer = cols if packing is MatrixPacking.ColumnMajor else rows
    return TypeLayout(
        TypeKind.Matrix,
        F,
        rows=rows,
        cols=cols,
        size=outer * mstride,
        align=16,
        mstride=mstride,
        packing=packing,
    )


def array(element: TypeLayout, length: int, stride: int) -> TypeLayout:
    return TypeLayout(
        TypeKind.Array,
        size=length * stride,
        align=16,
        length=length,
        stride=stride,
        element=element,
    )


def struct(name: str, size: int, *members: tuple[str, int, TypeLayout]) -> TypeLayout:
    return TypeLayout(
        TypeKind.Struct,
        name=name,
        size=size,
        align=16,
        members=tuple(StructMember(n, o, t) for n, o, t in members),
    )


def one_buffer(layout: TypeLayout) -> ShaderReflection:
    """A shader whose only resource is the constant buffer ``B`` with this layout."""
    return ShaderReflection(
        source="b.hlsl",
        resources=(
            Resource(
                "B", ResourceKind.ConstantBuffer, ResourceTypeKind.ConstantBuffer, layout=layout
            ),
        ),
    )


def slots(set_: int, binding: int, msl: int) -> tuple[Slot, ...]:
    return (
        Slot(Target.SpirV, set_, binding),
        Slot(Target.Msl, 0, msl),
        Slot(Target.Wgsl, set_, binding),
    )


FRAME = struct(
    "Frame",
    128,
    ("ViewProjection", 0, matrix(4, 4)),
    ("Tint", 64, vector(4)),
    ("Weights", 80, array(scalar(), 3, 16)),
)

LIGHT = struct(
    "Light", 32, ("Color", 0, vector(3)), ("Intensity", 12, scalar()), ("Dir", 16, vector(3))
)
LIGHTS = struct(
    "Lights",
    160,
    ("Normal", 0, matrix(3, 3)),
    ("Items", 48, array(LIGHT, 3, 32)),
    ("Count", 144, scalar(ScalarKind.UInt)),
    ("Enabled", 148, scalar(ScalarKind.Bool)),
)


def sprite() -> ShaderReflection:
    return ShaderReflection(
        source="shaders/sprite.hlsl",
        targets=ALL,
        resources=(
            Resource(
                "Frame",
                ResourceKind.ConstantBuffer,
                ResourceTypeKind.ConstantBuffer,
                stages=(Stage.Vertex, Stage.Pixel),
                slots=slots(0, 0, 0),
                layout=FRAME,
            ),
            Resource(
                "Tex",
                ResourceKind.ShaderResource,
                ResourceTypeKind.Texture2D,
                stages=(Stage.Pixel,),
                slots=slots(0, 1, 0),
                layout=vector(4),
            ),
            Resource(
                "Samp",
                ResourceKind.Sampler,
                ResourceTypeKind.SamplerState,
                stages=(Stage.Pixel,),
                slots=slots(0, 2, 0),
            ),
        ),
        entry_points=(
            EntryPoint(
                "VSMain",
                Stage.Vertex,
                stride=16,
                inputs=(
                    StageVariable(
                        "Position",
                        "POSITION",
                        location=0,
                        components=2,
                        format=VertexFormat.Float32x2,
                        offset=0,
                    ),
                    StageVariable(
                        "UV",
                        "TEXCOORD",
                        location=1,
                        components=2,
                        format=VertexFormat.Float32x2,
                        offset=8,
                    ),
                ),
                outputs=(
                    StageVariable(
                        "Position", "SV_Position", builtin=BuiltIn.Position, components=4
                    ),
                ),
                uses=("Frame",),
            ),
            EntryPoint("PSMain", Stage.Pixel, uses=("Frame", "Tex", "Samp")),
        ),
    )


def particles() -> ShaderReflection:
    particle = struct(
        "Particle",
        32,
        ("Position", 0, vector(3)),
        ("Mass", 12, scalar()),
        ("Velocity", 16, vector(3)),
    )
    params = struct("Params", 16, ("Dt", 0, scalar()), ("Count", 4, scalar(ScalarKind.UInt)))
    return ShaderReflection(
        source="shaders/particles.hlsl",
        targets=ALL,
        resources=(
            Resource(
                "Particles",
                ResourceKind.UnorderedAccess,
                ResourceTypeKind.RWStructuredBuffer,
                stages=(Stage.Compute,),
                slots=slots(0, 0, 1),
                layout=particle,
            ),
            Resource(
                "Lights",
                ResourceKind.ConstantBuffer,
                ResourceTypeKind.ConstantBuffer,
                stages=(Stage.Compute,),
                slots=slots(0, 1, 2),
                layout=LIGHTS,
            ),
            Resource(
                "Out",
                ResourceKind.UnorderedAccess,
                ResourceTypeKind.RWTexture2D,
                stages=(Stage.Compute,),
                slots=slots(1, 0, 0),
                format="rgba8",
                layout=vector(4),
            ),
        ),
        push_blocks=(
            PushBlock(
                "Params",
                stages=(Stage.Compute,),
                layout=params,
                slots=(Slot(Target.Msl, 0, 0), Slot(Target.Wgsl, 0, 2)),
            ),
        ),
        spec_constants=(
            SpecConstant(
                "Gravity",
                0,
                F,
                default=0x411CF5C3,  # 9.81
                slots=(
                    SpecSlot(Target.SpirV, 0, ""),
                    SpecSlot(Target.Msl, 0, "Gravity"),
                    SpecSlot(Target.Wgsl, 0, "Gravity_0"),
                ),
            ),
            SpecConstant("Steps", 1, ScalarKind.Int, default=4),
        ),
        entry_points=(
            EntryPoint(
                "main",
                Stage.Compute,
                workgroup=(64, 1, 1),
                uses=("Particles", "Lights", "Out"),
                pushuse=("Params",),
                specuse=("Gravity", "Steps"),
            ),
        ),
    )
