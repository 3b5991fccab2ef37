"""What plain Slang builds for SPIR-V, oneshader builds too (issue 10, "Done when"): idioms of
public HLSL that oneshader refused although Slang emits valid SPIR-V for them, and positioned
errors where Slang cannot."""

from __future__ import annotations

from pathlib import Path

from module_validation import spirv_errors, wgsl_errors
from oneshader.compiler import CompileOptions, CompileResult, EntryPointSpec, compile_file
from oneshader.compiler.emitted.spirv import read_spirv
from oneshader.reflection.model import BuiltIn, ResourceTypeKind, Stage, Target

PIXEL = (EntryPointSpec("main", Stage.Pixel),)
ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def _build(
    tmp_path: Path,
    source: str,
    targets: tuple[Target, ...] = (Target.SpirV,),
    entries: tuple[EntryPointSpec, ...] = PIXEL,
) -> CompileResult:
    (tmp_path / "s.hlsl").write_text(source)
    opts = CompileOptions(targets=targets, source_name="s.hlsl", entry_points=entries)
    return compile_file(str(tmp_path / "s.hlsl"), opts)


def _ok(result: CompileResult) -> CompileResult:
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    for out in result.outputs:
        if out.target is Target.SpirV:
            assert spirv_errors(out.data) == ""
    return result


_TBUFFERS = """struct S { float3 a; float b; };
tbuffer Palette : register(t1) { float4 tint; };
TextureBuffer<S> extra : register(t2);
cbuffer Frame : register(b0) { float4 colour; };
float4 main() : SV_Target { return RESULT; }
"""


def test_an_unused_tbuffer_builds_for_spirv(tmp_path: Path) -> None:
    # Slang drops an unused tbuffer and emits valid SPIR-V; the reflection keeps its slot.
    result = _ok(_build(tmp_path, _TBUFFERS.replace("RESULT", "colour")))
    assert result.reflection is not None
    kinds = {r.name: r.rtype for r in result.reflection.resources}
    assert kinds["Palette"] is ResourceTypeKind.TextureBuffer
    assert kinds["extra"] is ResourceTypeKind.TextureBuffer


def test_a_tbuffer_the_code_reads_is_a_positioned_error(tmp_path: Path) -> None:
    # Slang crashes on it (an internal error without a position): named at its declaration.
    for result_expr, name, line, col in [
        ("tint", "Palette", 2, 9),
        ("float4(extra.a, extra.b)", "extra", 3, 18),
    ]:
        result = _build(tmp_path, _TBUFFERS.replace("RESULT", result_expr))
        errors = [d for d in result.diagnostics if d.is_error]
        assert [(d.code, d.line, d.column) for d in errors] == [("OS1001", line, col)]
        assert f"'{name}'" in errors[0].message and "SPIR-V" in errors[0].message


_ONE_LINE_MATRICES = """cbuffer Frame : register(b0) {
  float4 colour;
  DECL
};
float4 main() : SV_Target { return colour; }
"""


def test_a_matrix_with_one_row_or_column_is_a_positioned_error(tmp_path: Path) -> None:
    # Slang's error (E39999) has neither a position nor the type; DXC writes them as vectors.
    for decl, token in [
        ("float1x3 m;", "float1x3"),
        ("min16float4x1 m;", "min16float4x1"),
        ("matrix<float, 2, 1> m;", "matrix<float, 2, 1>"),
    ]:
        result = _build(tmp_path, _ONE_LINE_MATRICES.replace("DECL", decl), ALL)
        errors = [d for d in result.diagnostics if d.is_error]
        assert [(d.code, d.line, d.column) for d in errors] == [("OS1001", 3, 3)] * 3
        assert all(f"'{token}'" in d.message for d in errors)
        assert [d.message.split(":")[0] for d in errors] == ["SPIR-V", "Metal", "WGSL"]


