"""Constructs of real HLSL that were internal errors (OS9000/OS9002) instead of a correct build
or a positioned error naming the construct and the target."""

from __future__ import annotations

from pathlib import Path

from module_validation import module_errors
from oneshader.compiler import CompileOptions, CompileResult, compile_file
from oneshader.reflection.model import Target, TypeKind

_ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def _build(tmp_path: Path, source: str, *targets: Target) -> CompileResult:
    (tmp_path / "s.hlsl").write_text(source)
    options = CompileOptions(targets=targets, source_name="s.hlsl")
    return compile_file(str(tmp_path / "s.hlsl"), options)


def test_one_component_vectors_in_buffers_are_scalars(tmp_path: Path) -> None:
    """``float1``/``int1`` members: every target's code holds a scalar (DXC's SPIR-V too), the
    reflection said a vector of one (OS9000 on all three targets)."""
    source = (
        "struct S { float a; float1 b; int1 d; float1 c[4]; };\n"
        "RWStructuredBuffer<S> sb;\n"
        "cbuffer CB { float4 x; float1 e; };\n"
        "[numthreads(1,1,1)] void main() { sb[0].a = sb[1].b + sb[1].c[1] + e + sb[1].d; }\n"
    )
    result = _build(tmp_path, source, *_ALL)
    assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
    sb = next(r for r in result.reflection.resources if r.name == "sb")
    assert sb.layout is not None
    kinds = {m.name: m.type.kind for m in sb.layout.members}
    assert kinds["b"] is TypeKind.Scalar and kinds["d"] is TypeKind.Scalar
    for out in result.outputs:
        if out.suffix in (".spv", ".wgsl"):
            assert module_errors(out.suffix, out.data, "s" + out.suffix) == ""


def test_buffer_pointers_are_positioned_errors_on_every_target(tmp_path: Path) -> None:
    """``vk::BufferPointer`` was OS9002 (the SPIR-V reader found a pointer with no buffer
    layout; WGSL's reader a type it cannot parse): now an error per target at the type."""
    source = (
        "struct G { float4 a; float4 b; };\n"
        "struct PC { vk::BufferPointer<G> p; };\n"
        "[[vk::push_constant]] PC pc;\n"
        '[shader("pixel")] float4 P() : SV_Target { return pc.p.Get().b; }\n'
    )
    result = _build(tmp_path, source, *_ALL)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.line, d.column, d.code) for d in errors] == [(2, 13, "OS1003")] * 3
    assert [d.message.split(":")[0] for d in errors] == ["SPIR-V", "Metal", "WGSL"]
    assert all("vk::BufferPointer" in d.message for d in errors)
