"""The MSL reader on hand-written Metal: C-like layout, argument indices, stage interfaces."""

from __future__ import annotations

import struct

import pytest

from oneshader.compiler.emitted.common import EmittedCodeError
from oneshader.compiler.emitted.msl import read_msl, unattributed_inputs_read
from oneshader.reflection.model import BuiltIn, Interpolation, MatrixPacking, TypeKind

_SOURCE = """
#include <metal_stdlib>
using namespace metal;

#line 3 "x.hlsl"
constant float fc_Scale_0 [[function_constant(3)]];
constant float Scale_0 = is_function_constant_defined(fc_Scale_0) ? fc_Scale_0 : 1.5;
constant int fc_N_0 [[function_constant(1)]];
constant int N_0 = is_function_constant_defined(fc_N_0) ? fc_N_0 : int(-2);

struct _MatrixStorage_float4x4_ColMajornatural_0
{
    array<float4, int(4)> data_0;
};

struct Frame_natural_0
{
    _MatrixStorage_float4x4_ColMajornatural_0 VP_0;
    matrix<float,int(3),int(4)>  M_0;
    array<float, int(3)> W_0;
    float3 T_0;
    float A_0;
    packed_float3 P_0;
    half2 H_0;
};

struct Item_0
{
    packed_float3 pos_0;
    float life_0;
    float2 vel_0;
};

struct vertexInput_0
{
    float2 Position_0 [[attribute(0)]];
    uint4 C_0 [[attribute(2)]];
};

struct VS_Result_0
{
    float4 Pos_0 [[position]];
    float2 UV_0 [[user(TEXCOORD)]];
    [[flat]] uint Id_0 [[user(BLENDINDICES_1)]];
};

float helper_0(float x_0)
{
    return x_0 * 2.0;
}

[[vertex]] VS_Result_0 VS(vertexInput_0 _S1 [[stage_in]], uint vid_0 [[vertex_id]],
    Frame_natural_0 constant* Frame_1 [[buffer(0)]], Item_0 device* Items_1 [[buffer(1)]],
    texture2d<float, access::sample> Tex_1 [[texture(0)]], sampler Samp_1 [[sampler(2)]])
{
    VS_Result_0 r;
    if (vid_0 > 2) { r.Pos_0 = float4(helper_0(1.0)); }
    return r;
}

struct pixelOutput_0
{
    float4 a_0 [[color(0)]];
    float4 b_0 [[color(2)]];
    float d_0 [[depth(any)]];
};

struct pixelInput_0
{
    [[sample_perspective]] float3 n_1 [[user(NORMAL)]];
    [[center_no_perspective]] float2 c_0 [[user(COLOR_2)]];
};

[[fragment]] pixelOutput_0 PS(pixelInput_0 _S2 [[stage_in]], float4 p_0 [[position]],
    bool ff_0 [[front_facing]], Frame_natural_0 constant* Frame_2 [[buffer(0)]],
    Frame_natural_0 constant* Other_2 [[buffer(0)]])
{
    pixelOutput_0 o = { float4(0.0), float4(1.0), 0.5 };
    return o;
}

[[kernel]] void CS(uint3 g_0 [[thread_position_in_threadgroup]],
    uint3 id_0 [[thread_position_in_grid]],
    array<texture2d<float, access::read>, 4> Arr_1 [[texture(3)]])
{
}
"""


@pytest.fixture(scope="module")
def module():  # type: ignore[no-untyped-def]
    return read_msl(_SOURCE.encode(), ".metal")


def test_constant_buffer_layout_uses_metal_rules(module) -> None:  # type: ignore[no-untyped-def]
    frame = module.resources["Frame"][0]
    assert (frame.space, frame.binding, frame.scope) == ("buffer", 0, "VS")
    mem = {m.name: m for m in frame.layout.members}
    assert {k: m.offset for k, m in mem.items()} == {
        "VP": 0, "M": 64, "W": 112, "T": 128, "A": 144, "P": 148, "H": 160
    }  # fmt: skip
    vp = mem["VP"].type
    assert (vp.kind, vp.packing, vp.mstride, vp.size) == (
        TypeKind.Matrix,
        MatrixPacking.ColumnMajor,
        16,
        64,
    )
    m3 = mem["M"].type
    assert (m3.rows, m3.cols, m3.packing, m3.mstride, m3.size) == (
        3,
        4,
        MatrixPacking.RowMajor,
        16,
        48,
    )
    assert mem["W"].type.stride == 4 and mem["W"].type.length == 3
    assert mem["T"].type.size == 16  # float3 takes 16 bytes in Metal
    assert mem["P"].type.size == 12  # packed_float3 does not
    assert frame.layout.size == 176


def test_device_buffer_element_stride(module) -> None:  # type: ignore[no-untyped-def]
    items = module.resources["Items"][0]
    assert items.binding == 1 and items.stride == 24
    assert [m.offset for m in items.layout.members] == [0, 12, 16]


