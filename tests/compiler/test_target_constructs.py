"""Constructs a target can express that oneshader refused or broke (issue 21, part B): each
built for every target it can be, its modules validated (the suite's hook), its reflection
agreeing with the code, and its WGSL run on the software adapter where it is compute."""

from __future__ import annotations

import re
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from target_support import ALL, build, run_wgsl, wgsl_of
from verify_support import pack, render

from module_validation import device, lacking_feature, wgsl_errors
from oneshader.bindings import from_reflection
from oneshader.codegen import render_module
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.source.dxc_syntax import dxc_declarations
from oneshader.compiler.verify.crosscheck import read_output, verify
from oneshader.reflection.model import (
    BuiltIn,
    DeviceFeatures,
    Interpolation,
    ResourceTypeKind,
    Target,
)

FOLDED = """\
cbuffer P { float4 k; }
RWStructuredBuffer<float4> Out;
[shader("compute")]
[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) { Out[id.x] = k * 0; }
"""


def test_a_read_one_target_folds_away_is_still_a_use(tmp_path: Path) -> None:
    """Slang folds ``k * 0`` in the SPIR-V but reads ``k`` in the WGSL: the entry point uses P
    (what any target's code touches; the host binds it for each), and the WGSL runs with
    exactly the resources the reflection lists."""
    result = build(tmp_path, FOLDED)
    r = result.reflection
    assert r is not None
    assert sorted(r.entry_points[0].uses) == ["Out", "P"]
    assert "P" in wgsl_of(result)
    data = run_wgsl(result, {"P": struct.pack("<4f", 1, 2, 3, 4), "Out": bytes(16)}, "Out")
    assert struct.unpack("<4f", data) == (0.0, 0.0, 0.0, 0.0)
    # The union is exact: a reflection that leaves P out disagrees with the WGSL.
    dropped = replace(r, entry_points=(replace(r.entry_points[0], uses=("Out",)),))
    assert any("uses" in m and "'P'" in m for m in verify(dropped, result.outputs))


NESTED = """\
struct Inner { float3 P; float Q; };
struct Inner2 { float A; float2 B; };
cbuffer C { float Scale; float3 ScalePad; Inner In1; float2 Off; Inner2 In2; float Tail;
            Inner Arr[2]; float3 End3; }
RWStructuredBuffer<float> Out;
[shader("compute")]
[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    Out[0] = Scale; Out[1] = ScalePad.z; Out[2] = In1.Q; Out[3] = Off.y; Out[4] = In2.B.y;
    Out[5] = Tail; Out[6] = Arr[1].P.x; Out[7] = Arr[1].Q; Out[8] = End3.z;
}
"""
STD140 = [
    ("Scale", 0),
    ("ScalePad", 16),
    ("In1", 32),
    ("Off", 48),
    ("In2", 64),
    ("Tail", 80),
    ("Arr", 96),
    ("End3", 128),
]


@pytest.mark.parametrize("targets", [ALL, (Target.Msl, Target.Wgsl), (Target.SpirV, Target.Msl)])
def test_metal_pads_a_struct_array_after_a_packed_struct(
    tmp_path: Path, targets: tuple[Target, ...]
) -> None:
    """Metal's ``Inner`` holds a ``packed_float3`` (so that Q sits at 12 as in std140), which
    makes it 4-aligned: ``Arr`` lands at 84 where std140 puts it at 96. Padding (found from
    SPIR-V's facts, else WGSL's) places it, as it places ``In2`` (Metal aligns it to 8); was
    OS9000 (the layout model kept the array 16-aligned) and, without SPIR-V, OS2001."""
    result = build(tmp_path, NESTED, targets)
    r = result.reflection
    assert r is not None
    c = next(x for x in r.resources if x.name == "C")
    assert c.layout is not None
    assert [(m.name, m.offset) for m in c.layout.members] == STD140
    msl = next(o for o in result.outputs if o.target is Target.Msl)
    metal = read_output(msl).resources["C"][0].layout
    assert metal is not None
    assert [(m.name, m.offset) for m in metal.members if m.name in dict(STD140)] == STD140
    if Target.Wgsl not in targets:
        return
    data = bytearray(c.layout.size)
    pack(
        c.layout,
        {
            "Scale": 1,
            "ScalePad": (0, 0, 2),
            "In1": {"P": (0, 0, 0), "Q": 3},
            "Off": (0, 4),
            "In2": {"A": 0, "B": (0, 5)},
            "Tail": 6,
            "Arr": [{"P": (0, 0, 0), "Q": 0}, {"P": (7, 0, 0), "Q": 8}],
            "End3": (0, 0, 9),
        },
        data,
    )
    out = run_wgsl(result, {"C": bytes(data), "Out": bytes(36)}, "Out")
    assert struct.unpack("<9f", out) == tuple(float(i) for i in range(1, 10))


