"""Metal's buffers laid out as SPIR-V's by explicit padding members (unify.metal_padding): a
struct or vector that std140/std430 place higher than C's rules do, in the reflection and in
the emitted MSL as its reader sees it; what no padding can place stays OS2001."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import PADDING, CompileResult
from oneshader.compiler.emitted.common import round_up
from oneshader.compiler.emitted.msl import read_msl
from oneshader.compiler.emitted.wgsl import read_wgsl
from oneshader.reflection.model import StructMember, Target, TypeLayout

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)

SHADER = """struct Inner { float2 p; };
struct E { float2 a; float3 c; float d; };
struct F { float w; Inner i; };
cbuffer Frame { float scale; Inner inner; float tail; };
RWStructuredBuffer<E> items;
StructuredBuffer<F> fs;
RWStructuredBuffer<float> o;
[shader("compute")][numthreads(1,1,1)] void main() {
  E e = items[0];
  items[1].c = e.c * scale + float3(inner.p, tail);
  items[1].d = e.d + fs[0].i.p.y;
  o[0] = items[1].c.z;
}
"""


def _offsets(t: TypeLayout) -> dict[str, tuple[int, object]]:
    """Every member's offset, nested structs (and array elements) by path; padding left out."""
    out: dict[str, tuple[int, object]] = {}
    for m in t.members:
        if m.name.startswith(PADDING):
            continue
        inner = m.type.element if m.type.element is not None else m.type
        out[m.name] = (m.offset, _offsets(inner) if inner.members else None)
    return out


def _build(tmp_path: Path, source: str, targets: tuple[Target, ...]) -> CompileResult:
    path = tmp_path / "s.hlsl"
    path.write_text(source)
    return compile_file(str(path), CompileOptions(targets=targets, source_name="s.hlsl"))


def _reflected_and_emitted(
    result: CompileResult, name: str, key: Callable[[StructMember], object]
) -> tuple[dict[str, object], dict[str, object]]:
    """``key`` of each member of constant buffer ``name``: in the reflection, and in the MSL as
    its reader sees it (padding members left out)."""
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    assert result.reflection is not None
    (layout,) = [r.layout for r in result.reflection.resources if r.name == name]
    code = next(o.data for o in result.outputs if o.target is Target.Msl)
    (emitted,) = read_msl(code).resources[name]
    assert layout is not None and emitted.layout is not None
    mine = {m.name: key(m) for m in layout.members}
    theirs = {m.name: key(m) for m in emitted.layout.members if not m.name.startswith(PADDING)}
    return mine, theirs


def _errors(tmp_path: Path, source: str) -> list[tuple[str, int, int, str]]:
    """The errors of a SPIR-V and Metal build: (code, line, column, message)."""
    result = _build(tmp_path, source, (Target.SpirV, Target.Msl))
    return [(d.code, d.line, d.column, d.message) for d in result.diagnostics if d.is_error]


def _msl(result: CompileResult) -> str:
    return next(o.data for o in result.outputs if o.target is Target.Msl).decode()


def test_metal_gets_spirv_offsets_from_padding_in_cbuffers_and_structured_buffers(
    tmp_path: Path,
) -> None:
    result = _build(tmp_path, SHADER, (Target.SpirV, Target.Msl))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    assert result.reflection is not None
    layouts = {r.name: r.layout for r in result.reflection.resources}
    frame, items, fs = layouts["Frame"], layouts["items"], layouts["fs"]
    assert frame is not None and items is not None and fs is not None
    # std140: a struct is 16-aligned; std430: a float3 is 16-aligned (C's rules: 8 and 4).
    assert _offsets(frame) == {
        "scale": (0, None),
        "inner": (16, {"p": (0, None)}),
        "tail": (32, None),
    }
    assert _offsets(items.element or items) == {
        "a": (0, None),
        "c": (16, None),
        "d": (28, None),
    }
    assert (items.size, fs.size) == (32, 16)  # the elements (structured buffers)
    assert _offsets(fs.element or fs)["i"] == (8, {"p": (0, None)})
    msl_text = next(o.data for o in result.outputs if o.target is Target.Msl)
    msl = read_msl(msl_text)
    for name, layout in layouts.items():
        (emitted,) = msl.resources[name]
        assert emitted.layout is not None and layout is not None
        mine = emitted.layout.element or emitted.layout
        theirs = layout.element or layout
        assert _offsets(mine) == _offsets(theirs), name
    # Reads and writes of the padded members are Slang's own, through the padded structs.
    code = msl_text.decode()
    assert f"uint {PADDING}" in code
    assert "(items+int(1))->c_0 = " in code and "(items+int(1))->d_0 = " in code


