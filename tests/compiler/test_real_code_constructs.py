"""Constructs of real HLSL that were internal errors (OS9000/OS9002) instead of a correct build
or a positioned error naming the construct and the target."""

from __future__ import annotations

from pathlib import Path

from module_validation import module_errors
from oneshader.compiler import CompileOptions, CompileResult, compile_file
from oneshader.reflection.model import Target, TypeKind

_ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def _build(tmp_path: Path, source: str, *targets: Target) -> CompileResult:
    (tmp_path / "s.hlsl").write_text(source)
    options = CompileOptions(targets=targets, source_name="s.hlsl")
    return compile_file(str(tmp_path / "s.hlsl"), options)


def test_one_component_vectors_in_buffers_are_scalars(tmp_path: Path) -> None:
    """``float1``/``int1`` members: every target's code holds a scalar (DXC's SPIR-V too), the
    reflection said a vector of one (OS9000 on all three targets)."""
    source = (
        "struct S { float a; float1 b; int1 d; float1 c[4]; };\n"
        "RWStructuredBuffer<S> sb;\n"
        "cbuffer CB { float4 x; float1 e; };\n"
        "[numthreads(1,1,1)] void main() { sb[0].a = sb[1].b + sb[1].c[1] + e + sb[1].d; }\n"
    )
    result = _build(tmp_path, source, *_ALL)
    assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
    sb = next(r for r in result.reflection.resources if r.name == "sb")
    assert sb.layout is not None
    kinds = {m.name: m.type.kind for m in sb.layout.members}
    assert kinds["b"] is TypeKind.Scalar and kinds["d"] is TypeKind.Scalar
    for out in result.outputs:
        if out.suffix in (".spv", ".wgsl"):
            assert module_errors(out.suffix, out.data, "s" + out.suffix) == ""


def test_buffer_pointers_are_positioned_errors_on_every_target(tmp_path: Path) -> None:
    """``vk::BufferPointer`` was OS9002 (the SPIR-V reader found a pointer with no buffer
    layout; WGSL's reader a type it cannot parse): now an error per target at the type."""
    source = (
        "struct G { float4 a; float4 b; };\n"
        "struct PC { vk::BufferPointer<G> p; };\n"
        "[[vk::push_constant]] PC pc;\n"
        '[shader("pixel")] float4 P() : SV_Target { return pc.p.Get().b; }\n'
    )
    result = _build(tmp_path, source, *_ALL)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.line, d.column, d.code) for d in errors] == [(2, 13, "OS1003")] * 3
    assert [d.message.split(":")[0] for d in errors] == ["SPIR-V", "Metal", "WGSL"]
    assert all("vk::BufferPointer" in d.message for d in errors)


def test_an_unused_resource_of_an_unknown_type_is_dropped(tmp_path: Path) -> None:
    """A resource of a type the format has no record for (SM 6.7's writable multisampled
    texture; a ray-query scene was one), declared in a vertex shader that never uses it: Slang
    leaves it out of every target's code and builds; oneshader refused it (OS1007). Used, it
    is still OS1007 at its declaration."""
    unused = (
        "RWTexture2DMS<float4> scratch : register(u0);\n"
        "cbuffer U : register(b1) { float4x4 m; };\n"
        '[shader("vertex")] float4 V(float3 p : POSITION) : SV_Position '
        "{ return mul(m, float4(p, 1)); }\n"
    )
    result = _build(tmp_path, unused, *_ALL)
    assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
    assert [r.name for r in result.reflection.resources] == ["U"]
    used = (
        "RWTexture2DMS<float4> scratch : register(u0);\n"
        "RWStructuredBuffer<float4> o : register(u1);\n"
        "[numthreads(1,1,1)] void main() { o[0] = scratch.Load(int2(0, 0), 0); }\n"
    )
    result = _build(tmp_path, used, Target.SpirV)
    errors = [(d.line, d.column, d.code) for d in result.diagnostics if d.is_error]
    assert errors == [(1, 23, "OS1007")]


def test_a_semantic_on_a_struct_parameter_gives_vertex_attributes_on_metal(tmp_path: Path) -> None:
    """``S input : X`` with members of their own semantics and a nested struct (DXC's
    semantic.on-struct): Slang's Metal gave those members ``[[user(...)]]``, no vertex input
    (OS9000); they are ``[[attribute(n)]]`` at the reflection's locations."""
    source = (
        "struct T1 { float2 a; float3 b : BBB; };\n"
        "struct T2 { float2 c; float3 d; };\n"
        "struct S { float h; float1 i : III; T1 j; float4 k : JJJ; T2 l : LLL; };\n"
        '[shader("vertex")] float4 main(S s : X) : SV_Position {\n'
        "    return float4(s.h, s.i, s.j.a) + s.k + float4(s.l.d + s.j.b, s.l.c.x);\n"
        "}\n"
    )
    result = _build(tmp_path, source, *_ALL)
    assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
    inputs = result.reflection.entry_points[0].inputs
    assert [(v.name, v.location) for v in inputs] == [
        ("h", 0),
        ("i", 1),
        ("a", 2),
        ("b", 3),
        ("k", 4),
        ("c", 5),
        ("d", 6),
    ]
    metal = next(o.data.decode() for o in result.outputs if o.suffix == ".metal")
    assert "[[user(" not in metal
    for out in result.outputs:
        assert module_errors(out.suffix, out.data, "s" + out.suffix) == ""


