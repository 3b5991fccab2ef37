"""Idioms of real DXC-era Vulkan HLSL (issue 10): each builds, and its code says what its
reflection says. The whole-corpus checks (spirv-val, naga, cross-check) cover the corpus files
named here; these tests state what each idiom must give."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from verify_support import compiled

from module_validation import device, disassembled, spirv_errors, wgsl_errors
from oneshader.codegen import render_module
from oneshader.compiler import (
    CompileOptions,
    CompileResult,
    EntryPointSpec,
    compile_file,
    stage_from_name,
)
from oneshader.compiler.patch.spirv import relocate
from oneshader.compiler.verify.crosscheck import read_output, verify
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import StageVariable, Target, TypeLayout

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def _build(
    tmp_path: Path,
    source: str,
    targets: tuple[Target, ...] = ALL,
    entries: tuple[EntryPointSpec, ...] = (),
    name: str = "s.hlsl",
) -> CompileResult:
    (tmp_path / name).write_text(source)
    options = CompileOptions(targets=targets, source_name=name, entry_points=entries)
    return compile_file(str(tmp_path / name), options)


def _ok(result: CompileResult) -> CompileResult:
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def _code(result: CompileResult, target: Target) -> bytes:
    return next(o.data for o in result.outputs if o.target is target)


def _valid(module: bytes) -> None:
    assert spirv_errors(module) == ""


# -- a. `cbuffer ubo { UBO ubo; }` ------------------------------------------------------------


def test_block_named_like_its_member_is_reflected_under_its_own_name() -> None:
    result = _ok(compiled("dxc_blocks.hlsl"))
    refl = result.reflection
    assert [r.name for r in refl.resources] == ["ubo", "fog", "material"]
    assert [p.name for p in refl.push_blocks] == ["pushConsts"]
    ubo = refl.resources[0]
    assert ubo.layout is not None
    assert [m.name for m in ubo.layout.members] == ["ubo"]
    inner = ubo.layout.members[0].type
    assert [m.name for m in inner.members] == ["projection", "model", "tint"]
    # Every target's code declares the blocks under names its reader gives back as the
    # reflection's (SPIR-V: DXC's own names; WGSL/MSL: Slang's name_<n>).
    for out in result.outputs:
        module = read_output(out)
        assert {"ubo", "fog", "material"} <= set(module.resources), out.target
    spirv = disassembled(_code(result, Target.SpirV))
    assert 'OpName %ubo "ubo"' in spirv
    assert '"pushConsts"' in spirv
    assert "ubo_0" not in spirv and "pushConsts_0" not in spirv
    _valid(_code(result, Target.SpirV))
    assert wgsl_errors(_code(result, Target.Wgsl).decode()) == ""


def test_generated_bindings_name_the_block() -> None:
    refl = _ok(compiled("dxc_blocks.hlsl")).reflection
    namespace: dict[str, Any] = {}
    exec(compile(render_module(refl, "dxc_blocks"), "dxc_blocks.py", "exec"), namespace)
    ubo = namespace["resources"].ubo
    assert ubo.name == "ubo" and (ubo.spirv.set, ubo.spirv.binding) == (0, 0)
    assert (ubo.wgsl.set, ubo.wgsl.binding) == (0, 0) and ubo.msl.binding == 0
    assert namespace["push_blocks"].pushConsts.name == "pushConsts"


@pytest.mark.parametrize(
    "decl",
    [
        "cbuffer ubo { float4 ubo; float4 other; }",
        "tbuffer ubo { float4 ubo; float4 other; }",
        "[[vk::push_constant]] cbuffer ubo { float4 ubo; float4 other; }",
        # the name Slang is given instead must not be one the source already spells
        "static const float ubo_0 = 2.0;\ncbuffer ubo { float4 ubo; float4 other; }",
    ],
    ids=["cbuffer", "tbuffer", "push-constant", "name-taken"],
)
def test_every_block_spelling_named_like_its_member_builds(tmp_path: Path, decl: str) -> None:
    source = decl + '\n[shader("pixel")] float4 P() : SV_Target { return ubo * other; }\n'
    targets = ALL if not decl.startswith("tbuffer") else (Target.Msl, Target.Wgsl)
    result = _ok(_build(tmp_path, source, targets))
    names = [r.name for r in result.reflection.resources] + [
        p.name for p in result.reflection.push_blocks
    ]
    assert names == ["ubo"]
    if Target.SpirV in targets:
        _valid(_code(result, Target.SpirV))
    assert wgsl_errors(_code(result, Target.Wgsl).decode()) == ""


@pytest.mark.parametrize(
    ("source", "position", "fragment"),
    [
        (
            "cbuffer ubo { float4 ubo; }\n"
            '[shader("pixel")] float4 P() : SV_Target { return ubo.nothing; }\n',
            (2, 55),
            "nothing",
        ),
        # on the renamed line itself, after the name: the file's column, not Slang's
        (
            "cbuffer ubo : register(b0) { Missing ubo; }\n"
            '[shader("pixel")] float4 P() : SV_Target { return ubo.x; }\n',
            (1, 30),
            "'Missing'",
        ),
    ],
    ids=["next-line", "same-line"],
)
def test_errors_near_a_renamed_block_are_where_the_file_says(
    tmp_path: Path, source: str, position: tuple[int, int], fragment: str
) -> None:
    result = _build(tmp_path, source, (Target.SpirV,))
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert (error.file, error.line, error.column) == ("s.hlsl", *position), error.format()
    assert fragment in error.message and "ubo_0" not in error.message
    assert (
        error.excerpt.splitlines()[-1].index("^")
        == error.excerpt.splitlines()[0].index("|") + 1 + position[1]
    )


# -- b. locations per direction ---------------------------------------------------------------


def _locations(variables: tuple[StageVariable, ...]) -> dict[str, int | None]:
    return {v.name: v.location for v in variables}


def test_input_locations_do_not_move_outputs_of_the_same_name() -> None:
    result = _ok(compiled("gbuffer.hlsl"))
    vs, ps = result.reflection.entry_points
    assert _locations(vs.inputs) == {"Pos": 0, "Normal": 1, "UV": 2}
    assert _locations(vs.outputs) == {"Pos": None, "Normal": 0, "UV": 1, "WorldPos": 2}
    assert _locations(ps.inputs) == {"Pos": None, "Normal": 0, "UV": 1, "WorldPos": 2}
    # each colour output at the attachment of its SV_Target index
    assert _locations(ps.outputs) == {"Position": 0, "Normal": 1, "Albedo": 2}
    for out in result.outputs:
        emitted = read_output(out).entries
        ps_code = next(e for name, e in emitted.items() if name.startswith("PSMain"))
        assert sorted(v.location for v in ps_code.outputs if v.location is not None) == [0, 1, 2]
    _valid(_code(result, Target.SpirV))
    assert wgsl_errors(_code(result, Target.Wgsl).decode()) == ""


def test_crosscheck_refuses_a_location_twice_even_where_code_agrees() -> None:
    result = _ok(compiled("gbuffer.hlsl"))
    refl = result.reflection
    ps = refl.entry_points[1]
    moved = tuple(replace(v, location=0) if v.name == "Normal" else v for v in ps.outputs)
    bad = replace(refl, entry_points=(refl.entry_points[0], replace(ps, outputs=moved)))
    found = verify(bad, [o for o in result.outputs if o.target is Target.Msl][:0])
    assert "reflection: entry 'PSMain' outputs 'Position' and 'Normal' are both at location 0" in (
        found
    )
    assert "reflection: entry 'PSMain' output 'Normal' is SV_Target1 but at location 0" in found
    # the code's side: a module with two outputs at one location is refused on its own
    spirv = next(o for o in result.outputs if o.target is Target.SpirV)
    clashing = relocate(spirv.data, "PSMain", {}, {"Normal": 0})
    found = verify(refl, [replace(spirv, data=clashing)])
    assert any("SPIR-V (.spv): entry 'PSMain' outputs" in m and "location 0" in m for m in found)


def test_an_array_varying_takes_a_location_per_element() -> None:
    result = _ok(compiled("varying_arrays.hlsl"))
    vs, ps = result.reflection.entry_points
    # one variable per location: an array's elements, a matrix's columns
    expected = [
        ("Pos", None),
        ("Normal", 0),
        ("Color", 1),
        ("LightVec", 2),
        ("LightColor", 3),
        ("LightColor", 4),
        ("ViewVec", 5),
        ("TBN", 6),
        ("TBN", 7),
        ("TBN", 8),
        ("LightIntensity", 9),
    ]
    assert [(v.name, v.location) for v in vs.outputs] == expected
    assert [(v.name, v.location) for v in ps.inputs] == expected
    assert {v.components for v in vs.outputs if v.name in ("LightColor", "TBN")} == {3}
    _valid(_code(result, Target.SpirV))
    # WGSL passes them as one vector per location (tests/compiler/test_wide_varyings.py)
    assert wgsl_errors(_code(result, Target.Wgsl).decode()) == ""


@pytest.mark.parametrize(
    ("source", "position", "fragments"),
    [
        (
            "struct I { [[vk::location(0)]] float4 a : A; [[vk::location(0)]] float4 b : B; };\n"
            '[shader("pixel")] float4 P(I i) : SV_Target { return i.a + i.b; }\n',
            (1, 73),
            ["input 'b' and input 'a' are both at location 0"],
        ),
        (
            "struct O { [[vk::location(1)]] float4 c : SV_Target0; };\n"
            '[shader("pixel")] O P() { O o; o.c = 1; return o; }\n',
            (1, 39),
            ["'c' is SV_Target0 but [[vk::location(1)]]", "SV_Target1"],
        ),
        (
            "struct O { [[vk::location(0), vk::index(0)]] float4 a : SV_Target0;\n"
            "           [[vk::location(0), vk::index(1)]] float4 b : SV_Target1; };\n"
            '[shader("pixel")] O P() { O o; o.a = 1; o.b = 0; return o; }\n',
            (2, 53),
            ["'b' is SV_Target1 but [[vk::location(0)]]", "dual-source blending"],
        ),
    ],
    ids=["duplicate-vk-location", "vk-location-on-sv-target", "dual-source-blending"],
)
def test_locations_that_clash_are_positioned_errors(
    tmp_path: Path, source: str, position: tuple[int, int], fragments: list[str]
) -> None:
    result = _build(tmp_path, source)
    errors = [d for d in result.diagnostics if d.is_error]
    assert result.reflection is None and len(errors) == 1, [d.format() for d in errors]
    assert (errors[0].code, errors[0].line, errors[0].column) == ("OS1020", *position)
    for fragment in fragments:
        assert fragment in errors[0].message


# -- d. [[vk::offset]] at every depth ----------------------------------------------------------


def _offsets(layout: TypeLayout | None) -> dict[str, int]:
    assert layout is not None
    return {m.name: m.offset for m in layout.members}


def test_vk_offset_holds_at_every_depth() -> None:
    result = _ok(compiled("vk_offsets.hlsl"))
    refl = result.reflection
    ubo = next(r for r in refl.resources if r.name == "ubo").layout
    assert ubo is not None
    assert _offsets(ubo) == {"distortion": 0, "after": 288, "shading": 304, "lights": 336}
    distortion, _, shading, lights = (m.type for m in ubo.members)
    assert (_offsets(distortion), distortion.size) == ({"alpha": 272}, 288)
    assert _offsets(shading) == {"roughness": 0, "metallic": 8, "tint": 16}
    assert lights.stride == 48 and lights.size == 96
    assert _offsets(lights.element) == {"color": 0, "radius": 32}
    assert ubo.size == 432
    item = next(r for r in refl.resources if r.name == "items").layout
    assert _offsets(item) == {"weight": 0, "extra": 20, "value": 24}
    assert _offsets(refl.push_blocks[0].layout) == {"scale": 0, "bias": 48}
    _valid(_code(result, Target.SpirV))


def test_nested_vk_offset_is_padded_where_a_target_ignores_it(tmp_path: Path) -> None:
    """WGSL has no vk::offset: the member gets padding before it there (issue 11), so the
    nested offset is the same on both targets."""
    source = (
        "struct D { [[vk::offset(272)]] float alpha; };\ncbuffer ubo { D ubo; }\n"
        '[shader("pixel")] float4 P() : SV_Target { return ubo.alpha; }\n'
    )
    for target in (Target.Wgsl, Target.SpirV):
        ubo = _ok(_build(tmp_path, source, (target,))).reflection.resources[0].layout
        assert ubo.size == 288
        assert _offsets(ubo.members[0].type) == {"alpha": 272}


# -- f. hints only where they are the cause ---------------------------------------------------


def test_missing_semicolon_after_return_is_said_where_it_is_missing(tmp_path: Path) -> None:
    source = (
        "RWStructuredBuffer<float> data;\n"
        '[shader("compute")] [numthreads(64, 1, 1)]\n'
        "void main(uint3 id : SV_DispatchThreadID)\n"
        "{\n"
        "    if (id.x >= 100)\n"
        "        return\n"
        "    data[id.x] = data[id.x] * 2.0;\n"
        "}\n"
    )
    result = _build(tmp_path, source)
    (error,) = {(d.line, d.column, d.message) for d in result.diagnostics if d.is_error}
    assert error[:2] == (6, 15)  # just after 'return', not on the next statement
    assert error[2].startswith("expected ';' after 'return'")
    assert "truncat" not in error[2]


def test_a_missing_semicolon_is_said_where_it_is_missing(tmp_path: Path) -> None:
    source = (
        '[shader("pixel")] float4 P(float2 uv : TEXCOORD0) : SV_Target\n'
        "{\n"
        "    float4 c = float4(uv, 0, 1)\n"
        "    c.x = 1;\n"
        "    return c;\n"
        "}\n"
    )
    (error,) = {
        (d.line, d.column, d.message) for d in _build(tmp_path, source).diagnostics if d.is_error
    }
    assert error == (3, 32, "expected ';'")


def test_truncation_advice_only_for_a_truncation(tmp_path: Path) -> None:
    truncating = (
        "cbuffer C { float4x4 m; };\n"
        '[shader("vertex")] float4 V(float4 p : POSITION) : SV_Position\n'
        "{ float4 v = mul((float3x3)m, p); return v; }\n"
    )
    (error,) = [d for d in _build(tmp_path, truncating).diagnostics if d.is_error]
    assert error.code == "E30019" and "DXC truncates implicitly" in error.message
    other = (
        "struct S { float a; };\n"
        '[shader("pixel")] float4 P() : SV_Target { S s; s.a = 1; float4 c = s; return c; }\n'
    )
    (error,) = [d for d in _build(tmp_path, other).diagnostics if d.is_error]
    assert error.code == "E30019" and "truncat" not in error.message


def test_a_scalar_array_after_a_float_is_named_as_an_array(tmp_path: Path) -> None:
    # (passed whole to a function: Metal cannot read it from an array of float4, see
    # test_metal_layouts for the element reads it can)
    source = (
        "cbuffer Light { float4 Direction; float Intensity; float Weights[3]; };\n"
        "float total(float w[3], uint n) { float s = 0; for (uint k = 0; k < n; k++) s += w[k];"
        " return s; }\n"
        '[shader("pixel")] float4 P(float4 p : SV_Position) : SV_Target '
        "{ return Direction * Intensity * total(Weights, uint(p.x)); }\n"
    )
    (error,) = [d for d in _build(tmp_path, source).diagnostics if d.is_error]
    assert (error.code, error.line, error.column) == ("OS2001", 1, 58)
    assert "Light.Weights" in error.message and "the array stride" in error.message
    assert "bool" not in error.message and "padding" not in error.message
    assert "float4 Weights[1] instead of float[3]" in error.message


# -- e. DXC's -Zpr ------------------------------------------------------------------------------

_ZPR = """
cbuffer Params : register(b0)
{
    float4x4 Transform;                   // row-major under -Zpr
    float3x4 Affine;                      // so is this one: 3 rows of float4
    column_major float4x4 Explicit;       // declared: stays column-major
};
RWStructuredBuffer<float4> Out : register(u1);
[shader("compute")] [numthreads(1, 1, 1)]
void CS(uint3 id : SV_DispatchThreadID)
{
    float4 v = float4(1.0, -2.0, 0.5, 3.0);
    Out[0] = mul(Transform, v);
    Out[1] = float4(mul(Affine, v), 0.0);
    Out[2] = mul(Explicit, v);
}
"""


def _packings(result: CompileResult) -> dict[str, str]:
    layout = result.reflection.resources[0].layout
    assert layout is not None
    return {m.name: m.type.packing.name for m in layout.members}


def test_zpr_makes_undeclared_matrices_row_major(tmp_path: Path) -> None:
    (tmp_path / "z.hlsl").write_text(_ZPR)
    default = _ok(compile_file(str(tmp_path / "z.hlsl"), CompileOptions(source_name="z.hlsl")))
    assert set(_packings(default).values()) == {"ColumnMajor"}
    zpr = _ok(
        compile_file(str(tmp_path / "z.hlsl"), CompileOptions(source_name="z.hlsl", row_major=True))
    )
    assert _packings(zpr) == {
        "Transform": "RowMajor",
        "Affine": "RowMajor",
        "Explicit": "ColumnMajor",
    }
    affine = zpr.reflection.resources[0].layout.members[1].type
    assert (affine.size, affine.mstride) == (48, 16)  # three stored rows, not four columns
    assert _packings(zpr) != _packings(default)
    _valid(_code(zpr, Target.SpirV))


@pytest.mark.parametrize("target", [Target.SpirV, Target.Wgsl], ids=lambda t: t.value)
def test_zpr_matrices_written_by_the_reflection_compute_right(
    tmp_path: Path, target: Target
) -> None:
    import numpy as np
    import wgpu
    from test_execution import _dispatch
    from verify_support import pack

    (tmp_path / "z.hlsl").write_text(_ZPR)
    options = CompileOptions(targets=(Target.SpirV, Target.Wgsl), row_major=True)
    result = _ok(compile_file(str(tmp_path / "z.hlsl"), options))
    refl = result.reflection
    rng = np.random.default_rng(3)
    values = {
        "Transform": (rng.integers(-8, 9, (4, 4)) / 4).astype(np.float32),
        "Affine": (rng.integers(-8, 9, (3, 4)) / 4).astype(np.float32),
        "Explicit": (rng.integers(-8, 9, (4, 4)) / 4).astype(np.float32),
    }
    layout = refl.resources[0].layout
    assert layout is not None
    data = bytearray(layout.size)
    pack(layout, {k: v.tolist() for k, v in values.items()}, data)
    dev = device()
    usage = wgpu.BufferUsage
    params = dev.create_buffer_with_data(data=bytes(data), usage=usage.UNIFORM)
    out = dev.create_buffer(size=48, usage=usage.STORAGE | usage.COPY_SRC)
    _dispatch(result, target, {"Params": params, "Out": out}, 1)
    got = np.frombuffer(dev.queue.read_buffer(out), np.float32).reshape(3, 4)
    v = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    np.testing.assert_allclose(got[0], values["Transform"] @ v)
    np.testing.assert_allclose(got[1][:3], values["Affine"] @ v)
    np.testing.assert_allclose(got[2], values["Explicit"] @ v)


# -- c. input attachments --------------------------------------------------------------------


def test_subpass_inputs_are_resources_with_their_attachment() -> None:
    result = _ok(compiled("subpass.hlsl"))
    refl = result.reflection
    inputs = [r for r in refl.resources if r.rtype.name.startswith("SubpassInput")]
    assert [(r.name, r.rtype.name, r.kind.name, r.attachment) for r in inputs] == [
        ("inputPosition", "SubpassInput", "ShaderResource", 0),
        ("inputNormal", "SubpassInput", "ShaderResource", 1),
        ("inputAlbedo", "SubpassInput", "ShaderResource", 2),
        ("inputDepth", "SubpassInput", "ShaderResource", 3),
        ("inputSamples", "SubpassInputMS", "ShaderResource", 4),
    ]
    assert [r.slots[0].binding for r in inputs] == [0, 1, 2, 3, 4]
    depth = next(r for r in inputs if r.name == "inputDepth").layout
    assert depth is not None and depth.kind.name == "Scalar"  # SubpassInput<float>, as declared
    assert next(r for r in refl.resources if r.name == "ubo").attachment is None
    module = _code(result, Target.SpirV)
    _valid(module)
    text = disassembled(module)
    for r in inputs:
        assert f"OpDecorate %{r.name} InputAttachmentIndex {r.attachment}" in text
    # The format carries the attachment; the cross-check compares it with the code.
    again = ReflectionFormat.read(ReflectionFormat.write(refl))
    assert again == refl
    assert b"attachment=3" in ReflectionFormat.write(refl)
    moved = tuple(replace(r, attachment=7) if r.name == "inputDepth" else r for r in refl.resources)
    found = verify(replace(refl, resources=moved), result.outputs)
    assert found == [
        "SPIR-V (.spv): resource 'inputDepth' input attachment index: reflection says 7, "
        "emitted code says 3"
    ]
    namespace: dict[str, Any] = {}
    exec(compile(render_module(refl, "subpass"), "subpass.py", "exec"), namespace)
    generated = namespace["resources"].inputDepth
    assert generated.resource.attachment == 3 and generated.spirv.binding == 3


@pytest.mark.parametrize(
    ("declaration", "targets", "fragments"),
    [
        (
            "[[vk::input_attachment_index(0)]] SubpassInput color;",
            (Target.Msl,),
            ["Metal: 'color' is a SubpassInput", "input attachment"],
        ),
        (
            "[[vk::input_attachment_index(0)]] SubpassInputMS<float4> color;",
            (Target.Wgsl,),
            ["WGSL: 'color' is a SubpassInputMS"],
        ),
        (
            "[[vk::binding(0)]] SubpassInput color;",
            (Target.SpirV,),
            ["needs [[vk::input_attachment_index(i)]]"],
        ),
    ],
    ids=["metal", "wgsl-ms", "no-index"],
)
def test_subpass_input_errors_name_it(
    tmp_path: Path, declaration: str, targets: tuple[Target, ...], fragments: list[str]
) -> None:
    load = "color.SubpassLoad(0)" if "MS" in declaration else "color.SubpassLoad()"
    source = f'{declaration}\n[shader("pixel")] float4 P() : SV_Target {{ return {load}; }}\n'
    result = _build(tmp_path, source, targets)
    (error,) = [d for d in result.diagnostics if d.is_error]
    column = declaration.index(" color;") + 2
    assert (error.code, error.line, error.column) == ("OS1021", 1, column), error.format()
    for fragment in fragments:
        assert fragment in error.message


def test_subpass_inputs_in_the_bindings() -> None:
    from oneshader.bindings.shader import Shader

    refl = _ok(compiled("subpass.hlsl")).reflection
    shader = Shader(refl, "subpass")
    depth = next(b for b in shader.bindings() if b.name == "inputDepth")
    assert (depth.spirv.set, depth.spirv.binding) == (0, 3)
    assert depth.resource is not None and depth.resource.attachment == 3
    with pytest.raises(LookupError, match="built for SpirV only"):
        shader.groups()


def test_attributes_in_one_pair_of_brackets_all_apply(tmp_path: Path) -> None:
    """DXC reads ``[[a(1), b(2)]]`` as two attributes (its subpass-input binding test writes
    them so); each holds, as when written ``[[a(1)]] [[b(2)]]``."""
    source = (
        "[[vk::input_attachment_index(0)]]\nSubpassInput SI0;\n"
        "[[vk::input_attachment_index(1), vk::binding(5)]]\nSubpassInput SI1;\n"
        "[[vk::input_attachment_index(2), vk::binding(5, 3)]]\nSubpassInput SI2;\n"
        '[[vk::binding(7), vk::image_format("rgba8")]] RWTexture2D<float4> Out;\n'
        '[shader("pixel")] float4 P() : SV_Target\n'
        "{ Out[uint2(0, 0)] = SI2.SubpassLoad(); return SI0.SubpassLoad() + SI1.SubpassLoad(); }\n"
    )
    refl = _ok(_build(tmp_path, source, (Target.SpirV,))).reflection
    got = {r.name: (r.slots[0].set, r.slots[0].binding, r.attachment) for r in refl.resources}
    assert got == {  # DXC's numbers (vk.subpass-input.binding)
        "SI0": (0, 0, 0),
        "SI1": (0, 5, 1),
        "SI2": (3, 5, 2),
        "Out": (0, 7, None),
    }
    assert refl.resources[3].format == "rgba8"


# -- f. ray queries ----------------------------------------------------------------------------


def test_acceleration_structures_are_resources_on_spirv_and_metal() -> None:
    result = _ok(compiled("ray_query.hlsl"))
    refl = result.reflection
    got = {
        r.name: (
            r.rtype.name,
            r.kind.name,
            r.layout,
            [(s.target, s.set, s.binding) for s in r.slots],
        )
        for r in refl.resources
        if r.rtype.name == "RaytracingAccelerationStructure"
    }
    metal = {r.name: r.slots[1].binding for r in refl.resources}
    assert got == {  # DXC's numbers: t0 -> binding 0; vk::binding(3, 1) as written
        "scene": (
            "RaytracingAccelerationStructure",
            "ShaderResource",
            None,
            [(Target.SpirV, 0, 0), (Target.Msl, 0, metal["scene"])],
        ),
        "shadowScene": (
            "RaytracingAccelerationStructure",
            "ShaderResource",
            None,
            [(Target.SpirV, 1, 3), (Target.Msl, 0, metal["shadowScene"])],
        ),
    }
    assert not any(d.code == "E41012" for d in result.diagnostics)  # no profile-upgrade warning
    module = _code(result, Target.SpirV)
    _valid(module)
    text = disassembled(module)
    assert "OpCapability RayQueryKHR" in text and "OpTypeAccelerationStructureKHR" in text
    assert "OpDecorate %shadowScene DescriptorSet 1" in text
    # Metal passes a scene in a buffer slot, beside the buffers, each at its own index.
    msl = read_output(next(o for o in result.outputs if o.target is Target.Msl))
    assert "acceleration_structure" in msl.resources["scene"][0].type_text
    assert {msl.resources[n][0].space for n in ("scene", "shadowScene", "Rays")} == {"buffer"}
    assert len({metal[n] for n in ("scene", "shadowScene", "Rays", "hitDistance")}) == 4
    assert ReflectionFormat.read(ReflectionFormat.write(refl)) == refl
    moved = tuple(
        replace(r, slots=(replace(r.slots[0], binding=9), *r.slots[1:])) if r.name == "scene" else r
        for r in refl.resources
    )
    assert verify(replace(refl, resources=moved), result.outputs) == [
        "SPIR-V (.spv): resource 'scene' set/binding: reflection says set 0 binding 9, emitted "
        "code says set 0 binding 0"
    ]


def test_an_unused_scene_builds_everywhere_and_webgpu_binds_the_rest(tmp_path: Path) -> None:
    """A vertex shader that declares the frame's scene beside its constants without tracing
    (one descriptor set layout for all stages, as Vulkan samples write it): Slang drops the
    scene, so the shader builds for WGSL too; WebGPU has no such binding, so its bind groups
    leave it out."""
    from oneshader.bindings.shader import Shader

    source = (
        "[[vk::binding(0)]] RaytracingAccelerationStructure scene;\n"
        "struct Frame { float4x4 viewProj; };\n"
        "[[vk::binding(1)]] ConstantBuffer<Frame> frame;\n"
        "float4 main(float3 p : POSITION) : SV_Position\n"
        "{ return mul(frame.viewProj, float4(p, 1.0)); }\n"
    )
    vertex = (EntryPointSpec("main", stage_from_name("vertex")),)
    refl = _ok(_build(tmp_path, source, ALL, vertex)).reflection
    scene = next(r for r in refl.resources if r.name == "scene")
    assert scene.stages == () and {s.target for s in scene.slots} == set(ALL)
    shader = Shader(refl, "s")
    assert [b.name for b in shader.group_bindings(0)] == ["frame"]
    assert [e["binding"] for e in shader.bind_group_layout_entries(0)] == [1]
    pipeline_layout = shader.create_pipeline_layout(device())
    assert pipeline_layout is not None
