"""[numthreads] on an entry point that has no workgroup (a vertex or pixel shader): DXC ignores
it, and so does oneshader on every target."""

from __future__ import annotations

from pathlib import Path

from module_validation import spirv_errors
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import EntryPointSpec
from oneshader.reflection.model import Stage, Target

NUMTHREADS_ON_A_VERTEX_SHADER = """struct S { uint b; };
[[vk::push_constant]] S s;
[numthreads(1, 1, 1)]
float4 main() : SV_Position { return float4(s.b, 0, 0, 1); }
"""


def test_numthreads_on_a_vertex_entry_point_is_left_out_as_dxc_leaves_it(tmp_path: Path) -> None:
    """DXC's vk.push-constant.static: ``[numthreads]`` on a vertex shader. DXC ignores it;
    Slang's SPIR-V declared LocalSize on the Vertex entry point, which the reflection (no
    workgroup outside compute) disagreed with (OS9000)."""
    (tmp_path / "v.hlsl").write_text(NUMTHREADS_ON_A_VERTEX_SHADER)
    options = CompileOptions(
        (Target.SpirV,), "v.hlsl", entry_points=(EntryPointSpec("main", Stage.Vertex),)
    )
    result = compile_file(str(tmp_path / "v.hlsl"), options)
    assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
    assert spirv_errors(result.outputs[0].data) == ""
    assert result.reflection.entry_points[0].workgroup == (0, 0, 0)


def test_numthreads_on_a_helper_function_is_left_out(tmp_path: Path) -> None:
    """Sascha Willems's computecullandlod/cull.comp puts ``[numthreads]`` on ``frustumCheck``,
    which ``main`` calls: DXC ignores it, Slang's SPIR-V and Metal back ends crashed on it
    (SIGSEGV, OS9001 in a worker). It is blanked on every target."""
    from oneshader.compiler.process.worker import CompilerWorker

    (tmp_path / "c.hlsl").write_text(
        "RWStructuredBuffer<float4> planes;\n"
        "[numthreads(16, 1, 1)]\n"
        "bool inside(float4 pos) { return dot(pos, planes[1]) > 0.0; }\n"
        "[numthreads(16, 1, 1)]\n"
        "void main(uint3 id : SV_DispatchThreadID) { if (inside(planes[id.x])) planes[0] = 1; }\n"
    )
    spec = EntryPointSpec("main", Stage.Compute)
    for targets in ((Target.SpirV,), (Target.Msl,), (Target.SpirV, Target.Msl, Target.Wgsl)):
        options = CompileOptions(targets, "c.hlsl", entry_points=(spec,))
        with CompilerWorker() as worker:
            result = worker.compile(str(tmp_path / "c.hlsl"), options)
        assert not result.crashed and result.ok, [d.format() for d in result.diagnostics]
        assert result.reflection is not None
        assert result.reflection.entry_points[0].workgroup == (16, 1, 1)


def test_a_compute_module_is_left_as_it_is_without_a_walk(tmp_path: Path) -> None:
    """A module whose every entry point has a workgroup holds no stray size: decided from the
    reader's shared declarations (the same bytes object back), and so is a module that holds
    no image type of an extended format (the search of its bytes only guesses one)."""
    from oneshader.compiler.patch.spirv import with_extended_formats, without_stray_workgroup_sizes

    (tmp_path / "c.hlsl").write_text(
        "RWStructuredBuffer<float4> b;\n"
        "[numthreads(16, 1, 1)]\n"
        "void main(uint3 id : SV_DispatchThreadID) { b[id.x] = 1; }\n"
    )
    spec = EntryPointSpec("main", Stage.Compute)
    result = compile_file(
        str(tmp_path / "c.hlsl"), CompileOptions((Target.SpirV,), "c.hlsl", entry_points=(spec,))
    )
    assert result.ok, [d.format() for d in result.diagnostics]
    module = result.outputs[0].data
    assert without_stray_workgroup_sizes(module) is module
    assert with_extended_formats(module) is module
