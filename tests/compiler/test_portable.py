"""One source for SPIR-V, WGSL and Metal where the targets can express it: real DXC-era idioms
(vk::offset, packed float3 layouts, clip, ...) built for every target, run where they can run
(SPIR-V and WGSL on the software adapter) and read back from the emitted MSL; a positioned
error, naming the construct and the target, where a target truly lacks it."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from verify_support import CORPUS, dispatch, pack, render

from module_validation import device
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.compiler.emitted.msl import read_msl
from oneshader.reflection.model import ShaderReflection, Target, TypeLayout

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def _build(path: Path, targets: tuple[Target, ...] = ALL, name: str = "") -> CompileResult:
    return compile_file(str(path), CompileOptions(targets=targets, source_name=name or path.name))


def _ok(path: Path, targets: tuple[Target, ...] = ALL) -> CompileResult:
    result = _build(path, targets)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def _errors(tmp_path: Path, source: str, targets: tuple[Target, ...] = ALL) -> list[str]:
    path = tmp_path / "s.hlsl"
    path.write_text(source)
    result = _build(path, targets, "s.hlsl")
    assert not result.ok
    return [d.format() for d in result.diagnostics if d.is_error]


def _code(result: CompileResult, target: Target) -> str:
    return next(o.data.decode() for o in result.outputs if o.target is target)


def _offsets(layout: TypeLayout | None) -> dict[str, int]:
    assert layout is not None
    return {m.name: m.offset for m in layout.members}


def _run_wgsl(result: CompileResult, uniforms: dict[str, bytes], count: int) -> list[float]:
    """Dispatch the single compute entry of ``result``'s WGSL once, each uniform block (resource
    or push block, by name) bound at its reflected WGSL slot; ``count`` floats of ``Out``."""
    import wgpu

    r = result.reflection
    assert r is not None
    dev = device()
    usage = wgpu.BufferUsage
    out = dev.create_buffer(size=4 * count, usage=usage.STORAGE | usage.COPY_SRC)
    blocks = {**{x.name: x for x in r.resources}, **{p.name: p for p in r.push_blocks}}
    bound: list[tuple[Any, Any]] = [(blocks["Out"], out)]
    for name, data in uniforms.items():
        bound.append((blocks[name], dev.create_buffer_with_data(data=data, usage=usage.UNIFORM)))
    module = dev.create_shader_module(code=_code(result, Target.Wgsl))
    (entry,) = r.entry_points
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": entry.name}
    )
    groups: dict[int, list[dict[str, Any]]] = {}
    for record, buf in bound:
        slot = next(s for s in record.slots if s.target is Target.Wgsl)
        groups.setdefault(slot.set, []).append(
            {"binding": slot.binding, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        )
    dispatch(pipeline, groups, 1)
    return list(struct.unpack(f"<{count}f", bytes(dev.queue.read_buffer(out))))


def _packed(layout: TypeLayout | None, value: dict[str, Any]) -> bytes:
    assert layout is not None
    data = bytearray(layout.size)
    pack(layout, value, data)
    return bytes(data)


# -- [[vk::offset]] and packed float3: one layout on every target -------------------------------


def test_vk_offset_and_float3_scalar_layouts_run_from_the_reflection() -> None:
    result = _ok(CORPUS / "exec" / "offsets_compute.hlsl")
    r: ShaderReflection = result.reflection
    (push,) = r.push_blocks
    frame = next(x for x in r.resources if x.name == "Frame")
    assert _offsets(push.layout) == {"Roughness": 64, "NumSamples": 68}
    assert _offsets(frame.layout) == {
        "ViewProj": 0,
        "LightDir": 64,
        "Ambient": 76,
        "Tint": 80,
        "Flags": 92,
    }
    # Metal's own code says the same offsets (packed_float3 where a scalar follows a float3).
    msl = read_msl(_code(result, Target.Msl).encode())
    (mpush,) = msl.resources["Push"]
    (mframe,) = msl.resources["Frame"]
    assert {
        k: v for k, v in _offsets(mpush.layout).items() if k in ("Roughness", "NumSamples")
    } == (_offsets(push.layout))
    assert _offsets(mframe.layout) == _offsets(frame.layout)
    assert "packed_float3 LightDir" in _code(result, Target.Msl)
    matrix = [[float(10 * row + col) for col in range(4)] for row in range(4)]
    frame_bytes = _packed(
        frame.layout,
        {
            "ViewProj": matrix,
            "LightDir": [0.5, -1.5, 2.0],
            "Ambient": 0.25,
            "Tint": [2.0, 4.0, 8.0],
            "Flags": 7,
        },
    )
    push_bytes = _packed(push.layout, {"Roughness": 0.75, "NumSamples": 1024})
    got = _run_wgsl(result, {"Frame": frame_bytes, "Push": push_bytes}, 7)
    assert got == [0.75, 1024.0, 12.0, -1.5, 0.25, 0.5 * 2 - 1.5 * 4 + 2.0 * 8, 7.0]


def test_a_push_block_placed_below_or_between_what_a_target_allows_is_positioned(
    tmp_path: Path,
) -> None:
    """Padding moves members up only, by whole scalars: an offset below where the member lands
    anyway, or not a multiple of its alignment, is OS1010 at the attribute, per target; SPIR-V,
    which honours the attribute itself, is not refused."""
    body = (
        "struct P {{ float4 A; [[vk::offset({n})]] float4 B; }};\n"
        "[[vk::push_constant]] P Push;\nRWStructuredBuffer<float4> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() {{ O[0] = Push.A + Push.B; }}\n'
    )
    for n, why in (
        (8, "so no padding can place it lower"),
        (40, "not a multiple of its alignment"),
    ):
        errors = _errors(tmp_path, body.format(n=n), (Target.Msl, Target.Wgsl))
        assert len(errors) == 2, errors
        for target, error in zip(("Metal", "WGSL"), errors, strict=True):
            assert error.startswith(
                f"s.hlsl:1:24: error OS1010: {target}: [[vk::offset({n})]] on 'B'"
            )
            assert why in error
    path = tmp_path / "s.hlsl"
    path.write_text(body.format(n=48))
    result = _ok(path, ALL)
    (push,) = result.reflection.push_blocks
    assert _offsets(push.layout) == {"A": 0, "B": 48}


def test_vk_offset_in_a_nested_struct_is_padded_too(tmp_path: Path) -> None:
    """A member at 272 as the only member of a struct inside a cbuffer (an eye-distortion
    setting): WGSL and Metal place it there with padding; the host writes byte 272."""
    path = tmp_path / "s.hlsl"
    path.write_text(
        "struct UBO { [[vk::offset(272)]] float Alpha; };\n"
        "cbuffer ubo_cb { UBO ubo; };\nRWStructuredBuffer<float> Out;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { Out[0] = ubo.Alpha; }\n'
    )
    result = _ok(path, (Target.Msl, Target.Wgsl))
    ubo = next(x for x in result.reflection.resources if x.name == "ubo_cb")
    assert ubo.layout is not None
    (member,) = ubo.layout.members
    assert _offsets(member.type) == {"Alpha": 272}
    data = bytearray(ubo.layout.size)
    struct.pack_into("<f", data, 272, 0.625)
    assert _run_wgsl(result, {"ubo_cb": bytes(data)}, 1) == [0.625]


def test_metal_vector_members_packed_or_aligned_in_the_code() -> None:
    """Reads of a member made packed_float3 are converted back to float3 (Metal's vector
    functions are not written for packed types); writes and addresses are left alone."""
    from oneshader.compiler.patch.msl import metal_vectors

    msl = (
        "struct In_0\n{\n    float4 a_0;\n    float3 v_0;\n    float s_0;\n};\n"
        "struct Frame_0\n{\n    array<In_0, int(2)> items_0;\n    packed_float4 w_0;\n};\n"
        "[[kernel]] void k(Frame_0 device* F [[buffer(0)]])\n{\n"
        "    float3 x = dot((&F->items_0[int(1)])->v_0, F->items_0[0].v_0.xyz)"
        " * F->items_0[0].v_0;\n"
        "    F->items_0[1].v_0 = x;\n    F->items_0[1].v_0.y += 1.0;\n"
        "    thread float3* p = &F->items_0[0].v_0;\n}\n"
    )
    out = metal_vectors(msl, "F", [(("items", "v"), True), (("w",), False)])
    assert "    packed_float3 v_0;\n" in out and "    float4 w_0;\n" in out
    assert (
        "float3 x = dot(float3((&F->items_0[int(1)])->v_0), float3(F->items_0[0].v_0).xyz)"
        " * float3(F->items_0[0].v_0);"
    ) in out
    assert "    F->items_0[1].v_0 = x;\n    F->items_0[1].v_0.y += 1.0;\n" in out
    assert "&F->items_0[0].v_0;" in out


# -- what Slang refuses without naming it ---------------------------------------------------------


def test_an_unavailable_construct_is_named_at_its_use_for_each_target(tmp_path: Path) -> None:
    """Slang's E36107 points at the entry point and names nothing; its note names the construct
    at the call. The error is there, per target that lacks it."""
    errors = _errors(
        tmp_path,
        "RWStructuredBuffer<float> O; RWTexture2D<float4> T;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() {\n'
        "    uint status; O[0] = T.Load(int2(0, 0), status).x;\n}\n",
    )
    assert [e.split(": error ")[0] for e in errors] == ["s.hlsl:3:27", "s.hlsl:3:27"]
    for target, error in zip(("Metal", "WGSL"), errors, strict=True):
        assert f"E36107: {target}: 'Load' (used by compute entry point 'M') cannot be " in error


def test_debug_printf_is_left_out_where_it_does_not_exist(tmp_path: Path) -> None:
    """Debug printf exists on SPIR-V only and changes nothing a shader computes: WGSL and
    Metal build without it (it was E36107), with a warning at each call."""
    source = (
        "RWStructuredBuffer<float> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() {\n'
        '    printf("%f, %d\\n", O[0],\n           1);  O[0] = 1;\n}\n'
    )
    (tmp_path / "s.hlsl").write_text(source)
    options = CompileOptions(targets=(Target.SpirV, Target.Msl, Target.Wgsl), source_name="s.hlsl")
    result = compile_file(str(tmp_path / "s.hlsl"), options)
    assert result.ok, [d.format() for d in result.diagnostics]
    # SPIR-V asks for the extension printf needs (Slang warned E41012 that it added it).
    assert [d.code for d in result.diagnostics if d.code != "OS1003"] == []
    warnings = [d.format().split("\n")[0] for d in result.diagnostics if d.code == "OS1003"]
    assert warnings == [
        f"s.hlsl:3:5: warning OS1003: {t}: this printf is left out: debug printf exists on "
        "SPIR-V (Vulkan's debug printf) only"
        for t in ("Metal", "WGSL")
    ]
    code = {o.target: o.data for o in result.outputs}
    assert b"O[i32(0)] = 1.0f;" in code[Target.Wgsl] and b"printf" not in code[Target.Msl]


def test_what_only_printf_reads_is_used_on_spirv_alone(tmp_path: Path) -> None:
    """A constant buffer only printf reads: SPIR-V touches it, WGSL and Metal (printf left
    out) do not; the reflection lists it (the host binds it), and the cross-check accepts a
    target whose code touches fewer of the listed resources (it was OS9000)."""
    source = (
        "struct P { float scale; }; [[vk::push_constant]] P pc;\n"
        "cbuffer Debug { float4 marker; };\nRWStructuredBuffer<float> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() {\n'
        '    printf("%f %f", pc.scale, marker.x);  O[0] = 1;\n}\n'
    )
    (tmp_path / "s.hlsl").write_text(source)
    options = CompileOptions(targets=(Target.SpirV, Target.Msl, Target.Wgsl), source_name="s.hlsl")
    result = compile_file(str(tmp_path / "s.hlsl"), options)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    (entry,) = result.reflection.entry_points
    assert (entry.uses, entry.pushuse) == (("Debug", "O"), ("pc",))


# -- clip -----------------------------------------------------------------------------------------

_SIZE = 16


def _render(
    result: CompileResult,
    target: Target,
    vertices: tuple[float, ...] = (-1, -1, 3, -1, -1, 3),
    topology: str = "triangle-list",
) -> Any:
    """Draw ``vertices`` (a full-screen triangle unless told) with ``result``'s VSMain (a float2
    position at location 0) and PSMain into a cleared 16x16 rgba8 target on ``target``'s code;
    the pixels as a (16, 16, 4) array."""
    import wgpu

    dev = device()
    out = next(o for o in result.outputs if o.target is target)
    module = dev.create_shader_module(
        code=out.data if target is Target.SpirV else out.data.decode("utf-8")
    )
    pipeline = dev.create_render_pipeline(
        layout="auto",
        vertex={
            "module": module,
            "entry_point": "VSMain",
            "buffers": [
                {
                    "array_stride": 8,
                    "attributes": [{"format": "float32x2", "offset": 0, "shader_location": 0}],
                }
            ],
        },
        fragment={"module": module, "entry_point": "PSMain", "targets": [{"format": "rgba8unorm"}]},
        primitive={"topology": topology},
    )
    data = np.array(vertices, np.float32).tobytes()
    buffer = dev.create_buffer_with_data(data=data, usage=wgpu.BufferUsage.VERTEX)

    def draw(rpass: Any) -> None:
        rpass.set_pipeline(pipeline)
        rpass.set_vertex_buffer(0, buffer)
        rpass.draw(len(vertices) // 2)

    return render(draw, _SIZE)


@pytest.mark.parametrize("target", [Target.SpirV, Target.Wgsl], ids=lambda t: t.value)
def test_clip_discards_the_same_pixels_on_every_target(target: Target) -> None:
    result = _ok(CORPUS / "exec" / "clip_render.hlsl")
    pixels = _render(result, target)
    kept = pixels[..., 3] > 0
    assert not kept[:, :8].any() and not kept[12:, :].any()
    assert kept[:12, 8:].all()
    assert tuple(pixels[5, 10]) == (255, 128, 64, 255)
    msl = _code(result, Target.Msl)
    assert "discard_fragment()" in msl and "clip" not in msl.replace("oneshader_clip", "")


def test_sample_with_a_lod_clamp_is_refused_for_wgsl_at_the_call(tmp_path: Path) -> None:
    """HLSL's 4-argument Sample is (s, uv, offset, clamp): a minimum-LOD clamp (SPIR-V MinLod,
    Metal min_lod_clamp), not a bias; WGSL has no such sampling. The error is at the call and
    points at SampleBias, which WGSL has (with an offset), for the bias the code may mean."""
    source = (
        "Texture2D T; SamplerState S;\n"
        '[shader("pixel")] float4 P(float2 uv : TEXCOORD0, float lod : LOD) : SV_Target {\n'
        "    return T.Sample(S, uv, int2(1, 0), lod) + T.SampleBias(S, uv, lod, int2(0, 1));\n}\n"
    )
    (error,) = _errors(tmp_path, source, (Target.Wgsl,))
    assert error.startswith("s.hlsl:3:14: error E36107: WGSL: 'Sample' (used by fragment entry")
    assert "minimum-LOD clamp" in error and "SampleBias(s, uv, bias, offset)" in error
    path = tmp_path / "s.hlsl"
    assert _ok(path, (Target.SpirV, Target.Msl)).ok


def test_fwidth_on_metal_is_its_definition(tmp_path: Path) -> None:
    """Slang has no fwidth for Metal; HLSL defines it as abs(ddx(x)) + abs(ddy(x)), which Metal
    has (dfdx/dfdy)."""
    path = tmp_path / "s.hlsl"
    path.write_text(
        '[shader("pixel")] float4 P(float2 uv : TEXCOORD0) : SV_Target {\n'
        "    return float4(fwidth(uv), fwidth(uv.x), 1);\n}\n"
    )
    msl = _code(_ok(path), Target.Msl)
    assert "abs(dfdx(x_0)) + abs(dfdy(x_0))" in msl and "fwidth" not in msl.replace(
        "oneshader_fwidth", ""
    )


# -- PointSize ------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [Target.SpirV, Target.Wgsl], ids=lambda t: t.value)
def test_a_point_size_of_one_draws_the_same_points_on_every_target(target: Target) -> None:
    result = _ok(CORPUS / "exec" / "point_size_render.hlsl")
    (warning,) = [d for d in result.diagnostics if not d.is_error]
    assert warning.code == "OS1011" and (warning.line, warning.column) == (7, 7)
    assert "WGSL" in warning.message and "'PSize' is left out" in warning.message
    assert "point_size" in _code(result, Target.Msl)
    # pixel centres of a 16x16 target: x = (2 * px + 1) / 16 - 1
    points = (-15 / 16, -15 / 16, 1 / 16, 1 / 16, 13 / 16, -7 / 16)
    pixels = _render(result, target, points, "point-list")
    lit = sorted(zip(*np.nonzero(pixels[..., 3]), strict=True))
    assert lit == [(7, 8), (11, 14), (15, 0)]  # (row, column); rows grow downwards


def test_a_point_size_other_than_one_is_refused_for_wgsl(tmp_path: Path) -> None:
    source = (
        (CORPUS / "exec" / "point_size_render.hlsl")
        .read_text()
        .replace("PSize = 1.0", "PSize = 8.0")
    )
    (error,) = _errors(tmp_path, source)
    assert error.startswith(
        "s.hlsl:7:7: error OS1011: [[vk::builtin(\"PointSize\")]] on 'PSize': WGSL"
    )


def test_a_vertex_shader_without_a_position_is_refused_for_wgsl(tmp_path: Path) -> None:
    """A vertex shader that feeds tessellation or a geometry shader writes no SV_Position;
    Slang writes WGSL that naga rejects ("Vertex shaders must return a @builtin(position)"),
    so WGSL gets a positioned error and the other targets build."""
    source = (
        "struct VSOut { float3 Pos : POSITION0; float2 UV : TEXCOORD0; };\n"
        '[shader("vertex")]\n'
        "VSOut VSMain(float3 p : POSITION0, float2 uv : TEXCOORD0)\n"
        "{ VSOut o; o.Pos = p; o.UV = uv; return o; }\n"
    )
    (error,) = _errors(tmp_path, source)
    assert error.startswith("s.hlsl:3:7: error OS1017: WGSL: vertex entry point 'VSMain' writes")
    assert _ok(tmp_path / "s.hlsl", (Target.SpirV, Target.Msl)).ok


# -- specialization constants no code reads ------------------------------------------------------


def test_unused_spec_constants_have_no_slots_and_no_wgpu_key(tmp_path: Path) -> None:
    """Slang drops a spec constant no entry point reads from every target's code: it gets no
    slot (no MSL function constant, no WGSL override that does not exist), and the generated
    constants() leaves it out, since wgpu refuses a key the module lacks."""
    import wgpu

    from oneshader.bindings import from_reflection

    path = tmp_path / "s.hlsl"
    path.write_text(
        "[[vk::constant_id(1)]] const float Unused = 1.0;\n"
        "[[vk::constant_id(2)]] const float Gain = 2.0;\n"
        "RWStructuredBuffer<float> Out;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { Out[0] = Gain; }\n'
    )
    result = _ok(path)
    unused, gain = result.reflection.spec_constants
    assert (unused.name, unused.slots) == ("Unused", ())
    assert {s.target for s in gain.slots} == set(ALL)
    bindings: Any = from_reflection(result.reflection, "s")
    constants = bindings.constants(Unused=3.0, Gain=5.0)
    assert constants == {"2": 5.0}
    dev = device()
    out = dev.create_buffer(size=4, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    pipeline = dev.create_compute_pipeline(
        layout="auto",
        compute={
            "module": dev.create_shader_module(code=_code(result, Target.Wgsl)),
            "entry_point": "M",
            "constants": constants,
        },
    )
    slot = next(s for s in result.reflection.resources[0].slots if s.target is Target.Wgsl)
    entry = {"binding": slot.binding, "resource": {"buffer": out, "offset": 0, "size": 4}}
    dispatch(pipeline, {slot.set: [entry]}, 1)
    assert struct.unpack("<f", bytes(dev.queue.read_buffer(out))) == (5.0,)


def test_source_names_that_wgsl_reserves_are_renamed_in_the_wgsl(tmp_path: Path) -> None:
    """Slang keeps a spec constant's, a resource's and a cbuffer member's source name in WGSL;
    naga refuses WGSL's reserved words (``type``, ``target``, ``filter``, ``set``). They get
    Slang's usual ``_0``, the reflection keeps the source names, and the module runs."""
    path = tmp_path / "s.hlsl"
    path.write_text(
        "[[vk::constant_id(0)]] const int type = 0;\n"
        "cbuffer Params { float filter; float4 set; };\n"
        "RWStructuredBuffer<float> Out;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { Out[0] = type == 0 ? set.y : filter; }\n'
    )
    result = _ok(path)
    r = result.reflection
    assert [s.name for s in r.spec_constants] == ["type"]
    params = next(x for x in r.resources if x.name == "Params")
    assert [m.name for m in params.layout.members] == ["filter", "set"]
    data = _packed(params.layout, {"filter": 1.0, "set": [0.0, 6.5, 0.0, 0.0]})
    assert _run_wgsl(result, {"Params": data}, 1) == [6.5]


