"""The compiler reads the source as Slang compiles it: the ``#if`` branch taken, macros expanded,
includes as DXC takes them (docs/compiler.md "The source model"). Each probe failed before."""

from __future__ import annotations

from pathlib import Path

from module_validation import module_errors
from oneshader.compiler import CompileOptions, CompileResult, EntryPointSpec, compile_file
from oneshader.reflection.model import Stage, Target

_ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def _build(tmp_path: Path, source: str, *targets: Target, **options: object) -> CompileResult:
    (tmp_path / "s.hlsl").write_text(source)
    opts = CompileOptions(targets=targets, source_name="s.hlsl", **options)  # type: ignore[arg-type]
    return compile_file(str(tmp_path / "s.hlsl"), opts)


def _built(result: CompileResult) -> CompileResult:
    assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
    for out in result.outputs:
        if out.suffix in (".spv", ".wgsl"):
            assert module_errors(out.suffix, out.data, "s" + out.suffix) == ""
    return result


_KERNEL = "RWStructuredBuffer<float> o;\n[numthreads(1,1,1)] void main() { %s }\n"


def test_a_double_in_the_branch_not_taken_is_not_refused(tmp_path: Path) -> None:
    """``#ifdef USE_DOUBLE`` undefined: nothing compiled holds a double (was OS1003 "no 64-bit
    floats" on WGSL and Metal)."""
    source = (
        "#ifdef USE_DOUBLE\nstatic const double x = 1.0;\n#else\nstatic const float x = 1.0;\n"
        "#endif\n" + _KERNEL % "o[0] = x;"
    )
    _built(_build(tmp_path, source, *_ALL))


def test_a_void_cast_behind_a_macro_builds_everywhere(tmp_path: Path) -> None:
    """``#define UNUSED(x) (void)(x)``: was E99999 on every target."""
    source = "#define UNUSED(x) (void)(x)\n" + _KERNEL % "float y = 2; UNUSED(y); o[0] = 1;"
    _built(_build(tmp_path, source, *_ALL))


def test_a_load_with_an_offset_behind_a_macro_builds_as_written_out(tmp_path: Path) -> None:
    """``FETCH(T, p, o)`` as ``T.Load(p, o)``: the offset rewrite sees the call (was E36107
    on WGSL and Metal, with a hint about a status argument)."""
    body = "o[id.x] = %s.x;"
    head = (
        "#define FETCH(t, p, o) t.Load(p, o)\nTexture2D<float4> T;\nRWStructuredBuffer<float> o;\n"
        "[numthreads(8,8,1)] void main(uint3 id : SV_DispatchThreadID) { "
    )
    macro = _built(
        _build(
            tmp_path,
            head + body % "FETCH(T, int3(id.xy, 0), int2(1, 0))" + " }\n",
            Target.Wgsl,
            Target.Msl,
        )
    )
    written = _built(
        _build(
            tmp_path,
            head + body % "T.Load(int3(id.xy, 0), int2(1, 0))" + " }\n",
            Target.Wgsl,
            Target.Msl,
        )
    )
    assert [o.data for o in macro.outputs] == [o.data for o in written.outputs]


def test_a_64_bit_typedef_in_a_cpu_only_branch_is_not_refused_for_wgsl(tmp_path: Path) -> None:
    """FidelityFX's ``typedef uint64_t`` inside ``#if defined(FFX_CPU)``: no GPU build takes it
    (was OS1003 "no 64-bit integers" for WGSL)."""
    source = (
        "#if defined(FFX_CPU)\ntypedef uint64_t FfxUInt64;\n#else\ntypedef uint FfxUInt32;\n"
        "#endif\n" + _KERNEL % "o[0] = 1;"
    )
    _built(_build(tmp_path, source, Target.Wgsl))


