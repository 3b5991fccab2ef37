"""``out`` and ``inout`` parameters of an entry point are its outputs: the reflection lists them
(after the returned value, as DXC counts locations). Slang builds them for SPIR-V; its WGSL for
them is not WGSL (pointer parameters) and its Metal crashes beside a returned value, so there a
wrapper returns them (rewrite ``entry_outputs_as_results``): the reflection is SPIR-V's and the
WGSL runs. A pixel input WGSL has in the vertex stage only is a positioned error."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from verify_support import render, vertex_pipeline

from module_validation import device
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.reflection.model import BuiltIn, Target

NATIVE = (Target.SpirV, Target.Msl)

OUT_ONLY = """\
[shader("vertex")]
void vs(float3 p : POSITION, out float4 o : SV_Position, out float a : A)
{ o = float4(p, 1); a = p.x; }
[shader("pixel")]
float4 ps(float a : A) : SV_Target { return a; }
"""

BESIDE_RESULT = """\
[shader("vertex")]
float4 vs(float3 p : POSITION, out float2 b : B, inout float c : C) : COLOR
{
    b = p.xy;
    c = c * 2;
    return float4(p, 1);
}
"""


def _build(tmp_path: Path, source: str, targets: tuple[Target, ...]) -> CompileResult:
    path = tmp_path / "out.hlsl"
    path.write_text(source)
    return compile_file(str(path), CompileOptions(targets=targets, source_name="out.hlsl"))


def _ok(tmp_path: Path, source: str, targets: tuple[Target, ...]) -> CompileResult:
    result = _build(tmp_path, source, targets)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


@pytest.mark.parametrize("targets", [NATIVE, (Target.SpirV,), (Target.Msl,)], ids=str)
def test_out_parameters_are_outputs(tmp_path: Path, targets: tuple[Target, ...]) -> None:
    r = _ok(tmp_path, OUT_ONLY, targets).reflection
    assert r is not None
    vs = r.entry_points[0]
    assert [v.name for v in vs.inputs] == ["p"]
    assert [(v.name, v.builtin, v.location) for v in vs.outputs] == [
        ("o", BuiltIn.Position, None),
        ("a", BuiltIn.None_, 0),
    ]


@pytest.mark.parametrize("target", [Target.SpirV, Target.Msl], ids=str)
def test_out_parameters_follow_the_result_and_inout_is_both(tmp_path: Path, target: Target) -> None:
    r = _ok(tmp_path, BESIDE_RESULT, (target,)).reflection
    assert r is not None
    vs = r.entry_points[0]
    assert [(v.name, v.location) for v in vs.inputs] == [("p", 0), ("c", 1)]
    assert [(v.name, v.semantic, v.location) for v in vs.outputs] == [
        ("result", "COLOR", 0),
        ("b", "B", 1),
        ("c", "C", 2),
    ]


def test_wgsl_returns_the_out_parameters_as_spirv_reflects_them(tmp_path: Path) -> None:
    # They were positioned OS1003 errors: Slang wrote pointer parameters naga refuses.
    wgsl = _ok(tmp_path, OUT_ONLY, (Target.Wgsl,))
    spirv = _ok(tmp_path, OUT_ONLY, (Target.SpirV,))
    assert wgsl.reflection is not None and spirv.reflection is not None
    assert wgsl.reflection.entry_points == spirv.reflection.entry_points
    code = wgsl.outputs[0].data.decode()
    entries = re.findall(r"@(?:vertex|fragment)\s+fn \w+\(([^)]*)\)", code)
    assert len(entries) == 2 and not any("ptr<" in params for params in entries), entries


def test_an_instance_id_read_by_a_pixel_shader_is_a_varying(tmp_path: Path) -> None:
    """As DXC passes it (a flat varying at a location; it was OS1003, Slang's built-in being
    none a pixel shader has)."""
    source = '[shader("pixel")]\nfloat4 ps(uint id : SV_InstanceID) : SV_Target { return id; }\n'
    result = _build(tmp_path, source, (Target.Wgsl,))
    assert result.reflection is not None, [d.format() for d in result.diagnostics]
    (entry,) = result.reflection.entry_points
    (id_,) = [v for v in entry.inputs if v.name == "id"]
    assert (id_.semantic, id_.location, id_.builtin.name) == ("SV_InstanceID", 0, "None_")


RUNS = """\
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


