"""Idioms whose modules a validator rejected although the reflection agreed with them: each is
compiled here and its modules must pass spirv-val (vulkan1.2) and naga."""

from __future__ import annotations

from pathlib import Path

import pytest

from module_validation import spirv_errors
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.emitted.msl import read_msl
from oneshader.compiler.emitted.spirv import read_spirv
from oneshader.reflection.model import Target

_SAMPLE = {
    "input-member": "struct I { float4 p : SV_Position; sample float4 c : COLOR0; };\n"
    '[shader("pixel")] float4 P(I i) : SV_Target { return i.c; }\n',
    "input-parameter": '[shader("pixel")] float4 P(float4 p : SV_Position, sample float4 c : '
    "COLOR0) : SV_Target { return c; }\n",
    "vertex-output": "struct O { float4 p : SV_Position; sample float4 c : COLOR0; };\n"
    '[shader("vertex")] O V(float4 p : POSITION) { O o; o.p = p; o.c = p; return o; }\n',
}


@pytest.mark.parametrize("source", _SAMPLE.values(), ids=_SAMPLE.keys())
def test_sample_interpolation_declares_sample_rate_shading(source: str, tmp_path: Path) -> None:
    """Slang decorates a ``sample`` stage variable ``Sample`` without the SampleRateShading
    capability Vulkan requires for it (VUID: Decorate Sample requires SampleRateShading)."""
    (tmp_path / "s.hlsl").write_text(source)
    result = compile_file(
        str(tmp_path / "s.hlsl"), CompileOptions(targets=(Target.SpirV,), source_name="s.hlsl")
    )
    assert result.ok, [d.format() for d in result.diagnostics]
    (spv,) = result.outputs
    assert "SampleRateShading" in read_spirv(spv.data).capabilities
    assert spirv_errors(spv.data) == ""


def test_vertex_shader_without_position_is_refused_for_wgsl(tmp_path: Path) -> None:
    """A vertex shader that feeds tessellation or a geometry shader outputs no SV_Position;
    Slang only warns, and its WGSL has no @builtin(position) output, which naga refuses. WGSL
    gets a positioned error at the entry point; SPIR-V builds it (Vulkan allows it)."""
    (tmp_path / "v.hlsl").write_text(
        "struct O { float4 c : COLOR0; };\n"
        '[shader("vertex")] O V(float4 p : POSITION) { O o; o.c = p; return o; }\n'
    )

    def build(*targets: Target):  # type: ignore[no-untyped-def]
        options = CompileOptions(targets=targets, source_name="v.hlsl")
        return compile_file(str(tmp_path / "v.hlsl"), options)

    refused = build(Target.SpirV, Target.Wgsl)
    (error,) = [d for d in refused.diagnostics if d.is_error]
    assert (error.file, error.line, error.column, error.code) == ("v.hlsl", 2, 22, "OS1017")
    assert "WGSL" in error.message and "'V'" in error.message and "SV_Position" in error.message
    spirv = build(Target.SpirV)
    assert spirv.ok and spirv_errors(spirv.outputs[0].data) == ""


def test_vertex_shader_returning_a_bare_varying_keeps_it_a_varying_on_metal(
    corpus: Path,
) -> None:
    """A vertex entry point returning a bare value with a user semantic (``float V() : A``)
    writes no position; Slang's Metal made that value ``[[position]]`` (of the wrong type but
    for a float4, and the next stage's varying lost), and the cross-check refused it (OS9000).
    The Metal code gets the ``[[user(...)]]`` varying the reflection states."""
    options = CompileOptions(targets=(Target.Msl,), source_name="bare_return.hlsl")
    result = compile_file(str(corpus / "positionless" / "bare_return.hlsl"), options)
    assert result.ok, [d.format() for d in result.diagnostics]
    (code,) = [o.data.decode() for o in result.outputs if o.target is Target.Msl]
    entries = read_msl(code.encode()).entries
    wanted = {"Scalar": "A", "Pair": "TEXCOORD_3", "Index": "BLENDINDICES_1"}
    for name, semantic in wanted.items():
        (output,) = entries[name].outputs
        assert output.builtin is None and output.semantic == semantic, (name, output)
    assert "[[position]]" not in code
    assert "[[flat]] uint" in code


def test_a_vertex_shader_returning_a_bare_value_without_position_is_refused_for_wgsl(
    tmp_path: Path,
) -> None:
    """Slang's WGSL makes a returned bare value the position when no output is SV_Position
    (``@builtin(position) output_0 : f32``, which naga refuses): the same positioned error,
    read from the outputs' semantics, not from the WGSL."""
    (tmp_path / "v.hlsl").write_text(
        '[shader("vertex")]\nfloat V(float4 a : AAA, float2x3 c : CC) : DDDD { return 1.0; }\n'
    )
    options = CompileOptions(targets=(Target.Wgsl,), source_name="v.hlsl")
    result = compile_file(str(tmp_path / "v.hlsl"), options)
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert (error.line, error.column, error.code) == (2, 7, "OS1017")


@pytest.mark.parametrize("texel", ["float2", "half", "uint2", "int"])
def test_an_inferred_extended_image_format_declares_its_capability(
    texel: str, tmp_path: Path
) -> None:
    """``RWTexture2D<float2>``: oneshader gives the SPIR-V image DXC's format, inferred from
    the texel (rg32f); Vulkan asks StorageImageExtendedFormats for it, which was missing, and
    spirv-val refused the module (DXC's type.rwtexture.load.function.return). A base format
    (r32i) needs nothing."""
    (tmp_path / "s.hlsl").write_text(
        f"RWTexture2D<{texel}> img : register(u0);\n"
        "[numthreads(1, 1, 1)] void main(uint3 id : SV_DispatchThreadID)\n"
        "{ img[id.xy] = img[id.xy] * 2; }\n"
    )
    options = CompileOptions(targets=(Target.SpirV,), source_name="s.hlsl")
    result = compile_file(str(tmp_path / "s.hlsl"), options)
    assert result.ok, [d.format() for d in result.diagnostics]
    (spv,) = result.outputs
    assert spirv_errors(spv.data) == ""
    extended = "StorageImageExtendedFormats" in read_spirv(spv.data).capabilities
    assert extended is (texel != "int")


@pytest.mark.parametrize(
    ("element", "refused"), [("bool", False), ("bool3", True), ("Flags", False)]
)
def test_a_structured_buffer_of_bool_vectors_is_refused_for_spirv(
    element: str, refused: bool, tmp_path: Path
) -> None:
    """``RWStructuredBuffer<bool4>``: Slang's SPIR-V stores bool vectors in the storage buffer,
    which spirv-val refuses (DXC's op.vector.swizzle.buffer-store): an OS1003 at the
    declaration. A bool, or a struct holding the bool vector, is stored as uints: valid."""
    (tmp_path / "s.hlsl").write_text(
        "struct Flags { bool3 v; };\n"
        f"RWStructuredBuffer<{element}> b;\n"
        f"[numthreads(1, 1, 1)] void main() {{ {element} a = b[0]; b[1] = a; }}\n"
    )
    options = CompileOptions(targets=(Target.SpirV,), source_name="s.hlsl")
    result = compile_file(str(tmp_path / "s.hlsl"), options)
    if refused:
        (error,) = [d for d in result.diagnostics if d.is_error]
        assert (error.line, error.column, error.code) == (2, 27, "OS1003")
        assert "SPIR-V" in error.message and "bool vectors" in error.message
    else:
        assert result.ok, [d.format() for d in result.diagnostics]
        assert spirv_errors(result.outputs[0].data) == ""