def test_two_stage_inputs_of_one_name_are_a_positioned_error(tmp_path: Path) -> None:
    """Nested structs whose members share a name (``j.a``, ``l.a``): stage variables are named
    by member name in the reflection and the relocation of every target's code, so Slang's one
    location for both stayed in the code (OS9000 on SPIR-V and WGSL); now OS1020 at the second."""
    source = (
        "struct T1 { float2 a; float3 b; };\n"
        "struct T2 { float2 a; float3 e; };\n"
        "struct S { T1 j; T2 l : LLL; };\n"
        '[shader("vertex")] float4 main(S s : X) : SV_Position {\n'
        "    return float4(s.j.a + s.l.a, s.j.b.x, s.l.e.y);\n"
        "}\n"
    )
    result = _build(tmp_path, source, *_ALL)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.line, d.column, d.code) for d in errors] == [(2, 20, "OS1020")]
    assert "two inputs named 'a' (of 'T1' and 'T2')" in errors[0].message


def test_clip_of_a_matrix_builds_on_every_target(tmp_path: Path) -> None:
    """HLSL's ``clip`` takes a matrix too (DXC's intrinsics.clip): Slang's SPIR-V aborted on
    it (OS9001, SIGABRT), and the WGSL and Metal helpers had no matrix overload (E39999)."""
    source = (
        "cbuffer C { float2x3 m; float4 v; };\n"
        '[shader("pixel")] float4 main(float4 p : SV_Position) : SV_Target {\n'
        "    clip(m);\n"
        "    clip(v);\n"
        "    clip(p.x);\n"
        "    return p;\n"
        "}\n"
    )
    for targets in ((Target.SpirV,), _ALL):
        result = _build(tmp_path, source, *targets)
        assert result.ok, [d.format() for d in result.diagnostics]
        for out in result.outputs:
            assert module_errors(out.suffix, out.data, "s" + out.suffix) == ""


def test_a_texture_of_half_texels_is_a_positioned_wgsl_error(tmp_path: Path) -> None:
    """Slang's WGSL failed in its own module (E41400 at hlsl.meta.slang, a path of this
    machine, no position in the shader); SPIR-V and Metal sample it as float."""
    source = (
        "RWStructuredBuffer<float> o;\nTexture2D<half4> t;\n"
        "[numthreads(1,1,1)] void main() { o[0] = t.Load(int3(0, 0, 0)).x; }\n"
    )
    result = _build(tmp_path, source, *_ALL)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.line, d.column, d.code) for d in errors] == [(2, 1, "OS1003")]
    assert errors[0].message.startswith("WGSL: a texture of 16-bit texels (Texture2D<half4>)")
    assert _build(tmp_path, source, Target.SpirV, Target.Msl).ok
    aliased = (
        "typedef float16_t4 F16x4;\ntypedef F16x4 Texel;\nTexture2D<Texel> u;\n"
        "RWStructuredBuffer<float> o;\n"
        "[numthreads(1,1,1)] void main() { o[0] = u.Load(int3(0, 0, 0)).x; }\n"
    )  # FidelityFX's Texture2D<FfxFloat16x4>: a typedef of half (E41400 unpositioned before)
    errors = [d for d in _build(tmp_path, aliased, *_ALL).diagnostics if d.is_error]
    assert [(d.line, d.column, d.code) for d in errors] == [(3, 18, "OS1003")]
    assert "(Texel, a float16_t4)" in errors[0].message


def test_a_constant_buffer_scalar_array_element_passed_on_is_a_wgsl_error(tmp_path: Path) -> None:
    """``asuint(w[i])`` (or any call given the element itself) of ``cbuffer C { float w[4];
    }``, a struct's member there too: Slang's WGSL crashed the compiler (SIGSEGV, OS9001,
    plain Slang alike); it is OS1003 at the use, naming the function. Arithmetic on it and
    type conversions build."""
    source = (
        "struct S { uint u[2]; };\ncbuffer C { float w[4]; S s; };\n"
        "RWStructuredBuffer<uint> o;\n"
        "[numthreads(1,1,1)] void main(uint3 id : SV_DispatchThreadID) {\n"
        "    o[1] = uint(w[id.x]) + uint(sqrt(w[2] * 2));\n"
        "    o[0] = asuint(w[id.x]);\n"
        "}\n"
    )
    result = _build(tmp_path, source, Target.SpirV, Target.Wgsl)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.line, d.column, d.code) for d in errors] == [(6, 19, "OS1003")]
    assert errors[0].message.startswith("WGSL: 'w[...]'") and "'asuint'" in errors[0].message
    assert _build(tmp_path, source, Target.SpirV).ok
    nested = source.replace("asuint(w[id.x])", "max(s.u[id.x], 1u)")
    errors = [d for d in _build(tmp_path, nested, Target.Wgsl).diagnostics if d.is_error]
    assert "'max'" in errors[0].message
    assert [(d.line, d.column, d.code) for d in errors] == [(6, 18, "OS1003")]
    fine = source.replace("o[0] = asuint(w[id.x]);", "")
    assert _build(tmp_path, fine, Target.SpirV, Target.Wgsl).ok


