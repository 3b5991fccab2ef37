"""Texture reads DXC-era code writes that Slang builds for SPIR-V only: a sparse-residency
status argument (WGSL and Metal have no residency feedback: every texel is resident, so the
argument is dropped and ``CheckAccessFullyMapped`` is true) and a ``Load`` with an offset
(added to the location). Both were E36107 on WGSL and Metal. A load with an offset and a
status runs on WGSL; a multisampled one is validated only (the software adapter of this
machine kind, OpenGL, reads multisampled textures as zeros)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from verify_support import dispatch

from module_validation import device
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.compiler.source.rewrite import (
    STANDARD_SAMPLE_POSITIONS,
    load_offsets,
    offset_textures,
    status_arguments,
)
from oneshader.reflection.model import Target

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)

STATUS = """\
Texture2D<float4> tex : register(t0);
RWStructuredBuffer<float4> result : register(u1);

[numthreads(1, 1, 1)]
void main()
{
    uint status;
    float4 v = tex.Load(int3(0, 0, 0), int2(1, 0), status);
    result[0] = CheckAccessFullyMapped(status) ? v : float4(-1, -1, -1, -1);
}
"""

MS_OFFSET = """\
Texture2DMS<float4> tex : register(t0);
RWStructuredBuffer<float4> result : register(u1);

[numthreads(1, 1, 1)]
void main()
{
    uint status = 0;
    result[0] = tex.Load(int2(0, 0), 1, int2(1, 0));
    result[1] = tex.Load(int2(0, 0), 2, int2(0, 0), status);
}
"""


def _build(tmp_path: Path, source: str, targets: tuple[Target, ...] = ALL) -> CompileResult:
    path = tmp_path / "loads.hlsl"
    path.write_text(source)
    options = CompileOptions(targets=targets, source_name="loads.hlsl")
    result = compile_file(str(path), options)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def test_status_arguments_are_found_by_their_count_and_type() -> None:
    text = """uint st; int2 off; uint s;