def test_without_spirv_metal_keeps_its_own_layout(tmp_path: Path) -> None:
    result = _build(tmp_path, SHADER, (Target.Msl,))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    code = next(o.data for o in result.outputs if o.target is Target.Msl).decode()
    assert PADDING not in code


def test_a_bool_vector_placed_differently_stays_not_portable(tmp_path: Path) -> None:
    """Metal's bool is a byte, SPIR-V's a word: no padding gives a bool3's components the
    same bytes, so the refusal stays, at the member."""
    source = (
        "struct S { float a; };\ncbuffer CB { float x; S s;\n  bool3 b; };\n"
        "RWStructuredBuffer<float> o;\n"
        '[shader("compute")][numthreads(1,1,1)] void main() { o[0] = x + s.a + (b.x ? 1 : 0); }\n'
    )
    ((code, line, column, message),) = _errors(tmp_path, source)
    assert (code, line, column) == ("OS2001", 3, 9)
    assert "CB.b: not portable" in message and "on Msl" in message


PACKED = """cbuffer P {
  float4 first : packoffset(c0);
  float  second : packoffset(c2.y);
  float2 third : packoffset(c3);
  float4 fourth : packoffset(c10);
};
RWStructuredBuffer<float> o;
[shader("compute")][numthreads(1,1,1)] void main() { o[0] = first.x + second + third.y + fourth.w; }
"""


def test_packoffset_gives_its_offsets_on_every_target(tmp_path: Path) -> None:
    """Slang's WGSL and Metal code ignored packoffset while their reflection followed it (an
    internal OS9000): both now get padding that puts each member at 16 N + 4 c."""
    result = _build(tmp_path, PACKED, ALL)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    assert result.reflection is not None
    (p,) = [r for r in result.reflection.resources if r.name == "P"]
    assert p.layout is not None
    want = {"first": 0, "second": 36, "third": 48, "fourth": 160}
    assert {k: v[0] for k, v in _offsets(p.layout).items()} == want
    msl = read_msl(next(o.data for o in result.outputs if o.target is Target.Msl))
    (emitted,) = msl.resources["P"]
    assert emitted.layout is not None
    assert {k: v[0] for k, v in _offsets(emitted.layout).items()} == want
    wgsl = read_wgsl(next(o.data for o in result.outputs if o.target is Target.Wgsl))
    (emitted,) = wgsl.resources["P"]
    assert emitted.layout is not None
    assert {k: v[0] for k, v in _offsets(emitted.layout).items()} == want


def test_a_packoffset_below_the_members_before_it_is_positioned(tmp_path: Path) -> None:
    source = PACKED.replace("packoffset(c10)", "packoffset(c1)")
    ((code, line, column, message),) = _errors(tmp_path, source)
    assert (code, line, column) == ("OS1010", 5, 19)
    assert "Metal: packoffset(c1) on 'fourth' cannot be expressed" in message


ARRAYS = """cbuffer CB { float t[4]; float2 v[3]; float u; };
RWStructuredBuffer<float> o;
[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID) {
  float arr[4] = t;
  o[0] = t[i] + t[2] + arr[1] + u + v[i].y;
}
"""


def test_a_cbuffer_array_of_scalars_has_std140_stride_on_metal(tmp_path: Path) -> None:
    """``float t[4]``: 16 bytes apart in std140, 4 in Slang's Metal; Metal declares it an array
    of float4 and reads the first components of an element."""
    result = _build(tmp_path, ARRAYS, ALL)
    want = {"t": (0, 16), "v": (64, 16), "u": (112, 0)}
    assert _reflected_and_emitted(result, "CB", lambda m: (m.offset, m.type.stride)) == (want, want)
    text = _msl(result)
    assert "array<float4, int(4)> t;" in text and "array<float4, int(3)> v;" in text
    assert "CB->t[i_1].x" in text and "CB->v[i_1].xy.y" in text
    assert "CB->t[i_1] " not in text


