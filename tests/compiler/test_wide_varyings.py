"""Arrays and matrices between stages (and as vertex inputs) on WGSL, which passes only scalars
and vectors: the WGSL entry points carry one vector per location, at the locations SPIR-V
gives, and rebuild the value; the reflection lists one variable per location, so a host's
vertex layout and WGSL's linking agree with SPIR-V. Run on the software adapter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from verify_support import render, vertex_pipeline

from module_validation import device
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.reflection.model import Target

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)

SHADER = """\
struct VSIn { float2 p : POSITION; float4x4 m : MATRIX; };
struct VSOut
{
    float4 pos : SV_Position;
    float4x4 view : VIEW;
    float3 c[2] : COLOR;
    nointerpolation int2 k[2] : KEY;
};

[shader("vertex")]
VSOut vs(VSIn i)
{
    VSOut o;
    o.pos = float4(i.p, 0, 1);
    o.view = i.m;
    o.c[0] = float3(0.75, 0, 0);
    o.c[1] = float3(0, 0, 1);
    o.k[0] = int2(1, 2);
    o.k[1] = int2(3, 4);
    return o;
}

[shader("pixel")]
float4 ps(VSOut i) : SV_Target
{
    float keys = (i.k[1].y == 4 && i.k[0].x == 1) ? 1.0 : 0.0;
    return float4(i.view[0][1], i.view[1][0], i.c[0].x, i.c[1].z * keys);
}
"""


def _build(tmp_path: Path, source: str, targets: tuple[Target, ...] = ALL) -> CompileResult:
    path = tmp_path / "wide.hlsl"
    path.write_text(source)
    return compile_file(str(path), CompileOptions(targets=targets, source_name="wide.hlsl"))


def _ok(tmp_path: Path, source: str, targets: tuple[Target, ...] = ALL) -> CompileResult:
    result = _build(tmp_path, source, targets)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def test_reflection_lists_one_variable_per_location(tmp_path: Path) -> None:
    r = _ok(tmp_path, SHADER).reflection
    assert r is not None
    vs, ps = r.entry_points
    located = [(v.name, v.semantic, v.index, v.location, v.components) for v in vs.outputs[1:]]
    assert located == [
        *(("view", "VIEW", 0, k, 4) for k in range(4)),
        ("c", "COLOR", 0, 4, 3),
        ("c", "COLOR", 0, 5, 3),
        ("k", "KEY", 0, 6, 2),
        ("k", "KEY", 0, 7, 2),
    ]
    assert [v.location for v in ps.inputs[1:]] == list(range(8))
    # The matrix vertex input: four float32x4 attributes after the position.
    attributes = [(v.location, v.format.value, v.offset) for v in vs.inputs]
    assert attributes == [(0, "float32x2", 0)] + [
        (1 + k, "float32x4", 8 + 16 * k) for k in range(4)
    ]
    assert vs.stride == 72


def test_wgsl_declares_vectors_at_spirv_locations(tmp_path: Path) -> None:
    result = _ok(tmp_path, SHADER)
    wgsl = next(o.data.decode() for o in result.outputs if o.target is Target.Wgsl)
    assert "@location(3) view_0__3 : vec4<f32>" in wgsl
    assert "@location(5) c_0__1 : vec3<f32>" in wgsl
    assert "@location(7) @interpolate(flat) k_0__1 : vec2<i32>" in wgsl or (
        "@interpolate(flat) @location(7) k_0__1 : vec2<i32>" in wgsl
    )


def _draw(result: CompileResult, target: Target) -> Any:
    """One triangle over the whole target, every vertex with the same matrix, laid out from
    the reflection's vertex inputs: attribute k holds the matrix's column k (SPIR-V's)."""
    import wgpu

    r = result.reflection
    assert r is not None
    vs = next(e for e in r.entry_points if e.name == "vs")
    out = next(o for o in result.outputs if o.target is target)
    dev = device()
    module = dev.create_shader_module(
        code=out.data if target is Target.SpirV else out.data.decode("utf-8")
    )
    pipeline = vertex_pipeline(module, vs)
    # HLSL m[row][column] = column[column][row]: m[0][1] = 0.25, m[1][0] = 0.5.
    columns = [[0, 0.5, 0, 0], [0.25, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    rows = [
        [x, y, *(c for column in columns for c in column)] for x, y in ((-1, -1), (3, -1), (-1, 3))
    ]
    data = np.array(rows, np.float32).tobytes()
    buffer = dev.create_buffer_with_data(data=data, usage=wgpu.BufferUsage.VERTEX)

    def draw(rpass: Any) -> None:
        rpass.set_pipeline(pipeline)
        rpass.set_vertex_buffer(0, buffer)
        rpass.draw(3)

    return render(draw, 4)


def test_runs_with_the_values_hlsl_gives(tmp_path: Path) -> None:
    """WGSL on the software adapter (wgpu's SPIR-V reader refuses matrices and arrays as stage
    variables, so SPIR-V is validated, not run): the pixel reads m[0][1] and m[1][0] where
    HLSL has them, the arrays' elements and the flat integers whole."""
    pixels = _draw(_ok(tmp_path, SHADER), Target.Wgsl).astype(int)
    assert np.abs(pixels - np.array([64, 128, 191, 255])).max() <= 1, pixels[0, 0]


def test_wgsl_stage_interfaces_link(tmp_path: Path) -> None:
    """The split vertex outputs and pixel inputs of one WGSL module make one pipeline (what
    create_render_pipeline checks: the same locations and types on both sides)."""
    result = _ok(tmp_path, SHADER, (Target.Wgsl,))
    assert _draw(result, Target.Wgsl)[0, 0, 3] == 255


def test_the_bindings_hold_a_matrix_input_as_one_field(tmp_path: Path) -> None:
    """The host fills the matrix by name, one row of the field per location (SPIR-V's column),
    and the layout lists its four attributes."""
    from oneshader.bindings import from_reflection

    r = _ok(tmp_path, SHADER).reflection
    assert r is not None
    vs = from_reflection(r, "wide").entry("vs")
    per_instance = vs.instance_buffer("m")
    assert per_instance.names == ("m",)
    assert [a["shader_location"] for a in per_instance.layout["attributes"]] == [1, 2, 3, 4]
    assert per_instance.stride == 64
    data = per_instance.zeros(1)
    data["m"][0] = np.arange(16).reshape(4, 4)
    assert np.frombuffer(data.tobytes(), np.float32)[4:8].tolist() == [4, 5, 6, 7]
    whole = vs.vertex_buffer()
    assert whole.zeros(1)["m"].shape == (1, 4, 4) and whole.dtype.fields["m"][1] == 8
    assert vs.vertex_buffers() == [whole.layout]


MATRICES = """\
struct VSOut
{
    float4 pos : SV_Position;
    float2x3 ms[2] : MS;
    float3x2 n : N;
};

[shader("vertex")]
VSOut vs(uint id : SV_VertexID)
{
    VSOut o;
    o.pos = float4(id == 1 ? 3 : -1, id == 2 ? 3 : -1, 0, 1);
    o.ms[0] = float2x3(1, 2, 3, 4, 5, 6) / 16;
    o.ms[1] = float2x3(7, 8, 9, 10, 11, 12) / 16;
    o.n = float3x2(1, 2, 3, 4, 5, 6) / 8;
    return o;
}

[shader("pixel")]
float4 ps(VSOut i) : SV_Target
{
    return float4(i.ms[1][1][2], i.ms[0][0][1], i.n[2][1], 1);
}
"""

COLOURS = """\
struct PSOut { float4 c[2] : SV_Target0; };

[shader("pixel")]
PSOut ps(float4 pos : SV_Position)
{
    PSOut o;
    o.c[0] = pos;
    o.c[1] = 1;
    return o;
}
"""


def test_arrays_of_matrices(tmp_path: Path) -> None:
    """Non-square matrices (one location per column, each a vector of the rows) and an array
    of them (each element's columns in turn): WGSL runs with the values HLSL gives."""
    result = _ok(tmp_path, MATRICES)
    r = result.reflection
    assert r is not None
    vs = r.entry_points[0]
    assert [(v.name, v.location, v.components) for v in vs.outputs[1:]] == [
        *(("ms", k, 2) for k in range(6)),
        *(("n", 6 + k, 3) for k in range(2)),
    ]
    dev = device()
    module = dev.create_shader_module(
        code=next(o.data.decode() for o in result.outputs if o.target is Target.Wgsl)
    )
    pipeline = dev.create_render_pipeline(
        layout="auto",
        vertex={"module": module, "entry_point": "vs"},
        fragment={"module": module, "entry_point": "ps", "targets": [{"format": "rgba8unorm"}]},
    )

    def draw(rpass: Any) -> None:
        rpass.set_pipeline(pipeline)
        rpass.draw(3)

    pixels = render(draw, 4).astype(int)
    assert np.abs(pixels[0, 0] - np.array([191, 32, 191, 255])).max() <= 1, pixels[0, 0]


def test_an_array_of_colour_outputs_writes_one_attachment_each(tmp_path: Path) -> None:
    r = _ok(tmp_path, COLOURS).reflection
    assert r is not None
    outputs = r.entry_points[0].outputs
    assert [(v.semantic, v.index, v.location) for v in outputs] == [
        ("SV_Target", 0, 0),
        ("SV_Target", 1, 1),
    ]
