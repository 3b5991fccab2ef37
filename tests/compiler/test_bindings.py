"""The binding and location policy (docs/compiler.md), checked in the reflection and the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oneshader.compiler import (
    BindRegister,
    CompileOptions,
    EntryPointSpec,
    RegisterShift,
    compile_file,
)
from oneshader.compiler.emitted.spirv import read_spirv
from oneshader.compiler.patch.spirv import rebind, relocate
from oneshader.reflection.model import BuiltIn, ShaderReflection, Stage, Target

CORPUS = Path(__file__).parent.parent / "corpus"
ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def build(path: Path, **kw: object) -> tuple[ShaderReflection, dict[Target, bytes]]:
    result = compile_file(str(path), CompileOptions(source_name=path.name, **kw))  # type: ignore[arg-type]
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    return result.reflection, {o.target: o.data for o in result.outputs}


def slots(refl: ShaderReflection, target: Target) -> dict[str, tuple[int, int]]:
    return {
        r.name: next((s.set, s.binding) for s in r.slots if s.target is target)
        for r in refl.resources
    }


def spirv_bindings(data: bytes) -> dict[str, tuple[int | None, int | None]]:
    return {n: (rs[0].set, rs[0].binding) for n, rs in read_spirv(data).resources.items()}


def test_registers_map_as_dxc_with_pairs_unused_and_vk_binding() -> None:
    refl, code = build(CORPUS / "registers.hlsl")
    expected = {
        "Camera": (0, 0),
        "Material": (1, 1),
        "Albedo": (0, 1),
        "AlbedoSampler": (0, 1),  # texture+sampler pair: one combined binding
        "Unused": (0, 2),
        "Overridden": (0, 5),  # [[vk::binding(5, 0)]] wins over register(t3)
        "Instances": (1, 0),
        "Feedback": (0, 4),
    }
    assert slots(refl, Target.SpirV) == expected
    emitted = spirv_bindings(code[Target.SpirV])
    assert "Unused" not in emitted  # unused: in the reflection, not in the code
    for name, slot in emitted.items():
        assert slot == expected[name], name
    wgsl = slots(refl, Target.Wgsl)
    assert wgsl["AlbedoSampler"] == (0, 6)  # after group 0's highest binding (Overridden, 5)
    assert {k: v for k, v in wgsl.items() if k != "AlbedoSampler"} == {
        k: v for k, v in expected.items() if k != "AlbedoSampler"
    }
    assert re.search(
        rb"@binding\(6\) @group\(0\) var AlbedoSampler(_\d+)? : sampler;", code[Target.Wgsl]
    )
    metal = slots(refl, Target.Msl)
    assert (metal["Camera"], metal["Material"], metal["Instances"], metal["Feedback"]) == (
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
    )
    assert (metal["Albedo"], metal["Unused"], metal["Overridden"], metal["AlbedoSampler"]) == (
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 0),
    )
    uses = {e.name: set(e.uses) for e in refl.entry_points}
    assert uses["VS"] == {"Camera", "Instances"}
    assert uses["PS"] == {"Material", "Albedo", "AlbedoSampler", "Overridden", "Feedback", "Camera"}


SHIFTED = """
cbuffer A : register(b0) { float4 a; };
Texture2D T0 : register(t0);
Texture2D T1 : register(t1, space1);
SamplerState S0 : register(s0);
[[vk::binding(3, 2)]] RWStructuredBuffer<float4> U : register(u0);
RWStructuredBuffer<float4> Implicit;
[shader("compute")][numthreads(1,1,1)]
void M(uint3 id : SV_DispatchThreadID)
{
    U[0] = a + T0.SampleLevel(S0, float2(0,0), 0) + T1.SampleLevel(S0, float2(0,0), 0);
    Implicit[0] = a;
}
"""


def test_shifts_per_space_and_all_and_vk_binding_unshifted(tmp_path: Path) -> None:
    path = tmp_path / "shifted.hlsl"
    path.write_text(SHIFTED)
    shifts = (
        RegisterShift("t", 10, 0),
        RegisterShift("t", 20, None),
        RegisterShift("s", 30, None),
        RegisterShift("u", 40, None),
    )
    refl, code = build(path, shifts=shifts, targets=(Target.SpirV, Target.Wgsl))
    expected = {
        "A": (0, 0),
        "T0": (0, 10),
        "T1": (1, 21),
        "S0": (0, 30),
        "U": (2, 3),
        "Implicit": (0, 1),
    }
    assert slots(refl, Target.SpirV) == expected
    assert spirv_bindings(code[Target.SpirV]) == expected
    assert slots(refl, Target.Wgsl) == expected


def test_bind_register_and_its_missing_mapping(tmp_path: Path) -> None:
    path = tmp_path / "bound.hlsl"
    path.write_text(
        SHIFTED.replace("RWStructuredBuffer<float4> Implicit;", "").replace("Implicit[0] = a;", "")
    )
    binds = (
        BindRegister("b0", 0, 7, 1),
        BindRegister("t0", 0, 2, 0),
        BindRegister("t1", 1, 3, 0),
        BindRegister("s0", 0, 4, 0),
    )
    refl, code = build(path, bind_registers=binds, targets=(Target.SpirV,))
    expected = {"A": (1, 7), "T0": (0, 2), "T1": (0, 3), "S0": (0, 4), "U": (2, 3)}
    assert slots(refl, Target.SpirV) == expected
    assert spirv_bindings(code[Target.SpirV]) == expected
    missing = compile_file(
        str(path), CompileOptions(bind_registers=binds[:3], source_name="b.hlsl")
    )
    (err,) = [d for d in missing.diagnostics if d.is_error]
    assert err.code == "OS3002" and err.line == 5 and "'S0'" in err.message
    assert "bind-register in [tool.oneshader]" in err.message  # the pyproject key, too


def test_counters_take_the_lowest_free_binding_or_counter_binding(tmp_path: Path) -> None:
    path = tmp_path / "counters.hlsl"
    path.write_text(
        "cbuffer P : register(b0) { uint n; };\n"
        "RWStructuredBuffer<uint> Visible : register(u2);\n"
        "[[vk::counter_binding(9)]] AppendStructuredBuffer<uint> Out : register(u3);\n"
        "RWStructuredBuffer<uint> Culled : register(u4);\n"
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 id : SV_DispatchThreadID)\n'
        "{ uint i = Visible.IncrementCounter(); Visible[i] = n; Out.Append(i);\n"
        "  uint j = Culled.DecrementCounter(); Culled[j] = i; }\n"
    )
    refl, code = build(path, targets=(Target.SpirV,))
    counters = {r.name: [(s.set, s.binding) for s in r.counters] for r in refl.resources}
    assert counters == {"P": [], "Visible": [(0, 1)], "Out": [(0, 9)], "Culled": [(0, 5)]}
    emitted = read_spirv(code[Target.SpirV]).resources
    for name, expected in (("Visible", (0, 1)), ("Out", (0, 9)), ("Culled", (0, 5))):
        assert [(c.set, c.binding) for c in emitted[name] if c.role == "counter"] == [expected]
    assert set(refl.entry_points[0].uses) == {"P", "Visible", "Out", "Culled"}
    # WGSL: each companion counter at the SPIR-V counter's group/binding; Metal: the buffer
    # indices after every buffer, append/consume counters first, then RW ones by first use.
    refl, code = build(path, targets=(Target.Wgsl, Target.Msl))
    for target, expected in (
        (Target.Wgsl, {"P": [], "Visible": [(0, 1)], "Out": [(0, 9)], "Culled": [(0, 5)]}),
        (Target.Msl, {"P": [], "Visible": [(0, 5)], "Out": [(0, 4)], "Culled": [(0, 6)]}),
    ):
        got = {
            r.name: [(s.set, s.binding) for s in r.counters if s.target is target]
            for r in refl.resources
        }
        assert got == expected, target
    wgsl = code[Target.Wgsl].decode()
    for name, binding in (("Visible", 1), ("Out", 9), ("Culled", 5)):
        decl = rf"@binding\({binding}\) @group\(0\) var<storage, read_write> {name}_counter :"
        assert re.search(decl, wgsl), name
    msl = code[Target.Msl].decode()
    for name, index in (("Visible", 5), ("Out", 4), ("Culled", 6)):
        assert re.search(rf"\b{name}_counter \[\[buffer\({index}\)\]\]", msl), name


def test_collision_names_both_declarations(tmp_path: Path) -> None:
    result = compile_file(
        str(CORPUS / "errors/binding_collision.hlsl"), CompileOptions(source_name="c.hlsl")
    )
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.code, d.line, d.column) for d in errors] == [("OS3001", 7, 9)]
    assert "'Second' and 'First' (line 2)" in errors[0].message and "SPIR-V" in errors[0].message
    assert "b-shift/t-shift/... in [tool.oneshader]" in errors[0].message  # the pyproject key


LOCATED = """
struct VSIn
{
    [[vk::location(3)]] float3 position : POSITION;
    [[vk::location(0)]] float4 color : COLOR0;
    [[vk::location(5)]] float2 uv : TEXCOORD5;
};
struct VSOut
{
    float4 position : SV_Position;
    [[vk::location(2)]] float4 color : COLOR0;
    [[vk::location(4)]] float2 uv : TEXCOORD5;
};
struct PSOut { float4 a : SV_Target0; float4 b : SV_Target2; };
[shader("vertex")] VSOut V(VSIn i)
{ VSOut o; o.position = float4(i.position, 1); o.color = i.color; o.uv = i.uv; return o; }
[shader("pixel")] PSOut P(VSOut i) { PSOut o; o.a = i.color; o.b = float4(i.uv, 0, 1); return o; }
"""


def test_locations_vk_location_and_sv_target_on_every_target(tmp_path: Path) -> None:
    path = tmp_path / "located.hlsl"
    path.write_text(LOCATED)
    refl, code = build(path)
    v, p = refl.entry_points
    assert [(x.name, x.location) for x in v.inputs] == [("position", 3), ("color", 0), ("uv", 5)]
    assert [(x.name, x.location) for x in v.outputs] == [
        ("position", None),
        ("color", 2),
        ("uv", 4),
    ]
    assert [(x.name, x.location) for x in p.inputs] == [("position", None), ("color", 2), ("uv", 4)]
    assert [(x.name, x.location) for x in p.outputs] == [("a", 0), ("b", 2)]
    assert [x.offset for x in v.inputs] == [16, 0, 28] and v.stride == 36
    wgsl = code[Target.Wgsl].decode()
    for name, loc in (("position", 3), ("color", 0), ("uv", 5)):
        assert re.search(rf"@location\({loc}\) {name}_1 :", wgsl), name
    assert re.search(r"@location\(2\) color_0 :", wgsl) and re.search(
        r"@location\(4\) uv_0 :", wgsl
    )
    assert re.search(r"\[\[attribute\(3\)\]\]", code[Target.Msl].decode())
    assert re.search(r"b_0 \[\[color\(2\)\]\]", code[Target.Msl].decode())
    entries = read_spirv(code[Target.SpirV]).entries
    assert {x.name: x.location for x in entries["P"].outputs} == {"a": 0, "b": 2}
    assert {x.name: x.location for x in entries["V"].inputs} == {"position": 3, "color": 0, "uv": 5}


def test_point_size_builtin(tmp_path: Path) -> None:
    path = tmp_path / "points.hlsl"
    path.write_text(
        'struct O { float4 p : SV_Position; [[vk::builtin("PointSize")]] float s : PSIZE; };\n'
        '[shader("vertex")] O V(float3 q : POSITION)\n'
        "{ O o; o.p = float4(q, 1); o.s = 4; return o; }\n"
    )
    refl, code = build(path, targets=(Target.SpirV, Target.Msl))
    (size,) = [x for x in refl.entry_points[0].outputs if x.name == "s"]
    assert (size.builtin, size.location) == (BuiltIn.PointSize, None)
    assert b"[[point_size]]" in code[Target.Msl]
    wgsl = compile_file(
        str(path), CompileOptions(targets=(Target.Wgsl,), source_name="points.hlsl")
    )
    (err,) = [d for d in wgsl.diagnostics if d.is_error]
    assert (err.code, err.line, err.column) == ("OS1011", 1, 38)
    assert "PointSize" in err.message and "WGSL" in err.message


def test_truncation_error_says_what_to_write(tmp_path: Path) -> None:
    path = tmp_path / "trunc.hlsl"
    path.write_text(
        "cbuffer C { float4x4 m; };\n"
        '[shader("vertex")] float4 V(float4 p : POSITION) : SV_Position\n'
        "{ float3 v = mul((float3x3)m, p); return float4(v, 1); }\n"
    )
    result = compile_file(
        str(path), CompileOptions(entry_points=(EntryPointSpec("V", Stage.Vertex),))
    )
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors and errors[0].line == 3
    assert "explicit" in errors[0].message and "mul(" in errors[0].message


def test_rebind_inserts_missing_decorations() -> None:
    _, code = build(CORPUS / "multi_entry.hlsl", targets=(Target.SpirV,))
    patched = rebind(code[Target.SpirV], {"Data": (3, 7), "Source": (2, 9)})
    emitted = spirv_bindings(patched)
    assert emitted["Data"] == (3, 7) and emitted["Source"] == (2, 9)
    assert emitted["Globals"] == (0, 0)
    with pytest.raises(ValueError):
        rebind(b"not spir-v at all", {})


def test_a_patch_that_changes_nothing_leaves_the_module_as_it_is() -> None:
    """rebind and relocate decide from the reader's shared declarations that a module already
    says what they would write (Slang's locations mostly are the reflection's), and leave it
    as it is; one they would change is still patched, names renamed too."""
    refl, code = build(CORPUS / "multi_entry.hlsl", targets=(Target.SpirV,))
    module = code[Target.SpirV]
    assert rebind(module, slots(refl, Target.SpirV)) is module
    assert rebind(module, {"Data": (3, 7)}) != module
    assert rebind(module, slots(refl, Target.SpirV), {"Data": "Renamed"}) != module
    for e in refl.entry_points:
        ins = {v.name: v.location for v in e.inputs if v.location is not None}
        outs = {v.name: v.location for v in e.outputs if v.location is not None}
        assert relocate(module, e.name, ins, outs) is module
        if ins:
            moved = relocate(module, e.name, dict.fromkeys(ins, 9), outs)
            assert moved != module
            assert {v.location for v in read_spirv(moved).entries[e.name].inputs} == {9}


def test_metal_numbers_each_kind_whatever_the_registers_even_in_includes(tmp_path: Path) -> None:
    (tmp_path / "res.hlsli").write_text(
        "cbuffer A : register(b0) { float4 a; };\n"
        "StructuredBuffer<float4> B : register(t0);\n"
        "Texture2D<float4> T : register(t1);\n"
        "RWStructuredBuffer<float4> C : register(u0, space2);\n"
        "SamplerState S : register(s3);\n"
    )
    (tmp_path / "main.hlsl").write_text(
        '#include "res.hlsli"\n'
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 id : SV_DispatchThreadID)\n'
        "{ C[id.x] = a + B[id.x] + T.SampleLevel(S, float2(0, 0), 0); }\n"
    )
    refl, code = build(tmp_path / "main.hlsl", targets=(Target.Msl,))
    assert slots(refl, Target.Msl) == {
        "A": (0, 0),
        "B": (0, 1),
        "T": (0, 0),
        "C": (0, 2),
        "S": (0, 0),
    }
    msl = code[Target.Msl].decode()
    for name, attr in (
        ("A", "buffer(0)"),
        ("B", "buffer(1)"),
        ("C", "buffer(2)"),
        ("T", "texture(0)"),
    ):
        assert re.search(rf"\b{name}(_\d+)? \[\[{re.escape(attr)}\]\]", msl), name
    assert re.search(r"\bS(_\d+)? \[\[sampler\(0\)\]\]", msl)


def test_storage_format_follows_the_texel_type_as_dxc(tmp_path: Path) -> None:
    path = tmp_path / "img.hlsl"
    path.write_text(
        "RWTexture2D<float4> Img;\nRWTexture2D<uint> Cnt;\n"
        '[[vk::image_format("rgba8")]] RWTexture2D<float4> Ldr;\n'
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 id : SV_DispatchThreadID)\n'
        "{ Img[id.xy] = 1; Cnt[id.xy] = 3; Ldr[id.xy] = 0.5; }\n"
    )
    refl, code = build(path)
    assert [(r.name, r.format) for r in refl.resources] == [
        ("Img", "rgba32f"),
        ("Cnt", "r32ui"),
        ("Ldr", "rgba8"),
    ]
    formats = {n: rs[0].format for n, rs in read_spirv(code[Target.SpirV]).resources.items()}
    assert formats == {"Img": "rgba32f", "Cnt": "r32ui", "Ldr": "rgba8"}
    wgsl = code[Target.Wgsl].decode()
    assert "texture_storage_2d<rgba32float" in wgsl and "texture_storage_2d<rgba8unorm" in wgsl