def test_a_one_column_matrix_constructor_is_named_with_its_cause(tmp_path: Path) -> None:
    source = "float4 main() : SV_Target { float3x1 k = float3x1(1, 2, 3); return k[1][0]; }\n"
    result = _build(tmp_path, source)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.line, d.column) for d in errors] == [(1, 42)]
    assert "one row or one column" in errors[0].message


def test_minimum_precision_matrices_of_every_shape_are_32_bit(tmp_path: Path) -> None:
    # DXC's min16float2x3 is a float2x3 without -enable-16bit-types; only the square shapes
    # were defined (E30015 'undefined identifier' on the others).
    source = """cbuffer Frame : register(b0) {
  min16float2x3 a; min10float3x4 b; row_major min16uint4x2 c;
};
float4 main() : SV_Target { return float4(a[1], 0) + b[2] + float4(c[3], 0, 0); }
"""
    result = _ok(_build(tmp_path, source, ALL))
    assert result.reflection is not None
    (frame,) = [r for r in result.reflection.resources if r.name == "Frame"]
    assert frame.layout is not None
    shapes = {m.name: (m.type.rows, m.type.cols) for m in frame.layout.members}
    assert shapes == {"a": (2, 3), "b": (3, 4), "c": (4, 2)}


# -- WGSL's reserved words and keywords as names ------------------------------------------------

_RESERVED_NAMES = """struct Light { float4 colour; uint type; };
cbuffer Scene : register(b0) { Light light; float4 module; float4 set; };
[[vk::constant_id(0)]] const int type = 0;
float4 main() : SV_Target {
  float4 c = module + set + light.colour * light.type;
  switch (type) { case 1: return c; default: return c + 1; }
}
"""


def test_wgsl_reserved_words_as_names_give_a_valid_module(tmp_path: Path) -> None:
    # Slang with -no-mangle keeps 'type', 'module', 'set' (reserved words) as WGSL names; naga
    # rejects them. They are renamed as Slang mangles names, and the reflection keeps the
    # source's names; WGSL's 'default:' of a switch stays.
    result = _build(tmp_path, _RESERVED_NAMES, targets=(Target.SpirV, Target.Msl, Target.Wgsl))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    wgsl = next(o.data for o in result.outputs if o.target is Target.Wgsl)
    assert wgsl_errors(wgsl.decode()) == ""
    assert result.reflection is not None
    scene = next(r for r in result.reflection.resources if r.name == "Scene")
    assert scene.layout is not None
    assert [m.name for m in scene.layout.members] == ["light", "module", "set"]
    assert [s.name for s in result.reflection.spec_constants] == ["type"]
    text = wgsl.decode()
    assert "override type_" in text and ".module_" in text and "default" in text


# -- an unused resource on the slot of another ---------------------------------------------------

_LEFTOVER = """Texture2D oldTexture : register(t1);
SamplerState oldSampler : register(s1);
struct Palette { float4 colours[4]; };
[[vk::binding(1, 0)]] ConstantBuffer<Palette> palette : register(b1);
float4 main(float2 uv : TEXCOORD0) : SV_Target { return USE; }
"""


def test_an_unused_resource_on_a_taken_slot_is_left_out_with_a_warning(tmp_path: Path) -> None:
    # A texture/sampler pair no longer sampled, on the binding a [[vk::binding]] gave a buffer
    # (DXC warns; plain Slang drops them): built, without them, each named in a warning.
    for targets in (ALL, (Target.Wgsl,)):
        result = _ok(_build(tmp_path, _LEFTOVER.replace("USE", "palette.colours[1]"), targets))
        assert result.reflection is not None
        assert [r.name for r in result.reflection.resources] == ["palette"]
        warnings = [(d.code, d.line, d.column) for d in result.diagnostics if not d.is_error]
        assert warnings == [("OS3010", 1, 11), ("OS3010", 2, 14)]
        assert all("'palette' (line 4)" in d.message for d in result.diagnostics)


