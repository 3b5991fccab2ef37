"""Vertex compression: ``[[oneshader::format("unorm8x4")]] float4 Color : COLOR`` feeds the input
from a vertex buffer in that format (the shader reads its 32-bit type; the GPU converts on
fetch). The reflection's ``format``, offsets and stride, the bindings' vertex layout and numpy
dtype follow; a render on the software adapter draws with compressed attributes, from the WGSL
and from the SPIR-V."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from verify_support import render, runtime_bindings

from module_validation import device
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.reflection.model import Target, VertexFormat

SHADER = """\
struct VSIn
{
    [[oneshader::format("snorm16x2")]] float2 Position : POSITION;
    [[oneshader::format("unorm8x4")]] float4 Color : COLOR;
    [[oneshader::format("uint8x4")]] uint4 Tag : TAG;
    [[oneshader::format("float16x2")]] float2 Scale : SCALE;
};
struct VSOut
{
    float4 Position : SV_Position;
    float4 Color : COLOR;
};

[shader("vertex")]
VSOut VSMain(VSIn i)
{
    VSOut o;
    o.Position = float4(i.Position * i.Scale.x + i.Scale.y, 0, 1);
    o.Color = i.Color * (float(i.Tag.x) / 4.0);
    return o;
}

[shader("pixel")]
float4 PSMain(VSOut v) : SV_Target
{
    return v.Color;
}
"""
SIZE = 16


def _build(tmp_path: Path, source: str) -> CompileResult:
    path = tmp_path / "packed.hlsl"
    path.write_text(source)
    options = CompileOptions(targets=(Target.SpirV, Target.Wgsl), source_name="packed.hlsl")
    return compile_file(str(path), options)


def _bindings(tmp_path: Path) -> Any:
    result = _build(tmp_path, SHADER)
    assert result.ok and not result.diagnostics, [d.format() for d in result.diagnostics]
    return runtime_bindings(result, tmp_path, "packed")


def test_the_reflection_and_the_bindings_carry_the_formats(tmp_path: Path) -> None:
    mod = _bindings(tmp_path)
    vs = mod.entries.VSMain
    inputs = {v.name: (v.format, v.offset) for v in vs.entry.inputs}
    assert inputs == {
        "Position": (VertexFormat.Snorm16x2, 0),
        "Color": (VertexFormat.Unorm8x4, 4),
        "Tag": (VertexFormat.Uint8x4, 8),
        "Scale": (VertexFormat.Float16x2, 12),
    }
    assert vs.entry.stride == 16  # 48 bytes as float2, float4, uint4, float2
    buffer = vs.vertex_buffer()
    assert buffer.stride == 16
    assert [a["format"] for a in buffer.layout["attributes"]] == [
        "snorm16x2",
        "unorm8x4",
        "uint8x4",
        "float16x2",
    ]
    dtype = buffer.dtype
    assert (dtype["Position"], dtype["Color"], dtype["Tag"], dtype["Scale"]) == (
        np.dtype(("<i2", (2,))),
        np.dtype(("u1", (4,))),
        np.dtype(("u1", (4,))),
        np.dtype(("<f2", (2,))),
    )


def _vertices(buffer: Any) -> Any:
    verts = buffer.zeros(3)
    verts["Position"] = [[-32767, -32767], [32767, -32767], [-32767, 32767]]  # snorm: -1, 1
    verts["Color"] = [255, 128, 0, 255]  # unorm: 1, 0.502, 0, 1
    verts["Tag"] = [4, 0, 0, 0]
    verts["Scale"] = [4.0, 1.0]  # (-3,-3), (5,-3), (-3,5): over the whole target
    return verts


@pytest.mark.parametrize("target", [Target.Wgsl, Target.SpirV])
def test_a_draw_with_compressed_attributes(tmp_path: Path, target: Target) -> None:
    mod = _bindings(tmp_path)
    vs, ps = mod.entries.VSMain, mod.entries.PSMain
    dev = device()
    if target is Target.Wgsl:
        pipeline = mod.SHADER.create_render_pipeline(dev, vs, ps, ["rgba8unorm"])
    else:
        module = dev.create_shader_module(code=(tmp_path / "packed.spv").read_bytes())
        pipeline = dev.create_render_pipeline(
            layout="auto",
            vertex={"module": module, "entry_point": "VSMain", "buffers": vs.vertex_buffers()},
            fragment={
                "module": module,
                "entry_point": "PSMain",
                "targets": [{"format": "rgba8unorm"}],
            },
        )
    buffer = vs.vertex_buffer()
    vertices = buffer.create_buffer(dev, _vertices(buffer))

    def draw(rp: Any) -> None:
        rp.set_pipeline(pipeline)
        rp.set_vertex_buffer(0, vertices)
        rp.draw(3)

    rgba = render(draw, SIZE).astype(int)
    assert (np.abs(rgba - [255, 128, 0, 255]) <= 1).all(), rgba[0, 0]


@pytest.mark.parametrize(
    ("declaration", "words"),
    [
        ('[[oneshader::format("unorm8x4")]] uint4 Color : COLOR', "unorm8x4 is read as float"),
        ('[[oneshader::format("rgba8")]] float4 Color : COLOR', "unknown vertex format 'rgba8'"),
        ('[[oneshader::format("uint8x4")]] float4 Color : COLOR', "declare it uint4"),
    ],
)
def test_a_format_the_input_cannot_have_is_an_error_at_the_attribute(
    tmp_path: Path, declaration: str, words: str
) -> None:
    source = f"""\
struct VSIn
{{
    float2 Position : POSITION;
    {declaration};
}};
[shader("vertex")]
float4 VSMain(VSIn i) : SV_Position {{ return float4(i.Position, float(i.Color.x), 1); }}
"""
    result = _build(tmp_path, source)
    (diag,) = [d for d in result.diagnostics if d.is_error]
    assert (diag.code, diag.line, diag.column) == ("OS1014", 4, 7)
    assert words in diag.message


def test_a_format_on_a_pixel_input_is_an_error(tmp_path: Path) -> None:
    source = SHADER.replace(
        "    float4 Color : COLOR;\n};",
        '    [[oneshader::format("unorm8x4")]] float4 Color : COLOR;\n};',
    )
    result = _build(tmp_path, source)
    assert [d.code for d in result.diagnostics if d.is_error] == ["OS1014"] * 2
    assert "only a vertex input is fed from a vertex buffer" in result.diagnostics[0].message