ANONYMOUS_PUSH = """\
[[vk::push_constant]] struct { uint draw_index; uint mesh_index; } push_constants;
struct Named { float4 tint; }
    named_loose, other_loose;
RWStructuredBuffer<uint> Out;
[shader("compute")]
[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = push_constants.draw_index * 10 + push_constants.mesh_index
        + uint(named_loose.tint.x + other_loose.tint.y);
}
"""


def test_a_struct_declared_with_its_variables(tmp_path: Path) -> None:
    """An anonymous struct declared with its push-constant variable (DXC's idiom), and a named
    one declared with two loose uniforms: built on every target (was Slang's E31002 at the
    attribute); the push block's layout has no name (a generated class takes the variable's),
    the named struct keeps its own, and the module's class renders."""
    result = build(tmp_path, ANONYMOUS_PUSH)
    r = result.reflection
    assert r is not None
    (push,) = r.push_blocks
    assert push.name == "push_constants" and push.layout.name == ""
    assert [(m.name, m.offset) for m in push.layout.members] == [
        ("draw_index", 0),
        ("mesh_index", 4),
    ]
    globals_ = next(x for x in r.resources if x.name == "$Globals")
    assert globals_.layout is not None
    assert [(m.name, m.type.name) for m in globals_.layout.members] == [
        ("named_loose", "Named"),
        ("other_loose", "Named"),
    ]
    source = render_module(r, "shader")
    assert "oneshader_anon" not in source
    compile(source, "shader.py", "exec")
    pushed = struct.pack("<2I", 3, 4) + bytes(8)
    loose = struct.pack("<4f", 1, 0, 0, 0) + struct.pack("<4f", 0, 2, 0, 0)
    assert "push_constants" in wgsl_of(result)
    out = run_wgsl(result, {"push_constants": pushed, "$Globals": loose, "Out": bytes(4)}, "Out")
    assert struct.unpack("<I", out) == (3 * 10 + 4 + 3,)


OUT_OF_LINE = """\
struct GbufferDataPacked { uint4 a; };
struct GbufferData
{
    float4 color;
    GbufferDataPacked pack();
    static float twice(float x);
};

GbufferDataPacked GbufferData::pack()
{
    GbufferDataPacked p;
    p.a = asuint(color);
    return p;
}

float GbufferData::twice(float x) { return 2 * x; }

RWStructuredBuffer<uint4> Out;
[shader("compute")]
[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    GbufferData d;
    d.color = float4(id.x, 1, 2, GbufferData::twice(3));
    Out[id.x] = d.pack().a;
}
"""


def test_out_of_line_member_functions(tmp_path: Path) -> None:
    """HLSL 2021's out-of-line member functions (a static one too) build on every target (was
    Slang's E20001 at '::') and compute what DXC's code does."""
    result = build(tmp_path, OUT_OF_LINE)
    out = run_wgsl(result, {"Out": bytes(16)}, "Out")
    assert struct.unpack("<4f", out) == (0.0, 1.0, 2.0, 6.0)