def test_a_read_resource_on_a_taken_slot_stays_an_error(tmp_path: Path) -> None:
    use = "palette.colours[1] * oldTexture.Sample(oldSampler, uv)"
    result = _build(tmp_path, _LEFTOVER.replace("USE", use), targets=ALL)
    assert [d.code for d in result.diagnostics if d.is_error] == ["OS3001"]


def test_an_array_of_arrays_of_resources_is_a_positioned_error_on_spirv(tmp_path: Path) -> None:
    # Slang emits an array of arrays of uniform blocks, which spirv-val (Vulkan) rejects.
    source = """struct Tint { float4 colour; };
ConstantBuffer<Tint> tints[2][3] : register(b0, space1);
float4 main() : SV_Target { return tints[1][2].colour; }
"""
    result = _build(tmp_path, source)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.code, d.line, d.column) for d in errors] == [("OS1008", 2, 22)]
    assert "'tints'" in errors[0].message and "tints[6]" in errors[0].message
    flat = source.replace("tints[2][3]", "tints[6]").replace("[1][2]", "[5]")
    _ok(_build(tmp_path, flat))


def test_a_vertex_shader_without_position_is_a_positioned_error_on_wgsl(tmp_path: Path) -> None:
    # Vulkan needs no position output (DXC's tests have such vertex shaders); WebGPU does,
    # and naga rejected Slang's module. SPIR-V alone builds; WGSL names the entry point.
    vertex = (EntryPointSpec("main", Stage.Vertex),)
    for source in (
        "cbuffer C { float4 tint; };\n\nvoid main() { float4 t = tint; }\n",
        "struct O { float4 c : COLOR0; };\n\nO main() { O o; o.c = 1; return o; }\n",
    ):
        _ok(_build(tmp_path, source, entries=vertex))
        result = _build(tmp_path, source, targets=ALL, entries=vertex)
        errors = [d for d in result.diagnostics if d.is_error]
        assert [(d.code, d.line) for d in errors] == [("OS1017", 3)]
        assert "'main'" in errors[0].message and "SV_Position" in errors[0].message
    placed = "float4 main(float4 p : POSITION) : SV_Position { return p; }\n"
    _ok(_build(tmp_path, placed, targets=ALL, entries=vertex))


def test_a_tbuffer_is_read_only_storage_in_wgsl(tmp_path: Path) -> None:
    # Slang declared it var<uniform> with a storage buffer's layout (a struct member at offset
    # 4, which the uniform address space refuses: naga rejected the module), while the
    # bindings bind a TextureBuffer as read-only storage.
    source = """struct Inner { float a; };
struct Outer { float a; Inner b; float c; };
tbuffer Table : register(t0) { Outer entry; };
float4 main() : SV_Target { return entry.a + entry.b.a + entry.c; }
"""
    result = _build(tmp_path, source, targets=(Target.Msl, Target.Wgsl))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    wgsl = next(o.data for o in result.outputs if o.target is Target.Wgsl).decode()
    assert wgsl_errors(wgsl) == ""
    assert "var<storage, read> Table" in wgsl


def test_draw_index_builtin_builds_for_spirv(tmp_path: Path) -> None:
    # DXC's [[vk::builtin("DrawIndex")]] (multi-draw indirect, bindless): SPIR-V's BuiltIn
    # DrawIndex, reflected as such; Metal and WGSL have no draw index: OS1011 at the attribute.
    source = """struct Transform { float4x4 world; };
ConstantBuffer<Transform> transforms[8] : register(b0);
struct VSInput {
  float3 position : POSITION;
  [[vk::builtin("DrawIndex")]] uint draw : DRAWIDX;
};
float4 main(VSInput input) : SV_Position {
  return mul(transforms[input.draw].world, float4(input.position, 1));
}
"""
    vertex = (EntryPointSpec("main", Stage.Vertex),)
    result = _ok(_build(tmp_path, source, entries=vertex))
    assert result.reflection is not None
    (entry,) = result.reflection.entry_points
    assert [(v.name, v.builtin) for v in entry.inputs] == [
        ("position", BuiltIn.None_),
        ("draw", BuiltIn.DrawIndex),
    ]
    spirv = next(o.data for o in result.outputs if o.target is Target.SpirV)
    emitted = read_spirv(spirv).entries["main"].inputs
    assert [v.target_builtin for v in emitted if v.builtin is BuiltIn.DrawIndex] == ["DrawIndex"]
    refused = _build(tmp_path, source, targets=ALL, entries=vertex)
    errors = [(d.code, d.line, d.column, d.message[:40]) for d in refused.diagnostics]
    assert [e[:3] for e in errors] == [("OS1011", 5, 5), ("OS1011", 5, 5)]
    assert "Metal" in refused.diagnostics[0].message and "WGSL" in refused.diagnostics[1].message