def test_resources_named_as_slang_suffixes_names_are_read_by_their_own_names(
    tmp_path: Path,
) -> None:
    """``rw_img_mip_5`` (FidelityFX's luminance pyramid), which Slang keeps in WGSL and MSL and
    the readers took for Slang's suffix of ``rw_img_mip``: OS9000 on Metal ("code declares
    resource ... that the reflection lacks") and WGSL (the entry's uses); each entry point
    uses exactly its own."""
    source = (
        "RWTexture2D<float> rw_level_1 : register(u1);\n"
        "RWTexture2D<float> rw_level_2 : register(u2);\n"
        "RWTexture2D<float> rw_level : register(u3);\n"
        '[shader("compute")][numthreads(8,8,1)] void A(uint3 id : SV_DispatchThreadID)'
        " { rw_level_1[id.xy] = 1; rw_level[id.xy] = 3; }\n"
        '[shader("compute")][numthreads(8,8,1)] void B(uint3 id : SV_DispatchThreadID)'
        " { rw_level_2[id.xy] = 2; }\n"
    )
    for targets in ((Target.Msl,), (Target.Wgsl,), _ALL):
        result = _build(tmp_path, source, *targets)
        assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
        uses = {e.name: e.uses for e in result.reflection.entry_points}
        if Target.Msl not in targets or len(targets) > 1:
            assert uses == {"A": ("rw_level_1", "rw_level"), "B": ("rw_level_2",)}


def test_methods_that_change_their_object_build(tmp_path: Path) -> None:
    """HLSL methods may assign to their struct's members (``void add(float v) { n += 1; }``);
    Slang's only when ``[mutating]`` (E30047 and E30011 on every target before). A method that
    only reads, and a static one, are left as written."""
    source = (
        "struct Counter {\n"
        "    uint n; float acc[2];\n"
        "    void add(float v) { n += 1; acc[0] = acc[0] + v; }\n"
        "    void reset() { this.n = 0; acc[1] = 0; acc[0] = 0; }\n"
        "    float mean() { return acc[0] / n; }\n"
        "    static float twice(float x) { return 2 * x; }\n"
        "};\n"
        "RWStructuredBuffer<float> o;\n"
        "[numthreads(1,1,1)] void main() {\n"
        "    Counter c; c.reset(); c.add(2); c.add(o[1]);\n"
        "    o[0] = Counter::twice(c.mean());\n"
        "}\n"
    )
    result = _build(tmp_path, source, *_ALL)
    assert result.ok, [d.format() for d in result.diagnostics]
    for out in result.outputs:
        assert module_errors(out.suffix, out.data, "s" + out.suffix) == ""


def test_the_sampler_type_is_a_sampler_state(tmp_path: Path) -> None:
    """``sampler S : register(s0);`` and a ``sampler`` parameter, which DXC takes for
    SamplerState (Diligent's samples): Slang's E30015 (undefined identifier 'sampler') on every
    target before."""
    from oneshader.reflection.model import ResourceTypeKind

    source = (
        "sampler S : register(s0);\nTexture2D<float4> T : register(t0);\n"
        "float4 get(Texture2D<float4> t, sampler s, float2 uv) { return t.Sample(s, uv); }\n"
        '[shader("pixel")] float4 main(float2 uv : TEXCOORD0) : SV_Target '
        "{ return get(T, S, uv); }\n"
    )
    result = _build(tmp_path, source, *_ALL)
    assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
    (s,) = [r for r in result.reflection.resources if r.name == "S"]
    assert s.rtype is ResourceTypeKind.SamplerState
    for out in result.outputs:
        assert module_errors(out.suffix, out.data, "s" + out.suffix) == ""


def test_a_structured_buffer_of_bools_is_a_positioned_wgsl_error(tmp_path: Path) -> None:
    """``RWStructuredBuffer<bool4>`` (DXC's op.vector.swizzle.buffer-store): Slang's WGSL
    declared an array of bools, which naga refuses (an invalid module); OS1003 at the
    declaration, as SPIR-V's. Metal builds it."""
    source = (
        "RWStructuredBuffer<bool4> flags;\n"
        "[numthreads(1,1,1)] void main() { bool3 a = flags[0].xyz; flags[1].xyz = a; }\n"
    )
    errors = [d for d in _build(tmp_path, source, Target.Wgsl).diagnostics if d.is_error]
    assert [(d.line, d.column, d.code) for d in errors] == [(1, 27, "OS1003")]
    assert errors[0].message.startswith("WGSL: 'flags' holds bools")
    assert _build(tmp_path, source, Target.Msl).ok
