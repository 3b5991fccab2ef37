"""compile_file on the shared corpus: every record and attribute of the reflection, every error."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from module_validation import wgsl_errors
from oneshader.compiler import (
    CompileOptions,
    CompileResult,
    EntryPointSpec,
    compile_file,
    stage_from_name,
)
from oneshader.diagnostics import Severity
from oneshader.reflection.model import (
    BuiltIn,
    DeviceFeatures,
    EntryPoint,
    Interpolation,
    MatrixPacking,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Stage,
    Target,
    TypeKind,
    VertexFormat,
)

CORPUS = Path(__file__).parent.parent / "corpus"
MANIFEST = tomllib.loads((CORPUS / "manifest.toml").read_text())
TARGETS = {"spirv": Target.SpirV, "msl": Target.Msl, "wgsl": Target.Wgsl}
ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def _entries(items: list[str]) -> tuple[EntryPointSpec, ...]:
    out = []
    for item in items:
        name, stage = item.split(":")
        out.append(EntryPointSpec(name, stage_from_name(stage)))
    return tuple(out)


@functools.cache
def build(file: str, targets: tuple[Target, ...] | None = None) -> CompileResult:
    entry = next((s for s in MANIFEST["shader"] if s["file"] == file), None)
    if targets is None:
        assert entry is not None
        targets = tuple(TARGETS[t] for t in entry["targets"])
    options = CompileOptions(
        targets=targets,
        source_name=f"shaders/{file}",
        entry_points=_entries(entry.get("entries", []) if entry else []),
    )
    return compile_file(str(CORPUS / file), options)


def ok(file: str, targets: tuple[Target, ...] | None = None) -> ShaderReflection:
    result = build(file, targets)
    errors = [d.format() for d in result.diagnostics if d.is_error]
    assert result.ok, errors
    assert result.reflection is not None
    return result.reflection


def res(refl: ShaderReflection, name: str) -> Resource:
    return next(r for r in refl.resources if r.name == name)


def entry(refl: ShaderReflection, name: str) -> EntryPoint:
    return next(e for e in refl.entry_points if e.name == name)


def slot(r: Resource, target: Target) -> tuple[int, int]:
    s = next(s for s in r.slots if s.target is target)
    return s.set, s.binding


def code(file: str, target: Target, targets: tuple[Target, ...] | None = None) -> str:
    out = next(o for o in build(file, targets).outputs if o.target is target)
    return out.data.decode()


# -- the corpus builds ------------------------------------------------------------------------


@pytest.mark.parametrize("shader", MANIFEST["shader"], ids=lambda s: s["file"])
def test_corpus_shader_builds_for_its_targets(shader: dict[str, object]) -> None:
    refl = ok(str(shader["file"]))
    targets = tuple(TARGETS[str(t)] for t in shader["targets"])  # type: ignore[attr-defined]
    assert refl.targets == targets
    assert refl.source == f"shaders/{shader['file']}"
    result = build(str(shader["file"]))
    suffixes = {o.target: o.suffix for o in result.outputs}
    assert suffixes == {
        t: {Target.SpirV: ".spv", Target.Msl: ".metal", Target.Wgsl: ".wgsl"}[t] for t in targets
    }
    assert all(o.data for o in result.outputs)
    if Target.SpirV in targets:
        spv = next(o.data for o in result.outputs if o.target is Target.SpirV)
        assert spv[:4] == b"\x03\x02\x23\x07"
    assert refl.entry_points, "no entry points reflected"


@pytest.mark.parametrize("case", MANIFEST["error"], ids=lambda e: e["file"])
def test_corpus_error_is_positioned(case: dict[str, object]) -> None:
    targets = tuple(TARGETS[str(t)] for t in case["targets"])  # type: ignore[attr-defined]
    options = CompileOptions(
        targets=targets,
        source_name=str(case["file"]),
        entry_points=_entries(list(case.get("entries", []))),  # type: ignore[call-overload]
    )
    result = compile_file(str(CORPUS / str(case["file"])), options)
    assert result.reflection is None
    assert not result.ok
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors
    first = errors[0]
    assert first.file == case["file"]
    assert (first.line, first.column) == (case["line"], case["column"]), first.format()
    for fragment in case["contains"]:  # type: ignore[attr-defined]
        assert fragment in first.message, first.format()
    if first.line:
        assert f"{first.line:>4} |" in first.excerpt


def test_slang_duplicate_diagnostics_are_removed() -> None:
    result = compile_file(str(CORPUS / "errors/syntax.hlsl"), CompileOptions(source_name="s.hlsl"))
    errors = [d for d in result.diagnostics if d.is_error]
    assert len(errors) == 1
    assert errors[0].code == "E20001"
    assert "expected ';'" in errors[0].message


def test_a_span_that_restates_the_title_is_not_repeated(tmp_path: Path) -> None:
    """Slang's title line "undefined identifier" and its span "undefined identifier 'b'." become
    one message, not "undefined identifier: undefined identifier 'b'."."""
    src = tmp_path / "u.hlsl"
    src.write_text('[shader("pixel")]\nfloat4 main() : SV_Target { return b; }\n')
    result = compile_file(str(src), CompileOptions(source_name="u.hlsl"))
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert (error.line, error.column) == (2, 36)
    assert error.message == "undefined identifier 'b'."


# -- resources --------------------------------------------------------------------------------


def test_sprite_cbuffer_matrix_texture_sampler() -> None:
    refl = ok("sprite.hlsl")
    frame = res(refl, "Frame")
    assert (frame.kind, frame.rtype, frame.hlsl, frame.count) == (
        ResourceKind.ConstantBuffer,
        ResourceTypeKind.ConstantBuffer,
        "",
        1,
    )
    assert frame.stages == (Stage.Vertex, Stage.Pixel)
    assert frame.layout is not None and frame.layout.name == "Frame"
    members = {m.name: m for m in frame.layout.members}
    vp = members["ViewProjection"].type
    assert (vp.kind, vp.rows, vp.cols, vp.mstride, vp.packing) == (
        TypeKind.Matrix,
        4,
        4,
        16,
        MatrixPacking.ColumnMajor,
    )
    assert [(m.name, m.offset) for m in frame.layout.members] == [
        ("ViewProjection", 0),
        ("Tint", 64),
        ("Offset", 80),
        ("Scale", 88),
        ("Time", 92),
    ]
    assert frame.layout.size == 96
    tex = res(refl, "SpriteTexture")
    assert (tex.kind, tex.rtype, tex.hlsl) == (
        ResourceKind.ShaderResource,
        ResourceTypeKind.Texture2D,
        "Texture2D<float4>",
    )
    assert tex.layout is not None and (tex.layout.kind, tex.layout.scalar, tex.layout.rows) == (
        TypeKind.Vector,
        ScalarKind.Float,
        4,
    )
    samp = res(refl, "SpriteSampler")
    assert (samp.kind, samp.rtype, samp.layout) == (
        ResourceKind.Sampler,
        ResourceTypeKind.SamplerState,
        None,
    )
    assert tex.stages == samp.stages == (Stage.Pixel,)
    # Declaration order per target; Metal counts buffers, textures and samplers separately.
    assert [slot(r, Target.SpirV) for r in refl.resources] == [(0, 0), (0, 1), (0, 2)]
    assert [slot(r, Target.Wgsl) for r in refl.resources] == [(0, 0), (0, 1), (0, 2)]
    assert [slot(r, Target.Msl) for r in refl.resources] == [(0, 0), (0, 0), (0, 0)]


def test_structured_buffer_layout_is_the_element() -> None:
    refl = ok("compute_layout.hlsl")
    items = res(refl, "Items")
    assert (
        items.rtype is ResourceTypeKind.StructuredBuffer
        and items.kind is ResourceKind.ShaderResource
    )
    assert items.hlsl == "StructuredBuffer<Item>"
    assert items.layout is not None and items.layout.name == "Item"
    assert [(m.name, m.offset) for m in items.layout.members] == [
        ("Position", 0),
        ("Uv", 16),
        ("Id", 24),
        ("Pad", 28),
    ]
    assert items.layout.size == 32
    results = res(refl, "Results")
    assert (
        results.rtype is ResourceTypeKind.RWStructuredBuffer
        and results.kind is ResourceKind.UnorderedAccess
    )
    params = res(refl, "Params")
    assert params.layout is not None
    assert {m.name: m.offset for m in params.layout.members}["Transform"] == 48


def test_every_resource_type_is_reflected() -> None:
    refl = ok("resources_all.hlsl")
    rtypes = {r.rtype for r in refl.resources}
    # (tbuffer.hlsl has the TextureBuffer; subpass.hlsl the input attachments, pixel-only;
    # ray_query.hlsl the acceleration structures, which WGSL cannot build)
    elsewhere = {
        ResourceTypeKind.TextureBuffer,
        ResourceTypeKind.SubpassInput,
        ResourceTypeKind.SubpassInputMS,
        ResourceTypeKind.RaytracingAccelerationStructure,
    }
    assert rtypes == set(ResourceTypeKind) - elsewhere
    assert res(refl, "TypedBlock").hlsl == "ConstantBuffer<CbData>"
    assert res(refl, "TypedBlock").layout.name == "CbData"  # type: ignore[union-attr]
    assert res(refl, "Raw").layout is None
    assert res(refl, "RWTypedBuf").layout.scalar is ScalarKind.UInt  # type: ignore[union-attr]
    assert res(refl, "RWTex3D").format == "r32ui"
    assert res(refl, "Tex2D").format is None
    # Nothing is annotated, so DXC's one pass in creation order applies: each resource takes
    # the next binding of set 0 and an append/consume buffer's counter the one right after it.
    spirv = [slot(r, Target.SpirV) for r in refl.resources]
    appended, consumed = res(refl, "Appended"), res(refl, "Consumed")
    counters = [(s.set, s.binding) for r in (appended, consumed) for s in r.counters]
    a, c = slot(appended, Target.SpirV), slot(consumed, Target.SpirV)
    assert counters == [(0, a[1] + 1), (0, c[1] + 1)] and c[1] == a[1] + 2
    assert sorted(spirv + counters) == [(0, n) for n in range(28)]
    spv = next(o.data for o in build("resources_all.hlsl").outputs if o.target is Target.SpirV)
    from oneshader.compiler.emitted.spirv import read_spirv

    emitted = read_spirv(spv).resources
    assert [(x.set, x.binding) for x in emitted["Appended"] if x.role == "counter"] == [counters[0]]
    tb = ok("tbuffer.hlsl")
    assert res(tb, "Palette").rtype is ResourceTypeKind.TextureBuffer
    assert res(tb, "Palette").kind is ResourceKind.ShaderResource


def test_image_format_from_the_attribute() -> None:
    refl = ok("postprocess.hlsl")
    dest = res(refl, "Destination")
    assert (dest.rtype, dest.format, dest.hlsl) == (
        ResourceTypeKind.RWTexture2D,
        "rgba8",
        "RWTexture2D<float4>",
    )
    assert "rgba8unorm" in code("postprocess.hlsl", Target.Wgsl)


def test_matrix_packing_row_and_column_major() -> None:
    refl = ok("matrices.hlsl")
    layout = res(refl, "Transforms").layout
    assert layout is not None
    m = {x.name: x.type for x in layout.members}
    assert m["World"].packing is MatrixPacking.ColumnMajor
    assert m["View"].packing is MatrixPacking.RowMajor
    assert m["Projection"].packing is MatrixPacking.ColumnMajor
    assert (m["Skin"].rows, m["Skin"].cols, m["Skin"].packing, m["Skin"].mstride) == (
        3,
        4,
        MatrixPacking.RowMajor,
        16,
    )
    assert (m["Normal"].rows, m["Normal"].cols, m["Normal"].size) == (4, 3, 48)
    inst = res(refl, "Instances").layout
    assert inst is not None
    assert [x.type.packing for x in inst.members] == [
        MatrixPacking.RowMajor,
        MatrixPacking.ColumnMajor,
    ]


def test_nested_structs_and_arrays_of_structs() -> None:
    refl = ok("structs.hlsl")
    scene = res(refl, "Scene").layout
    assert scene is not None
    character = scene.members[0]
    assert (character.name, character.type.kind, character.type.name) == (
        "Character",
        TypeKind.Struct,
        "Rig",
    )
    bones = character.type.members[0].type
    assert (bones.kind, bones.length, bones.stride) == (TypeKind.Array, 4, 80)
    assert bones.element is not None and bones.element.name == "Bone"
    materials = scene.members[1]
    assert (materials.type.length, materials.type.stride) == (3, 32)
    assert materials.offset == character.type.size


# -- push blocks and specialization constants ------------------------------------------------


def test_push_block_slots_per_target_and_emitted_wgsl_binding() -> None:
    refl = ok("particles_portable.hlsl")
    (push,) = refl.push_blocks
    assert push.name == "Push"
    assert push.layout is not None and [m.name for m in push.layout.members] == [
        "DeltaTime",
        "Count",
        "Wind",
    ]
    targets = {s.target: (s.set, s.binding) for s in push.slots}
    assert Target.SpirV not in targets
    assert targets[Target.Msl] == (0, 0)
    group, binding = targets[Target.Wgsl]
    assert group == 1 + max(slot(r, Target.Wgsl)[0] for r in refl.resources)
    wgsl = code("particles_portable.hlsl", Target.Wgsl)
    assert re.search(rf"@binding\({binding}\) @group\({group}\) var<uniform> Push(_\d+)? :", wgsl)
    assert push.stages == (Stage.Compute,)
    assert entry(refl, "Step").pushuse == ("Push",)


def test_spec_constants_ids_defaults_and_target_names() -> None:
    refl = ok("particles_portable.hlsl")
    specs = {s.name: s for s in refl.spec_constants}
    damping, wind = specs["Damping"], specs["UseWind"]
    assert (damping.id, damping.scalar, damping.default) == (3, ScalarKind.Float, 0x3E800000)
    assert (wind.id, wind.scalar, wind.default) == (4, ScalarKind.Bool, 1)
    slots = {s.target: s for s in damping.slots}
    assert (slots[Target.SpirV].index, slots[Target.SpirV].name) == (3, "Damping")
    assert slots[Target.Wgsl].index == 3 and re.fullmatch(
        r"Damping(_\d+)?", slots[Target.Wgsl].name
    )
    assert f"override {slots[Target.Wgsl].name} : f32" in code(
        "particles_portable.hlsl", Target.Wgsl
    )
    assert slots[Target.Msl].index == 3
    assert "[[function_constant(3)]]" in code("particles_portable.hlsl", Target.Msl)
    assert slots[Target.Msl].name in code("particles_portable.hlsl", Target.Msl)
    assert set(entry(refl, "Step").specuse) == {"Damping", "UseWind"}
    uint_spec = {s.name: s for s in ok("particles.hlsl").spec_constants}["MaxAge"]
    assert (uint_spec.id, uint_spec.scalar, uint_spec.default) == (0, ScalarKind.UInt, 100)


# -- entry points -----------------------------------------------------------------------------


def test_vertex_inputs_formats_offsets_stride_and_locations() -> None:
    refl = ok("vertex_formats.hlsl")
    vs = entry(refl, "MeshVS")
    located = [v for v in vs.inputs if v.location is not None]
    assert [(v.name, v.location, v.format, v.offset) for v in located] == [
        ("Position", 0, VertexFormat.Float32x3, 0),
        ("Weight", 1, VertexFormat.Float32, 12),
        ("Uv0", 2, VertexFormat.Float32x2, 16),
        ("Uv1", 3, VertexFormat.Float32x2, 24),
        ("Color", 4, VertexFormat.Float32x4, 32),
        ("Joints", 5, VertexFormat.Uint32x4, 48),
        ("Cell", 6, VertexFormat.Sint32x2, 64),
        ("Material", 7, VertexFormat.Uint32, 72),
    ]
    assert vs.stride == 76
    assert [(v.semantic, v.index) for v in located[:3]] == [
        ("POSITION", 0),
        ("BLENDWEIGHT", 0),
        ("TEXCOORD", 0),
    ]
    inst = next(v for v in vs.inputs if v.builtin is BuiltIn.InstanceId)
    assert (inst.location, inst.format, inst.semantic) == (
        None,
        VertexFormat.None_,
        "SV_InstanceID",
    )
    # WGSL numbers vertex inputs by declaration order like SPIR-V and Metal (oneshader rewrites).
    wgsl = code("vertex_formats.hlsl", Target.Wgsl)
    for v in located:
        assert re.search(rf"@location\({v.location}\) {v.name}(_\d+)? :", wgsl), v.name


def test_interpolation_modifiers_and_builtins() -> None:
    refl = ok("vertex_formats.hlsl")
    ps = entry(refl, "MeshPS")
    interp = {v.name: v.interp for v in ps.inputs}
    assert interp["Material"] is Interpolation.Flat
    assert interp["Uv"] is Interpolation.Linear
    assert interp["Depth"] is Interpolation.NoPerspective
    assert interp["Normal"] is Interpolation.Default
    assert next(v for v in ps.inputs if v.name == "Position").builtin is BuiltIn.Position
    assert next(v for v in ps.inputs if v.name == "front").builtin is BuiltIn.FrontFacing
    assert [(v.semantic, v.index, v.location) for v in ps.outputs] == [
        ("SV_Target", 0, 0),
        ("SV_Target", 1, 1),
    ]
    assert all(v.format is VertexFormat.None_ for v in ps.inputs)
    assert ps.stride == 0


def test_compute_workgroup_and_stage_builtins() -> None:
    refl = ok("multi_entry.hlsl")
    assert entry(refl, "Clear").workgroup == (64, 1, 1)
    acc = entry(refl, "Accumulate")
    assert acc.workgroup == (8, 8, 1)
    assert [v.builtin for v in acc.inputs] == [BuiltIn.DispatchThreadId, BuiltIn.GroupIndex]
    assert entry(refl, "FullscreenVS").workgroup == (0, 0, 0)
    assert entry(refl, "FullscreenVS").inputs[0].builtin is BuiltIn.VertexId


def test_uses_say_what_each_entry_point_touches() -> None:
    refl = ok("multi_entry.hlsl")
    assert set(entry(refl, "Clear").uses) == {"Globals", "Data"}
    assert set(entry(refl, "Accumulate").uses) == {"Globals", "Data", "Source"}
    assert entry(refl, "FullscreenVS").uses == ()
    assert entry(refl, "FlatPS").uses == ("Globals",)
    assert res(refl, "Source").stages == (Stage.Compute,)
    assert res(refl, "Globals").stages == (Stage.Pixel, Stage.Compute)


def test_features_from_spirv_capabilities() -> None:
    half = entry(ok("half_types.hlsl"), "Convert").features
    assert DeviceFeatures.Float16 in half
    assert DeviceFeatures.Int64 not in half
    wide = entry(ok("wide_types.hlsl"), "Accumulate").features
    assert {DeviceFeatures.Int64, DeviceFeatures.Float64, DeviceFeatures.Int16} <= set(
        DeviceFeatures(wide)
    )
    assert entry(ok("sprite.hlsl"), "VSMain").features == DeviceFeatures(0)


def test_half_layout_and_min_precision_types() -> None:
    refl = ok("half_types.hlsl")
    layout = res(refl, "Input").layout
    assert layout is not None
    assert [(m.name, m.offset, m.type.scalar) for m in layout.members] == [
        ("Color", 0, ScalarKind.Float16),
        ("Uv", 8, ScalarKind.Float16),
        ("Weight", 12, ScalarKind.Float16),
        ("Pad", 14, ScalarKind.Float16),
    ]
    assert "enable f16;" in code("half_types.hlsl", Target.Wgsl)


def test_entry_points_given_by_the_caller_and_stage_aliases() -> None:
    refl = ok("nomarkup.hlsl")
    assert [(e.name, e.stage, e.workgroup) for e in refl.entry_points] == [
        ("main", Stage.Compute, (64, 1, 1))
    ]
    for alias, stage in [
        ("vs", Stage.Vertex),
        ("Fragment", Stage.Pixel),
        ("ps", Stage.Pixel),
        ("CS", Stage.Compute),
    ]:
        assert stage_from_name(alias) is stage
    with pytest.raises(ValueError, match="unknown shader stage 'geometry'"):
        stage_from_name("geometry")


def test_includes_are_dependencies_and_diagnostics_name_them(tmp_path: Path) -> None:
    result = build("includes.hlsl")
    deps = [Path(d) for d in result.dependencies]
    assert deps[0] == (CORPUS / "includes.hlsl").resolve()
    assert set(deps[1:]) == {
        (CORPUS / "inc/common.hlsli").resolve(),
        (CORPUS / "inc/math.hlsli").resolve(),
    }
    assert res(ok("includes.hlsl"), "Lighting").layout.name == "Lighting"  # type: ignore[union-attr]
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "bad.hlsli").write_text("float4 Broken() { return undefined_name; }\n")
    (tmp_path / "main.hlsl").write_text(
        '#include "inc/bad.hlsli"\n[shader("compute")][numthreads(1,1,1)] void M() {}\n'
    )
    bad = compile_file(str(tmp_path / "main.hlsl"), CompileOptions(source_name="shaders/main.hlsl"))
    assert not bad.ok
    assert {d.file for d in bad.diagnostics if d.is_error} == {"shaders/inc/bad.hlsli"}
    assert str((tmp_path / "inc" / "bad.hlsli").resolve()) in bad.dependencies


def test_hlsl_as_written_not_canonical() -> None:
    refl = ok("registers.hlsl")
    assert res(refl, "Albedo").hlsl == "Texture2D<float4>"
    assert res(refl, "Instances").hlsl == "StructuredBuffer<float4>"
    assert res(refl, "Camera").hlsl == ""


def test_outputs_are_deterministic_and_hold_no_paths() -> None:
    a = compile_file(str(CORPUS / "sprite.hlsl"), CompileOptions(source_name="shaders/sprite.hlsl"))
    b = compile_file(str(CORPUS / "sprite.hlsl"), CompileOptions(source_name="shaders/sprite.hlsl"))
    assert a.outputs == b.outputs and a.reflection == b.reflection
    for out in a.outputs:
        assert str(CORPUS).encode() not in out.data


# -- warnings, missing compiler, laziness ----------------------------------------------------


def test_importing_the_compiler_does_not_load_slang() -> None:
    code_ = (
        "import sys, oneshader.compiler as c, oneshader.compiler.api; v = c.compiler_version(); "
        "import oneshader.compiler.slang.capi as s; "
        "print(v, s._LIBRARY is None, 'slangpy' in sys.modules, "
        "'importlib.metadata' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code_],  # -S: no .pth file imports importlib.metadata
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)),
    )
    version, not_loaded, slangpy, metadata = out.stdout.split()
    assert re.fullmatch(
        r"slang-2026\.12\+slangpy-0\.43\.1\+oneshader-compiler-\d+\.[0-9a-f]{12}", version
    )
    assert (not_loaded, slangpy) == ("True", "False")
    assert metadata == "False"  # every build asks for the version: ~20 ms of imports saved


def test_missing_slangpy_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from oneshader.compiler.slang import capi as _slang

    monkeypatch.setattr(_slang, "_LIBRARY", None)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "slangpy" else real(n, *a)
    )
    result = compile_file(str(CORPUS / "sprite.hlsl"), CompileOptions(source_name="sprite.hlsl"))
    assert not result.ok
    (d,) = result.diagnostics
    assert d.severity is Severity.ERROR
    assert "pip install 'oneshader[compiler]'" in d.message


def test_compared_texture_is_a_wgsl_depth_texture() -> None:
    refl = ok("resources_portable.hlsl")
    assert res(refl, "Shadow").rtype is ResourceTypeKind.SamplerComparisonState
    assert res(refl, "Depth").hlsl == "Texture2D<float>"
    wgsl = code("resources_portable.hlsl", Target.Wgsl)
    assert re.search(r"var Depth(_\d+)? : texture_depth_2d;", wgsl)
    assert re.search(r"var Tex2D(_\d+)? : texture_2d<f32>;", wgsl)


def test_compared_and_sampled_texture_is_a_wgsl_error(tmp_path: Path) -> None:
    (tmp_path / "s.hlsl").write_text(
        "Texture2D<float> Depth;\nSamplerState S;\nSamplerComparisonState C;\n"
        "RWStructuredBuffer<float> Out;\n"
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 id : SV_DispatchThreadID)\n'
        "{ Out[0] = Depth.SampleCmpLevelZero(C, float2(0, 0), 0.5) + "
        "Depth.SampleLevel(S, float2(0, 0), 0); }\n"
    )
    result = compile_file(str(tmp_path / "s.hlsl"), CompileOptions(source_name="s.hlsl"))
    (err,) = [d for d in result.diagnostics if d.is_error]
    assert (err.code, err.line, err.column) == ("OS1012", 1, 18)
    assert "WGSL" in err.message and "'Depth'" in err.message
    spirv = compile_file(str(tmp_path / "s.hlsl"), CompileOptions(targets=(Target.SpirV,)))
    assert spirv.ok


def test_a_compared_texture_passed_to_functions_is_a_wgsl_depth_texture(tmp_path: Path) -> None:
    """A shadow map passed down two functions and compared on the parameter (MiniEngine's
    ``GetDirectionalShadow(coord, texShadow)``): the global and each parameter are WGSL depth
    textures (naga refused the module: a comparison on a ``texture_2d<f32>``); a colour
    texture passed to a function stays one."""
    (tmp_path / "s.hlsl").write_text(
        "Texture2D<float> Shadow;\nTexture2D<float4> Albedo;\nSamplerComparisonState C;\n"
        "SamplerState S;\n"
        "float shadow(float3 p, Texture2D<float> t)\n"
        "{ return t.SampleCmpLevelZero(C, p.xy, p.z); }\n"
        "float light(float3 p, Texture2D<float> tex) { return 0.5 * shadow(p, tex); }\n"
        "float4 tint(Texture2D<float4> t, float2 uv) { return t.Sample(S, uv); }\n"
        '[shader("pixel")] float4 P(float3 p : TEXCOORD0) : SV_Target\n'
        "{ return tint(Albedo, p.xy) * light(p, (Shadow)); }\n"
    )
    result = compile_file(str(tmp_path / "s.hlsl"), CompileOptions(source_name="s.hlsl"))
    assert result.ok, [d.format() for d in result.diagnostics]
    wgsl = next(o.data.decode() for o in result.outputs if o.target is Target.Wgsl)
    assert re.search(r"var Shadow(_\d+)? : texture_depth_2d;", wgsl)
    assert len(re.findall(r"\w+ : texture_depth_2d\b", wgsl)) == 3, wgsl
    assert re.search(r"var Albedo(_\d+)? : texture_2d<f32>;", wgsl)
    assert wgsl_errors(wgsl) == ""
    assert result.reflection is not None and res(result.reflection, "Shadow").depth


@pytest.mark.parametrize(
    ("source", "target", "position", "fragments"),
    [
        (
            "Texture2D<float4> Tex[4];\nSamplerState S;\n"
            '[shader("pixel")] float4 P(float2 uv : TEXCOORD0) : SV_Target '
            "{ return Tex[1].Sample(S, uv); }\n",
            Target.Wgsl,
            (1, 19),
            ["WGSL", "arrays of resources", "'Tex'"],
        ),
        (
            "struct L { float4 c; };\nConstantBuffer<L> Lights[4];\nRWStructuredBuffer<float4> O;\n"
            '[shader("compute")][numthreads(1,1,1)] void M() { O[0] = Lights[1].c; }\n',
            Target.Msl,
            (2, 19),
            ["Metal", "arrays of resources", "'Lights'"],
        ),
    ],
    ids=["texture-array-wgsl", "buffer-array-metal"],
)
def test_more_positioned_errors(
    tmp_path: Path,
    source: str,
    target: Target,
    position: tuple[int, int],
    fragments: list[str],
) -> None:
    (tmp_path / "s.hlsl").write_text(source)
    result = compile_file(
        str(tmp_path / "s.hlsl"), CompileOptions(targets=(target,), source_name="s.hlsl")
    )
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors and result.reflection is None
    assert (errors[0].line, errors[0].column) == position, errors[0].format()
    for fragment in fragments:
        assert fragment in errors[0].message
    assert compile_file(str(tmp_path / "s.hlsl"), CompileOptions(targets=(Target.SpirV,))).ok == (
        target is not Target.SpirV
    )


@pytest.mark.parametrize(
    ("body", "use", "member", "hint"),
    [
        # Metal's bool is a byte: no padding gives a bool3's components SPIR-V's bytes
        ("float4 A; float B; bool3 V;", "B + V.y", "C.V", "aligned differently per target"),
        ("float W[8];", "sum8(W)", "C.W", "float4 W[2] instead of float[8]"),
    ],
)
def test_non_portable_layouts_say_how_to_fix_them(
    tmp_path: Path, body: str, use: str, member: str, hint: str
) -> None:
    line = f"cbuffer C {{ {body} }};"
    (tmp_path / "s.hlsl").write_text(
        f"{line}\nRWStructuredBuffer<float> O;\n"
        "float sum8(float a[8]) { a[uint(O[2]) % 8] += 1; float s = 0;"
        " for (uint k = 0; k < 8; k++) s += a[k]; return s; }\n"
        f'[shader("compute")][numthreads(1,1,1)] void M() {{ O[0] = {use}; }}\n'
    )
    options = CompileOptions(targets=(Target.SpirV, Target.Msl), source_name="s.hlsl")
    result = compile_file(str(tmp_path / "s.hlsl"), options)
    (err,) = [d for d in result.diagnostics if d.is_error]
    assert err.code == "OS2001" and err.message.startswith(f"{member}: not portable")
    assert "SpirV" in err.message and "Msl" in err.message and hint in err.message
    name = member.split(".")[1]
    match = re.search(rf"\b{name}\b(?=[\[;,])", line)
    assert match is not None
    column = 1 + match.start()
    assert (err.line, err.column) == (1, column)


def test_no_targets_is_a_usage_error() -> None:
    result = compile_file(
        str(CORPUS / "sprite.hlsl"), CompileOptions(targets=(), source_name="s.hlsl")
    )
    (err,) = result.diagnostics
    assert (err.code, err.file, result.reflection) == ("OS1000", "s.hlsl", None)


def test_unreadable_file_is_an_error(tmp_path: Path) -> None:
    result = compile_file(str(tmp_path / "absent.hlsl"), CompileOptions(source_name="absent.hlsl"))
    (err,) = result.diagnostics
    assert err.is_error and err.file == "absent.hlsl" and "cannot read" in err.message


def test_slang_errors_of_one_target_name_it(tmp_path: Path) -> None:
    (tmp_path / "c.hlsl").write_text(
        "struct O { float4 p : SV_Position; uint layer : SV_RenderTargetArrayIndex; };\n"
        '[shader("vertex")] O V(float4 p : POSITION) { O o; o.p = p; o.layer = 1; return o; }\n'
    )
    result = compile_file(str(tmp_path / "c.hlsl"), CompileOptions(source_name="c.hlsl"))
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.code, d.line) for d in errors] == [("E55202", 1)]  # the unpositioned twin is gone
    assert errors[0].message.startswith("WGSL: ")
    spirv = compile_file(
        str(tmp_path / "c.hlsl"), CompileOptions(targets=(Target.SpirV, Target.Msl))
    )
    assert spirv.ok


def test_clip_distance_is_a_builtin_output(tmp_path: Path) -> None:
    """On every target (WGSL's clip_distances: tests/compiler/test_clip_distances.py)."""
    (tmp_path / "c.hlsl").write_text(
        "struct O { float4 p : SV_Position; float clip : SV_ClipDistance0; };\n"
        '[shader("vertex")] O V(float4 p : POSITION) { O o; o.p = p; o.clip = p.x; return o; }\n'
    )
    result = compile_file(str(tmp_path / "c.hlsl"), CompileOptions(source_name="c.hlsl"))
    assert result.ok
    clip = result.reflection.entry_points[0].outputs[1]  # type: ignore[union-attr]
    assert (clip.builtin, clip.semantic, clip.location) == (
        BuiltIn.ClipDistance,
        "SV_ClipDistance",
        None,
    )


def test_sixteen_bit_vertex_formats_and_the_missing_one(tmp_path: Path) -> None:
    (tmp_path / "h.hlsl").write_text(
        "struct I { float4 p : POSITION; half2 uv : TEXCOORD0; half4 c : COLOR0; };\n"
        '[shader("vertex")] float4 V(I i) : SV_Position { return i.p + float4(i.c) + i.uv.x; }\n'
    )
    refl = compile_file(
        str(tmp_path / "h.hlsl"), CompileOptions(targets=(Target.SpirV,))
    ).reflection
    assert refl is not None
    (v,) = refl.entry_points
    assert [(x.format, x.offset) for x in v.inputs] == [
        (VertexFormat.Float32x4, 0),
        (VertexFormat.Float16x2, 16),
        (VertexFormat.Float16x4, 20),
    ]
    assert v.stride == 28
    (tmp_path / "h.hlsl").write_text(
        "struct I { float4 p : POSITION; half3 n : NORMAL; };\n"
        '[shader("vertex")] float4 V(I i) : SV_Position { return i.p + float4(i.n, 1); }\n'
    )
    bad = compile_file(
        str(tmp_path / "h.hlsl"), CompileOptions(targets=(Target.SpirV,), source_name="h.hlsl")
    )
    (err,) = [d for d in bad.diagnostics if d.is_error]
    assert (err.code, err.file, err.line, err.column) == ("OS1014", "h.hlsl", 1, 39)
    assert "half3" in err.message


def test_warnings_oneshader_answers_itself_are_not_repeated() -> None:
    # registers.hlsl: D3D registers without vk::binding and a t1/s1 pair (Slang warns E39029 and
    # E39001); nomarkup.hlsl: an entry point called main, which Metal renames (E40100).
    assert build("registers.hlsl").diagnostics == ()
    assert build("nomarkup.hlsl").diagnostics == ()


def test_metal_only_uses_come_from_a_hidden_compile(tmp_path: Path) -> None:
    # MSL hands every resource to every entry point; a tbuffer also rules out the SPIR-V
    # fallback, so WGSL says what each entry point reads.
    (tmp_path / "t.hlsl").write_text(
        "tbuffer P { float4 c; };\ncbuffer Q { float4 d; };\n"
        "RWStructuredBuffer<float4> O;\nRWStructuredBuffer<float4> R;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { O[0] = c; }\n'
        '[shader("compute")][numthreads(1,1,1)] void N() { R[0] = d; }\n'
    )
    result = compile_file(str(tmp_path / "t.hlsl"), CompileOptions(targets=(Target.Msl,)))
    assert result.ok and [o.target for o in result.outputs] == [Target.Msl]
    assert result.reflection is not None
    assert {e.name: e.uses for e in result.reflection.entry_points} == {
        "M": ("P", "O"),
        "N": ("Q", "R"),
    }


# -- DXC's $Globals, tail padding, WGSL's vec4-slot arrays ---------------------------------------


def test_loose_globals_are_one_constant_buffer_named_globals() -> None:
    r = ok("globals.hlsl")
    g = res(r, "$Globals")
    assert (g.kind, g.rtype, g.hlsl, g.count) == (
        ResourceKind.ConstantBuffer,
        ResourceTypeKind.ConstantBuffer,
        "",
        1,
    )
    assert g.layout is not None and g.layout.name == "$Globals"
    members = {m.name: (m.offset, m.type.kind) for m in g.layout.members}
    assert members == {
        "WorldViewProj": (0, TypeKind.Matrix),
        "Tint": (64, TypeKind.Vector),
        "Time": (80, TypeKind.Scalar),
        "Scroll": (88, TypeKind.Vector),
    }
    assert g.layout.size == 96
    # Created at its first member, so between the register()ed Sprite and the sampler after it.
    assert [x.name for x in r.resources] == ["Sprite", "$Globals", "Linear"]
    assert slot(g, Target.SpirV) == (0, 1) and slot(res(r, "Linear"), Target.SpirV) == (0, 2)
    assert slot(g, Target.Wgsl) == (0, 1) and slot(g, Target.Msl) == (0, 0)
    assert "$Globals" in entry(r, "VsMain").uses and "$Globals" in entry(r, "PsMain").uses
    # DXC's name in the SPIR-V module; Slang's globalParams at the reflection's slot in WGSL.
    assert b"$Globals" in next(o.data for o in build("globals.hlsl").outputs if o.suffix == ".spv")
    assert re.search(
        r"@binding\(1\) @group\(0\) var<uniform> globalParams_\d+ :",
        code("globals.hlsl", Target.Wgsl),
    )
    # oneshader reflects them itself: Slang's "implicit global shader parameter" is not repeated.
    assert not build("globals.hlsl").diagnostics


def test_globals_take_their_binding_in_dxc_order(tmp_path: Path) -> None:
    """As DXC: [[vk::binding]] and register() first, then every unannotated resource in
    declaration order at the lowest free binding of set 0, $Globals where its first member is."""
    (tmp_path / "s.hlsl").write_text(
        "[[vk::binding(0)]] Texture2D A;\n"
        "float4 G1;\n"
        "cbuffer CB : register(b1) { float4 c; };\n"
        "SamplerState S;\n"
        "float G2;\n"
        "RWStructuredBuffer<float> O : register(u3);\n"
        '[shader("compute")][numthreads(1,1,1)] void M() '
        "{ O[0] = G1.x + G2 + c.y + A.SampleLevel(S, float2(0, 0), 0).x; }\n"
    )
    result = compile_file(str(tmp_path / "s.hlsl"), CompileOptions(source_name="s.hlsl"))
    assert result.ok, [d.format() for d in result.diagnostics]
    r = result.reflection
    assert r is not None
    got = {x.name: slot(x, Target.SpirV) for x in r.resources}
    assert got == {"A": (0, 0), "$Globals": (0, 2), "CB": (0, 1), "S": (0, 4), "O": (0, 3)}
    g = res(r, "$Globals")
    assert g.layout is not None and [(m.name, m.offset) for m in g.layout.members] == [
        ("G1", 0),
        ("G2", 16),
    ]


def test_a_non_portable_loose_global_is_positioned_at_its_declaration(tmp_path: Path) -> None:
    (tmp_path / "s.hlsl").write_text(
        "float4 A;\nfloat W[3];\nRWStructuredBuffer<float> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 i : SV_DispatchThreadID) '
        "{ float w[3] = W; w[i.x % 3] += 1; O[0] = w[1] + A.x; }\n"
    )  # (copied whole: Metal cannot hold it as float4s, as it does an array read by element)
    result = compile_file(str(tmp_path / "s.hlsl"), CompileOptions(source_name="s.hlsl"))
    (err,) = [d for d in result.diagnostics if d.is_error]
    assert err.code == "OS2001" and (err.line, err.column) == (2, 7)
    assert err.message.startswith("$Globals.W: not portable: the array stride is 16")


def test_generated_bindings_name_globals_validly(tmp_path: Path) -> None:
    """`oneshader generate` on a reflection holding $Globals gives an importable module."""
    from oneshader.reflection.format import ReflectionFormat

    r = ok("globals.hlsl")
    (tmp_path / "globals.reflection").write_bytes(ReflectionFormat.write(r))
    out = subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "generate", "globals.reflection", "-o", "py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    module = next((tmp_path / "py").glob("globals*.py"))
    probe = (
        "import importlib, sys; sys.path.insert(0, '.'); "
        f"m = importlib.import_module('py.{module.stem}'); "
        "print(m.SHADER.reflection.resources[1].name)"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "$Globals"


@pytest.mark.parametrize(
    ("source", "sizes"),
    [
        ("cbuffer A { float a; };", {"A": 16}),
        ("cbuffer A { float4 v; float2 u; };", {"A": 32}),
        ("struct P { float4 v; float2 u; };\nConstantBuffer<P> A;", {"A": 32}),
        ("struct S { float b; };\ncbuffer A { float4 x; S s; };", {"A": 32}),
        ("struct P { float a; };\nConstantBuffer<P> A;", {"A": 16}),
    ],
    ids=["scalar", "tail", "ConstantBuffer", "nested-struct", "ConstantBuffer-scalar"],
)
def test_constant_buffers_may_differ_in_tail_padding(
    tmp_path: Path, source: str, sizes: dict[str, int]
) -> None:
    """Metal's constant buffers are smaller than std140's only after the last member: portable,
    and the reflection records the largest size (a buffer valid on every target)."""
    (tmp_path / "s.hlsl").write_text(
        f"{source}\nRWStructuredBuffer<float> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { O[0] = 1; }\n'
    )
    result = compile_file(str(tmp_path / "s.hlsl"), CompileOptions(source_name="s.hlsl"))
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    for name, size in sizes.items():
        layout = res(result.reflection, name).layout
        assert layout is not None and layout.size == size


def test_push_blocks_may_differ_in_tail_padding(tmp_path: Path) -> None:
    (tmp_path / "s.hlsl").write_text(
        "struct P { float4 v; float2 u; };\n[[vk::push_constant]] P Push;\n"
        'RWStructuredBuffer<float> O;\n[shader("compute")][numthreads(1,1,1)] void M() '
        "{ O[0] = Push.u.y; }\n"
    )
    result = compile_file(str(tmp_path / "s.hlsl"), CompileOptions(source_name="s.hlsl"))
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    (push,) = result.reflection.push_blocks
    assert push.layout is not None and push.layout.size == 32


def test_structured_buffer_elements_must_still_agree_in_size(tmp_path: Path) -> None:
    """A structured buffer's element size is its stride: Metal's element struct is given
    std430's (an aligned float3 where Slang writes packed_float3; an array of float3, 12 bytes
    apart in Slang's Metal, with aligned elements)."""
    (tmp_path / "s.hlsl").write_text(
        "struct E { float3 p; };\nRWStructuredBuffer<E> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { O[0].p = float3(1, 2, 3); }\n'
    )
    result = compile_file(str(tmp_path / "s.hlsl"), CompileOptions(source_name="s.hlsl"))
    assert result.reflection is not None
    (o,) = result.reflection.resources
    assert o.layout is not None and (o.layout.size, o.layout.align) == (16, 16)
    (tmp_path / "s.hlsl").write_text(
        "struct E { float3 p[2]; };\nRWStructuredBuffer<E> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { O[0].p[1] = float3(1, 2, 3); }\n'
    )
    result = compile_file(str(tmp_path / "s.hlsl"), CompileOptions(source_name="s.hlsl"))
    assert result.reflection is not None, [d.format() for d in result.diagnostics]
    (o,) = result.reflection.resources
    assert o.layout is not None and (o.layout.size, o.layout.members[0].type.stride) == (32, 16)


def test_scalar_arrays_in_wgsl_vec4_slots_are_not_a_mismatch() -> None:
    r = ok("scalar_arrays.hlsl")
    layout = res(r, "Weights").layout
    assert layout is not None
    arrays = {m.name: m.type for m in layout.members if m.type.kind is TypeKind.Array}
    assert {n: (t.stride, t.element.kind if t.element else None) for n, t in arrays.items()} == {
        "W": (16, TypeKind.Scalar),
        "I": (16, TypeKind.Scalar),
        "U": (16, TypeKind.Scalar),
        "V": (16, TypeKind.Vector),
        "T": (16, TypeKind.Vector),
    }
    assert "array<vec4<f32>, i32(3)>" in code("scalar_arrays.hlsl", Target.Wgsl)


# -- source rewrites in included files -----------------------------------------------------------

_VS_INCLUDE = """struct VsOut
{
    float4 Position : SV_Position;
    linear float2 Uv : TEXCOORD0;
    [[vk::builtin("PointSize")]] float Size : PSIZE;
};
"""
_VS_MAIN = """#include "inc/v.hlsli"
[shader("vertex")]
VsOut VsMain(uint id : SV_VertexID)
{
    VsOut o;
    o.Position = float4(0, 0, 0, 1);
    o.Uv = float2(id, 0);
    o.Size = 1.0;
    return o;
}
"""


def test_rewrites_apply_to_included_files(tmp_path: Path) -> None:
    """vk::builtin and `linear` in a struct of an include are rewritten as in the main file."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "v.hlsli").write_text(_VS_INCLUDE)
    (tmp_path / "main.hlsl").write_text(_VS_MAIN)
    options = CompileOptions(targets=(Target.SpirV, Target.Msl), source_name="shaders/main.hlsl")
    result = compile_file(str(tmp_path / "main.hlsl"), options)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    (vs,) = result.reflection.entry_points
    outs = {v.name: v for v in vs.outputs}
    assert outs["Size"].builtin is BuiltIn.PointSize
    assert outs["Uv"].interp is Interpolation.Linear
    metal = next(o.data.decode() for o in result.outputs if o.target is Target.Msl)
    assert "[[point_size]]" in metal and "no_perspective" not in metal
    for o in result.outputs:  # the inlined text's #line paths reach no output
        assert str(tmp_path).encode() not in o.data
    assert str(tmp_path / "inc" / "v.hlsli") in result.dependencies


def test_errors_in_an_inlined_include_point_into_it(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "v.hlsli").write_text(
        _VS_INCLUDE + "\n\nfloat Bad() { return undefined_thing; }\n"
    )
    (tmp_path / "main.hlsl").write_text(_VS_MAIN + "float Worse() { return also_undefined; }\n")
    options = CompileOptions(targets=(Target.Msl,), source_name="shaders/main.hlsl")
    result = compile_file(str(tmp_path / "main.hlsl"), options)
    errors = {(d.file, d.line, d.column) for d in result.diagnostics if d.is_error}
    assert errors == {("shaders/inc/v.hlsli", 9, 22), ("shaders/main.hlsl", 11, 24)}


def test_counters_used_and_declared_in_an_include(tmp_path: Path) -> None:
    """IncrementCounter in an include (declared there, included twice under #pragma once, itself
    including a file by a name relative to it) gets the counter buffer on SPIR-V, and is a
    positioned error in the include for WGSL."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "helpers.hlsli").write_text("uint Twice(uint v) { return v * 2u; }\n")
    (tmp_path / "inc" / "counted.hlsli").write_text(
        "#pragma once\n"
        '#include "helpers.hlsli"\n'
        "RWStructuredBuffer<uint> Items;\n"
        "uint Push(uint v)\n"
        "{\n"
        "    uint i = Items.IncrementCounter();\n"
        "    Items[i] = Twice(v);\n"
        "    return i;\n"
        "}\n"
    )
    (tmp_path / "main.hlsl").write_text(
        '#include "inc/counted.hlsli"\n'
        '#include "inc/counted.hlsli"\n'
        "RWStructuredBuffer<uint> Other;\n"
        '[shader("compute")][numthreads(1,1,1)]\n'
        "void M(uint3 id : SV_DispatchThreadID) { Other[0] = Push(id.x); }\n"
    )
    spirv = CompileOptions(targets=(Target.SpirV,), source_name="main.hlsl")
    result = compile_file(str(tmp_path / "main.hlsl"), spirv)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    items = res(result.reflection, "Items")
    assert [(s.set, s.binding) for s in items.slots] == [(0, 0)]
    # DXC: Other is the next unannotated resource, the RW counter (created at first use) last.
    assert slot(res(result.reflection, "Other"), Target.SpirV) == (0, 1)
    assert [(s.set, s.binding) for s in items.counters] == [(0, 2)]
    assert b"Items.counter" in result.outputs[0].data

    # WGSL: the companion Items_counter (declared in the include) at the same group/binding.
    wgsl = CompileOptions(targets=(Target.Wgsl,), source_name="main.hlsl")
    result = compile_file(str(tmp_path / "main.hlsl"), wgsl)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    items = res(result.reflection, "Items")
    assert [(s.target, s.set, s.binding) for s in items.counters] == [(Target.Wgsl, 0, 2)]
    code = result.outputs[0].data.decode()
    assert re.search(r"@binding\(2\) @group\(0\) var<storage, read_write> Items_counter\b", code)


def test_bools_in_buffers_are_uint_on_wgsl(tmp_path: Path) -> None:
    """WGSL has no bool in buffers (naga refused Slang's module; then an OS1003): the WGSL
    holds a uint (its reflection still says Bool, as the source and SPIR-V's)."""
    (tmp_path / "s.hlsl").write_text(
        "struct E { float a; bool2 b; };\ncbuffer C { float4 X; bool B; };\nbool G;\n"
        "RWStructuredBuffer<E> O; [[vk::constant_id(0)]] const bool K = false;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { O[0].b = bool2(B, G && K); }\n'
    )
    layouts = {}
    for target in (Target.SpirV, Target.Wgsl):
        options = CompileOptions(targets=(target,), source_name="s.hlsl")
        result = compile_file(str(tmp_path / "s.hlsl"), options)
        assert result.ok, [d.format() for d in result.diagnostics]
        assert result.diagnostics == ()  # not Slang's warnings about the conversions made
        assert result.reflection is not None
        layouts[target] = [(r.name, r.layout) for r in result.reflection.resources]
        if target is Target.Wgsl:
            code = result.outputs[0].data.decode()
            assert re.search(r"\bb_\d+ : vec2<u32>", code)
            assert "override K : bool" in code  # a spec constant is no buffer's
    assert layouts[Target.SpirV] == layouts[Target.Wgsl]


@pytest.mark.parametrize(
    ("source", "position", "fragments"),
    [
        ("cbuffer C { float4 X; half H[2]; };", (1, 28), ["C.H", "vec8<f16>"]),
        (
            "struct T { half h[2]; float4 p; };\ncbuffer C { float4 X; T S; };",
            (1, 17),
            ["C.S.h", "vec8<f16>"],
        ),
    ],
    ids=["half-array", "half-array-nested"],  # bools: test_bools_in_buffers_are_uint_on_wgsl
)
def test_what_slangs_wgsl_cannot_hold_in_a_buffer_is_positioned(
    tmp_path: Path, source: str, position: tuple[int, int], fragments: list[str]
) -> None:
    """Slang emits these into WGSL modules that are not WGSL (naga rejects them): a positioned
    error at the member instead of an internal one."""
    (tmp_path / "s.hlsl").write_text(
        f"{source}\nRWStructuredBuffer<float> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { O[0] = 1; }\n'
    )
    options = CompileOptions(targets=(Target.SpirV, Target.Wgsl), source_name="s.hlsl")
    result = compile_file(str(tmp_path / "s.hlsl"), options)
    (err,) = [d for d in result.diagnostics if d.is_error]
    assert (err.code, err.line, err.column) == ("OS1003", *position)
    assert err.message.startswith("WGSL: ") and all(f in err.message for f in fragments)
    spirv = CompileOptions(targets=(Target.SpirV,), source_name="s.hlsl")
    assert compile_file(str(tmp_path / "s.hlsl"), spirv).ok  # a WGSL limit only


def test_a_wgsl_only_build_reads_f16_from_the_module(tmp_path: Path) -> None:
    (tmp_path / "s.hlsl").write_text(
        "cbuffer C { float4 X; half H; };\nRWStructuredBuffer<float> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { O[0] = X.x + float(H); }\n'
    )
    options = CompileOptions(targets=(Target.Wgsl,), source_name="s.hlsl")
    result = compile_file(str(tmp_path / "s.hlsl"), options)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    assert DeviceFeatures.Float16 in result.reflection.entry_points[0].features


MAIN = '[shader("compute")][numthreads(1,1,1)] void M() {}\n'


@pytest.mark.parametrize(
    ("data", "line", "col", "message"),
    [
        (b"// caf\xe9\n" + MAIN.encode(), 1, 7, "not UTF-8: byte 0xe9"),
        (
            b"\n\n// \xc3\xa9t\xc3\xa9 \xff\n" + MAIN.encode(),
            3,
            8,
            "byte 0xff",
        ),
        ("// hi\n".encode("utf-16"), 1, 1, "the file is UTF-16: save it as UTF-8"),
    ],
)
def test_a_source_that_is_not_utf8_is_a_positioned_error(
    tmp_path: Path, data: bytes, line: int, col: int, message: str
) -> None:
    (tmp_path / "m.hlsl").write_bytes(data)
    result = compile_file(str(tmp_path / "m.hlsl"), CompileOptions(source_name="s/m.hlsl"))
    (d,) = result.diagnostics
    assert (d.file, d.line, d.column, d.code) == ("s/m.hlsl", line, col, "OS1040")
    assert message in d.message


def test_an_include_that_is_not_utf8_names_its_own_position(tmp_path: Path) -> None:
    (tmp_path / "inc.hlsli").write_bytes(b"float f() { return 1; }\n// \xe9\n")
    (tmp_path / "m.hlsl").write_text('#include "inc.hlsli"\n' + MAIN)
    result = compile_file(str(tmp_path / "m.hlsl"), CompileOptions(source_name="s/m.hlsl"))
    (d,) = result.diagnostics
    assert (d.file, d.line, d.column, d.code) == ("s/inc.hlsli", 2, 4, "OS1040")


def test_includes_outside_the_project_are_named_by_their_full_path(tmp_path: Path) -> None:
    """Never by a bare name a project file could have: ``#include "/etc/passwd"`` was shown
    as ``passwd:1:5``."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "bad.hlsli").write_text("float4 Broken() { return undefined_name; }\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "m.hlsl").write_text('#include "../outside/bad.hlsli"\n' + MAIN)
    result = compile_file(str(project / "m.hlsl"), CompileOptions(source_name="m.hlsl"))
    files = {d.file for d in result.diagnostics if d.is_error}
    assert files == {(outside / "bad.hlsli").resolve().as_posix()}


def test_absolute_includes_are_refused_unless_an_include_folder_holds_them(
    tmp_path: Path,
) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "ok.hlsli").write_text("float one() { return 1; }\n")
    (tmp_path / "m.hlsl").write_text(f'#include "{inc / "ok.hlsli"}"\n' + MAIN)
    refused = compile_file(str(tmp_path / "m.hlsl"), CompileOptions(source_name="m.hlsl"))
    (d,) = refused.diagnostics
    assert (d.file, d.line, d.column, d.code) == ("m.hlsl", 1, 11, "OS1041")
    assert "absolute include" in d.message
    allowed = CompileOptions(source_name="m.hlsl", include_dirs=(str(inc),))
    assert compile_file(str(tmp_path / "m.hlsl"), allowed).ok


@pytest.mark.parametrize("odd", ["a\tb", "c\nd"])
def test_tabs_and_newlines_in_file_names_keep_positions(tmp_path: Path, odd: str) -> None:
    """Slang's machine-readable diagnostics separate fields by tabs and messages by newlines;
    a file name holding either still yields the file, line and column."""
    folder = tmp_path / odd
    folder.mkdir()
    main = folder / f"m{odd}.hlsl"
    main.write_text('[shader("compute")][numthreads(1,1,1)] void M() { int x = ; }\n')
    (d,) = {(d.file, d.line, d.column) for d in build_at(main, "s/m.hlsl").diagnostics}
    assert d == ("s/m.hlsl", 1, 59)
    (folder / "inc.hlsli").write_text("float g() { return undefined_x; }\n")
    main.write_text('#include "inc.hlsli"\n' + MAIN)
    (d,) = {(d.file, d.line, d.column) for d in build_at(main, "s/m.hlsl").diagnostics}
    assert d == ("s/inc.hlsli", 1, 20)


def build_at(path: Path, name: str) -> CompileResult:
    return compile_file(str(path), CompileOptions(source_name=name))
