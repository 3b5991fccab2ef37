"""The source scanner: declarations as written, with attributes, registers and positions."""

from __future__ import annotations

from pathlib import Path

import hypothesis
import hypothesis.strategies as st
import pytest

from oneshader.compiler.source.preprocess import preprocess
from oneshader.compiler.source.query import Stream
from oneshader.compiler.source.scanner import scan, strip_comments
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.reflection.model import ResourceTypeKind

SOURCE = """// comment with Texture2D Fake;
#include "a.hlsli"
#define X(n) n
/* block
   Texture2D AlsoFake; */
[[vk::binding(5, 1)]] [[vk::image_format("rgba8")]] RWTexture2D<float4> Out : register(u2, space3);
Texture2D<float4> A : register(t0), B[4];
StructuredBuffer< Foo<int> > Nested;
cbuffer Params : register(b1)
{
    row_major float4x4 M;
    [[vk::offset(32)]] float4 V;
};
static const float K = 1.0;
[[vk::constant_id(7)]] const uint Count = 3;
struct S { nointerpolation uint id : ID3; linear float2 uv : TEXCOORD1; };
[shader("pixel")]
[earlydepthstencil]
float4 Main(S s, float4 pos : SV_Position) : SV_Target { return 0; }
"""


def test_declarations_as_written() -> None:
    src = scan("x.hlsl", SOURCE)
    decls = {d.name: d for d in src.declarations}
    assert "Fake" not in decls and "AlsoFake" not in decls
    out = decls["Out"]
    assert (out.base, out.type_text, out.line, out.column) == (
        "RWTexture2D",
        "RWTexture2D<float4>",
        6,
        73,
    )
    assert out.register == ("u", 2, 3)
    assert [(a.name, a.args) for a in out.attributes] == [
        ("vk::binding", ("5", "1")),
        ("vk::image_format", ("rgba8",)),
    ]
    assert (decls["A"].register, decls["A"].array) == (("t", 0, 0), None)
    assert (decls["B"].type_text, decls["B"].array, decls["B"].register) == (
        "Texture2D<float4>",
        4,
        None,
    )
    assert decls["Nested"].type_text == "StructuredBuffer< Foo<int> >"
    params = decls["Params"]
    assert (params.base, params.type_text, params.register, params.line) == (
        "cbuffer",
        "",
        ("b", 1, 0),
        9,
    )
    assert decls["Count"].attribute("vk::constant_id").args == ("7",)  # type: ignore[union-attr]
    assert (decls["Count"].initializer, decls["Count"].modifiers) == ("3", ("const",))
    assert decls["K"].modifiers == ("static", "const")


def test_struct_fields_functions_and_entries() -> None:
    src = scan("x.hlsl", SOURCE)
    body = src.structs["Params"]
    assert [(f.name, f.type_text, f.modifiers) for f in body.fields] == [
        ("M", "float4x4", ("row_major",)),
        ("V", "float4", ()),
    ]
    assert body.fields[1].attributes[0].name == "vk::offset"
    s = src.structs["S"]
    assert [(f.name, f.modifiers, f.semantic) for f in s.fields] == [
        ("id", ("nointerpolation",), "ID3"),
        ("uv", ("linear",), "TEXCOORD1"),
    ]
    main = src.functions["Main"]
    assert [(f.name, f.type_text, f.semantic) for f in main.fields] == [
        ("s", "S", ""),
        ("pos", "float4", "SV_Position"),
    ]
    assert [(e.name, e.stage, e.line) for e in src.entries] == [("Main", "pixel", 19)]


def test_comments_are_blanked_keeping_positions() -> None:
    text = 'a /* x\ny */ b // z\n"// not a comment"'
    clean = strip_comments(text)
    assert len(clean) == len(text) and clean.count("\n") == text.count("\n")
    assert clean.split("\n")[1].strip() == "b" and '"// not a comment"' in clean


def test_includes_resolve_relative_then_include_dirs(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "inc" / "a.hlsli").write_text("")
    (tmp_path / "lib" / "b.hlsli").write_text("")
    main = tmp_path / "main.hlsl"
    text = '#include "inc/a.hlsli"\n#include <b.hlsli>\n'
    unit = preprocess(main, text, (str(tmp_path / "lib"),), (), lambda p, *_: p.read_text())
    found = [child.path for _, child in unit.main.children]
    assert found == [
        (tmp_path / "inc" / "a.hlsli").resolve(),
        (tmp_path / "lib" / "b.hlsli").resolve(),
    ]


