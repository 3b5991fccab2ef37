"""One nesting limit for buffer layouts: what the compiler builds, ``reflection check``, the
generator and the bindings accept; one level more is the compiler's positioned error (OS1045)
at the struct whose member goes past it, not a reflection its readers refuse."""

from __future__ import annotations

from pathlib import Path

from oneshader.codegen import render_file
from oneshader.compiler import driver
from oneshader.compiler.api import CompileOptions
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import Target
from oneshader.reflection.validate import MAX_DEPTH, read_checked


def _nested(structs: int) -> str:
    """``structs`` structs each holding the one before: the float in S0 is ``structs`` levels
    below the buffer's element (S<structs-1>, level 0)."""
    lines = ["struct S0 { float v; };"]
    lines += [f"struct S{i} {{ S{i - 1} inner; }};" for i in range(1, structs)]
    path = ".inner" * (structs - 1)
    lines += [
        f"StructuredBuffer<S{structs - 1}> Buf;",
        "RWStructuredBuffer<float> Out;",
        '[shader("compute")]',
        "[numthreads(1, 1, 1)]",
        f"void Main(uint3 id : SV_DispatchThreadID) {{ Out[id.x] = Buf[id.x]{path}.v; }}",
    ]
    return "\n".join(lines) + "\n"


def _compile(tmp_path: Path, structs: int) -> driver.CompileResult:
    path = tmp_path / "deep.hlsl"
    path.write_text(_nested(structs))
    options = CompileOptions(targets=(Target.Wgsl,), source_name="deep.hlsl")
    return driver.compile_file(str(path), options)


def test_the_deepest_layout_the_compiler_builds_is_one_every_reader_accepts(
    tmp_path: Path,
) -> None:
    result = _compile(tmp_path, MAX_DEPTH)
    assert result.reflection is not None, result.diagnostics
    data = ReflectionFormat.write(result.reflection)
    model = read_checked(data, file="deep.reflection")  # what reflection check does
    assert "class S0" in render_file(tmp_path / "deep.reflection", model)


def test_one_level_more_is_a_positioned_error_at_the_struct(tmp_path: Path) -> None:
    result = _compile(tmp_path, MAX_DEPTH + 1)
    assert result.reflection is None
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.code, d.file, d.line, d.column) for d in errors] == [("OS1045", "deep.hlsl", 1, 8)]
    assert f"more than {MAX_DEPTH} levels deep (in struct S0)" in errors[0].message