def test_a_result_beside_out_parameters_on_wgsl(tmp_path: Path) -> None:
    wgsl = _ok(tmp_path, TWO_TARGETS, (Target.Wgsl,))
    spirv = _ok(tmp_path, TWO_TARGETS, (Target.SpirV,))
    assert wgsl.reflection is not None and spirv.reflection is not None
    assert wgsl.reflection.entry_points == spirv.reflection.entry_points
    assert [(v.name, v.location) for v in spirv.reflection.entry_points[0].outputs] == [
        ("result", 0),
        ("second", 1),
    ]


def test_inout_and_out_parameters_on_wgsl_as_on_spirv(tmp_path: Path) -> None:
    wgsl = _ok(tmp_path, RUNS, (Target.Wgsl,))
    spirv = _ok(tmp_path, RUNS, (Target.SpirV,))
    assert wgsl.reflection is not None and spirv.reflection is not None
    assert wgsl.reflection.entry_points == spirv.reflection.entry_points
    vs = wgsl.reflection.entry_points[0]
    assert [(v.name, v.location) for v in vs.inputs] == [("p", 0), ("uv", 1)]
    assert [(v.name, v.location) for v in vs.outputs] == [("uv", 0), ("pos", None), ("key", 1)]


def _draw(result: CompileResult) -> Any:
    import wgpu

    r = result.reflection
    assert r is not None
    vs = r.entry_points[0]
    dev = device()
    module = dev.create_shader_module(code=next(o.data.decode() for o in result.outputs))
    pipeline = vertex_pipeline(module, vs)
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
    pixels = _draw(_ok(tmp_path, RUNS, (Target.Wgsl,))).astype(int)
    assert np.abs(pixels[1, 1] - np.array([128, 128, 255, 255])).max() <= 1, pixels[1, 1]


SHARED_STRUCT = """\
struct VSOut { float4 pos : SV_Position; float2 uv : TEXCOORD0; };
[shader("vertex")]
void vs(float2 p : POSITION, out VSOut o OTHER) { o.pos = float4(p, 0, 1); o.uv = p; }
[shader("pixel")]
float4 ps(VSOut i) : SV_Target { return float4(i.uv, i.pos.x, 1); }
"""


def test_a_struct_out_parameter_is_returned_as_it_is(tmp_path: Path) -> None:
    """Returned inside another struct, Slang's WGSL lost the pixel input's @builtin(position)
    of the same struct (naga: "Entry point arguments ... must all have bindings")."""
    source = SHARED_STRUCT.replace(" OTHER", "")
    wgsl = _ok(tmp_path, source, (Target.Wgsl,))
    spirv = _ok(tmp_path, source, (Target.SpirV,))
    assert wgsl.reflection is not None and spirv.reflection is not None
    assert wgsl.reflection.entry_points == spirv.reflection.entry_points
    assert "-> VSOut" in wgsl.outputs[0].data.decode()


def test_a_struct_out_parameter_beside_others_is_returned_member_by_member(
    tmp_path: Path,
) -> None:
    """``out VSOut o, out float k`` (Diligent's Asteroids: ``out float4 position :
    SV_Position, out VSOut vs_output``) was OS1003 on WGSL: the wrapper returns the struct's
    members beside the other outputs, filled from a local, so no struct holds another; the
    reflection is SPIR-V's."""
    source = SHARED_STRUCT.replace(" OTHER", ", out float k : KAY").replace("o.uv = p;", "k = 1;")
    wgsl = _ok(tmp_path, source, (Target.Wgsl,))
    spirv = _ok(tmp_path, source, (Target.SpirV,))
    assert wgsl.reflection is not None and spirv.reflection is not None
    assert wgsl.reflection.entry_points == spirv.reflection.entry_points
    assert [v.name for v in wgsl.reflection.entry_points[0].outputs] == ["pos", "uv", "k"]


def test_a_struct_out_parameter_that_cannot_be_flattened_is_a_positioned_error(
    tmp_path: Path,
) -> None:
    """A member without a semantic: no member-by-member return, OS1003 at the parameters."""
    source = SHARED_STRUCT.replace(" OTHER", ", out float k : KAY").replace("o.uv = p;", "k = 1;")
    source = source.replace("float2 uv : TEXCOORD0;", "float2 uv : TEXCOORD0; float w;")
    result = _build(tmp_path, source, (Target.Wgsl,))
    errors = [(d.code, d.line, d.column) for d in result.diagnostics if d.is_error]
    assert errors == [("OS1003", 3, 40), ("OS1003", 3, 53)]