def test_a_cbuffer_array_used_whole_stays_not_portable(tmp_path: Path) -> None:
    source = (
        "cbuffer CB { float t[4]; float u; };\nRWStructuredBuffer<float> o;\n"
        "float sum(float a[4], uint i) { float s = 0; for (uint k = 0; k < i; k++) s += a[k];"
        " return s; }\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID)'
        " { o[0] = sum(t, i) + u; }\n"
    )
    ((code, line, column, message),) = _errors(tmp_path, source)
    assert (code, line, column) == ("OS2001", 1, 20)
    assert "CB.t: not portable: the array stride is 16 on SpirV but 4 on Msl" in message


@pytest.mark.parametrize(
    ("declarations", "use", "emitted"),
    [
        # ConstantBuffer<S>: the struct's member is emitted t_0
        (
            "struct S { float4 a; float t[4]; };\nConstantBuffer<S> cb;",
            "cb.t[i] + cb.a.x",
            "cb->t_0[i_0.x].x",
        ),
        # a loose global: $Globals is globalParams in the MSL
        ("float W[4];\nfloat k;", "W[i] * k", "->W[i_0.x].x * "),
    ],
)
def test_constant_buffers_of_a_struct_and_globals_widen_arrays_too(
    tmp_path: Path, declarations: str, use: str, emitted: str
) -> None:
    source = (
        f"{declarations}\nRWStructuredBuffer<float> o;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID)'
        f" {{ o[0] = {use}; }}\n"
    )
    result = _build(tmp_path, source, ALL)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    assert emitted in _msl(result) and "array<float4, int(4)>" in _msl(result)


def test_a_float3_array_in_a_structured_buffer_has_std430_stride_on_metal(tmp_path: Path) -> None:
    """Slang's Metal holds ``float3 b[4]`` of a structured buffer as packed_float3, 12 bytes
    apart; std430 has 16: the elements are declared float3 (aligned), reads and writes alike."""
    source = (
        "struct S { float3 b[4]; float c; };\nRWStructuredBuffer<S> sb;\n"
        "RWStructuredBuffer<float> o;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID) {\n'
        "  o[0] = sb[0].b[i].y + sb[0].c;\n  sb[1].b[i] = float3(1,2,3);\n"
        "  S s = sb[2]; s.b[1] = 0; sb[3] = s;\n}\n"
    )
    result = _build(tmp_path, source, ALL)
    mine, theirs = _element_layouts(result, "sb")
    assert _strides(mine) == _strides(theirs) == {"b": (0, 16, 0), "c": (64, 0, 0)}
    text = _msl(result)
    assert "array<float3, int(4)> data_" in text and "array<packed_float3" not in text


def test_a_float2x3_in_a_cbuffer_has_std140_columns_on_metal(tmp_path: Path) -> None:
    """Column-major ``float2x3``: three float2 columns, 16 apart in std140, 8 in Slang's Metal;
    Metal's matrix storage holds float4 columns, read by component."""
    source = (
        "cbuffer CB { float4 a; float2x3 m; float u; };\nRWStructuredBuffer<float> o;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID)'
        " { o[0] = m[1].z + u + m[i].x + mul(float2(1, 2), m).y; }\n"
    )
    result = _build(tmp_path, source, ALL)
    want = {"a": (0, 0), "m": (16, 16), "u": (64, 0)}
    assert _reflected_and_emitted(result, "CB", lambda m: (m.offset, m.type.mstride)) == (
        want,
        want,
    )
    text = _msl(result)
    assert "array<float4, int(3)> data_" in text and f"uint {PADDING}" not in text


def test_padding_and_widening_together_keep_every_offset(tmp_path: Path) -> None:
    """A struct padded to std140's 16 and, after it, an array widened to float4s and a float3
    followed by a scalar (packed_float3): Metal's layout redone for the array and the vector
    keeps the padding's bytes."""
    source = (
        "struct Inner { float2 p; };\n"
        "cbuffer CB { float x; Inner s; float t[3]; float3 d; float e; };\n"
        "RWStructuredBuffer<float> o;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID)'
        " { o[0] = x + s.p.y + t[i] + d.z + e; }\n"
    )
    result = _build(tmp_path, source, ALL)
    want = {"x": 0, "s": 16, "t": 32, "d": 80, "e": 92}
    assert _reflected_and_emitted(result, "CB", lambda m: m.offset) == (want, want)