# -- arrays of resources ----------------------------------------------------------------------


def test_metal_takes_arrays_of_textures_and_samplers(tmp_path: Path) -> None:
    """Metal passes a sized array of textures (or samplers) as one argument that takes N indices
    (Slang emits it without one); NonUniformResourceIndex needs nothing there. Arrays of buffers
    (argument buffers on Metal) and WGSL's texture arrays stay positioned errors."""
    path = tmp_path / "s.hlsl"
    path.write_text(
        "Texture2D Textures[4] : register(t0);\nSamplerState Samplers[2] : register(s4);\n"
        "Texture2D Single : register(t5);\nSamplerState Plain : register(s0);\n"
        '[shader("pixel")] float4 P(float2 uv : TEXCOORD0, nointerpolation uint i : INDEX)'
        " : SV_Target {\n"
        "    return Textures[NonUniformResourceIndex(i)].Sample(Samplers[1], uv)\n"
        "        + Single.Sample(Plain, uv);\n}\n"
    )
    result = _ok(path, (Target.SpirV, Target.Msl))
    slots = {
        r.name: next(s.binding for s in r.slots if s.target is Target.Msl)
        for r in result.reflection.resources
    }
    assert slots == {"Textures": 0, "Samplers": 0, "Single": 4, "Plain": 2}
    msl = read_msl(_code(result, Target.Msl).encode())
    assert {n: [(e.binding, e.count) for e in v] for n, v in msl.resources.items()} == {
        "Textures": [(0, 4)],
        "Samplers": [(0, 2)],
        "Single": [(4, 1)],
        "Plain": [(2, 1)],
    }
    plain = path.read_text().replace("NonUniformResourceIndex(i)", "i")
    error, *_ = _errors(tmp_path, plain, (Target.Wgsl,))
    assert error.startswith("s.hlsl:1:11: error OS1008: arrays of resources ('Textures'): WGSL")
    (error,) = _errors(
        tmp_path,
        "struct U { float4 v; };\nConstantBuffer<U> Blocks[3];\nRWStructuredBuffer<float4> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { O[0] = Blocks[1].v; }\n',
        (Target.Msl,),
    )
    assert error.startswith("s.hlsl:2:19: error OS1008: arrays of resources ('Blocks'): Metal")


