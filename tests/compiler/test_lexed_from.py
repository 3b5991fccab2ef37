"""A file's text as compiled is lexed once, by the preprocessor: the stream the queries and
rewrites read of it (``query.lexed``) is made from the preprocessor's tokens placed in the text
(``query.lexed_from``). It must be the stream lexing the text gives, token for token (kind,
text, line, column, leading blank) and offset for offset."""

from __future__ import annotations

from pathlib import Path

import pytest

from oneshader.compiler.source import query
from oneshader.compiler.source.lexer import lex
from oneshader.compiler.source.sourceset import SourceSet

HEADER = """\
#pragma once
#define TWICE(x) ((x) + (x))
#define EMPTY
float4 fromHeader(float4 v) { return TWICE(v); }
"""

# Macros of every kind (object, function-like over several lines, pasting, stringizing,
# built-ins, an empty one between tokens), directives handed on, comments, tabs, a splice, a
# non-breaking space, literals next to punctuators, an expansion next to a written token.
CASES = {
    "macros": """\
#include "h.hlsli"
#define N 4
#define CAT(a, b) a##b
#define STR(a) #a
#define ADD(a, b) \\
    ((a) + (b))
#pragma pack_matrix(row_major)
cbuffer C : register(b0) { float4 vals[N]; float CAT(sc, ale); };
static const int line = __LINE__; static const int n2=N+N;
float f(float x) { return ADD(x,
    1.0f) * x; }
float g(float x) { return x EMPTY + EMPTY 2; } // a comment /* here */
/* a block
   comment */ float h(float a) { return a; }
\tfloat\ttabbed(float a)/*c*/{return a;}
float i(float a) {\u00a0return a; }
float j() { return .5f+N; }
#line 40 "other.hlsl"
[numthreads(8, 1, 1)] void main(uint3 id : SV_DispatchThreadID) { float s = STR(id).x; }
""",
    "splice": """\
float k(float a) { return a \\
+ 1; }
[numthreads(1, 1, 1)] void main() {}
""",
    "unterminated": """\
float k(float a) { return a; } // "quote
static const char c = 'x';
[numthreads(1, 1, 1)] void main() {}
""",
    "comment-in-expansion-line": """\
#define X 1
static const int a = X; /* opened
closed */ static const int b = 2;
[numthreads(1, 1, 1)] void main() {}
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_stream_made_from_tokens_is_the_lexed_one(tmp_path: Path, name: str) -> None:
    (tmp_path / "h.hlsli").write_text(HEADER)
    path = tmp_path / f"{name}.hlsl"
    path.write_text(CASES[name])
    src = SourceSet(str(path), path.name, ())
    src.read()
    assert src.texts
    for p, rendered in src.maps.items():
        text = rendered.text
        tokens = [t for t in lex(text, 0) if t.kind != "nl"]
        fresh = query.Stream(Path(), text, tokens, [])
        offsets = [fresh.offset_of(t.line, t.col) for t in tokens]
        inc = src._first[p]
        placed = query._placed(text, inc.tokens, rendered.offsets, rendered.columns)
        if placed is not None:  # (None: lexed whole, as the docstring says)
            assert placed == (tokens, offsets), p
        made = query.lexed_from(text, inc.tokens, rendered.offsets, rendered.columns)
        assert (list(made.tokens), list(made.offsets)) == (tokens, offsets), p
        assert query.lexed(text) is made


def test_made_without_lexing_where_no_line_is_spliced(tmp_path: Path) -> None:
    (tmp_path / "h.hlsli").write_text(HEADER)
    path = tmp_path / "m.hlsl"
    path.write_text(CASES["macros"])
    src = SourceSet(str(path), path.name, ())
    src.read()
    for p, rendered in src.maps.items():
        placed = query._placed(
            rendered.text, src._first[p].tokens, rendered.offsets, rendered.columns
        )
        assert placed is not None, p


# Texts edited within their lines, as the rewrites edit them (lines kept): what changed and
# what did not, next to each other; a line count changed; a block comment written.
EDITS = [
    ("float a;\nfloat b;\n\nint c = 1;\n", "float a;\nfloat bb;\n\nint c = 1;\n"),
    ("cbuffer C { float4 x; };\nstatic float y;\n", "cbuffer C { float4 x; };\nstatic float  y;\n"),
    ("a\n b\n  c", "xx a\n b\n  c"),
    ("a\nb\nc\n", "a\nb\n"),
    ("a\nb\nc\n", "a\nb /* c */\nc\n"),
    ("[numthreads(1,1,1)]\nvoid main() {}\n", "[numthreads(1,1,1)]\nvoid main() { return; }\n"),
    ("x = 'a'; y = \"s\"\nz = 1.0e+5f;\n", "x = 'a'; y = \"t\"\nz = 1.0e+5f;\n"),
    ("a \\\nb\n", "a \\\nbb\n"),
]


@pytest.mark.parametrize(("before", "after"), EDITS)
def test_stream_after_edits_is_the_lexed_one(before: str, after: str) -> None:
    query._LEXED.pop(after, None)
    made = query.lexed_after(query.lexed(before), after)
    tokens = [t for t in lex(after, 0) if t.kind != "nl"]
    fresh = query.Stream(Path(), after, tokens, [])
    offsets = [fresh.offset_of(t.line, t.col) for t in tokens]
    assert (list(made.tokens), list(made.offsets)) == (tokens, offsets)


def test_a_file_without_expansions_is_taken_as_its_tokens(tmp_path: Path) -> None:
    """Where render placed every token of the main file where the file writes it
    (``Rendered.plain``), the stream is those tokens, without a look at each; a blank that
    only the file has (before a token first on its line after a splice) is not plain."""
    path = tmp_path / "plain.hlsl"
    path.write_text("cbuffer C { float4 x; };\n\tfloat f(float a)/*c*/{ return a; } // c\n")
    spliced = tmp_path / "spliced.hlsl"
    spliced.write_text("float k(float a) { return a\\\n+ 1; }\n")
    for shader, plain in ((path, True), (spliced, False)):
        src = SourceSet(str(shader), shader.name, ())
        src.read()
        rendered = src.maps[shader.resolve()]
        assert rendered.plain is plain
        text = rendered.text
        tokens = [t for t in lex(text, 0) if t.kind != "nl"]
        fresh = query.Stream(Path(), text, tokens, [])
        made = query.lexed(text)
        assert (list(made.tokens), list(made.offsets)) == (
            tokens,
            [fresh.offset_of(t.line, t.col) for t in tokens],
        )
        assert (made.tokens is src._first[shader.resolve()].tokens) is plain
