"""The compiler's work grows with the size of a shader, not with its square (issue 20: linear
cost). No timing here (bench/bench_scaling.py shows the times): the work a compile does per
member, resource, include or diagnostic is counted, and the whole-text passes that once ran
once per item (splitting or stripping a whole file, a regex over the whole output) must run
a fixed number of times however many items there are."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.patch import apply
from oneshader.compiler.slang.messages import parse
from oneshader.compiler.source import query, rewrite
from oneshader.compiler.source.lexer import strip_comments
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import source_excerpt
from oneshader.reflection.model import Target

KERNEL = """RWStructuredBuffer<float4> Out : register(u0, space1);
[shader("compute")] [numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{{
    float4 acc = float4(0.0, 0.0, 0.0, 0.0);
{body}
    Out[id.x] = acc;
}}
"""
WGSL = CompileOptions(source_name="main.hlsl", targets=(Target.Wgsl,))


class _CountedText(str):
    """A file's text that counts how often it is split into lines."""

    splits = 0

    def split(self, *args: Any, **kwargs: Any) -> list[str]:
        _CountedText.splits += 1
        return super().split(*args, **kwargs)

    def splitlines(self, *args: Any, **kwargs: Any) -> list[str]:
        _CountedText.splits += 1
        return super().splitlines(*args, **kwargs)


def _counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Calls of ``owner.name`` from now on, counted in the one-item list returned."""
    calls = [0]
    real: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_many_diagnostics_of_one_file_split_it_once() -> None:
    text = _CountedText("".join(f"    acc += missing{i};\n" for i in range(200)))
    output = "\n".join(
        "\t".join(["E30015", "error", "a.slang", str(i + 1), "12", str(i + 1), "13", "undefined"])
        for i in range(200)
    )
    _CountedText.splits = 0
    found = parse(output, lambda path: "main.hlsl", lambda path: text)
    assert len(found) == 200 and found[-1].excerpt.startswith("   200 |     acc += missing199;")
    assert _CountedText.splits <= 1


def test_an_excerpt_counts_lines_as_splitlines_does() -> None:
    def reference(text: str, line: int, column: int) -> str:
        lines = text.splitlines()
        if not 1 <= line <= len(lines):
            return ""
        caret = " " * max(column - 1, 0) + "^"
        return f"  {line:>4} | {lines[line - 1].expandtabs(4)}\n       | {caret}"

    pieces = ["a", "b", "\t", " ", "\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x85", "\u2028"]
    rnd = random.Random(20)
    for _ in range(3000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
        for line in range(15):
            assert source_excerpt(text, line, 3) == reference(text, line, 3), (text, line)


def test_the_padding_pass_reads_a_file_once_not_once_per_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each member's place comes from the file's token stream, made once a compile (every
    stage shares it), not from the file's text searched again per member."""
    members = "".join(f"    float4 m{i};\n" for i in range(80))
    (tmp_path / "main.hlsl").write_text(
        f"cbuffer Params : register(b0)\n{{\n{members}    [[vk::offset(2000)]] float4 last;\n}};\n"
        + KERNEL.format(body="    acc += m0 + last;")
    )
    streams = _counting(monkeypatch, SourceSet, "_stream")
    result = compile_file(str(tmp_path / "main.hlsl"), WGSL)
    assert result.ok, result.diagnostics
    last = result.reflection.resources[0].layout.members[-1]
    assert (last.name, last.offset) == ("last", 2000)  # the padding still placed it
    assert streams[0] == 1  # once for the one file, not once a member (80)


class _CountingRe(SimpleNamespace):
    """The ``re`` module as one module sees it, counting its whole-text passes."""

    def __init__(self) -> None:
        super().__init__(**{n: getattr(re, n) for n in dir(re) if not n.startswith("__")})
        self.passes = 0
        for name in ("sub", "search", "finditer", "findall", "match"):
            setattr(self, name, self._counted(getattr(re, name)))

    def _counted(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.passes += 1
            return fn(*args, **kwargs)

        return counted


@pytest.fixture
def counted_re(monkeypatch: pytest.MonkeyPatch) -> Iterator[_CountingRe]:
    counting = _CountingRe()
    monkeypatch.setattr(apply, "re", counting)
    yield counting


def test_wgsl_bindings_are_patched_in_one_pass_not_one_per_resource(
    tmp_path: Path, counted_re: _CountingRe
) -> None:
    n = 40
    decls = "".join(f"Texture2D<float4> T{i} : register(t{i});\n" for i in range(n))
    decls += "SamplerComparisonState Shadow : register(s0);\n"
    body = "".join(f"    acc += T{i}.Load(int3(id.xy, 0));\n" for i in range(1, n))
    body += "    acc.x += T0.SampleCmpLevelZero(Shadow, float2(0.5, 0.5), 0.5);\n"
    (tmp_path / "main.hlsl").write_text(decls + KERNEL.format(body=body))
    result = compile_file(str(tmp_path / "main.hlsl"), WGSL)
    assert result.ok, result.diagnostics
    wgsl = result.outputs[0].data.decode()
    assert re.search(r"@binding\(0\) @group\(0\) var T0 : texture_depth_2d;", wgsl)
    assert re.search(rf"@binding\({n - 1}\) @group\(0\) var T{n - 1} : texture_2d<f32>;", wgsl)
    assert counted_re.passes < 10  # a few passes in all, not a few per resource (over 80)


def _include_strips(folder: Path, n: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """How often the source rewrites lex a file's text for a shader of ``n`` includes, each
    declaring a texture the main file loads with an offset."""
    folder.mkdir()
    for i in range(n):
        (folder / f"part{i}.hlsli").write_text(
            f"#pragma once\nTexture2D<float4> T{i} : register(t{i});\n"
        )
    includes = "".join(f'#include "part{i}.hlsli"\n' for i in range(n))
    body = "".join(f"    acc += T{i}.Load(int3(0, 0, 0), int2(1, 0));\n" for i in range(n))
    (folder / "main.hlsl").write_text(includes + KERNEL.format(body=body))
    with monkeypatch.context() as patched:
        strips = _counting(patched, query, "lex_directives")
        result = compile_file(str(folder / "main.hlsl"), WGSL)
    assert result.ok, result.diagnostics
    return strips[0]


def test_includes_are_not_stripped_again_for_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = _include_strips(tmp_path / "small", 20, monkeypatch)
    large = _include_strips(tmp_path / "large", 40, monkeypatch)
    assert large <= 2.2 * small  # in proportion to the files (once per file per file: 4x)


_OLD_VOID_CAST = re.compile(r"(^|[;{}])(\s*)(\(\s*void\s*\))", re.MULTILINE)


def test_void_casts_are_found_where_statements_start_as_before() -> None:
    """The cast is looked for from each ``(void)`` backwards (a pattern trying every line start
    cost the square of a run of blank lines); it finds what that pattern found."""
    pieces = ["(void)", "( void )", "f(void)", "x", ";", "{", "}", " ", "\n", "\t", "//c\n"]
    rnd = random.Random(7)
    for _ in range(3000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 10)))
        code = strip_comments(text)
        spans = [m.span(3) for m in _OLD_VOID_CAST.finditer(code)]
        rewritten = query.edited(text, rewrite.void_cast_edits(query.lexed(text)))
        assert rewritten == rewrite.blanked(text, spans), text


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.text(alphabet="ab_1 \n\t(,)", max_size=30), st.integers(0, 30))
def test_a_call_head_is_read_backwards_as_the_search_found_it(text: str, j: int) -> None:
    """The WGSL texture flow names the function a ``(`` calls by reading back from it (a
    search of all the text before it, once per use of a texture, cost the square: 2,000
    textures took minutes)."""
    from oneshader.compiler.patch.wgsl import _call_head

    j = min(j, len(text))
    found = re.search(r"(\w+)\s*\Z", text[:j])
    assert _call_head(text, j) == (found.group(1) if found else None)