def test_a_packed_float3_std430_aligns_is_aligned_not_padded(tmp_path: Path) -> None:
    """``float a; float3 b; float2x3 c;`` in a structured buffer: std430 puts b at 16 and makes
    the element 64 bytes (a float3 aligns the struct to 16). Padding before Slang's
    packed_float3 would place b but leave the element 56 bytes; an aligned float3 gives both."""
    source = (
        "struct S { float a; float3 b; float2x3 c; };\nRWStructuredBuffer<S> sb;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID)'
        " { sb[i].b = sb[i].c[1] * sb[i].a; }\n"
    )
    result = _build(tmp_path, source, (Target.SpirV, Target.Msl))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    assert result.reflection is not None
    (sb,) = result.reflection.resources
    assert sb.layout is not None and sb.layout.size == 64
    assert {m.name: m.offset for m in sb.layout.members} == {"a": 0, "b": 16, "c": 32}
    assert PADDING not in _msl(result)


def test_padding_that_takes_more_rounds_than_allowed_is_a_positioned_refusal(
    tmp_path: Path,
) -> None:
    """Each member Metal places below SPIR-V's offset moves the next: a round (a compile) per
    member. Ten small structs in a cbuffer take more rounds than the limit; that was an
    internal error (OS9002, DXC's vk.layout.struct.bitfield test), and is the layout check's
    OS2001 at the first member that differs. Three settle and build."""

    def source(n: int) -> str:
        members = "".join(f"  S s{i};\n" for i in range(n))
        return (
            "struct S { uint a; };\ncbuffer B : register(b0) {\n" + members + "};\n"
            "RWStructuredBuffer<uint> o : register(u1);\n"
            f"[numthreads(1, 1, 1)] void main() {{ o[0] = s0.a + s{n - 1}.a; }}\n"
        )

    few = _build(tmp_path, source(3), (Target.SpirV, Target.Msl))
    assert few.ok, [d.format() for d in few.diagnostics]
    many = _build(tmp_path, source(10), (Target.SpirV, Target.Msl))
    errors = [(d.code, d.line, d.column) for d in many.diagnostics if d.is_error]
    assert errors == [("OS2001", 4, 5)], [d.format() for d in many.diagnostics]


def _element_layouts(result: CompileResult, name: str) -> tuple[TypeLayout, TypeLayout]:
    """Structured buffer ``name``'s element: in the reflection, and in the MSL as its reader
    sees it."""
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    assert result.reflection is not None
    (layout,) = [r.layout for r in result.reflection.resources if r.name == name]
    (emitted,) = read_msl(_msl(result).encode()).resources[name]
    assert layout is not None and emitted.layout is not None
    return layout.element or layout, emitted.layout.element or emitted.layout


def _strides(t: TypeLayout) -> dict[str, tuple[int, int, int]]:
    """Each member's (offset, array stride, matrix stride: an array's element's), padding left
    out."""
    out = {}
    for m in t.members:
        if not m.name.startswith(PADDING):
            inner = m.type.element if m.type.element is not None else m.type
            out[m.name] = (m.offset, m.type.stride, inner.mstride)
    return out


def test_matrices_of_3_vectors_in_a_structured_buffer_have_std430_strides_on_metal(
    tmp_path: Path,
) -> None:
    """Slang's Metal stores a structured buffer's ``float3x2`` (two float3 columns), ``row_major
    float2x3`` (two float3 rows) and ``int`` alike as packed 3-vectors, 12 bytes apart; std430
    has 16. The matrix storage gets aligned vectors, in arrays of matrices too, and a matrix
    written whole assigns a local of that type."""
    source = (
        "struct T { float3x2 d[2]; float3x2 e; row_major float2x3 r; row_major int2x3 n;"
        " float x; };\nRWStructuredBuffer<T> sb;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID) {\n'
        "  sb[1].e = sb[0].d[1]; sb[1].d[i] = sb[0].e; sb[1].r = sb[0].r;\n"
        "  sb[2].x = sb[0].d[1][2].y + sb[0].r[1].z + sb[0].n[i].x;\n"
        "  float3x2 ds[2] = sb[0].d; sb[3].d = ds; T t = sb[4]; sb[5] = t;\n}\n"
    )
    result = _build(tmp_path, source, ALL)
    mine, theirs = _element_layouts(result, "sb")
    want = {
        "d": (0, 32, 16),
        "e": (64, 0, 16),
        "r": (96, 0, 16),
        "n": (128, 0, 16),
        "x": (160, 0, 0),
    }
    assert _strides(mine) == want
    # (Metal has no int matrices: its reader sees Slang's row_major int2x3 as rows, int3[2])
    assert _strides(theirs) == {**want, "n": (128, 16, 0)}
    assert mine.size == theirs.size == 176
    text = _msl(result)
    assert "packed_int3, int(" not in text and "array<packed_float3, int(" not in text
    assert re.search(r"array<float3, int\(2\)> (_S\d+) = \{.*\n.*->data_\d+ = \1;", text)