def test_declarations_of_the_branch_not_taken_take_no_binding(tmp_path: Path) -> None:
    """MiniEngine's ``#if SUPPORT_TYPED_UAV_LOADS`` pair bound to the same register: only one
    branch is compiled (was OS3001 'SrcColor' and 'DstColor' are both bound)."""
    source = (
        "#if SUPPORT_TYPED_UAV_LOADS\nRWTexture2D<float4> SrcColor : register(u0);\n#else\n"
        "RWTexture2D<uint> DstColor : register(u0);\nTexture2D<float4> SrcColor : register(t2);\n"
        "#endif\n[numthreads(8,8,1)] void main(uint3 id : SV_DispatchThreadID) {\n"
        "#if SUPPORT_TYPED_UAV_LOADS\n SrcColor[id.xy] = 1;\n#else\n"
        " DstColor[id.xy] = (uint)SrcColor[id.xy].x;\n#endif\n}\n"
    )
    result = _built(_build(tmp_path, source, *_ALL))
    assert result.reflection is not None
    assert sorted(r.name for r in result.reflection.resources) == ["DstColor", "SrcColor"]


def test_an_entry_point_named_by_a_macro_is_found(tmp_path: Path) -> None:
    """DiligentSamples name entry points through macros (was OS1005 "not found")."""
    source = (
        "#define ENTRY_NAME CSMain\nRWStructuredBuffer<float> o;\n"
        "[numthreads(1,1,1)] void ENTRY_NAME() { o[0] = 1; }\n"
    )
    entries = (EntryPointSpec("CSMain", Stage.Compute),)
    result = _built(_build(tmp_path, source, *_ALL, entry_points=entries))
    assert result.reflection is not None
    assert [e.name for e in result.reflection.entry_points] == ["CSMain"]


def test_cyclic_includes_under_guards_build_as_dxc_builds_them(tmp_path: Path) -> None:
    """a.h includes b.h, which includes a.h, each guarded: DXC builds it, Slang alone says
    E15302 "cyclic include"."""
    (tmp_path / "a.h").write_text(
        '#ifndef A_H\n#define A_H\n#include "b.h"\nfloat fa() { return 1; }\n#endif\n'
    )
    (tmp_path / "b.h").write_text(
        '#ifndef B_H\n#define B_H\n#include "a.h"\nfloat fb() { return 2; }\n#endif\n'
    )
    source = '#include "a.h"\n' + _KERNEL % "o[0] = fa() + fb();"
    _built(_build(tmp_path, source, *_ALL))


def test_slang_errors_inside_and_after_an_expansion_are_where_they_are_written(
    tmp_path: Path,
) -> None:
    """The text Slang compiles holds the expansion; its positions come back through the source
    map: after an expansion, the column as written; inside one, the invocation."""
    source = (
        "#define LONG_NAME_OF_A_MACRO(v) ((v) + 1)\nRWStructuredBuffer<float> o;\n"
        "[numthreads(1,1,1)] void main() { o[0] = LONG_NAME_OF_A_MACRO(2); o[1] = nope; }\n"
    )
    result = _build(tmp_path, source, Target.SpirV)
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert (error.line, error.column) == (3, source.split("\n")[2].index("nope") + 1)
    assert "o[1] = nope" in error.excerpt
    source = (
        "#define BAD(v) ((v) + missing_thing)\nRWStructuredBuffer<float> o;\n"
        "[numthreads(1,1,1)] void main() { o[0] = BAD(2); }\n"
    )
    result = _build(tmp_path, source, Target.SpirV)
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert (error.line, error.column) == (3, source.split("\n")[2].index("BAD") + 1)


def test_defines_reach_the_preprocessor(tmp_path: Path) -> None:
    """``-D`` defines choose the branch the queries read too: with ``USE_DOUBLE`` defined, the
    double is compiled, and refused for WGSL at its declaration."""
    source = "#ifdef USE_DOUBLE\nRWStructuredBuffer<double> d;\n#endif\n" + _KERNEL % "o[0] = 1;"
    result = _build(tmp_path, source, Target.Wgsl, defines=(("USE_DOUBLE", ""),))
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert error.line == 2 and "64-bit" in error.message