def test_an_error_inside_an_out_of_line_member_function_keeps_its_line(tmp_path: Path) -> None:
    """The rewrites keep every line: Slang's error in the moved body is at the user's line."""
    broken = OUT_OF_LINE.replace("p.a = asuint(color);", "p.a = asuint(colour);")
    path = tmp_path / "broken.hlsl"
    path.write_text(broken)
    result = compile_file(str(path), CompileOptions(targets=ALL, source_name="broken.hlsl"))
    assert not result.ok
    assert {(d.line, d.code) for d in result.diagnostics} == {(12, "E30015")}


@pytest.mark.parametrize(
    "source",
    [
        "struct S { float a; };\nS s;\n",  # a struct declared on its own
        "cbuffer C { struct { float4 a; } inner; float b; };\n",  # inside a block: Slang's own
        "typedef struct { float a; } T;\n",
        "namespace N { float f(); }\nfloat N::f() { return 1; }\n",  # a namespace, not a struct
        "struct S { float f() { return 1; } };\nfloat g() { return S::k; }\n",
    ],
)
def test_the_declaration_rewrites_leave_other_code_alone(source: str) -> None:
    assert dxc_declarations(source) == source


def test_the_declaration_rewrites_keep_every_line() -> None:
    text = dxc_declarations(ANONYMOUS_PUSH) + "\n" + dxc_declarations(OUT_OF_LINE)
    assert text.count("\n") == ANONYMOUS_PUSH.count("\n") + 1 + OUT_OF_LINE.count("\n")
    assert "struct oneshader_anon_push_constants {" in text
    assert "[[vk::push_constant]] oneshader_anon_push_constants push_constants;" in text
    assert "extension GbufferData { static float" in text


VARYINGS = """\
struct V
{
    float4 pos : SV_Position;
    sample float2 uv : TEXCOORD0;
    centroid float shade : TEXCOORD1;
    uint inst : SV_InstanceID;
};

[shader("vertex")]
V vs(uint vid : SV_VertexID, uint iid : SV_InstanceID)
{
    const float2 corners[6] = { float2(0, 0), float2(1, 0), float2(0, 1),
                                float2(1, 0), float2(1, 1), float2(0, 1) };
    float2 c = corners[vid];
    V v;
    v.pos = float4(-1.0 + float(iid) + c.x, -1.0 + 2 * c.y, 0, 1);
    v.uv = c;
    v.shade = 0.5;
    v.inst = iid;
    return v;
}

[shader("pixel")]
float4 ps(V v) : SV_Target { return float4(v.inst, v.shade, v.uv.x * 0, 1); }
"""


def test_sample_and_centroid_interpolation_and_an_instance_id_varying(tmp_path: Path) -> None:
    """``sample``/``centroid`` stage variables (Slang drops both from its WGSL, and writes
    centroid as Metal's center_perspective) and ``SV_InstanceID`` passed from the vertex to the
    pixel stage as DXC passes it (a flat varying at a location; Slang wrote a built-in no
    target has there): built on every target (were OS1003), and drawn on the GPU, where
    WebGPU's stage link checks the interpolation on both sides."""
    import numpy as np

    result = build(tmp_path, VARYINGS)
    r = result.reflection
    assert r is not None
    vs, ps = r.entry_points
    inst = next(v for v in ps.inputs if v.name == "inst")
    assert (inst.semantic, inst.builtin, inst.location) == ("SV_InstanceID", BuiltIn.None_, 2)
    assert next(v for v in vs.outputs if v.name == "inst").location == 2
    assert next(v for v in vs.inputs if v.name == "iid").builtin is BuiltIn.InstanceId
    assert [v.interp for v in ps.inputs if v.name in ("uv", "shade")] == [
        Interpolation.Sample,
        Interpolation.Centroid,
    ]
    wgsl = wgsl_of(result)
    assert wgsl.count("@interpolate(perspective, sample)") == 2
    assert wgsl.count("@interpolate(perspective, centroid)") == 2
    msl = next(o.data.decode() for o in result.outputs if o.target is Target.Msl)
    assert "[[centroid_perspective]]" in msl and "[[user(SV_INSTANCEID)]]" in msl
    dev = device()
    module = dev.create_shader_module(code=wgsl)
    pipeline = dev.create_render_pipeline(
        layout="auto",
        vertex={"module": module, "entry_point": "vs", "buffers": []},
        fragment={"module": module, "entry_point": "ps", "targets": [{"format": "rgba8unorm"}]},
    )

    def draw(rpass: Any) -> None:
        rpass.set_pipeline(pipeline)
        rpass.draw(6, 2)

    pixels = render(draw, 4)
    assert (pixels[:, :2, 0] == 0).all() and (pixels[:, 2:, 0] == 255).all()
    assert (pixels[:, :, 3] == 255).all()  # both instances drew
    assert np.abs(pixels[:, :, 1].astype(int) - 128).max() <= 1