def test_a_matrix_of_2_vectors_in_a_structured_buffer_is_aligned_to_8_on_metal(
    tmp_path: Path,
) -> None:
    """``float2x3`` (three float2 columns) is 8-aligned in std430, 4-aligned as Slang's Metal
    stores it (packed_float2): ``float2x3 m[4]; int k;`` is 104 bytes an element in std430 and
    was 100 on Metal. Aligned float2 columns give std430's size."""
    source = (
        "struct R { float2x3 m[4]; int k; };\nRWStructuredBuffer<R> sb;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID)'
        " { sb[i].k = int(sb[i].m[1][0].y); sb[i + 1] = sb[i]; }\n"
    )
    result = _build(tmp_path, source, ALL)
    mine, theirs = _element_layouts(result, "sb")
    assert _strides(mine) == _strides(theirs) == {"m": (0, 24, 8), "k": (96, 0, 0)}
    assert mine.size == theirs.size == 104
    assert "packed_float2" not in _msl(result)


def test_a_struct_after_an_aligned_matrix_is_padded_and_the_members_after_it_follow(
    tmp_path: Path,
) -> None:
    """Padding is found on Metal's layout as the aligned vectors and matrices make it: a
    struct that std430 aligns to 16 after a matrix, and a member after the struct's array
    (which grows with the padding inside it, so the outer member is placed a round later)."""
    source = (
        "struct R { float2 rf; };\n"
        "struct S { R a; float b; float3 c; float d; };\n"
        "struct T { int i; R r[3]; float3x2 m; row_major int3x2 n; S s; float f; };\n"
        "struct B { uint a; uint b; float3 c; T t[2]; float z; };\n"
        "RWStructuredBuffer<B> sb;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID)'
        " { sb[i].z = sb[i].t[1].s.c.y + sb[i].t[0].m[2].x + sb[i].c.x; sb[i + 1] = sb[i]; }\n"
    )
    result = _build(tmp_path, source, ALL)
    mine, theirs = _element_layouts(result, "sb")
    assert _offsets(mine) == _offsets(theirs)
    inner = {"a": (0, {"rf": (0, None)}), "b": (8, None), "c": (16, None), "d": (28, None)}
    assert _offsets(mine)["t"] == (
        32,
        {
            "i": (0, None),
            "r": (8, {"rf": (0, None)}),
            "m": (32, None),
            "n": (64, None),
            "s": (96, inner),
            "f": (128, None),
        },
    )
    assert _offsets(mine)["z"] == (320, None)
    assert mine.size == theirs.size == 336


def test_structured_buffers_of_3_vectors_and_matrices_have_std430_strides_on_metal(
    tmp_path: Path,
) -> None:
    """``RWStructuredBuffer<float3>`` (and ``int3``, ``float3x2``): Slang's Metal indexes a
    ``packed_float3 device*``, 12 bytes apart, where std430 has 16 (that was an internal error:
    the layout check compared no element size). Every pointer to the buffer is declared
    aligned, the helper of GetDimensions too; the matrix storage gets aligned vectors."""
    source = (
        "RWStructuredBuffer<float3> C;\nStructuredBuffer<int3> D;\n"
        "RWStructuredBuffer<float3x2> M;\n"
        "float3 get(uint i) { return C[i]; }\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID) {\n'
        "  uint n, s; C.GetDimensions(n, s);\n"
        "  C[i] = get(i + 1) * 2 + float(n) + D[i]; C[i].x += 1; M[i + 1] = M[i];\n}\n"
    )
    result = _build(tmp_path, source, ALL)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    assert result.reflection is not None
    code = _msl(result)
    emitted = read_msl(code.encode()).resources
    for r in result.reflection.resources:
        if r.name in ("C", "D", "M"):
            assert r.layout is not None
            (theirs,) = emitted[r.name]
            assert theirs.layout is not None
            stride = round_up(r.layout.size, r.layout.align)  # the elements' spacing
            assert stride == round_up(theirs.layout.size, theirs.layout.align), r.name
            assert stride == (32 if r.name == "M" else 16), r.name
    assert "packed_float3" not in code.replace("packed_float3(", "")
    assert "float3 device* C" in code and "int3 device* D" in code


