"""Entry-point outputs as DXC-era code writes them: a bare result without SV_Position, `out`
parameters beside or instead of a result. Each was an internal error (OS9000, or a Slang crash
for Metal) on real code; each must build correctly or be a positioned error."""

from __future__ import annotations

from pathlib import Path

import pytest

from module_validation import spirv_errors
from oneshader.compiler import CompileOptions, CompileResult, compile_file
from oneshader.compiler.process.worker import CompilerWorker
from oneshader.reflection.model import BuiltIn, Target


def _build(tmp_path: Path, source: str, *targets: Target) -> CompileResult:
    (tmp_path / "s.hlsl").write_text(source)
    options = CompileOptions(targets=targets, source_name="s.hlsl")
    return compile_file(str(tmp_path / "s.hlsl"), options)


def _errors(result: CompileResult) -> list[tuple[int, int, str]]:
    return [(d.line, d.column, d.code) for d in result.diagnostics if d.is_error]


@pytest.mark.parametrize(
    "source",
    [
        '[shader("vertex")] float V() : A { return 1.0; }\n',
        '[shader("vertex")] float4 V() { return 1.0; }\n',
    ],
    ids=["float-result", "result-without-semantic"],
)
def test_vertex_result_without_position_is_os1017_on_wgsl(tmp_path: Path, source: str) -> None:
    """Slang's WGSL makes the first output of a vertex shader without SV_Position its
    @builtin(position) (even a float); the check read that WGSL, let it pass, and the
    cross-check then found a position the reflection lacks (OS9000)."""
    result = _build(tmp_path, source, Target.SpirV, Target.Wgsl)
    assert _errors(result) == [(1, 26 if "float V" in source else 27, "OS1017")]


def test_out_parameters_beside_a_result_are_outputs_after_it(tmp_path: Path) -> None:
    """An `out` parameter is an output (Slang reflected it as an input): DXC places the
    result's stage variables first, then the parameters'; Slang's SPIR-V puts both at
    location 0, and the location patch did not find the parameter's variable."""
    source = (
        '[shader("pixel")] float4 P(float2 a : A, out float2 q : C) : SV_Target '
        "{ q = a; return 1.0; }\n"
    )
    result = _build(tmp_path, source, Target.SpirV)
    assert result.ok and result.reflection is not None, _errors(result)
    (e,) = result.reflection.entry_points
    assert [(v.name, v.location) for v in e.inputs] == [("a", 0)]
    assert [(v.name, v.location) for v in e.outputs] == [("result", 0), ("q", 1)]
    assert spirv_errors(result.outputs[0].data) == ""


def test_out_parameters_of_a_vertex_shader(tmp_path: Path) -> None:
    source = (
        '[shader("vertex")] void V(float4 p : POSITION, out float4 o : SV_Position, '
        "out float2 q : TEXCOORD0) { o = p; q = p.xy; }\n"
    )
    result = _build(tmp_path, source, Target.SpirV, Target.Msl)
    assert result.ok and result.reflection is not None, _errors(result)
    (e,) = result.reflection.entry_points
    assert [(v.name, v.builtin, v.location) for v in e.outputs] == [
        ("o", BuiltIn.Position, None),
        ("q", BuiltIn.None_, 0),
    ]
    assert [v.name for v in e.inputs] == ["p"]
    spv = next(o for o in result.outputs if o.suffix == ".spv")
    assert spirv_errors(spv.data) == ""


@pytest.mark.parametrize(
    "source",
    [
        '[shader("vertex")] float V(out float2 b : B) : A { b = 1; return 1; }\n',
        '[shader("pixel")] void P(float2 a : A, out float4 c : SV_Target0) { c = a.x; }\n',
    ],
    ids=["vertex-result-and-out", "pixel-out"],
)
def test_metal_out_parameters_are_returned_by_a_wrapper(tmp_path: Path, source: str) -> None:
    """Slang's Metal back end crashes the process on the first (SIGSEGV, OS9001 in a worker)
    and stops with an unpositioned internal error on the second (they were OS1022): a wrapper
    returns the outputs, and the reflection is SPIR-V's."""
    (tmp_path / "s.hlsl").write_text(source)
    options = CompileOptions(targets=(Target.Msl,), source_name="s.hlsl")
    with CompilerWorker() as worker:
        result = worker.compile(str(tmp_path / "s.hlsl"), options)
    assert not result.crashed and result.ok, _errors(result)
    spirv = _build(tmp_path, source, Target.SpirV)
    assert result.reflection is not None and spirv.reflection is not None
    assert result.reflection.entry_points == spirv.reflection.entry_points


def test_a_metal_struct_out_parameter_beside_others_is_a_positioned_error(
    tmp_path: Path,
) -> None:
    """No wrapper returns it (precheck.returned_outputs), and Slang's Metal stops on it."""
    source = (
        "struct O { float4 c : SV_Target0; };\n"
        '[shader("pixel")] void P(float2 a : A, out O o, out float4 d : SV_Target1) '
        "{ o.c = a.x; d = 1; }\n"
    )
    result = _build(tmp_path, source, Target.Msl)
    assert _errors(result) == [(2, 46, "OS1022")]