ONE_COMPONENT = """\
Texture2D<float1> Src;
RWStructuredBuffer<float> Out;
[shader("compute")]
[numthreads(2, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    float1 v = Src.Load(int3(id.xy, 0));
    Out[id.x] = Src.Load(int3(id.xy, 0)).x + v.x * 10;
}
"""


def test_a_texture_of_one_component_vectors(tmp_path: Path) -> None:
    """``Texture2D<float1>`` is the scalar's texture (Slang's WGSL refused it: E41400): built on
    every target and read on the GPU from an r32float texture."""
    import wgpu

    result = build(tmp_path, ONE_COMPONENT)
    assert "texture_2d<f32>" in wgsl_of(result)
    dev = device()
    texture = dev.create_texture(
        size=(2, 1, 1),
        format=wgpu.TextureFormat.r32float,
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )
    dev.queue.write_texture(
        {"texture": texture},
        struct.pack("<2f", 1.5, 2.5),
        {"bytes_per_row": 8, "rows_per_image": 1},
        (2, 1, 1),
    )
    out = run_wgsl(result, {"Out": bytes(8)}, "Out", views={"Src": texture.create_view()})
    assert struct.unpack("<2f", out) == (16.5, 27.5)


WAVES = """\
RWStructuredBuffer<uint> Out;
[shader("compute")]
[numthreads(32, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    uint lanes = WaveGetLaneCount();
    uint total = WaveActiveSum(1u);
    uint before = WavePrefixSum(1u);
    uint first = WaveReadLaneFirst(id.x);
    bool any = WaveActiveAnyTrue(id.x == 5);
    Out[id.x] = (lanes == total ? 1000000 : 0) + lanes * 1000 + before * 10 + (any ? 1 : 0)
        + (first == id.x - before ? 0 : 100000) + 0 * WaveGetLaneIndex();
}
"""


def _has_subgroups() -> bool:
    return "subgroup" in device().features