def _strip_comments_by_hand(text: str) -> str:
    """The scanner's first, character-by-character comment stripper: the oracle for the regex."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(st.text(alphabet='/*"\\\nab ', max_size=40))
def test_strip_comments_keeps_positions_as_the_character_loop_did(text: str) -> None:
    got = strip_comments(text)
    assert got == _strip_comments_by_hand(text)
    assert len(got) == len(text) and got.count("\n") == text.count("\n")


def test_the_insides_of_function_bodies_and_initializers_are_never_tokenized() -> None:
    """The scanner reads declarations: a body of 20,000 statements (or a constant table of
    as many numbers) is two braces among its tokens (the source model lexed it once), so that
    megabytes of code scan in Slang's shadow."""
    from oneshader.compiler.source.scanner import _tokens

    body = "    x = x * 3 + 1; { y = 2; }\n" * 20_000
    table = ", ".join(str(i) for i in range(20_000))
    text = (
        "struct S { float a; };\n"
        f"static const uint T[20000] = {{ {table} }};\n"
        f"float f(float x) {{\n{body}    return x;\n}}\n"
        "namespace N { cbuffer C { float b; }; }\n"
    )
    toks, _ = _tokens(text)
    assert len(toks) < 80
    found = scan("s.hlsl", text)
    assert [f.name for f in found.structs["S"].fields] == ["a"]
    assert [f.name for f in found.structs["C"].fields] == ["b"]
    assert "f" in found.functions and [d.name for d in found.declarations] == ["C"]


_TRIGGERED = """#include "a.hlsli"
RWBuffer<float> first;
Texture2D<float4> tex;
Buffer<uint> second;
RWBuffer<int> third;
StructuredBuffer<float> lengths;
ByteAddressBuffer unmeasured;
RWByteAddressBuffer atomics;
RWStructuredBuffer<uint> counted;
float4 main(float4 p : SV_Position, float d : sv_clipdistance1) : SV_Target {
    uint n, s;
    lengths.GetDimensions(n, s);
    second.GetDimensions(n);
    uint was;
    atomics.InterlockedAdd(0, 1, was);
    counted.IncrementCounter();
    return p + tex.Load(int3(0, 0, 0)) + (flags.on ? 1 : 0);
}
"""


def _read(tmp_path: Path, text: str, files: dict[str, str]) -> SourceSet:
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    (tmp_path / "s.hlsl").write_text(text)
    src = SourceSet(str(tmp_path / "s.hlsl"), "s.hlsl", ())
    src.read()
    return src


def test_the_triggers_find_their_idioms_in_any_file_in_any_case_in_declaration_order(
    tmp_path: Path,
) -> None:
    """What the source set's triggers find (each behind a search that rules most shaders out):
    a bool an include declares, a distance semantic in lower case, buffers of two types in the
    order they are declared."""
    src = _read(
        tmp_path, _TRIGGERED, {"a.hlsli": "struct F { bool on; };\nConstantBuffer<F> flags;\n"}
    )
    assert src.buffer_bools() == {("F", "on"): ((tmp_path / "a.hlsli").resolve(), 1, 17)}
    assert src.has_distances()
    assert list(src.declared_as({ResourceTypeKind.Buffer, ResourceTypeKind.RWBuffer})) == [
        "first",
        "second",
        "third",
    ]
    assert src.storage_typed_buffers() == ("first", "third")
    assert src.measured_buffers() == ["lengths"]
    assert src.byte_atomic_buffers() == ("atomics",)
    assert [c.obj for c in src.counter_uses()] == ["counted"]


def test_a_shader_without_the_triggers_words_is_not_walked_for_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a word that could be a distance semantic, a bool or ``GetDimensions``, the
    triggers answer from a search of the words or texts, without a walk of each."""
    src = _read(
        tmp_path,
        "cbuffer C { float4 k; };\nStructuredBuffer<float> b;\n"
        "float4 main(float4 p : SV_Position) : SV_Target { return p * k + b[0]; }\n",
        {},
    )

    def walked(*args: object) -> None:
        raise AssertionError("walked")

    monkeypatch.setattr(Stream, "words_where", walked)
    monkeypatch.setattr(SourceSet, "_bools_in", walked)
    monkeypatch.setattr(Stream, "words", walked)
    assert not src.has_distances()
    assert src.buffer_bools() == {}
    assert src.measured_buffers() == []
