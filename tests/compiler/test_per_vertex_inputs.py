"""GetAttributeAtVertex (SPV_KHR_fragment_shader_barycentric): DXC's and Slang's SPIR-V declare
the nointerpolation input PerVertexKHR, an array over the primitive's vertices. It is not
interpolated (the reflection's Flat) and its vertex array takes no locations of its own: the
cross-check read Default interpolation and three locations (OS9000 on DXC's
intrinsics.get-attribute-at-vertex tests)."""

from __future__ import annotations

from pathlib import Path

from module_validation import spirv_errors
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import EntryPointSpec
from oneshader.reflection.model import Interpolation, Stage, Target

SHADER = """cbuffer constants : register(b0) { uint idx; };
float4 main(nointerpolation float3 a : A, float4 b : B) : SV_Target
{
    float third = GetAttributeAtVertex(a, 2)[idx];
    return float4(GetAttributeAtVertex(a, 1), third) + b;
}
"""


def test_a_per_vertex_input_is_flat_and_takes_one_location(tmp_path: Path) -> None:
    (tmp_path / "p.hlsl").write_text(SHADER)
    options = CompileOptions(
        (Target.SpirV,), "p.hlsl", entry_points=(EntryPointSpec("main", Stage.Pixel),)
    )
    result = compile_file(str(tmp_path / "p.hlsl"), options)
    assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
    assert spirv_errors(result.outputs[0].data) == ""
    inputs = {v.name: v for v in result.reflection.entry_points[0].inputs}
    assert inputs["a"].interp is Interpolation.Flat
    assert (inputs["a"].location, inputs["b"].location) == (0, 1)
