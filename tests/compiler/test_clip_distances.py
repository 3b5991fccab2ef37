"""SV_ClipDistance on WGSL: a vertex output is WebGPU's ``clip_distances`` built-in (``enable
clip_distances;``, the device feature "clip-distances"), several semantics packed into one array
in semantic-index order as DXC packs them; a pixel input the shader does not read is left out
(WGSL's fragment stage has none); what WGSL cannot express is a positioned OS1003. The draw runs
on the software adapter."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from verify_support import render

from module_validation import device
from oneshader.bindings import from_reflection
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.reflection.model import BuiltIn, DeviceFeatures, Target

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)

# The left half of a full-screen triangle is clipped: clip = x (in clip space); PACKED adds
# a second clip distance (semantic index 1, an array) that clips nothing, packed after it.
SHADER = """\
struct VSOut
{
    float4 pos : SV_Position;
    float clip : SV_ClipDistance0;
    [[vk::location(0)]] float3 color : COLOR0;
};

[shader("vertex")]
VSOut vs(float2 p : POSITION)
{
    VSOut o;
    o.pos = float4(p, 0, 1);
    o.clip = p.x;
    o.color = float3(0.25, 0.5, 1.0);
    return o;
}

[shader("pixel")]
float4 ps(VSOut i) : SV_Target { return float4(i.color, 1); }
"""


PACKED = SHADER.replace("COLOR0;\n", "COLOR0;\n    float spare[2] : SV_ClipDistance1;\n").replace(
    "o.clip = p.x;", "o.clip = p.x;\n    o.spare[0] = 1.0;\n    o.spare[1] = 2.0;"
)


def _build(
    tmp_path: Path, text: str, targets: tuple[Target, ...] = ALL, name: str = "c.hlsl"
) -> CompileResult:
    (tmp_path / name).write_text(text)
    return compile_file(str(tmp_path / name), CompileOptions(targets=targets, source_name=name))


def _wgsl(result: CompileResult) -> str:
    (out,) = [o for o in result.outputs if o.target is Target.Wgsl]
    return out.data.decode()


def _errors(result: CompileResult) -> list[str]:
    return [f"{d.file}:{d.line}:{d.column}: {d.code}: {d.message}" for d in result.diagnostics]


def test_vertex_output_is_the_clip_distances_builtin_on_every_target(tmp_path: Path) -> None:
    """The reflection keeps SV_ClipDistance as an output without a location (the colour keeps
    location 0), which the cross-check holds each module to."""
    result = _build(tmp_path, SHADER)
    assert result.ok, _errors(result)
    text = _wgsl(result)
    assert text.startswith("enable clip_distances;\n")
    assert "@builtin(clip_distances) oneshader_clip_distances : array<f32, 1>" in text
    assert result.reflection is not None
    vs = next(e for e in result.reflection.entry_points if e.name == "vs")
    clips = [(v.name, v.index, v.location) for v in vs.outputs if v.builtin is BuiltIn.ClipDistance]
    assert clips == [("clip", 0, None)]
    assert [(v.name, v.location) for v in vs.outputs if v.location is not None] == [("color", 0)]
    alone = _build(tmp_path, SHADER, (Target.Wgsl,)).reflection  # its facts are WGSL's
    assert alone is not None and alone.entry_points == result.reflection.entry_points


def test_several_semantic_indices_are_one_array_on_wgsl(tmp_path: Path) -> None:
    """The scalar at index 0 first, then the array at index 1 (DXC's packing): one
    array<f32, 3>. Slang's SPIR-V declares two ClipDistance built-ins, which spirv-val refuses:
    a positioned error there."""
    result = _build(tmp_path, PACKED, (Target.Wgsl,))
    assert result.ok, _errors(result)
    assert "array<f32, 3>(v.clip_0, v.spare_0[0], v.spare_0[1])" in _wgsl(result)
    assert result.reflection is not None
    vs = next(e for e in result.reflection.entry_points if e.name == "vs")
    clips = [(v.name, v.index) for v in vs.outputs if v.builtin is BuiltIn.ClipDistance]
    assert clips == [("clip", 0), ("spare", 1)]
    errors = _errors(_build(tmp_path, PACKED, (Target.SpirV,)))
    assert errors == [
        "c.hlsl:6:11: OS1003: SPIR-V: 'spare' : SV_ClipDistance1 and 'clip' : SV_ClipDistance0: "
        "Slang declares one built-in per semantic index, which Vulkan refuses "
        "(VUID-StandaloneSpirv-OpEntryPoint-09659); declare them as one array (float d[N] : "
        "SV_ClipDistance0), or build without the spirv target"
    ]


def test_vectors_on_wgsl_alone(tmp_path: Path) -> None:
    """Slang's SPIR-V and Metal take a float or float[] only; WGSL takes vectors (DXC's
    float2/float3 clip distances) and arrays of them, component by component."""
    text = PACKED.replace("float clip : SV_ClipDistance0", "float2 clip : SV_ClipDistance0")
    text = text.replace("o.clip = p.x;", "o.clip = p;")
    result = _build(tmp_path, text, (Target.Wgsl,))
    assert result.ok, _errors(result)
    assert "array<f32, 4>(v.clip_0[0], v.clip_0[1], v.spare_0[0], v.spare_0[1])" in _wgsl(result)


def test_unread_pixel_input_is_left_out_and_a_read_one_is_an_error(tmp_path: Path) -> None:
    result = _build(tmp_path, SHADER, (Target.Wgsl,))
    assert result.ok
    fragment = _wgsl(result).split("@fragment")[1]
    assert "clip" not in fragment.split("{")[0]  # not among the wrapper's inputs
    read = SHADER.replace("float4(i.color, 1)", "float4(i.color, i.clip)")
    bad = _build(tmp_path, read, (Target.Wgsl,))
    assert _errors(bad) == [
        "c.hlsl:4:11: OS1003: WGSL: 'clip' : SV_ClipDistance0: WGSL's fragment stage cannot "
        "read clip or cull distances; pass the value from the vertex stage as an ordinary "
        "varying too; or build without the wgsl target"
    ]
    assert _build(tmp_path, read, (Target.SpirV,)).ok
    (metal,) = _errors(_build(tmp_path, read, (Target.Msl,)))
    assert metal.startswith("c.hlsl:4:11: OS1003: Metal: 'clip' : SV_ClipDistance0: a fragment ")


def test_metal_gets_clip_distance_for_one_float(tmp_path: Path) -> None:
    """Slang's Metal writes ``float clip [[]]`` and an unattributed fragment parameter, neither
    of which Metal takes: the member becomes ``[[clip_distance]]``, the unread parameter goes.
    Arrays and several semantics (Slang writes no attribute for them) are OS1003."""
    result = _build(tmp_path, SHADER)
    assert result.ok, _errors(result)
    (out,) = [o for o in result.outputs if o.target is Target.Msl]
    metal = out.data.decode()
    assert re.search(r"float clip_\d+ \[\[clip_distance\]\];", metal)
    assert "[[]]" not in metal
    fragment = metal[metal.index("[[fragment]]") :].split("{")[0]
    assert "clip" not in fragment
    (error,) = _errors(_build(tmp_path, PACKED, (Target.Msl,)))
    assert error.startswith("c.hlsl:6:11: OS1003: Metal: 'spare' : SV_ClipDistance1: oneshader ")


def test_cull_distances_and_more_than_eight_are_positioned_errors(tmp_path: Path) -> None:
    text = (
        "struct O { float4 p : SV_Position; float4 c[2] : SV_ClipDistance0;\n"
        "  float d : SV_ClipDistance1; float cull : SV_CullDistance0; };\n"
        '[shader("vertex")] O V(float4 p : POSITION) { O o = (O)0; o.p = p; return o; }\n'
    )
    errors = _errors(_build(tmp_path, text, (Target.Wgsl,)))
    assert [e.split(": WGSL: ")[0] for e in errors] == ["c.hlsl:2:37: OS1003", "c.hlsl:2:9: OS1003"]
    assert "'cull' : SV_CullDistance0: WebGPU has no cull distances" in errors[0]
    assert "'d' : SV_ClipDistance1: WebGPU has at most 8 clip distances" in errors[1]
    assert "takes the count to 9" in errors[1]


def test_the_bindings_ask_for_the_feature(tmp_path: Path, gpu_device: Any) -> None:
    """A device without "clip-distances" (the session's plain one) is told what to request."""
    result = _build(tmp_path, SHADER, (Target.Wgsl,))
    assert result.reflection is not None
    shader = from_reflection(result.reflection, "clip", {Target.Wgsl: _wgsl(result)}).shader
    assert shader.required_features == ("clip-distances",)
    assert "clip-distances" not in gpu_device.features
    with pytest.raises(LookupError, match=r"lacks the WebGPU feature.*'clip-distances'"):
        shader.create_shader_module(gpu_device)
    r = result.reflection
    half = replace(
        r, entry_points=tuple(replace(e, features=DeviceFeatures.Float16) for e in r.entry_points)
    )
    assert from_reflection(half, "h").shader.required_features == ("shader-f16", "clip-distances")


def test_the_draw_is_clipped_where_the_distance_is_negative(tmp_path: Path) -> None:
    """Through the bindings, on a device granted the feature: the left half (x < 0) is clipped,
    the right half has the colour; the extra clip distances (positive) clip nothing."""
    import wgpu

    result = _build(tmp_path, PACKED, (Target.Wgsl,))
    assert result.reflection is not None
    b = from_reflection(result.reflection, "clip", {Target.Wgsl: _wgsl(result)})
    dev = device()
    assert set(b.shader.required_features) <= set(dev.features)
    pipeline = b.shader.create_render_pipeline(
        dev, b.entry("vs"), b.entry("ps"), ["rgba8unorm"], primitive={"cull_mode": "none"}
    )
    corners = np.array([[-1, -1], [3, -1], [-1, 3]], np.float32)
    buffer = dev.create_buffer_with_data(data=corners.tobytes(), usage=wgpu.BufferUsage.VERTEX)

    def draw(rpass: Any) -> None:
        rpass.set_pipeline(pipeline)
        rpass.set_vertex_buffer(0, buffer)
        rpass.draw(3)

    size = 16
    pixels = render(draw, size).astype(int)
    assert (pixels[:, : size // 2 - 1] == 0).all()  # clipped: the cleared target
    assert np.abs(pixels[:, size // 2 + 1 :] - np.array([64, 128, 255, 255])).max() <= 1


def test_the_cross_check_holds_module_and_reflection_to_each_other(tmp_path: Path) -> None:
    """A WGSL module that drops the built-in (or its enable), or a reflection without the
    SV_ClipDistance output beside a module that enables them, is a mismatch."""
    from oneshader.compiler.api import OutputFile
    from oneshader.compiler.verify.crosscheck import verify

    result = _build(tmp_path, SHADER, (Target.Wgsl,))
    r = result.reflection
    assert r is not None and verify(r, result.outputs) == []
    text = _wgsl(result)
    unenabled = text.replace("enable clip_distances;\n", "")
    mismatches = verify(r, [OutputFile(Target.Wgsl, unenabled.encode())])
    assert any("does not write clip_distances" in m for m in mismatches), mismatches
    vs = r.entry_points[0]
    assert vs.name == "vs"
    kept = tuple(v for v in vs.outputs if v.builtin is not BuiltIn.ClipDistance)
    lacking = replace(r, entry_points=(replace(vs, outputs=kept), *r.entry_points[1:]))
    mismatches = verify(lacking, result.outputs)
    assert any("enables clip_distances but no entry writes them" in m for m in mismatches)
    assert any("built-in clip_distances" in m for m in mismatches), mismatches


def test_an_out_parameter_clip_distance_is_the_builtin_too(tmp_path: Path) -> None:
    """The same output spelled as an entry point's ``out`` parameter (returned by the wrapper
    of out parameters) is the built-in on every target."""
    text = (
        "struct VSOut { float4 Pos : SV_Position; float3 N : NORMAL0; };\n"
        '[shader("vertex")] VSOut V(float3 p : POSITION, out float clip : SV_ClipDistance0)\n'
        "{ VSOut o; o.Pos = float4(p, 1); o.N = p; clip = p.x; return o; }\n"
    )
    result = _build(tmp_path, text)
    assert result.ok, _errors(result)
    assert "@builtin(clip_distances) oneshader_clip_distances : array<f32, 1>" in _wgsl(result)
    (metal,) = [o.data.decode() for o in result.outputs if o.target is Target.Msl]
    assert re.search(r"float clip_\d+ \[\[clip_distance\]\];", metal)
