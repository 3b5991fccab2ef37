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


def test_a_metal_struct_out_parameter_beside_others_is_returned_member_by_member(
    tmp_path: Path,
) -> None:
    """Slang's Metal stops on it (it was OS1022): the wrapper returns its members beside the
    other outputs (precheck.flattened_outputs); one that cannot be flattened (a member without
    a semantic) stays OS1022 at the parameter."""
    source = (
        "struct O { float4 c : SV_Target0; };\n"
        '[shader("pixel")] void P(float2 a : A, out O o, out float4 d : SV_Target1) '
        "{ o.c = a.x; d = 1; }\n"
    )
    result = _build(tmp_path, source, Target.Msl)
    spirv = _build(tmp_path, source, Target.SpirV)
    assert result.ok and result.reflection is not None and spirv.reflection is not None
    assert result.reflection.entry_points == spirv.reflection.entry_points
    unflat = source.replace("float4 c : SV_Target0;", "float4 c : SV_Target0; float w;")
    assert _errors(_build(tmp_path, unflat, Target.Msl)) == [(2, 46, "OS1022")]


@pytest.mark.parametrize(
    ("source", "builtin", "location"),
    [
        ('[shader("pixel")] float P(float a : A) : SV_Depth { return a; }\n', BuiltIn.Depth, None),
        (
            '[shader("pixel")] uint P(uint c : SV_Coverage) : SV_Coverage { return c & 1u; }\n',
            BuiltIn.SampleMask,
            None,
        ),
        ('[shader("pixel")] float4 P() : SV_Target1 { return 1.0; }\n', None, 1),
        (
            '[shader("pixel")] float4 Q() : SV_Target { return 0.0; }\n'
            '[shader("pixel")] float4 P() : SV_Target1 { return 1.0; }\n',
            None,
            1,
        ),
    ],
    ids=["depth", "coverage", "target1", "second-entry"],
)
def test_a_bare_pixel_result_keeps_its_semantic_on_wgsl_and_metal(
    tmp_path: Path, source: str, builtin: BuiltIn | None, location: int | None
) -> None:
    """Slang's WGSL and Metal return a pixel shader's bare value in a struct whose one member
    is colour/location 0, whatever the semantic: SV_Depth and SV_Coverage were written as a
    colour, SV_Target1 as attachment 0 (OS9000: the reflection disagreed with the code)."""
    from module_validation import wgsl_errors
    from oneshader.compiler.emitted.msl import read_msl
    from oneshader.compiler.emitted.wgsl import read_wgsl

    result = _build(tmp_path, source, Target.SpirV, Target.Msl, Target.Wgsl)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    (output,) = next(e for e in result.reflection.entry_points if e.name == "P").outputs
    assert (output.builtin, output.location) == (builtin or BuiltIn.None_, location)
    code = {o.target: o.data for o in result.outputs}
    assert wgsl_errors(code[Target.Wgsl].decode()) == ""
    assert spirv_errors(code[Target.SpirV]) == ""
    for read in (read_wgsl(code[Target.Wgsl]), read_msl(code[Target.Msl])):
        (emitted,) = read.entries["P"].outputs
        assert (emitted.builtin, emitted.location) == (builtin, location), emitted


def test_uniform_entry_parameters_are_positioned_errors(tmp_path: Path) -> None:
    """``uniform float k`` as an entry point's parameter: Slang gathers it into a block of its
    own that the reflection lacks (OS9000 on every target: DXC's spirv.entry-function.inout);
    an OS1004 at the parameter instead."""
    source = (
        '[shader("pixel")]\n'
        "float4 main(float4 c : COLOR,\n"
        "            uniform float k) : SV_Target { return c * k; }\n"
    )
    result = _build(tmp_path, source, Target.SpirV, Target.Msl, Target.Wgsl)
    assert _errors(result) == [(3, 27, "OS1004")]
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert "'uniform' parameter 'k'" in error.message and "global" in error.message


@pytest.mark.parametrize(
    ("source", "where"),
    [
        (
            "struct Base { float4 p : SV_Position; };\n"
            "struct VOut : Base { float2 uv : UV; };\n"
            '[shader("vertex")] VOut V(float4 p : POSITION) { VOut o; o.p = p; o.uv = 0; '
            "return o; }\n",
            (3, 25),
        ),
        (
            "struct Base { float2 uv : UV; };\n"
            "struct PIn : Base { float4 c : COLOR; };\n"
            '[shader("pixel")] float4 P(PIn i) : SV_Target { return i.c * i.uv.x; }\n',
            (3, 32),
        ),
    ],
    ids=["vertex-result", "pixel-input"],
)
def test_a_derived_stage_struct_is_refused_before_slang_crashes(
    tmp_path: Path, source: str, where: tuple[int, int]
) -> None:
    """A stage struct with a base crashed Slang on every target (OS9001, the file only: DXC's
    oo.inheritance.stage-io); an OS1003 per target at the parameter or the entry point."""
    (tmp_path / "s.hlsl").write_text(source)
    options = CompileOptions(targets=(Target.SpirV, Target.Msl, Target.Wgsl), source_name="s.hlsl")
    with CompilerWorker() as worker:
        result = worker.compile(str(tmp_path / "s.hlsl"), options)
    assert not result.crashed
    assert _errors(result) == [(*where, "OS1003")] * 3
    assert all("derived struct" in d.message for d in result.diagnostics if d.is_error)