def test_a_system_value_a_target_lacks_is_positioned_at_its_semantic(tmp_path: Path) -> None:
    """Slang reports SV_RenderTargetArrayIndex on a WGSL fragment input without a position; the
    error is put on the semantic (SV_ClipDistance, read there, is OS1003:
    tests/compiler/test_clip_distances.py)."""
    errors = _errors(
        tmp_path,
        "struct VSOut { float4 Pos : SV_Position; uint Layer : SV_RenderTargetArrayIndex; };\n"
        '[shader("pixel")] float4 P(VSOut i) : SV_Target { return i.Layer; }\n',
        (Target.Wgsl,),
    )
    assert errors == [
        "s.hlsl:1:55: error E55202: WGSL: system value semantic not supported: system value "
        "semantic 'sv_rendertargetarrayindex' is not supported for the current target. (the "
        "target has no such built-in value; build without this target)"
    ]


def test_each_interlocked_call_and_other_unavailable_constructs_are_named(tmp_path: Path) -> None:
    """OS1015 at each Interlocked* call replaces Slang's E36107 for those calls only."""
    errors = _errors(
        tmp_path,
        "RWStructuredBuffer<uint> B;\ngroupshared uint G;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() {\n'
        "    uint o; InterlockedAdd(B[0], 1, o);\n    InterlockedAdd(G, 1);\n}\n",
        (Target.Wgsl,),
    )
    assert [e.split(": WGSL: ")[0] for e in errors] == [
        "s.hlsl:4:13: error OS1015",
        "s.hlsl:5:5: error OS1015",
    ]


