"""Entry points that write their outputs through ``out``/``inout`` parameters (DXC-era code
does): WGSL entry points return their outputs, and Slang writes pointer parameters naga
refuses, so for WGSL the entry point returns a struct of them from a wrapper (rewrite
``entry_outputs_as_results``). The reflection is the one SPIR-V gives; the WGSL runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from verify_support import render

from module_validation import device
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.reflection.model import Target

SHADER = """\
cbuffer Frame : register(b0) { float4 tint; };

[shader("vertex")]
void vs(float2 p : POSITION, inout float2 uv : TEXCOORD0, out float4 pos : SV_Position,
        out nointerpolation uint key : KEY)
{
    pos = float4(p, 0, 1);
    uv = uv * 0.5;
    key = 7;
    if (p.x > 100) return;  // an early return, as in the original
    key = 9;
}

[shader("pixel")]
void ps(float2 uv : TEXCOORD0, nointerpolation uint key : KEY,
        out float4 colour : SV_Target0)
{
    colour = float4(uv, key == 9 ? 1.0 : 0.0, 1) * tint;
}
"""

# A result and an out parameter together.
TWO_TARGETS = """[shader("pixel")]
float4 ps(float2 uv : TEXCOORD0, out float4 second : SV_Target1) : SV_Target0
{
    second = float4(uv, 0, 1);
    return float4(uv, 1, 1);
}
"""


def _build(tmp_path: Path, targets: tuple[Target, ...], source: str = SHADER) -> CompileResult:
    path = tmp_path / "outs.hlsl"
    path.write_text(source)
    result = compile_file(str(path), CompileOptions(targets=targets, source_name="outs.hlsl"))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def test_wgsl_returns_the_out_parameters_and_reflects_as_spirv(tmp_path: Path) -> None:
    wgsl = _build(tmp_path, (Target.Wgsl,))
    spirv = _build(tmp_path, (Target.SpirV,))
    assert wgsl.reflection is not None and spirv.reflection is not None
    assert wgsl.reflection.entry_points == spirv.reflection.entry_points
    vs, ps = wgsl.reflection.entry_points
    assert [(v.name, v.location) for v in vs.inputs] == [("p", 0), ("uv", 1)]
    assert [(v.name, v.location) for v in vs.outputs] == [("uv", 0), ("pos", None), ("key", 1)]
    assert [(v.name, v.location) for v in ps.outputs] == [("colour", 0)]
    code = next(o.data.decode() for o in wgsl.outputs)
    entries = re.findall(r"@(?:vertex|fragment)\s+fn \w+\(([^)]*)\)", code)
    assert len(entries) == 2 and not any("ptr<" in params for params in entries), entries


def test_a_result_beside_out_parameters(tmp_path: Path) -> None:
    wgsl = _build(tmp_path, (Target.Wgsl,), TWO_TARGETS)
    spirv = _build(tmp_path, (Target.SpirV,), TWO_TARGETS)
    assert wgsl.reflection is not None and spirv.reflection is not None
    assert wgsl.reflection.entry_points == spirv.reflection.entry_points
    assert [v.location for v in wgsl.reflection.entry_points[0].outputs] == [0, 1]


def test_all_three_targets_build_together(tmp_path: Path) -> None:
    result = _build(tmp_path, (Target.SpirV, Target.Msl, Target.Wgsl))
    assert {o.target for o in result.outputs} == {Target.SpirV, Target.Msl, Target.Wgsl}


def _draw(result: CompileResult) -> Any:
    import wgpu

    r = result.reflection
    assert r is not None
    vs = r.entry_points[0]
    dev = device()
    module = dev.create_shader_module(code=next(o.data.decode() for o in result.outputs))
    attributes = [
        {"format": v.format.value, "offset": v.offset, "shader_location": v.location}
        for v in vs.inputs
    ]
    pipeline = dev.create_render_pipeline(
        layout="auto",
        vertex={
            "module": module,
            "entry_point": "vs",
            "buffers": [{"array_stride": vs.stride, "attributes": attributes}],
        },
        fragment={"module": module, "entry_point": "ps", "targets": [{"format": "rgba8unorm"}]},
    )
    # uv is 1 at every vertex (0.5 after the vertex stage): the pixel's red and green are half.
    rows = [[x, y, 1, 1] for x, y in ((-1, -1), (3, -1), (-1, 3))]
    vertices = dev.create_buffer_with_data(
        data=np.array(rows, np.float32).tobytes(), usage=wgpu.BufferUsage.VERTEX
    )
    tint = dev.create_buffer_with_data(
        data=np.array([1, 1, 1, 1], np.float32).tobytes(), usage=wgpu.BufferUsage.UNIFORM
    )
    group = dev.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[{"binding": 0, "resource": {"buffer": tint, "offset": 0, "size": 16}}],
    )

    def draw(rpass: Any) -> None:
        rpass.set_pipeline(pipeline)
        rpass.set_bind_group(0, group)
        rpass.set_vertex_buffer(0, vertices)
        rpass.draw(3)

    return render(draw, 4)


def test_the_wgsl_runs_with_the_outputs_hlsl_writes(tmp_path: Path) -> None:
    pixels = _draw(_build(tmp_path, (Target.Wgsl,))).astype(int)
    assert np.abs(pixels[1, 1] - np.array([128, 128, 255, 255])).max() <= 1, pixels[1, 1]