@pytest.mark.parametrize("semantic", ["SV_DepthGreaterEqual", "SV_DepthLessEqual"])
def test_conservative_depth_is_the_depth_output(tmp_path: Path, semantic: str) -> None:
    """``SV_DepthGreaterEqual``/``SV_DepthLessEqual`` are the depth output with a promise: the
    reflection had no built-in for them, and SPIR-V's and Metal's depth disagreed (OS9000)."""
    source = (
        f"struct O {{ float4 c : SV_Target; float d : {semantic}; }};\n"
        '[shader("pixel")] O P(float4 p : SV_Position) { O o; o.c = 1; o.d = p.z; return o; }\n'
    )
    result = _build(tmp_path, source, Target.SpirV, Target.Msl)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    outputs = result.reflection.entry_points[0].outputs
    assert [(v.name, v.builtin, v.location) for v in outputs] == [
        ("c", BuiltIn.None_, 0),
        ("d", BuiltIn.Depth, None),
    ]
    assert spirv_errors(next(o.data for o in result.outputs if o.target is Target.SpirV)) == ""


def test_a_stencil_reference_output_is_refused_at_its_semantic(tmp_path: Path) -> None:
    """``SV_StencilRef``: the reflection format has no built-in for it, so it was reflected as
    a colour output at a location (and SPIR-V's built-in got that location: spirv-val refused
    DXC's semantic.stencil-ref.ps; WGSL and Metal wrote stencil values as colour 0)."""
    source = '[shader("pixel")] uint P(float4 p : SV_Position) : SV_StencilRef { return 3; }\n'
    result = _build(tmp_path, source, Target.SpirV, Target.Msl, Target.Wgsl)
    assert _errors(result) == [(1, 50, "OS1003")] * 3
    assert all("SV_StencilRef" in d.message for d in result.diagnostics if d.is_error)


def test_an_instance_id_result_of_a_vertex_shader_is_a_varying(
    tmp_path: Path,
) -> None:
    """``int main(int i : SV_InstanceID) : SV_InstanceID``: the bare-result form of an instance
    index passed on, a varying at location 0 as in DXC (Slang's Metal made it the position,
    OS9000 on DXC's semantic.instance-id.vs, and its SPIR-V a located output; it was OS1003).
    WGSL still wants a position (OS1017)."""
    source = '[shader("vertex")] int V(int i : SV_InstanceID) : SV_InstanceID { return i; }\n'
    result = _build(tmp_path, source, Target.SpirV, Target.Msl)
    assert result.reflection is not None, [d.format() for d in result.diagnostics]
    (out,) = result.reflection.entry_points[0].outputs
    assert (out.semantic, out.location, out.builtin.name) == ("SV_InstanceID", 0, "None_")
    msl = next(o.data.decode() for o in result.outputs if o.target is Target.Msl)
    assert "[[user(SV_INSTANCEID)]]" in msl and "[[position]]" not in msl


def test_a_uniform_scalar_array_copied_whole_into_a_struct_member_is_refused_on_wgsl(
    tmp_path: Path,
) -> None:
    """``t.s = w;`` with ``cbuffer { float w[3]; }``: Slang's WGSL for it is not valid, so
    it is refused at ``w``; a local array's copy (``a = w;``) and a one-element array's build."""
    head = "cbuffer CB { float w[3]; float one[1]; float u; };\nRWStructuredBuffer<float> o;\n"
    head += "struct T { float s[3]; float k[1]; };\n"
    main = '[shader("compute")][numthreads(1,1,1)] void main(uint3 i : SV_DispatchThreadID) '
    copied = main + "{ T t; t.s = w; o[0] = t.s[i.x] + u; }\n"
    refused = _build(tmp_path, head + copied, Target.Wgsl)
    assert _errors(refused) == [(4, copied.index("w;") + 1, "OS1003")]
    message = refused.diagnostics[0].message
    assert message.startswith("WGSL: 'w', a constant buffer's array of scalars, copied whole")
    fine = main + "{ T t; float a[3]; a = w; t.k = one; o[0] = a[i.x] + t.k[0] + u; }\n"
    result = _build(tmp_path, head + fine, *Target)
    assert result.ok, [d.format() for d in result.diagnostics]