def test_a_struct_with_vk_offset_in_two_buffers_is_padded_once(tmp_path: Path) -> None:
    path = tmp_path / "s.hlsl"
    path.write_text(
        "struct P { float4 A; [[vk::offset(48)]] float B; };\n"
        "cbuffer One { P x; };\ncbuffer Two { float4 C; P y; };\nRWStructuredBuffer<float> O;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { O[0] = x.B + y.B; }\n'
    )
    r = _ok(path).reflection
    for name, member in (("One", 0), ("Two", 1)):
        layout = next(x for x in r.resources if x.name == name).layout
        assert layout is not None
        assert _offsets(layout.members[member].type) == {"A": 0, "B": 48}


def test_an_array_of_constant_buffers_is_refused_for_wgsl(tmp_path: Path) -> None:
    """Slang writes ``ConstantBuffer<T> B[2]`` as one WGSL uniform holding an array (not two
    bindings, as Vulkan has): an error at the declaration, not a reflection that disagrees."""
    errors = _errors(
        tmp_path,
        "struct U { float4x4 P; };\n[[vk::binding(0, 0)]] ConstantBuffer<U> Cams[2];\n"
        '[shader("vertex")] float4 V(float3 p : POSITION, uint i : SV_InstanceID) : SV_Position'
        " { return mul(Cams[i].P, float4(p, 1)); }\n",
        (Target.SpirV, Target.Wgsl),
    )
    assert errors == [
        "s.hlsl:2:41: error OS1008: arrays of resources ('Cams'): WGSL has no arrays of resources "
        "(binding_array is a native-only extension; Slang writes an array of constant buffers as "
        "one buffer holding an array); use separate declarations (or a texture array type such as "
        "Texture2DArray), or build for spirv only"
    ]