def test_preprocessor_errors_are_positioned(tmp_path: Path) -> None:
    result = _build(tmp_path, "#if 1 +\n#endif\n" + _KERNEL % "", Target.SpirV)
    (error,) = result.diagnostics
    assert (error.file, error.line, error.code) == ("s.hlsl", 1, "OS1042")
    assert "#if" in error.message and error.excerpt
    result = _build(tmp_path, "#ifdef X\n" + _KERNEL % "", Target.SpirV)
    (error,) = result.diagnostics
    assert (error.line, error.column, error.code) == (1, 2, "OS1042")
    assert "without #endif" in error.message


def test_enable_16bit_types_defines_its_macro_for_the_preprocessor(tmp_path: Path) -> None:
    """DXC's ``-enable-16bit-types`` defines ``__HLSL_ENABLE_16_BIT``; oneshader preprocesses,
    so the ``#if`` on it is its own (Slang's ``-D`` came too late once the text was
    preprocessed)."""
    source = (
        "#if __HLSL_ENABLE_16_BIT\n#define T float\n#else\n#error not 16-bit\n#endif\n"
        + _KERNEL % "T y = 2; o[0] = y;"
    )
    _built(_build(tmp_path, source, Target.SpirV, enable_16bit_types=True))
    plain = _build(tmp_path, source, Target.SpirV)
    assert any("not 16-bit" in d.message for d in plain.diagnostics)


def test_every_token_knows_its_place_in_the_text_as_compiled(tmp_path: Path) -> None:
    """``SourceSet.stream``: each token of a file as compiled is where the text spells it, also
    after an expansion longer or shorter than its invocation (the queries of
    ``source/query.py`` edit and position by it)."""
    from oneshader.compiler.source.sourceset import SourceSet

    (tmp_path / "inc.hlsl").write_text("#pragma once\n#define TWICE(x) ((x) + (x))\nfloat f;\n")
    source = (
        '#include "inc.hlsl"\n#define LONGER_NAME_THAN_BODY 1\n#define S(a, b) a##b\n'
        "float g = TWICE(3) + LONGER_NAME_THAN_BODY; float S(h, i) = 2;\n"
        "#if 0\nfloat skipped;\n#endif\n  /* c */ float k = TWICE(TWICE(1));\n"
    )
    (tmp_path / "s.hlsl").write_text(source)
    src = SourceSet(str(tmp_path / "s.hlsl"), "s.hlsl", ())
    src.read()
    for path in src.texts:
        stream = src.stream(path)
        assert len(stream) == len(stream.tokens) > 0
        for i, t in enumerate(stream.tokens):
            assert stream.text[stream.start(i) : stream.end(i)] == t.text
            line, col = stream.line_col(i)
            assert src.maps[path].origin(line, col) == (
                (t.site[0], t.site[1]) if t.site else (t.line, t.col)
            )
    assert [s.path.name for s in src.streams()] == ["inc.hlsl", "s.hlsl"]


def test_an_error_after_a_rewrite_on_its_line_is_where_it_is_written(tmp_path: Path) -> None:
    """A rewrite that changes a line's length (``class`` -> ``struct``; ``X.Append(v)`` ->
    ``X[X_counter[0].add(1u)]=(v)`` on WGSL) moves the columns after it in the text Slang is
    given; Slang's error there comes back at the column as written (was one or 20 columns
    on: the rewrites kept only the columns before them)."""
    line = "class C { float f() { return missing; } };"
    source = line + "\n" + _KERNEL % "C c; o[0] = c.f();"
    result = _build(tmp_path, source, Target.SpirV)
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors and (errors[0].line, errors[0].column) == (1, line.index("missing") + 1), [
        d.format() for d in errors
    ]
    call = "a.Append(1.0); o[0] = missing;"
    source = "AppendStructuredBuffer<float> a;\n" + _KERNEL % call
    result = _build(tmp_path, source, Target.Wgsl)
    errors = [d for d in result.diagnostics if d.is_error]
    column = (_KERNEL % call).split("\n")[1].index("missing") + 1
    assert errors and (errors[0].line, errors[0].column) == (3, column), [
        d.format() for d in errors
    ]