def test_a_buffer_no_metal_code_reads_is_not_refused(tmp_path: Path) -> None:
    """Slang leaves a resource that no entry point uses out of the MSL: its Metal layout is
    nobody's, so its differences (an array of scalars used whole elsewhere, a struct array
    std140 pads) refuse nothing; a used one still is."""
    unused = (
        "struct T { float f[4]; float3 g; };\nConstantBuffer<T> Unused;\n"
        "RWStructuredBuffer<float> o;\n"
        '[shader("compute")][numthreads(1,1,1)] void main() { o[0] = 1; }\n'
    )
    result = _build(tmp_path, unused, (Target.SpirV, Target.Msl))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    used = unused.replace("{ o[0] = 1; }", "{ T t = Unused; o[0] = sum4(t.f); }").replace(
        "RWStructuredBuffer<float> o;\n",
        "RWStructuredBuffer<float> o;\nfloat sum4(float a[4]) { return a[0] + a[3]; }\n"
        "[noinline] float pass(float a[4]) { return sum4(a); }\n",
    )
    errors = _errors(tmp_path, used.replace("sum4(t.f)", "pass(t.f)"))
    assert [(c, line) for c, line, _, _ in errors] == [("OS2001", 1)]


def test_half_matrices_vectors_and_arrays_in_structured_buffers_have_std430_strides(
    tmp_path: Path,
) -> None:
    """The 16-bit siblings: ``half3x2`` columns, ``half3`` arrays and a buffer of ``half3`` are
    6 bytes apart in Slang's Metal (packed_half3), 8 in std430: declared aligned alike."""
    source = (
        "struct S { half3x2 m; half3 a[2]; half b; };\nRWStructuredBuffer<S> sb;\n"
        "RWStructuredBuffer<half3> h;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID) {\n'
        "  h[i] = h[i + 1] + sb[i].m[1].x; sb[i].a[1].y = sb[i].b; sb[i + 1] = sb[i];\n}\n"
    )
    result = _build(tmp_path, source, (Target.SpirV, Target.Msl))
    mine, theirs = _element_layouts(result, "sb")
    want = {"m": (0, 0, 8), "a": (16, 8, 0), "b": (32, 0, 0)}
    assert _strides(mine) == _strides(theirs) == want
    assert "packed_half3 " not in _msl(result) and "half3 device* h" in _msl(result)


def test_offsets_after_a_widened_array_or_matrix_are_placed_on_metal(tmp_path: Path) -> None:
    """``[[vk::offset]]`` and ``packoffset`` after a member Metal widens (an array of scalars,
    a float2x3's columns: 16 bytes apart as in std140): the padding is found on the widened
    layout; it was found on Slang's (4 and 8 apart) and put the member 32 and 16 bytes too far."""
    source = (
        "struct S { float4 f; };\n"
        "cbuffer A { float4 d1 : packoffset(c0); float2x3 d7 : packoffset(c1);"
        " S d8 : packoffset(c8); }\n"
        "cbuffer B { float weights[3]; [[vk::offset(80)]] float4 after; float4 m;"
        " [[vk::offset(160)]] float tail; };\nRWStructuredBuffer<float> o;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID)'
        " { o[0] = d1.x + d7[1].z + d8.f.y + weights[i] + after.y + m.x + tail; }\n"
    )
    result = _build(tmp_path, source, ALL)
    a = {"d1": 0, "d7": 16, "d8": 128}
    assert _reflected_and_emitted(result, "A", lambda m: m.offset) == (a, a)
    b = {"weights": 0, "after": 80, "m": 96, "tail": 160}
    assert _reflected_and_emitted(result, "B", lambda m: m.offset) == (b, b)