def test_wave_operations_build_on_wgsl_through_subgroups(tmp_path: Path) -> None:
    """Wave intrinsics (were OS1003 on WGSL): Slang's ``subgroups`` WGSL, without the ``enable``
    the naga of wgpu-py refuses; every target's features say Subgroups and the bindings ask
    for the device's 'subgroup' feature. Run where the adapter has it."""
    if not _has_subgroups():
        pytest.skip("this adapter has no 'subgroup' feature (lavapipe has; OpenGL has not)")
    result = build(tmp_path, WAVES)
    r = result.reflection
    assert r is not None
    (entry,) = r.entry_points
    assert DeviceFeatures.Subgroups in entry.features
    wgsl = wgsl_of(result)
    assert "subgroupAdd" in wgsl and "enable subgroups" not in wgsl
    shader = from_reflection(r, "waves", {Target.Wgsl: wgsl}).shader
    assert "subgroup" in shader.required_features
    out = struct.unpack("<32I", run_wgsl(result, {"Out": bytes(128)}, "Out"))
    lanes = out[0] // 1000 % 1000
    assert lanes in (4, 8, 16, 32, 64)
    for i, value in enumerate(out):
        lane = i % lanes
        assert value == 1000000 + lanes * 1000 + lane * 10 + (i // lanes == 5 // lanes), i
    spirv_only = build(tmp_path, WAVES, (Target.SpirV,)).reflection
    assert spirv_only is not None
    assert DeviceFeatures.Subgroups in spirv_only.entry_points[0].features


@pytest.mark.invalid_modules("subgroup operations: valid on an adapter with the subgroup feature")
def test_first_lane_quad_reads_and_bit_counts_build_on_wgsl(tmp_path: Path) -> None:
    """``WaveIsFirstLane`` (Slang's ``subgroupElect``, which this naga does not know: it was
    OS1003), ``QuadReadLaneAt`` and ``WaveActiveCountBits`` (Slang's E36107) are helpers of
    the subgroup operations naga knows: broadcast-first, shuffle, ballot; a shuffle's lane is
    a u32 (Slang's i32 was an invalid module, WaveReadLaneAt's too). Where the adapter has no
    'subgroup' feature, naga's only complaint is that capability."""
    source = WAVES.replace("bool any = ", "bool any = WaveIsFirstLane() && ").replace(
        "+ 0 * WaveGetLaneIndex();",
        "+ 0 * WaveGetLaneIndex() + 0 * WaveActiveCountBits(id.x > 3) "
        "+ 0 * QuadReadLaneAt(id.x, 2) + 0 * uint(QuadReadLaneAt(float4(id.x, 0, 0, 0), 1).x) "
        "+ 0 * WaveReadLaneAt(id.x, 1);",
    )
    result = build(tmp_path, source)
    assert result.ok, [d.format() for d in result.diagnostics]
    wgsl = wgsl_of(result)
    assert "subgroupElect" not in wgsl and "subgroupShuffle" in wgsl
    complaint = wgsl_errors(wgsl)
    # the lane of a shuffle is a u32 for naga (Slang writes i32: "invalid type")
    assert "invalid type" not in complaint and "u32(i32(" in wgsl, complaint
    if _has_subgroups():
        assert complaint == ""
        # a refusal for that capability would be a real one here: the adapter has it
        assert lacking_feature("requires capability Capabilities(SUBGROUP)") == ""
    else:
        assert (
            all(
                "Capabilities(SUBGROUP)" in line
                for line in complaint.splitlines()
                if "requires" in line
            )
            and "unknown" not in complaint.lower()
        ), complaint
        # what corpus.py counts as not validated on this adapter, rather than invalid
        assert lacking_feature(complaint) == "subgroup"


BYTE_ATOMICS = """\
RWByteAddressBuffer Counts;
RWByteAddressBuffer Wide;
[shader("compute")]
[numthreads(4, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    uint old;
    Counts.InterlockedAdd(0, 1, old);
    Counts.Store(4 + id.x * 4, old + Counts.Load(36) * 0);
    Counts.InterlockedOr(32, 1u << id.x);
    uint was;
    Counts.InterlockedCompareExchange(40, 0, id.x + 1, was);
    Wide.InterlockedAdd(0, 1);
    Wide.Store2(8, uint2(1, 2));
}
"""


def test_interlocked_on_a_byte_address_buffer_of_words_on_wgsl(tmp_path: Path) -> None:
    """A RWByteAddressBuffer every use of which is a one-word Load/Store/Interlocked* is WGSL's
    ``array<atomic<u32>>`` (was OS1015): built on every target, the reflection's layout that
    of any byte-address buffer, and the counts right on the GPU. One also stored two words at
    a time (``Store2``) stays a plain buffer, where the atomic is still OS1015."""
    path = tmp_path / "wide.hlsl"
    path.write_text(BYTE_ATOMICS)
    refused = compile_file(str(path), CompileOptions(targets=ALL, source_name="wide.hlsl"))
    (error,) = [d for d in refused.diagnostics if d.is_error]
    assert (error.code, error.line) == ("OS1015", 13) and "'Wide'" in error.message
    source = BYTE_ATOMICS.replace("    Wide.InterlockedAdd(0, 1);\n", "")
    result = build(tmp_path, source)
    r = result.reflection
    assert r is not None
    counts = next(x for x in r.resources if x.name == "Counts")
    assert counts.rtype is ResourceTypeKind.RWByteAddressBuffer
    wgsl = wgsl_of(result)
    assert re.search(r"var<storage, read_write> Counts\w* : array<atomic<u32>>", wgsl)
    assert re.search(r"var<storage, read_write> Wide\w* : array<u32>", wgsl)
    out = run_wgsl(result, {"Counts": bytes(48), "Wide": bytes(16)}, "Counts")
    words = struct.unpack("<12I", out)
    assert words[0] == 4 and sorted(words[1:5]) == [0, 1, 2, 3]
    assert words[8] == 0b1111 and words[10] in (1, 2, 3, 4)


TYPED_BUFFERS = """\
Buffer<float4> Src;
Buffer<uint> Index;
RWBuffer<float2> Pairs;
RWStructuredBuffer<float4> Out;
[shader("compute")]
[numthreads(2, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = Src[Index[id.x]] * 2 + Src.Load(id.x);
    Pairs[id.x] = Src[id.x].zw;
}
"""


def test_typed_buffers_are_storage_arrays_on_wgsl(tmp_path: Path) -> None:
    """``Buffer<float4>`` read in a compute shader (and ``RWBuffer<float2>`` written) is a
    storage array of its element type on WGSL, which has no texel buffers (was E36107): the
    same bytes from the host, bound as the bindings bind a typed buffer there (read-only
    storage, storage), and the values right on the GPU. A 3-vector's stays refused."""
    result = build(tmp_path, TYPED_BUFFERS)
    r = result.reflection
    assert r is not None
    assert [x.rtype for x in r.resources][:3] == [
        ResourceTypeKind.Buffer,
        ResourceTypeKind.Buffer,
        ResourceTypeKind.RWBuffer,
    ]
    wgsl = wgsl_of(result)
    assert re.search(r"var<storage, read> Src\w* : array<vec4<f32>>", wgsl)
    src = struct.pack("<8f", 1, 2, 3, 4, 5, 6, 7, 8)
    buffers = {
        "Src": src,
        "Index": struct.pack("<2I", 1, 0),
        "Pairs": bytes(16),
        "Out": bytes(32),
    }
    out = struct.unpack("<8f", run_wgsl(result, buffers, "Out"))
    assert out == (11, 14, 17, 20, 7, 10, 13, 16)
    pairs = struct.unpack("<4f", run_wgsl(result, buffers, "Pairs"))
    assert pairs == (3, 4, 7, 8)
    path = tmp_path / "three.hlsl"
    path.write_text(
        TYPED_BUFFERS.replace("Buffer<float4> Src", "Buffer<float3> Src")
        .replace("* 2 + Src.Load(id.x)", ".xyzz")
        .replace("Src[id.x].zw", "Src[id.x].yz")
    )
    three = compile_file(str(path), CompileOptions(targets=(Target.Wgsl,), source_name="t.hlsl"))
    (error,) = [d for d in three.diagnostics if d.is_error]
    assert error.code == "E36107" and "a 3-vector's array stride" in error.message


def test_the_lane_index_in_a_two_dimensional_workgroup_is_a_wgsl_error(tmp_path: Path) -> None:
    """``QuadReadLaneAt`` (its WGSL helper reads ``@builtin(subgroup_invocation_id)``) in a
    ``numthreads(2, 2, 1)`` entry point (DXC's sm6.quad-read-lane-at.quad): naga refuses the
    built-in in a workgroup of more than one dimension (an invalid module); OS1003 at the call."""
    source = (
        "RWStructuredBuffer<float> o;\n"
        '[shader("compute")][numthreads(2, 2, 1)]\n'
        "void main(uint3 id : SV_DispatchThreadID) { o[id.x] = QuadReadLaneAt(o[id.y], 1); }\n"
    )
    path = tmp_path / "lanes.hlsl"
    path.write_text(source)
    options = CompileOptions(targets=(Target.Wgsl,), source_name="lanes.hlsl")
    result = compile_file(str(path), options)
    errors = [(d.line, d.column, d.code) for d in result.diagnostics if d.is_error]
    assert errors == [(3, 55, "OS1003")], [d.format() for d in result.diagnostics]
    assert build(tmp_path, source, (Target.SpirV,)).ok
