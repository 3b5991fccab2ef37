"""Storage textures are declared for what the shader does to them (patch/access.py): a texture
only written is WGSL ``write`` and SPIR-V NonReadable, only read ``read`` and NonWritable, read
and written ``read_write``; the reflection's ``access`` says the same, and the bindings ask for
the device feature a read-write texture of a format beyond core WebGPU's needs. Before, every
RWTexture was ``read_write``: a ``RWTexture2D<float4>`` only written failed on a default device
("ReadWrite access to storage textures with format Rgba32Float is not supported")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from verify_support import dispatch, runtime_bindings

from module_validation import device, disassembled, spirv_errors, wgsl_errors
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult, EntryPointSpec
from oneshader.compiler.patch.access import storage_access
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import Access, Stage, Target

SHADER = """\
RWTexture2D<float4> Dst : register(u0);
[[vk::image_format("rgba8")]] RWTexture2D<float4> Src : register(u1);
[[vk::image_format("r32f")]] RWTexture2D<float> Both : register(u2);
RWTexture2D<float4> Measured : register(u3);

float4 fetch(uint2 at) { return Src[at]; }

[numthreads(4, 4, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    uint w, h;
    Measured.GetDimensions(w, h);
    Dst[id.xy] = fetch(id.xy) + float4(w, h, 0, 0);
    Both[id.xy] = Both[id.xy] * 2;
}
"""
WANTED = {
    "Dst": Access.WriteOnly,
    "Src": Access.ReadOnly,
    "Both": Access.ReadWrite,
    "Measured": Access.WriteOnly,  # only measured: ``write``, the access every device has
}
WGSL_WORDS = {Access.WriteOnly: "write", Access.ReadOnly: "read", Access.ReadWrite: "read_write"}


def _build(tmp_path: Path, source: str, targets: tuple[Target, ...]) -> CompileResult:
    path = tmp_path / "access.hlsl"
    path.write_text(source)
    result = compile_file(str(path), CompileOptions(targets=targets, source_name="access.hlsl"))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def _output(result: CompileResult, target: Target) -> bytes:
    return next(o.data for o in result.outputs if o.target is target)


def _bindings(tmp_path: Path, result: CompileResult) -> Any:
    return runtime_bindings(result, tmp_path, "access")


def test_each_storage_texture_is_declared_for_its_use(tmp_path: Path) -> None:
    result = _build(tmp_path, SHADER, (Target.SpirV, Target.Wgsl))
    assert result.reflection is not None
    access = {r.name: r.access for r in result.reflection.resources}
    assert access == WANTED
    wgsl = _output(result, Target.Wgsl).decode()
    for name, a in WANTED.items():
        assert re.search(rf"var {name}(_\d+)? : texture_storage_2d<\w+, {WGSL_WORDS[a]}>", wgsl)
    assert wgsl_errors(wgsl) == ""
    spirv = _output(result, Target.SpirV)
    assert spirv_errors(spirv) == ""
    dis = disassembled(spirv)
    assert "OpDecorate %Dst NonReadable" in dis and "OpDecorate %Measured NonReadable" in dis
    assert "OpDecorate %Src NonWritable" in dis
    assert not re.search(r"OpDecorate %Both Non", dis)
    text = ReflectionFormat.write(result.reflection)
    assert b'hlsl="RWTexture2D<float4>" format="rgba32f" access=WriteOnly' in text
    assert ReflectionFormat.try_read(text) == result.reflection


@pytest.mark.parametrize("target", [Target.SpirV, Target.Wgsl])
def test_one_target_alone_decides_the_same(tmp_path: Path, target: Target) -> None:
    result = _build(tmp_path, SHADER, (target,))
    assert result.reflection is not None
    assert {r.name: r.access for r in result.reflection.resources} == WANTED


def test_an_atomic_on_a_storage_texture_reads_and_writes_it(tmp_path: Path) -> None:
    source = """\
RWTexture2D<uint> Counted : register(u0);
[numthreads(1, 1, 1)]
void main() { InterlockedAdd(Counted[uint2(0, 0)], 1); }
"""
    result = _build(tmp_path, source, (Target.SpirV,))
    assert result.reflection is not None
    assert result.reflection.resources[0].access is Access.ReadWrite
    assert "NonReadable" not in disassembled(_output(result, Target.SpirV))


def test_a_typed_buffer_slang_marks_write_only_keeps_the_reflections_read_write(
    tmp_path: Path,
) -> None:
    """A rasterizer-ordered typed buffer whose read Slang drops (the value is never used) is
    ``NonReadable`` in Slang's own SPIR-V: the reflection's access speaks of storage textures
    only, so a typed buffer stays ReadWrite (an OS9000 before)."""
    source = """\
RasterizerOrderedBuffer<float> Ordered : register(u0);
float4 main() : SV_Target {
    float unused = Ordered[0];
    Ordered[1] = 2.0;
    return 0;
}
"""
    path = tmp_path / "rov.hlsl"
    path.write_text(source)
    spec = EntryPointSpec("main", Stage.Pixel)
    options = CompileOptions(targets=(Target.SpirV,), source_name="rov.hlsl", entry_points=(spec,))
    result = compile_file(str(path), options)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    assert result.reflection is not None
    assert result.reflection.resources[0].access is Access.ReadWrite
    assert spirv_errors(_output(result, Target.SpirV)) == ""


def test_a_use_the_analysis_cannot_classify_counts_as_read_and_write() -> None:
    from oneshader.reflection.model import Resource, ResourceKind, ResourceTypeKind

    res = [Resource("T", ResourceKind.UnorderedAccess, ResourceTypeKind.RWTexture2D)]
    wgsl = b"@binding(0) @group(0) var T : texture_storage_2d<rgba8unorm, read_write>;\n"
    assert storage_access({Target.Wgsl: wgsl + b"fn f() { g(T); }"}, res) == {"T": Access.ReadWrite}
    assert storage_access({Target.Wgsl: wgsl + b"fn f() { textureStore((T), c, v); }"}, res) == {
        "T": Access.WriteOnly
    }


WRITE_ONLY = """\
RWTexture2D<float4> Dst : register(u0);
[numthreads(4, 4, 1)]
void main(uint3 id : SV_DispatchThreadID) { Dst[id.xy] = float4(id.x, id.y, 1, 2); }
"""


@pytest.mark.parametrize("target", [Target.SpirV, Target.Wgsl])
def test_a_written_rgba32float_texture_runs_on_a_default_device(
    tmp_path: Path, target: Target
) -> None:
    """The README's failure: a default device (no features) refuses ``read_write`` rgba32float
    on Vulkan adapters; ``write`` is core WebGPU."""
    import wgpu

    result = _build(tmp_path, WRITE_ONLY, (Target.SpirV, Target.Wgsl))
    shader = _bindings(tmp_path, result).SHADER
    assert shader.required_features == ()
    dev = device()
    code = _output(result, target)
    module = dev.create_shader_module(code=code if target is Target.SpirV else code.decode())
    layouts = shader.layouts(dev)
    pipeline = dev.create_compute_pipeline(
        layout=layouts.pipeline, compute={"module": module, "entry_point": "main"}
    )
    tex = dev.create_texture(
        size=(4, 4, 1),
        format="rgba32float",
        usage=wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.COPY_SRC,
    )
    dispatch(pipeline, {0: [{"binding": 0, "resource": tex.create_view()}]}, 1)
    data = dev.queue.read_texture({"texture": tex}, {"bytes_per_row": 64}, (4, 4, 1))
    got = np.frombuffer(data, np.float32).reshape(4, 4, 4)
    assert got[1, 2].tolist() == [2.0, 1.0, 1.0, 2.0]


READ_WRITE_RGBA8 = """\
[[vk::image_format("rgba8")]] RWTexture2D<float4> Img : register(u0);
[numthreads(4, 4, 1)]
void main(uint3 id : SV_DispatchThreadID) { Img[id.xy] = Img[id.xy] * 0.5; }
"""


def test_a_read_write_rgba8_texture_names_the_feature_it_needs(tmp_path: Path) -> None:
    """Named in ``required_features``, and said by ``create_compute_pipeline`` before wgpu
    fails in its bind group layout."""
    mod = _bindings(tmp_path, _build(tmp_path, READ_WRITE_RGBA8, (Target.Wgsl,)))
    assert mod.SHADER.required_features == ("texture-adapter-specific-format-features",)
    dev = device()  # requested without features
    with pytest.raises(LookupError, match=r"lacks the WebGPU feature.*texture-adapter-specific"):
        mod.SHADER.create_compute_pipeline(dev, mod.entries.main)