def test_a_struct_metal_makes_smaller_gets_std430s_size_where_its_size_counts(
    tmp_path: Path,
) -> None:
    """``struct PM { float3 p; float m; float3 v; float a; float r; uint i; }`` is 40 bytes on
    Metal (its packed float3s align it to 4), 48 in std430 and WGSL: as a structured buffer's
    element and in arrays (a cbuffer's, a struct's) it was OS2001 on every build with Metal
    beside SPIR-V (MiniEngine's particle buffers); words after its last member give Metal 48."""
    source = (
        "struct PM { float3 p; float m; float3 v; float a; float r; uint i; };\n"
        "struct Pair { PM a[2]; float t; };\n"
        "RWStructuredBuffer<PM> Out;\nRWStructuredBuffer<Pair> Pairs;\n"
        "cbuffer C { PM cm[2]; float after; };\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID) {\n'
        "  PM p = Out[i + 1]; p.a += cm[1].a + after; Out[i] = p;\n"
        "  Pair q = Pairs[i]; q.a[1].r = q.t; Pairs[i + 1] = q;\n}\n"
    )
    result = _build(tmp_path, source, ALL)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    assert result.reflection is not None
    layouts = {r.name: r.layout for r in result.reflection.resources}
    out, pairs, c = layouts["Out"], layouts["Pairs"], layouts["C"]
    assert out is not None and pairs is not None and c is not None
    assert out.size == 48
    assert [(m.name, m.offset, m.type.stride) for m in pairs.members] == [
        ("a", 0, 48),
        ("t", 96, 0),
    ]
    assert [(m.name, m.offset, m.type.stride) for m in c.members] == [
        ("cm", 0, 48),
        ("after", 96, 0),
    ]
    assert re.search(
        r"uint i_0;\s*uint oneshader_pad\w+;\s*uint oneshader_pad\w+;\s*\}", _msl(result)
    )


def test_a_cbuffer_array_named_as_a_swizzle_is_widened_where_the_block_is_never_copied(
    tmp_path: Path,
) -> None:
    """``float a[4]`` (a name ``.a`` also spells as a swizzle): where the block's struct is
    reached through its pointer only (``CB->a``, no copy of it), every ``->a`` is the member
    and it is widened as any other; swizzles stay as they are."""
    source = (
        "cbuffer CB { float a[4]; float4 c; };\nRWStructuredBuffer<float> o;\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint i : SV_DispatchThreadID)'
        " { float4 k = c * 2; o[0] = a[i] + k.a + c.a; }\n"
    )
    result = _build(tmp_path, source, ALL)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    want = {"a": (0, 16), "c": (64, 0)}
    assert _reflected_and_emitted(result, "CB", lambda m: (m.offset, m.type.stride)) == (want, want)
    text = _msl(result)
    assert "array<float4, int(4)> a;" in text and re.search(r"CB->a\[i_\d\.x\]\.x \+", text)


def test_a_widened_array_copied_whole_and_an_array_of_float2x3_have_std140_strides_on_metal(
    tmp_path: Path,
) -> None:
    """``t.s = w;`` (a constant buffer's ``float w[3]`` copied whole into a struct, as Slang
    writes it: one statement) is copied element by element, each element's first component;
    ``float2x3 m[2]``: 48 bytes apart in std140, 24 in Slang's Metal, its wrapper's columns
    widened to float4. A whole array passed to a function stays OS2001 (the test above).
    (SPIR-V's std140 is the reference; Slang's WGSL for such a copy is not valid: another
    matter.)"""
    source = (
        "cbuffer CB { float w[3]; float2x3 m[2]; float u; };\nRWStructuredBuffer<float> o;\n"
        "struct T { float s[3]; float2x3 k[2]; };\n"
        '[shader("compute")][numthreads(1,1,1)] void main(uint3 i : SV_DispatchThreadID)'
        " { T t; t.s = w; t.k = m; o[0] = t.s[i.x] + t.k[i.y][1].z + m[1][0].y + u; }\n"
    )
    result = _build(tmp_path, source, (Target.SpirV, Target.Msl))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    want = {"w": (0, 16), "m": (48, 48), "u": (144, 0)}
    assert _reflected_and_emitted(result, "CB", lambda m: (m.offset, m.type.stride)) == (want, want)
    text = _msl(result)
    assert "array<float4, int(3)> w;" in text and "array<float4, int(3)> data_" in text
    copies = re.findall(r"->s_\d+\[int\((\d)\)\] = CB->w\[int\(\1\)\]\.x;", text)
    assert copies == ["0", "1", "2"]
