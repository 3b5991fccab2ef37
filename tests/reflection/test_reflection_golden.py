"""The specification's example, completed where it elides with '...', as a golden file."""

from __future__ import annotations

from pathlib import Path

from oneshader.reflection import (
    BuiltIn,
    EntryPoint,
    MatrixPacking,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    Stage,
    StageVariable,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
    VertexFormat,
)
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.tools import layout_rows, summary

GOLDEN = Path(__file__).parent / "golden" / "sprite.reflection"

FLOAT = TypeLayout(TypeKind.Scalar, ScalarKind.Float, size=4, align=4)
SPRITE = ShaderReflection(
    source="Shaders/Sprite.hlsl",
    targets=(Target.SpirV, Target.Wgsl),
    resources=(
        Resource(
            name="Frame",
            kind=ResourceKind.ConstantBuffer,
            rtype=ResourceTypeKind.ConstantBuffer,
            count=1,
            stages=(Stage.Vertex, Stage.Pixel),
            hlsl="",
            slots=(Slot(Target.SpirV, 0, 0),),
            layout=TypeLayout(
                TypeKind.Struct,
                name="Frame",
                size=128,
                align=16,
                members=(
                    StructMember(
                        "ViewProjection",
                        0,
                        TypeLayout(
                            TypeKind.Matrix,
                            ScalarKind.Float,
                            rows=4,
                            cols=4,
                            size=64,
                            align=16,
                            mstride=16,
                            packing=MatrixPacking.ColumnMajor,
                        ),
                    ),
                    StructMember(
                        "Weights",
                        80,
                        TypeLayout(
                            TypeKind.Array, size=48, align=16, length=3, stride=16, element=FLOAT
                        ),
                    ),
                ),
            ),
        ),
    ),
    entry_points=(
        EntryPoint(
            name="VSMain",
            stage=Stage.Vertex,
            workgroup=(0, 0, 0),
            stride=32,
            inputs=(
                StageVariable(
                    "Position",
                    "POSITION",
                    index=0,
                    location=0,
                    builtin=BuiltIn.None_,
                    scalar=ScalarKind.Float,
                    components=2,
                    format=VertexFormat.Float32x2,
                ),
            ),
            outputs=(
                StageVariable(
                    "Position",
                    "SV_Position",
                    location=None,
                    builtin=BuiltIn.Position,
                    scalar=ScalarKind.Float,
                    components=4,
                ),
            ),
            uses=("Frame",),
        ),
    ),
)


def test_golden_reads_as_the_model() -> None:
    assert ReflectionFormat.read(GOLDEN.read_bytes(), file=str(GOLDEN)) == SPRITE


def test_model_writes_the_golden_bytes() -> None:
    assert ReflectionFormat.write(SPRITE) == GOLDEN.read_bytes()


def test_golden_keeps_the_specification_lines() -> None:
    # The lines the specification shows in full are in the golden file unchanged.
    lines = GOLDEN.read_text(encoding="utf-8").split("\n")
    for expected in [
        "oneshader-reflection 1",
        'source name="Shaders/Sprite.hlsl"',
        "targets list=SpirV,Wgsl",
        'resource name="Frame" kind=ConstantBuffer count=1 stages=Vertex,Pixel '
        'rtype=ConstantBuffer hlsl=""',
        "  slot target=SpirV set=0 binding=0",
        '    type kind=Struct scalar=Bool rows=0 cols=0 name="Frame" size=128 align=16 '
        "length=0 stride=0 mstride=0 packing=ColumnMajor",
        '      member name="Weights" offset=80',
        'entry name="VSMain" stage=Vertex workgroup=0,0,0 stride=32',
        '  input name="Position" semantic="POSITION" index=0 location=0 builtin=None '
        "scalar=Float components=2 format=Float32x2 offset=0 interp=Default",
        '  output name="Position" semantic="SV_Position" index=0 location=- builtin=Position '
        "scalar=Float components=4 format=None offset=0 interp=Default",
        '  uses name="Frame"',
    ]:
        assert expected in lines


def test_offset_table_shows_the_padding_gap() -> None:
    layout = SPRITE.resources[0].layout
    assert layout is not None
    rows = [(o, s, n.strip()) for o, s, _, n, _, _ in layout_rows(layout)]
    assert rows == [(0, 64, "ViewProjection"), (64, 16, "(padding)"), (80, 48, "Weights")]
    text = summary(SPRITE)
    assert "12 padding bytes per element" in text
    assert "vertex stride 32" in text
