"""The comment written after a struct member's ``;`` becomes the member's doc in the reflection
(and the generated docstring); nothing else does, and the layout is untouched by it."""

from __future__ import annotations

from pathlib import Path

from oneshader.bindings import from_reflection
from oneshader.codegen.render import render_module
from oneshader.compiler import CompileOptions, compile_file
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import Target

SOURCE = """\
struct Light
{
    float3 Color;   //   linear RGB,   not sRGB
    float Power;
};

cbuffer Frame
{
    // the comment above is not this member's
    float4x4 View;
    Light Lights[2]; // every light of the scene
    float Time; /* a block comment is not taken */
};

RWStructuredBuffer<float> Out;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main()
{
    Out[0] = View[0][0] + Lights[1].Power + Lights[0].Color.x + Time;
}
"""


def test_trailing_comments_become_member_docs(tmp_path: Path) -> None:
    (tmp_path / "docs.hlsl").write_text(SOURCE)
    result = compile_file(
        str(tmp_path / "docs.hlsl"),
        CompileOptions(targets=(Target.SpirV, Target.Wgsl), source_name="docs.hlsl"),
    )
    assert result.reflection is not None, [d.format() for d in result.diagnostics]
    (frame,) = [r for r in result.reflection.resources if r.name == "Frame"]
    assert frame.layout is not None
    docs = {m.name: m.doc for m in frame.layout.members}
    assert docs == {"View": "", "Lights": "every light of the scene", "Time": ""}
    light = frame.layout.members[1].type.element
    assert light is not None
    assert [(m.name, m.doc) for m in light.members] == [
        ("Color", "linear RGB, not sRGB"),
        ("Power", ""),
    ]
    # through the file and into the generated module's docstrings
    text = ReflectionFormat.write(result.reflection)
    assert b'member name="Lights" offset=64 doc="every light of the scene"' in text
    again = ReflectionFormat.read(text)
    assert again == result.reflection
    source = render_module(again, "docs")
    assert '    """float3 at byte 0: linear RGB, not sRGB"""\n' in source
    assert '    """float at byte 12."""\n' in source
    assert from_reflection(again, "docs").Light.size == 16


def test_a_struct_used_twice_has_its_docs_in_both(tmp_path: Path) -> None:
    """A struct's layout is documented once and that result given wherever it is used (its
    layouts found by identity); a resource whose layout gains no doc is kept as it is."""
    source = SOURCE.replace("RWStructuredBuffer", "cbuffer Sky { Light Sun; };\nRWStructuredBuffer")
    source = source.replace("+ Time;", "+ Time + Sun.Power;")
    (tmp_path / "twice.hlsl").write_text(source)
    result = compile_file(
        str(tmp_path / "twice.hlsl"),
        CompileOptions(targets=(Target.SpirV,), source_name="twice.hlsl"),
    )
    assert result.reflection is not None, [d.format() for d in result.diagnostics]
    by_name = {r.name: r for r in result.reflection.resources}
    sun = by_name["Sky"].layout.members[0].type  # type: ignore[union-attr]
    lights = by_name["Frame"].layout.members[1].type.element  # type: ignore[union-attr]
    assert sun == lights and [m.doc for m in sun.members] == ["linear RGB, not sRGB", ""]
    assert by_name["Out"].layout is not None and by_name["Out"].layout.members == ()