def test_textures_samplers_arrays(module) -> None:  # type: ignore[no-untyped-def]
    assert module.resources["Tex"][0].space == "texture"
    assert module.resources["Samp"][0].binding == 2
    arr = module.resources["Arr"][0]
    assert (arr.space, arr.binding, arr.count) == ("texture", 3, 4)


def test_function_constants(module) -> None:  # type: ignore[no-untyped-def]
    scale = module.spec_constants["fc_Scale_0"]
    assert (scale.name, scale.index) == ("Scale", 3)
    assert scale.default == struct.unpack("<I", struct.pack("<f", 1.5))[0]
    assert module.spec_constants["fc_N_0"].default == 0xFFFFFFFE


def test_stage_interfaces(module) -> None:  # type: ignore[no-untyped-def]
    vs = module.entries["VS"]
    assert vs.stage == "vertex" and vs.uses is None
    assert [(v.name, v.location) for v in vs.inputs if v.builtin is None] == [
        ("Position", 0),
        ("C", 2),
    ]
    assert any(v.builtin is BuiltIn.VertexId for v in vs.inputs)
    outs = {v.name: v for v in vs.outputs}
    assert outs["Pos"].builtin is BuiltIn.Position
    assert outs["UV"].semantic == "TEXCOORD" and outs["Id"].semantic == "BLENDINDICES_1"
    assert outs["Id"].interp == frozenset({Interpolation.Flat})
    ps = module.entries["PS"]
    assert ps.stage == "pixel"
    assert [(v.name, v.location, v.builtin) for v in ps.outputs] == [
        ("a", 0, None),
        ("b", 2, None),
        ("d", None, BuiltIn.Depth),
    ]
    ins = {v.name: v for v in ps.inputs}
    assert ins["n"].interp == frozenset({Interpolation.Sample})
    assert ins["c"].semantic == "COLOR_2"
    assert ins["ff"].builtin is BuiltIn.FrontFacing
    cs = module.entries["CS"]
    assert cs.stage == "compute" and cs.workgroup is None
    assert {v.builtin for v in cs.inputs} == {BuiltIn.GroupThreadId, BuiltIn.DispatchThreadId}


def test_unknown_buffer_type_is_an_error() -> None:
    with pytest.raises(EmittedCodeError):
        read_msl(
            b"struct S_0 { mystery_t x_0; };\n[[kernel]] void K(S_0 constant* s [[buffer(0)]]) {}"
        )


def test_atomics_are_four_byte_integers_to_the_host() -> None:
    from oneshader.reflection.model import ScalarKind

    m = read_msl(
        b"struct Bin_0 { atomic<uint> n_0; float w_0; metal::atomic<int> d_0; atomic_uint e_0; };\n"
        b"[[kernel]] void K(atomic<uint> device* Counters_0 [[buffer(0)]],"
        b" Bin_0 device* Bins_0 [[buffer(1)]], atomic_int device* Deltas_0 [[buffer(2)]]) {}"
    )
    counters = m.resources["Counters"][0]
    assert counters.stride == 4
    assert (counters.layout.kind, counters.layout.scalar) == (TypeKind.Scalar, ScalarKind.UInt)
    assert (counters.layout.size, counters.layout.align) == (4, 4)
    assert m.resources["Deltas"][0].layout.scalar is ScalarKind.Int
    bins = m.resources["Bins"][0]
    assert [x.offset for x in bins.layout.members] == [0, 4, 8, 12]
    assert [x.type.scalar for x in bins.layout.members] == [
        ScalarKind.UInt,
        ScalarKind.Float,
        ScalarKind.Int,
        ScalarKind.UInt,
    ]
    assert bins.stride == 16


def test_atomic_of_a_non_integer_has_no_layout() -> None:
    with pytest.raises(EmittedCodeError, match="atomic<float2>"):
        read_msl(b"[[kernel]] void K(atomic<float2> device* x_0 [[buffer(0)]]) {}")


def test_bodies_left_untokenized_read_the_same() -> None:
    """Where every brace is code, the reader leaves the functions' bodies untokenized (most of
    the text); the module is the one read from every token (a comment or a string, ``#line``'s,
    has the reader tokenize it all), and a body still cannot hold a character of no token."""
    plain = _SOURCE.replace('#line 3 "x.hlsl"\n', "")
    commented = plain.replace("return r;", "return r; // } a brace of no code")
    assert read_msl(plain.encode()) == read_msl(_SOURCE.encode())
    assert read_msl(plain.encode()) == read_msl(commented.encode())
    entry = "[[fragment]] float4 F(float4 p_0 [[position]], float c_0)\n{\n    return p_0 + c_0;\n}"
    assert unattributed_inputs_read(entry.encode(), "F") == {"c"}
    assert unattributed_inputs_read(entry.replace("+ c_0", "").encode(), "F") == set()
    with pytest.raises(EmittedCodeError, match="unexpected character"):
        read_msl(plain.replace("return r;", "return r$;").encode())