def test_the_texture_flow_reads_only_the_words_of_its_textures() -> None:
    """The WGSL texture flow finds the uses of its textures by one search for their names (a
    Python step per word of the code was most of it): a name inside a longer word is none."""
    from oneshader.compiler.patch.wgsl import texture_flow

    text = (
        "@group(0) @binding(0) var shadow_0 : texture_2d<f32>;\n"
        "@group(0) @binding(1) var noshadow_0 : texture_2d<f32>;\n"
        "fn look_0(t_0 : texture_2d<f32>, s_0 : sampler_comparison) -> f32\n"
        "{ return textureSampleCompare(t_0, s_0, vec2<f32>(0.0), 0.5); }\n"
        "@fragment fn main(@location(0) u_0 : vec2<f32>) -> @location(0) vec4<f32>\n"
        "{ let a_0 = look_0(shadow_0, cmp_0); let noshadow_1 = textureLoad(noshadow_0, "
        "vec2<i32>(0), 0); let b_0 = shadow_0x; return vec4<f32>(a_0); }\n"
    )
    flow = texture_flow(text, ["shadow_0"])
    assert flow.depth == {"shadow_0", ("look_0", 0)} and flow.compared == {"shadow_0"}
    flow = texture_flow(text, ["shadow_0", "noshadow_0"])
    assert flow.depth == {"shadow_0", ("look_0", 0)}
    assert flow.compared == {"shadow_0"}