def test_a_struct_holding_a_struct_of_resources_is_named(tmp_path: Path) -> None:
    # Was OS1004 "a global uniform outside any cbuffer", which says nothing of the resources.
    source = """struct Samplers { SamplerState s[2]; };
struct Material { Texture2D t; Samplers samplers; };
Material material;
float4 main(float2 uv : TEXCOORD0) : SV_Target {
  return material.t.Sample(material.samplers.s[1], uv);
}
"""
    errors = [d for d in _build(tmp_path, source).diagnostics if d.is_error]
    assert [(d.code, d.line, d.column) for d in errors] == [("OS1030", 3, 10)]
    assert "'material'" in errors[0].message and "Material" in errors[0].message


def test_an_array_of_constant_buffers_is_a_positioned_error_on_wgsl(tmp_path: Path) -> None:
    # Slang emits one uniform buffer holding an array (not N buffers): the cross-check failed
    # with an internal error (OS9000). SPIR-V binds the array.
    source = """struct Camera { float4x4 view; };
[[vk::binding(0, 0)]] ConstantBuffer<Camera> cameras[2] : register(b0);
float4 main(float4 p : POSITION) : SV_Position { return mul(cameras[1].view, p); }
"""
    vertex = (EntryPointSpec("main", Stage.Vertex),)
    _ok(_build(tmp_path, source, entries=vertex))
    result = _build(tmp_path, source, targets=(Target.Wgsl,), entries=vertex)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.code, d.line, d.column) for d in errors] == [("OS1008", 2, 46)]
    assert "WGSL" in errors[0].message and "'cameras'" in errors[0].message


def test_a_resource_type_without_a_record_is_named_as_such(tmp_path: Path) -> None:
    # A type Slang knows and the reflection has no record for (SM 6.7's writable multisampled
    # texture; a ray-query scene was one, OS1004 "a global uniform outside any cbuffer" once).
    source = """RWTexture2DMS<float4> ms : register(u0);
RWStructuredBuffer<float4> o : register(u1);
[numthreads(1, 1, 1)] void main(uint3 id : SV_DispatchThreadID) { o[0] = ms.Load(int2(0, 0), 0); }
"""
    compute = (EntryPointSpec("main", Stage.Compute),)
    errors = [d for d in _build(tmp_path, source, entries=compute).diagnostics if d.is_error]
    assert [(d.code, d.line, d.column) for d in errors] == [("OS1007", 1, 23)]
    assert "RWTexture2DMS<float4>" in errors[0].message


def test_wave_lane_built_ins_in_a_pixel_shader_are_flat(tmp_path: Path) -> None:
    # Slang declares SubgroupSize/SubgroupLocalInvocationId as fragment inputs without Flat,
    # which Vulkan requires of every integer fragment input (spirv-val: Flat-04744).
    source = (
        '[shader("pixel")] float4 main() : SV_Target '
        "{ return float4(WaveGetLaneCount(), WaveGetLaneIndex(), 0, 1); }\n"
    )
    _ok(_build(tmp_path, source, entries=()))
