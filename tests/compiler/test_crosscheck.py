"""verify() on one small shader written by hand for all three targets, with a reflection that is
true for all of them; each tampered number must be caught on exactly the targets that show it."""

from __future__ import annotations

import struct
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from module_validation import tool
from oneshader.compiler.api import OutputFile
from oneshader.compiler.verify.crosscheck import check, verify
from oneshader.reflection.model import (
    BuiltIn,
    DeviceFeatures,
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

_SPIRV = """
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %cs "CS" %Params %Items %pc %gid
               OpEntryPoint Vertex %vs "VS" %Params %pos %col %outpos %outcol
               OpExecutionMode %cs LocalSize 8 1 1
               OpName %Params "Params"
               OpName %ParamsT "SLANG_ParameterGroup_Params_std140"
               OpMemberName %ParamsT 0 "M"
               OpMemberName %ParamsT 1 "N"
               OpName %Items "Items"
               OpName %ItemT "Item_std430"
               OpMemberName %ItemT 0 "p"
               OpMemberName %ItemT 1 "id"
               OpName %pc "pc"
               OpMemberName %PcT 0 "count"
               OpName %Scale "Scale"
               OpName %pos "i.pos"
               OpName %col "i.col"
               OpName %outcol "entryPointParam_VS.col"
               OpDecorate %ParamsT Block
               OpMemberDecorate %ParamsT 0 Offset 0
               OpMemberDecorate %ParamsT 0 RowMajor
               OpMemberDecorate %ParamsT 0 MatrixStride 16
               OpMemberDecorate %ParamsT 1 Offset 64
               OpDecorate %Params DescriptorSet 0
               OpDecorate %Params Binding 0
               OpMemberDecorate %ItemT 0 Offset 0
               OpMemberDecorate %ItemT 1 Offset 16
               OpDecorate %rtarr ArrayStride 32
               OpDecorate %SB Block
               OpMemberDecorate %SB 0 Offset 0
               OpDecorate %Items DescriptorSet 0
               OpDecorate %Items Binding 1
               OpDecorate %PcT Block
               OpMemberDecorate %PcT 0 Offset 0
               OpDecorate %Scale SpecId 2
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %pos Location 0
               OpDecorate %col Location 1
               OpDecorate %outpos BuiltIn Position
               OpDecorate %outcol Location 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
       %uint = OpTypeInt 32 0
    %v2float = OpTypeVector %float 2
    %v4float = OpTypeVector %float 4
     %v3uint = OpTypeVector %uint 3
       %mat4 = OpTypeMatrix %v4float 4
    %ParamsT = OpTypeStruct %mat4 %uint
      %ItemT = OpTypeStruct %v4float %uint
      %rtarr = OpTypeRuntimeArray %ItemT
         %SB = OpTypeStruct %rtarr
        %PcT = OpTypeStruct %uint
      %Scale = OpSpecConstant %float 2
 %ptr_params = OpTypePointer Uniform %ParamsT
     %ptr_sb = OpTypePointer StorageBuffer %SB
     %ptr_pc = OpTypePointer PushConstant %PcT
    %ptr_gid = OpTypePointer Input %v3uint
     %ptr_i2 = OpTypePointer Input %v2float
     %ptr_i4 = OpTypePointer Input %v4float
     %ptr_o4 = OpTypePointer Output %v4float
     %Params = OpVariable %ptr_params Uniform
      %Items = OpVariable %ptr_sb StorageBuffer
         %pc = OpVariable %ptr_pc PushConstant
        %gid = OpVariable %ptr_gid Input
        %pos = OpVariable %ptr_i2 Input
        %col = OpVariable %ptr_i4 Input
     %outpos = OpVariable %ptr_o4 Output
     %outcol = OpVariable %ptr_o4 Output
         %cs = OpFunction %void None %fn
         %l1 = OpLabel
               OpReturn
               OpFunctionEnd
         %vs = OpFunction %void None %fn
         %l2 = OpLabel
               OpReturn
               OpFunctionEnd
"""

_WGSL = """
struct _MatrixStorage_float4x4_ColMajorstd140_0 {
    @align(16) data_0 : array<vec4<f32>, i32(4)>
};
struct SLANG_ParameterGroup_Params_std140_0 {
    @align(16) M_0 : _MatrixStorage_float4x4_ColMajorstd140_0,
    @align(16) N_0 : u32,
};
@binding(0) @group(0) var<uniform> Params_0 : SLANG_ParameterGroup_Params_std140_0;
struct Item_std430_0 { @align(16) p_0 : vec4<f32>, @align(16) id_0 : u32 };
@binding(1) @group(0) var<storage, read_write> Items_0 : array<Item_std430_0>;
struct PC_std430_0 { @align(4) count_0 : u32 };
@binding(0) @group(1) var<uniform> pc_0 : PC_std430_0;
@id(2) override Scale_0 : f32 = 2.0f;

@compute @workgroup_size(8, 1, 1)
fn CS(@builtin(global_invocation_id) id_1 : vec3<u32>) {
    Items_0[id_1.x].p_0 = Params_0.M_0.data_0[0] * Scale_0 * f32(pc_0.count_0);
}

struct vertexInput_0 { @location(0) pos_0 : vec2<f32>, @location(1) col_0 : vec4<f32> };
struct VSOut_0 { @builtin(position) P_0 : vec4<f32>, @location(0) col_1 : vec4<f32> };
@vertex
fn VS(i : vertexInput_0) -> VSOut_0 {
    var o : VSOut_0;
    o.P_0 = vec4<f32>(i.pos_0, f32(Params_0.N_0), 1.0);
    o.col_1 = i.col_0;
    return o;
}
"""

_MSL = """
#include <metal_stdlib>
using namespace metal;
constant float fc_Scale_0 [[function_constant(2)]];
constant float Scale_0 = is_function_constant_defined(fc_Scale_0) ? fc_Scale_0 : 2.0;
struct _MatrixStorage_float4x4_ColMajornatural_0 { array<float4, int(4)> data_0; };
struct SLANG_ParameterGroup_Params_natural_0
{
    _MatrixStorage_float4x4_ColMajornatural_0 M_0;
    uint N_0;
};
struct Item_natural_0 { float4 p_0; uint id_0; };
struct PC_0 { uint count_0; };
[[kernel]] void CS(uint3 id_1 [[thread_position_in_grid]],
    SLANG_ParameterGroup_Params_natural_0 constant* Params_1 [[buffer(0)]],
    Item_natural_0 device* Items_1 [[buffer(1)]], PC_0 constant* pc_1 [[buffer(2)]])
{
}
struct vertexInput_0 { float2 pos_0 [[attribute(0)]]; float4 col_0 [[attribute(1)]]; };
struct VS_Result_0 { float4 P_0 [[position]]; float4 col_1 [[user(COLOR)]]; };
[[vertex]] VS_Result_0 VS(vertexInput_0 _S1 [[stage_in]],
    SLANG_ParameterGroup_Params_natural_0 constant* Params_2 [[buffer(0)]],
    Item_natural_0 device* Items_2 [[buffer(1)]], PC_0 constant* pc_2 [[buffer(2)]])
{
    VS_Result_0 r;
    return r;
}
"""


def _scalar(kind: ScalarKind = ScalarKind.Float) -> TypeLayout:
    size = 4
    return TypeLayout(TypeKind.Scalar, scalar=kind, size=size, align=size)


def _reflection() -> ShaderReflection:
    mat = TypeLayout(
        TypeKind.Matrix,
        scalar=ScalarKind.Float,
        rows=4,
        cols=4,
        size=64,
        align=16,
        mstride=16,
        packing=MatrixPacking.ColumnMajor,
    )
    params = TypeLayout(
        TypeKind.Struct,
        name="Params",
        size=80,
        align=16,
        members=(StructMember("M", 0, mat), StructMember("N", 64, _scalar(ScalarKind.UInt))),
    )
    vec4 = TypeLayout(TypeKind.Vector, scalar=ScalarKind.Float, rows=4, size=16, align=16)
    item = TypeLayout(
        TypeKind.Struct,
        name="Item",
        size=32,
        align=16,
        members=(StructMember("p", 0, vec4), StructMember("id", 16, _scalar(ScalarKind.UInt))),
    )
    pc = TypeLayout(
        TypeKind.Struct,
        name="PC",
        size=4,
        align=4,
        members=(StructMember("count", 0, _scalar(ScalarKind.UInt)),),
    )

    def slots(b: int, wgsl: tuple[int, int] | None = None) -> tuple[Slot, ...]:
        g, wb = wgsl or (0, b)
        return (Slot(Target.SpirV, 0, b), Slot(Target.Msl, 0, b), Slot(Target.Wgsl, g, wb))

    two = struct.unpack("<I", struct.pack("<f", 2.0))[0]
    return ShaderReflection(
        source="hand.hlsl",
        targets=(Target.SpirV, Target.Msl, Target.Wgsl),
        resources=(
            Resource(
                "Params",
                ResourceKind.ConstantBuffer,
                ResourceTypeKind.ConstantBuffer,
                stages=(Stage.Vertex, Stage.Compute),
                slots=slots(0),
                layout=params,
            ),
            Resource(
                "Items",
                ResourceKind.UnorderedAccess,
                ResourceTypeKind.RWStructuredBuffer,
                stages=(Stage.Compute,),
                hlsl="RWStructuredBuffer<Item>",
                slots=slots(1),
                layout=item,
            ),
        ),
        push_blocks=(
            PushBlock(
                "pc",
                stages=(Stage.Compute,),
                layout=pc,
                slots=(Slot(Target.Msl, 0, 2), Slot(Target.Wgsl, 1, 0)),
            ),
        ),
        spec_constants=(
            SpecConstant(
                "Scale",
                2,
                ScalarKind.Float,
                two,
                slots=(
                    SpecSlot(Target.SpirV, 2, "Scale"),
                    SpecSlot(Target.Msl, 2, "fc_Scale_0"),
                    SpecSlot(Target.Wgsl, 2, "Scale_0"),
                ),
            ),
        ),
        entry_points=(
            EntryPoint(
                "CS",
                Stage.Compute,
                workgroup=(8, 1, 1),
                inputs=(
                    StageVariable(
                        "id",
                        "SV_DispatchThreadID",
                        builtin=BuiltIn.DispatchThreadId,
                        scalar=ScalarKind.UInt,
                        components=3,
                    ),
                ),
                uses=("Items", "Params"),
                pushuse=("pc",),
                specuse=("Scale",),
            ),
            EntryPoint(
                "VS",
                Stage.Vertex,
                stride=24,
                inputs=(
                    StageVariable("pos", "POSITION", location=0, components=2,
                                  format=VertexFormat.Float32x2),
                    StageVariable("col", "COLOR", location=1, components=4, offset=8,
                                  format=VertexFormat.Float32x4),
                ),
                outputs=(
                    StageVariable("P", "SV_Position", builtin=BuiltIn.Position, components=4),
                    StageVariable("col", "COLOR", location=0, components=4),
                ),
                uses=("Params",),
            ),
        ),
    )  # fmt: skip


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> list[OutputFile]:
    folder: Path = tmp_path_factory.mktemp("hand")
    (folder / "h.spvasm").write_text(_SPIRV)
    subprocess.run(
        [tool("spirv-as"), "--target-env", "spv1.5", str(folder / "h.spvasm"), "-o",
         str(folder / "h.spv")],
        check=True,
    )  # fmt: skip
    return [
        OutputFile(Target.SpirV, (folder / "h.spv").read_bytes()),
        OutputFile(Target.Msl, _MSL.encode()),
        OutputFile(Target.Wgsl, _WGSL.encode()),
    ]


def test_true_reflection_has_no_mismatch(outputs: list[OutputFile]) -> None:
    report = check(_reflection(), outputs)
    assert report.mismatches == []
    assert report.checked > 40  # the comparisons really ran
    # Metal states no workgroup size: reported as unchecked, not as agreement.
    assert report.unchecked == ["Metal: entry 'CS' workgroup size is not in the emitted code"]


def _resource(r: ShaderReflection, name: str, **changes: object) -> ShaderReflection:
    return replace(
        r,
        resources=tuple(
            replace(x, **changes) if x.name == name else x  # type: ignore[arg-type]
            for x in r.resources
        ),
    )


def _member_offset(r: ShaderReflection, res: str, member: str, offset: int) -> ShaderReflection:
    x = next(x for x in r.resources if x.name == res)
    assert x.layout is not None
    members = tuple(replace(m, offset=offset) if m.name == member else m for m in x.layout.members)
    return _resource(r, res, layout=replace(x.layout, members=members))


def _slot(r: ShaderReflection, res: str, target: Target, binding: int) -> ShaderReflection:
    x = next(x for x in r.resources if x.name == res)
    slots = tuple(replace(s, binding=binding) if s.target is target else s for s in x.slots)
    return _resource(r, res, slots=slots)


def _entry(r: ShaderReflection, entry: str, **changes: object) -> ShaderReflection:
    return replace(
        r,
        entry_points=tuple(
            replace(e, **changes) if e.name == entry else e  # type: ignore[arg-type]
            for e in r.entry_points
        ),
    )


def _vs_input_location(r: ShaderReflection) -> ShaderReflection:
    vs = next(e for e in r.entry_points if e.name == "VS")
    inputs = tuple(replace(v, location=2) if v.name == "col" else v for v in vs.inputs)
    return _entry(r, "VS", inputs=inputs)


def _vs_output_semantic(r: ShaderReflection) -> ShaderReflection:
    vs = next(e for e in r.entry_points if e.name == "VS")
    outputs = tuple(replace(v, semantic="TEXCOORD") if v.name == "col" else v for v in vs.outputs)
    return _entry(r, "VS", outputs=outputs)


def _matrix_stride(r: ShaderReflection) -> ShaderReflection:
    x = r.resources[0]
    assert x.layout is not None
    m = x.layout.members[0]
    members = (replace(m, type=replace(m.type, mstride=32)), *x.layout.members[1:])
    return _resource(r, "Params", layout=replace(x.layout, members=members))


def _item_size(r: ShaderReflection) -> ShaderReflection:
    x = r.resources[1]
    assert x.layout is not None
    return _resource(r, "Items", layout=replace(x.layout, size=48))


def _block_size(r: ShaderReflection, size: int) -> ShaderReflection:
    x = r.resources[0]
    assert x.layout is not None
    return _resource(r, "Params", layout=replace(x.layout, size=size))


def _spec_index(r: ShaderReflection) -> ShaderReflection:
    s = r.spec_constants[0]
    slots = tuple(replace(x, index=5) if x.target is Target.Msl else x for x in s.slots)
    return replace(r, spec_constants=(replace(s, slots=slots),))


def _spec_default(r: ShaderReflection) -> ShaderReflection:
    return replace(r, spec_constants=(replace(r.spec_constants[0], default=0x3F800000),))


def _push_spirv_slot(r: ShaderReflection) -> ShaderReflection:
    p = r.push_blocks[0]
    return replace(r, push_blocks=(replace(p, slots=(*p.slots, Slot(Target.SpirV, 0, 9))),))


def _push_wgsl_group(r: ShaderReflection) -> ShaderReflection:
    p = r.push_blocks[0]
    slots = tuple(replace(s, set=0) if s.target is Target.Wgsl else s for s in p.slots)
    return replace(r, push_blocks=(replace(p, slots=slots),))


_CASES: dict[str, tuple[Callable[[ShaderReflection], ShaderReflection], set[Target], list[str]]] = {
    "member offset": (
        lambda r: _member_offset(r, "Params", "N", 68),
        {Target.SpirV, Target.Msl, Target.Wgsl},
        ["Params.N offset", "68", "64"],
    ),
    "binding": (
        lambda r: _slot(r, "Items", Target.SpirV, 3),
        {Target.SpirV},
        ["resource 'Items'", "binding 3", "binding 1"],
    ),
    "msl index": (
        lambda r: _slot(r, "Params", Target.Msl, 4),
        {Target.Msl},
        ["resource 'Params'", "[[buffer(n)]]", "4", "0"],
    ),
    "vertex location": (
        _vs_input_location,
        {Target.SpirV, Target.Msl, Target.Wgsl},
        ["entry 'VS' input 'col' location", "2", "1"],
    ),
    "varying semantic": (
        _vs_output_semantic,
        {Target.Msl},  # only Metal matches varyings by semantic; the others by location
        ["entry 'VS' output", "[[user(COLOR)]]", "reflection lacks"],
    ),
    "matrix stride": (
        _matrix_stride,
        {Target.SpirV, Target.Msl, Target.Wgsl},
        ["Params.M matrix stride", "32", "16"],
    ),
    "structured element size": (
        _item_size,
        {Target.SpirV, Target.Msl, Target.Wgsl},
        ["Items", "48", "32"],
    ),
    "block smaller than the code's": (
        lambda r: _block_size(r, 64),
        {Target.SpirV, Target.Msl, Target.Wgsl},
        ["Params struct size", "64", "80", "too small"],
    ),
    "spec index": (_spec_index, {Target.Msl}, ["spec constant 'Scale' index", "5", "2"]),
    "spec default": (
        _spec_default,
        {Target.SpirV, Target.Msl, Target.Wgsl},
        ["spec constant 'Scale' default bits", "0x3f800000", "0x40000000"],
    ),
    "workgroup": (
        lambda r: _entry(r, "CS", workgroup=(4, 1, 1)),
        {Target.SpirV, Target.Wgsl},
        ["entry 'CS' workgroup size", "(4, 1, 1)", "(8, 1, 1)"],
    ),
    "features": (
        lambda r: _entry(r, "CS", features=DeviceFeatures.Float16),
        {Target.SpirV, Target.Wgsl},  # no Float16 capability; no ``enable f16``
        ["features", "Float16"],
    ),
    "uses": (
        lambda r: _entry(r, "CS", uses=("Params",)),
        {Target.SpirV, Target.Wgsl},
        ["entry 'CS' uses", "'Items'"],
    ),
    "push on spirv": (_push_spirv_slot, {Target.SpirV}, ["push block 'pc'", "SPIR-V has none"]),
    "push group": (_push_wgsl_group, {Target.Wgsl}, ["push block 'pc'", "group 0", "group 1"]),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_tampered_reflection_is_caught_per_target(case: str, outputs: list[OutputFile]) -> None:
    tamper, targets, fragments = _CASES[case]
    mismatches = verify(tamper(_reflection()), outputs)
    names = {Target.SpirV: "SPIR-V (", Target.Msl: "Metal (", Target.Wgsl: "WGSL ("}
    hit = {t for t, prefix in names.items() if any(m.startswith(prefix) for m in mismatches)}
    assert hit == targets, mismatches
    for message in mismatches:
        for fragment in fragments:
            assert fragment in message, (fragment, message)


def test_a_block_larger_than_the_code_needs_is_no_mismatch(outputs: list[OutputFile]) -> None:
    """A constant buffer's own size may exceed a target's (the reflection records the largest
    over targets: Metal's ``cbuffer A { float a; }`` is 4 bytes, std140's 16); a structured
    buffer's element may not (its size is the element stride)."""
    assert verify(_block_size(_reflection(), 96), outputs) == []
    x = _reflection().resources[1]
    assert x.layout is not None
    bigger = _resource(_reflection(), "Items", layout=replace(x.layout, size=48))
    assert len([m for m in verify(bigger, outputs) if "Items" in m]) >= 3


def test_missing_and_extra_declarations(outputs: list[OutputFile]) -> None:
    r = _reflection()
    without_items = replace(r, resources=r.resources[:1])
    mismatches = verify(without_items, outputs)
    assert sum("'Items" in m and "reflection lacks" in m for m in mismatches) == 3
    renamed = _entry(r, "VS", name="VSMain")
    mismatches = verify(renamed, outputs)
    assert any("entry point 'VSMain' is missing" in m for m in mismatches)
    assert any("entry point 'VS' that the reflection lacks" in m for m in mismatches)


def test_slot_collision_is_reported(outputs: list[OutputFile]) -> None:
    wgsl = _WGSL.replace("@binding(1) @group(0) var<storage", "@binding(0) @group(0) var<storage")
    bad = [OutputFile(Target.Wgsl, wgsl.encode())]
    r = _slot(_reflection(), "Items", Target.Wgsl, 0)
    mismatches = verify(r, bad)
    assert any("resources 'Params' and 'Items' share" in m for m in mismatches), mismatches


def test_unreadable_output_is_a_mismatch_not_a_crash() -> None:
    out = [
        OutputFile(Target.SpirV, b"not spirv at all"),
        OutputFile(Target.Wgsl, b"fn {"),
    ]
    mismatches = verify(_reflection(), out)
    assert len([m for m in mismatches if "unreadable output" in m]) == 2


def test_specuse_is_checked_on_wgsl(outputs: list[OutputFile]) -> None:
    mismatches = verify(_entry(_reflection(), "CS", specuse=()), outputs)
    assert mismatches == [
        "WGSL (.wgsl): entry 'CS' specuse: reflection says [], emitted code says ['Scale']"
    ]


def test_targets_without_output_and_outputs_without_target(outputs: list[OutputFile]) -> None:
    r = replace(_reflection(), targets=(Target.SpirV, Target.Msl))
    mismatches = verify(r, [o for o in outputs if o.target is not Target.Msl])
    assert "Metal: the reflection lists the target but no output holds it" in mismatches
    assert "WGSL: an output for a target the reflection does not list" in mismatches


def test_one_message_per_disagreement_even_with_many_metal_entries(
    outputs: list[OutputFile],
) -> None:
    # Params is a parameter of both Metal entry points; a wrong index is still one message.
    mismatches = verify(_slot(_reflection(), "Params", Target.Msl, 4), outputs)
    assert len(mismatches) == 1, mismatches
