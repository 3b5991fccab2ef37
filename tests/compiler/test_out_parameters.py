"""``out`` and ``inout`` parameters of an entry point are its outputs: the reflection lists them
(after the returned value, as DXC counts locations) and SPIR-V and Metal build them (Metal
crashes in Slang beside a returned value, OS9001); Slang's WGSL for them is not WGSL, so on
WGSL each is a positioned error that names it (as is a pixel input WGSL has in the vertex
stage only)."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_out_parameters_follow_the_result_and_inout_is_both(tmp_path: Path) -> None:
    # SPIR-V only: Slang's Metal back end crashes on this entry point (in spCompile; the
    # worker reports it as OS9001).
    r = _ok(tmp_path, BESIDE_RESULT, (Target.SpirV,)).reflection
    assert r is not None
    vs = r.entry_points[0]
    assert [(v.name, v.location) for v in vs.inputs] == [("p", 0), ("c", 1)]
    assert [(v.name, v.semantic, v.location) for v in vs.outputs] == [
        ("result", "COLOR", 0),
        ("b", "B", 1),
        ("c", "C", 2),
    ]


def test_out_parameters_are_named_errors_on_wgsl(tmp_path: Path) -> None:
    result = _build(tmp_path, OUT_ONLY, (*NATIVE, Target.Wgsl))
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.code, d.line, d.column) for d in errors] == [("OS1003", 2, 41), ("OS1003", 2, 68)]
    assert "WGSL: 'out' parameter 'o' : SV_Position of entry point 'vs'" in errors[0].message
    assert "'a' : A" in errors[1].message


def test_a_vertex_only_builtin_read_by_a_pixel_shader_is_a_named_error_on_wgsl(
    tmp_path: Path,
) -> None:
    source = '[shader("pixel")]\nfloat4 ps(uint id : SV_InstanceID) : SV_Target { return id; }\n'
    result = _build(tmp_path, source, (Target.Wgsl,))
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert (error.line, error.column, error.code) == (2, 16, "OS1003")
    # Every target's error (DXC's ordinary varying is not built; Slang's built-in is none)
    assert "'id' : SV_InstanceID between the vertex and pixel stages" in error.message