# -- global structs of resources -----------------------------------------------------------------


def test_a_global_struct_of_resources_runs_on_wgsl_and_reads_right_on_metal(
    tmp_path: Path,
) -> None:
    """DXC flattens ``Tables tables;`` into one resource per field (``tables.scale``); WGSL and
    MSL have no dots in names, so their globals are ``tables_scale``: the reflection keeps
    DXC's names, its slots are the ones the code declares, and the buffers bound there by the
    reflection's names are the ones the shader reads."""
    import wgpu

    path = tmp_path / "s.hlsl"
    path.write_text(
        "struct Tables { StructuredBuffer<float> scale; StructuredBuffer<float> bias; };\n"
        "Tables tables;\n"
        "RWStructuredBuffer<float> Out;\n"
        "[numthreads(4, 1, 1)]\n"
        "void main(uint3 id : SV_DispatchThreadID)\n"
        "{ Out[id.x] = tables.scale[id.x] * 2.0 + tables.bias[id.x]; }\n"
    )
    result = _ok(path)
    r = result.reflection
    assert r is not None
    assert [x.name for x in r.resources] == ["tables.scale", "tables.bias", "Out"]
    assert r.entry_points[0].uses == ("tables.scale", "tables.bias", "Out")
    msl = read_msl(_code(result, Target.Msl).encode())
    metal = {
        x.name: next(s.binding for s in x.slots if s.target is Target.Msl) for x in r.resources
    }
    assert {n: msl.resources[n.replace(".", "_")][0].binding for n in metal} == metal
    dev = device()
    usage = wgpu.BufferUsage
    data = {
        "tables.scale": np.array([1, 2, 3, 4], np.float32),
        "tables.bias": np.array([10, 20, 30, 40], np.float32),
    }
    buffers = {
        n: dev.create_buffer_with_data(data=v.tobytes(), usage=usage.STORAGE)
        for n, v in data.items()
    }
    buffers["Out"] = dev.create_buffer(size=16, usage=usage.STORAGE | usage.COPY_SRC)
    module = dev.create_shader_module(code=_code(result, Target.Wgsl))
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"}
    )
    groups: dict[int, list[dict[str, Any]]] = {}
    for x in r.resources:
        slot = next(s for s in x.slots if s.target is Target.Wgsl)
        buf = buffers[x.name]
        groups.setdefault(slot.set, []).append(
            {"binding": slot.binding, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        )
    dispatch(pipeline, groups, 1)
    got = np.frombuffer(dev.queue.read_buffer(buffers["Out"]), np.float32)
    np.testing.assert_array_equal(got, data["tables.scale"] * 2 + data["tables.bias"])


def test_a_field_spelled_like_another_global_is_refused_for_wgsl_and_metal(
    tmp_path: Path,
) -> None:
    errors = _errors(
        tmp_path,
        "struct M { Texture2D albedo; SamplerState smp; };\nM mat;\nTexture2D mat_albedo;\n"
        '[shader("pixel")] float4 main(float2 uv : TEXCOORD0) : SV_Target\n'
        "{ return mat.albedo.Sample(mat.smp, uv) + mat_albedo.Sample(mat.smp, uv); }\n",
    )
    assert len(errors) == 2
    for error, target in zip(errors, ("Metal", "WGSL"), strict=True):
        assert "s.hlsl:2:3: error OS1030" in error and f"{target}: 'mat.albedo'" in error
        assert "'mat_albedo'" in error


def test_an_empty_struct_member_of_a_cbuffer_builds_for_every_target(tmp_path: Path) -> None:
    """A member of an empty struct has no bytes; WGSL and Metal have no empty structs and Slang
    drops the member: the cross-check counted it missing (OS9000), and Metal's padding walk
    failed on the struct without members (OS9002)."""
    from module_validation import wgsl_errors

    path = tmp_path / "s.hlsl"
    path.write_text(
        "struct Nothing { };\n"
        "cbuffer Frame { float3 a; Nothing b; float2 c; float4 d; };\n"
        '[shader("pixel")] float4 main() : SV_Target { return d + c.x + a.y; }\n'
    )
    result = _ok(path)
    assert result.reflection is not None
    (frame,) = result.reflection.resources
    offsets = _offsets(frame.layout)
    assert (offsets["a"], offsets["c"], offsets["d"]) == (0, 16, 32) and "b" in offsets
    assert wgsl_errors(_code(result, Target.Wgsl)) == ""


def test_an_unknown_image_format_is_refused_for_wgsl_at_the_attribute(tmp_path: Path) -> None:
    """``[[vk::image_format("unknown")]]`` (SPIR-V's StorageImageWriteWithoutFormat): WGSL has
    no storage texture without a format; Slang wrote rg32f and the reflection said unknown
    (OS9000). A positioned error for WGSL; SPIR-V and Metal build it."""
    source = (
        '[[vk::image_format("unknown")]] RWTexture3D<float2> img;\n'
        "[numthreads(4, 4, 4)]\n"
        "void main(uint3 id : SV_DispatchThreadID) { img[id] = float2(4, 5); }\n"
    )
    (error,) = _errors(tmp_path, source)
    assert "s.hlsl:1:3: error OS1003: WGSL:" in error and "'img'" in error and "unknown" in error
    result = _ok(tmp_path / "s.hlsl", (Target.SpirV, Target.Msl))
    assert result.reflection is not None and result.reflection.resources[0].format == "unknown"


def test_bools_stored_in_a_byte_address_buffer_are_words_0_and_1(tmp_path: Path) -> None:
    """``RWByteAddressBuffer.Store(offset, b)`` of a bool: DXC stores the uint 0 or 1. Slang
    wrote ``bitcast<u32>(b)`` in WGSL (naga: not WGSL; DXC's isnan/isinf/isfinite tests),
    ``as_type<uint32_t>(b)`` of a 1-byte bool in Metal, and a bool vector into the storage
    buffer in SPIR-V (spirv-val refuses it). Other values (a struct, a float computed from a
    comparison) are stored as they are. Run on WGSL; SPIR-V validated."""
    from module_validation import spirv_errors

    path = tmp_path / "s.hlsl"
    path.write_text(
        "RWByteAddressBuffer Out : register(u0);\n"
        "struct Pair { float a; uint b; };\n"
        "[numthreads(1, 1, 1)]\n"
        "void main(uint3 id : SV_DispatchThreadID)\n"
        "{\n"
        "    bool a = id.x == 0;\n"
        "    Out.Store(0, a); Out.Store(4, !a); // Out.Store(0, a) in a comment\n"
        "    Out.Store(8, bool2(a, id.x != 0));\n"
        "    Out.Store(16, isnan(float(id.x)));\n"
        "    Out.Store(20, 7u); Out.Store<float>(24, 2.5f);\n"
        "    Pair p = { 0.5f, 3u }; Out.Store(28, p); Out.Store(36, float(id.x < 1) * 4);\n"
        "}\n"
    )
    result = _ok(path)
    spirv = next(o.data for o in result.outputs if o.target is Target.SpirV)
    assert spirv_errors(spirv) == ""
    words = struct.unpack("<10I", struct.pack("<10f", *_run_wgsl(result, {}, 10)))
    bits = [struct.unpack("<I", struct.pack("<f", x))[0] for x in (2.5, 0.5, 4.0)]
    assert words == (1, 0, 1, 0, 0, 7, bits[0], bits[1], 3, bits[2])


_COMPUTE_SAMPLE = (
    "Texture2D<float4> t : register(t0);\n"
    "SamplerState s : register(s0);\n"
    "RWStructuredBuffer<float4> o : register(u1);\n"
    "float4 shade(float2 uv) { return t.Sample(s, uv); }\n"
    '[shader("pixel")] float4 P(float2 uv : UV) : SV_Target { return shade(uv); }\n'
    '[shader("compute")] [numthreads(2, 2, 1)]\n'
    "void C(uint3 id : SV_DispatchThreadID)\n"
    "{\n"
    "    // t.Sample(s, uv) in a comment\n"
    "    o[id.x] = t.SampleLevel(s, id.xy / 4.0, 0) + t.SampleBias(s, id.xy / 4.0, 1.0);\n"
    "}\n"
)


def test_implicit_lod_sampling_in_compute_is_refused_for_wgsl_at_the_call(tmp_path: Path) -> None:
    """HLSL samples with compute-shader derivatives; WGSL's textureSample/Bias/Compare are
    fragment-only (naga refused Slang's module: DXC's texture.sample*.compute tests), and a
    fixed level would change the result. A positioned error at the compute entry's call; the
    pixel shader's Sample and the compute SampleLevel alone build."""
    (error,) = _errors(tmp_path, _COMPUTE_SAMPLE)
    assert "s.hlsl:10:52: error OS1003: WGSL: SampleBias in compute entry point 'C'" in error
    path = tmp_path / "s.hlsl"
    assert _ok(path, (Target.SpirV, Target.Msl)).reflection is not None
    path.write_text(_COMPUTE_SAMPLE.replace(" + t.SampleBias(s, id.xy / 4.0, 1.0)", ""))
    result = _ok(path)
    from module_validation import wgsl_errors

    assert wgsl_errors(_code(result, Target.Wgsl)) == ""


def test_inline_spirv_builtins_are_refused_at_the_attribute(tmp_path: Path) -> None:
    """``[[vk::ext_builtin_output(5014)]] static int s;``: Slang ignores the attribute (E31000,
    a warning), so every target built an ordinary static (WGSL's was invalid where it was
    passed as an out argument: DXC's spv.inline.builtin.output). An error per target, at it."""
    source = (
        "[[vk::ext_builtin_output(/* FragStencilRefEXT */ 5014)]]\n"
        "static int stencilRef;\n"
        '[shader("pixel")] float4 main() : SV_Target { stencilRef = 10; return 1; }\n'
    )
    errors = _errors(tmp_path, source)
    assert [e.split(": [[")[0] for e in errors] == [
        f"s.hlsl:1:3: error OS1003: {t}" for t in ("SPIR-V", "Metal", "WGSL")
    ]
    assert all("vk::ext_builtin_output" in e for e in errors)


def test_groupshared_out_arguments_are_refused_for_wgsl_at_the_argument(tmp_path: Path) -> None:
    """Slang's WGSL passes a groupshared variable to an out/inout parameter as a
    ``ptr<workgroup, T>``, which naga refuses (DXC's cs.groupshared.function-param.out); the
    copy through a local builds."""
    source = (
        "RWStructuredBuffer<int> A;\n"
        "groupshared int Shared;\n"
        "void twice(out int x, inout int y) { x = 1; y += 2; }\n"
        "[numthreads(1, 1, 1)]\n"
        "void main() {\n"
        "  int e = 0;\n"
        "  twice(e, Shared);\n"
        "  A[0] = Shared + e;\n"
        "}\n"
    )
    (error,) = _errors(tmp_path, source)
    assert error.startswith("s.hlsl:7:12: error OS1003: WGSL:") and "'twice'" in error
    assert "('Shared')" in error
    path = tmp_path / "s.hlsl"
    path.write_text(source.replace("twice(e, Shared);", "int t = Shared; twice(e, t); Shared = t;"))
    from module_validation import wgsl_errors

    assert wgsl_errors(_code(_ok(path), Target.Wgsl)) == ""


def test_a_local_buffer_variable_is_refused_for_wgsl_at_its_declaration(tmp_path: Path) -> None:
    """``StructuredBuffer<S> pick; pick = a or b;``: Slang's WGSL declares ``var<storage>`` in
    the function, which naga refuses (DXC's legal-examples/15-loop-var-unroll-ok); SPIR-V
    (legalized) and Metal (a pointer) build it."""
    source = (
        "StructuredBuffer<float4> First;\n"
        "StructuredBuffer<float4> Second;\n"
        "RWStructuredBuffer<float4> Out;\n"
        "[numthreads(1, 1, 1)]\n"
        "void main(uint3 id : SV_DispatchThreadID) {\n"
        "  StructuredBuffer<float4> pick;\n"
        "  if (id.x > 0) { pick = First; } else { pick = Second; }\n"
        "  Out[id.x] = pick[id.x];\n"
        "}\n"
    )
    (error,) = _errors(tmp_path, source)
    assert error.startswith("s.hlsl:6:28: error OS1003: WGSL: 'pick' is a local variable")
    assert _ok(tmp_path / "s.hlsl", (Target.SpirV, Target.Msl)).reflection is not None


def test_mul_with_an_integer_matrix_is_refused_for_wgsl_at_the_call(tmp_path: Path) -> None:
    """WGSL has float matrices only: Slang writes an integer matrix as an array of vectors,
    its casts and element-wise products row by row, but ``mul`` as ``vector * array``, which
    naga refuses (DXC's cast.no-op.matrix.float-to-int); without ``mul`` it builds."""
    source = (
        "RWStructuredBuffer<int4> o;\n"
        "[numthreads(1, 1, 1)]\n"
        "void main() {\n"
        "  int2x2 m = int2x2(o[0] * 1.5);\n"
        "  o[1] = int4(m[0] * m[1], mul(m, o[2].xy));\n"
        "}\n"
    )
    (error,) = _errors(tmp_path, source)
    assert error.startswith("s.hlsl:5:28: error OS1003: WGSL: mul with an integer matrix")
    path = tmp_path / "s.hlsl"
    path.write_text(source.replace("mul(m, o[2].xy)", "(m * m)[1]"))
    from module_validation import wgsl_errors

    assert wgsl_errors(_code(_ok(path), Target.Wgsl)) == ""


def test_a_function_that_never_returns_is_refused_for_wgsl_at_its_loop(tmp_path: Path) -> None:
    """An endless loop without break or return in a function with a result: Slang's WGSL
    drops the loop and leaves the function without a return, which naga refuses (DXC's
    rich.debug.debuglexicalblock)."""
    source = (
        '[shader("pixel")]\n'
        "float4 main(float4 color : COLOR, float4 p : SV_Position) : SV_Target {\n"
        "  float4 c = 0;\n"
        "  for (;;) { c += 1; }\n"
        "  return color + c;\n"
        "}\n"
    )
    (error,) = _errors(tmp_path, source)
    assert error.startswith("s.hlsl:4:3: error OS1003: WGSL: 'main' never returns")
    assert _ok(tmp_path / "s.hlsl", (Target.SpirV, Target.Msl)).reflection is not None


def test_dst_is_written_out_for_every_target(tmp_path: Path) -> None:
    """``dst(a, b)`` crashed Slang's SPIR-V and Metal back ends (OS9001 on DXC's
    intrinsics.dst): a helper computes its definition, (1, a.y * b.y, a.z, b.w). Built in a
    worker (a crash must not take the tests down), run on WGSL."""
    from oneshader.compiler.process.worker import CompilerWorker

    path = tmp_path / "s.hlsl"
    path.write_text(
        "cbuffer In : register(b0) { float4 a; float4 b; };\n"
        "RWStructuredBuffer<float4> Out : register(u1);\n"
        "[numthreads(1, 1, 1)] void main() { Out[0] = dst(a, b); }\n"
    )
    with CompilerWorker() as worker:
        result = worker.compile(str(path), CompileOptions(targets=ALL, source_name="s.hlsl"))
    assert result.ok and not result.crashed, [d.format() for d in result.diagnostics]
    r = result.reflection
    assert r is not None
    block = next(x for x in r.resources if x.name == "In")
    data = _packed(block.layout, {"a": (2.0, 3.0, 5.0, 7.0), "b": (11.0, 13.0, 17.0, 19.0)})
    assert _run_wgsl(result, {"In": data}, 4) == [1.0, 39.0, 5.0, 19.0]


def test_a_cast_to_void_builds_for_every_target(tmp_path: Path) -> None:
    """``(void)x;`` (silencing an unused variable): Slang failed on every target without a
    position (SPIR-V: an internal error; DXC's cast.to.void); a parameter list ``(void)``
    stays one."""
    from module_validation import spirv_errors, wgsl_errors

    path = tmp_path / "s.hlsl"
    path.write_text(
        "RWStructuredBuffer<uint> o;\n"
        "uint one(void) { return 1; }\n"
        "[numthreads(1, 1, 1)]\n"
        "void main() {\n"
        "  bool unused = false;\n"
        "  (void)unused; (void) one();\n"
        "  o[0] = one();\n"
        "}\n"
    )
    result = _ok(path)
    assert wgsl_errors(_code(result, Target.Wgsl)) == ""
    spirv = next(o.data for o in result.outputs if o.target is Target.SpirV)
    assert spirv_errors(spirv) == ""