a.Load(int3(0, 0, 0), int2(1, 0), st);  b.Load(c, 1, off);  m.Load(c, s);
t.Sample(q, uv, int2(0, 0), 0.5, st);  t.Sample(q, uv, int2(0, 0), 0.5);
t.SampleLevel(q, uv, 0, int2(0, 0), st);  t.GatherRed(q, uv, int2(0, 0), st);
"""
    found = [text[i:j] for i, j in status_arguments(text)]
    assert found == [", st"] * 4  # not an int2 offset, not a two-argument Load's uint


@pytest.mark.parametrize("source", [STATUS, MS_OFFSET], ids=["status", "ms-offset"])
def test_wgsl_and_metal_reflect_as_spirv(tmp_path: Path, source: str) -> None:
    def seen(r: Any) -> Any:
        return r.entry_points, [(res.name, res.rtype) for res in r.resources]

    spirv = seen(_build(tmp_path, source, (Target.SpirV,)).reflection)
    for target in (Target.Msl, Target.Wgsl):
        assert seen(_build(tmp_path, source, (target,)).reflection) == spirv


def test_loads_with_an_offset_are_found_by_the_texture_type() -> None:
    texts = ["Texture2DMS<float4> ms; Texture2D<float4> plain; RWTexture2D<float4> rw;"]
    code = "ms.Load(c, 1, int2(1, 0)); plain.Load(int3(c, 0), int2(1, 0)); ms.Load(c, 1); "
    code += "plain.Load(int3(c, 0)); rw.Load(c, s);"
    assert [call for _, _, call in load_offsets(code, offset_textures(texts))] == [
        "oneshader_offset(c, int2(1, 0)), 1",
        "oneshader_offset(int3(c, 0), int2(1, 0))",
    ]


def test_a_call_without_arguments_is_left_to_slang(tmp_path: Path) -> None:
    """A ``Load()`` of no texture of offsets, with nothing to move (a buffer's, written wrong)
    beside a texture's load with an offset: Slang's error at the call, not an internal error
    (was OS9002 on WGSL and Metal: an IndexError)."""
    code = "plain.Load(int3(c, 0), int2(1, 0)); b.Load(); plain.Load();"
    texts = ["Texture2D<float4> plain; ByteAddressBuffer b;"]
    assert [call for _, _, call in load_offsets(code, offset_textures(texts))] == [
        "oneshader_offset(int3(c, 0), int2(1, 0))"
    ]
    path = tmp_path / "loads.hlsl"
    path.write_text(
        STATUS.replace("uint status;", "uint status; ByteAddressBuffer b;").replace(
            "result[0] =", "result[1] = asfloat(b.Load()).xxxx; result[0] ="
        )
    )
    for target in ALL:
        result = compile_file(str(path), CompileOptions(targets=(target,), source_name="x.hlsl"))
        (error,) = [d for d in result.diagnostics if d.severity.name == "ERROR"]
        assert error.code.startswith("E") and "Load" in error.message, error.format()
        assert (error.line, error.column) == (9, 31), error.format()  # at the call


def _run(result: CompileResult, texture: Any) -> Any:
    import wgpu

    dev = device()
    code = next(o.data.decode() for o in result.outputs if o.target is Target.Wgsl)
    module = dev.create_shader_module(code=code)
    out = dev.create_buffer(size=32, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    layout = dev.create_bind_group_layout(
        entries=[
            {
                "binding": 0,
                "visibility": wgpu.ShaderStage.COMPUTE,
                "texture": {"sample_type": "unfilterable-float", "view_dimension": "2d"},
            },
            {
                "binding": 1,
                "visibility": wgpu.ShaderStage.COMPUTE,
                "buffer": {"type": wgpu.BufferBindingType.storage},
            },
        ]
    )
    pipeline = dev.create_compute_pipeline(
        layout=dev.create_pipeline_layout(bind_group_layouts=[layout]),
        compute={"module": module, "entry_point": "main"},
    )
    entries = [
        {"binding": 0, "resource": texture.create_view()},
        {"binding": 1, "resource": {"buffer": out, "offset": 0, "size": 32}},
    ]
    dispatch(pipeline, {0: entries}, 1)
    return np.frombuffer(dev.queue.read_buffer(out), np.float32).reshape(2, 4)


def test_a_load_with_a_status_runs_as_fully_mapped_on_wgsl(tmp_path: Path) -> None:
    import wgpu

    dev = device()
    texture = dev.create_texture(
        size=(2, 1, 1),
        format="rgba32float",
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )
    texels = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)
    dev.queue.write_texture(
        {"texture": texture}, texels.tobytes(), {"bytes_per_row": 32}, (2, 1, 1)
    )
    values = _run(_build(tmp_path, STATUS), texture)
    assert values[0].tolist() == [5, 6, 7, 8]  # texel (0 + 1, 0), and fully mapped


SAMPLE_POSITIONS = """\
Texture2DMS<float4> tex : register(t0);
RWStructuredBuffer<float2> result : register(u1);

[numthreads(1, 1, 1)]
void main()
{
    for (int i = 0; i < 4; i++)
        result[i] = tex.GetSamplePosition(i);
}
"""


def test_sample_positions_build_on_every_target(tmp_path: Path) -> None:
    """Slang's SPIR-V crashed on GetSamplePosition (a SIGSEGV in the compiler) and WGSL and
    Metal have no such query: every target reads the standard positions for the texture's
    sample count, as DXC's SPIR-V does. (Not run: the software adapter of this machine kind
    reports no samples of a multisampled texture.)"""
    result = _build(tmp_path, SAMPLE_POSITIONS)
    wgsl = next(o.data.decode() for o in result.outputs if o.target is Target.Wgsl)
    assert "textureNumSamples(" in wgsl and "oneshader_GetSamplePosition_0(tex, i" in wgsl


def test_the_standard_sample_positions_are_vulkans() -> None:
    """Vulkan's standard sample locations (its specification's table, as fractions of the
    pixel from its top-left corner), which are D3D's, WebGPU's (4 samples) and Metal's."""
    vulkan = {
        2: [(0.75, 0.75), (0.25, 0.25)],
        4: [(0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875)],
        8: [
            (0.5625, 0.3125), (0.4375, 0.6875), (0.8125, 0.5625), (0.3125, 0.1875),
            (0.1875, 0.8125), (0.0625, 0.4375), (0.6875, 0.9375), (0.9375, 0.0625),
        ],
    }  # fmt: skip
    for n, fractions in vulkan.items():
        ours = STANDARD_SAMPLE_POSITIONS[n - 1 : 2 * n - 1]
        assert [((x + 8) / 16, (y + 8) / 16) for x, y in ours] == fractions
