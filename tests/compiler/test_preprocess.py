"""The source model's preprocessor and source map (compiler/source/preprocess.py, sourcemap.py)
against what C's preprocessor (and so DXC and Slang) makes of the same text."""

from __future__ import annotations

import re
from pathlib import Path

import hypothesis
import hypothesis.strategies as st
import pytest

from oneshader.compiler.source.lexer import _LEX, lex, lex_directives
from oneshader.compiler.source.preprocess import PreprocessorError, Unit, preprocess
from oneshader.compiler.source.scanner import strip_comments
from oneshader.compiler.source.sourcemap import render


def _unit(tmp_path: Path, text: str, files: dict[str, str] | None = None, **defines: str) -> Unit:
    for name, body in (files or {}).items():
        (tmp_path / name).write_text(body)
    main = tmp_path / "m.hlsl"

    def load(path: Path, written: str, here: Path, line: int, col: int) -> str:
        return path.read_text()

    return preprocess(main, text, (), tuple(defines.items()), load)


def _out(tmp_path: Path, text: str, files: dict[str, str] | None = None, **defines: str) -> str:
    unit = _unit(tmp_path, text, files, **defines)
    return " ".join(t.text for inc in unit.inclusions() for t in inc.tokens)


def test_the_lexer_keeps_positions_and_treats_comments_as_space() -> None:
    tokens = lex("a /* x\ny */ b // c\n  #define X \\\n 1\n", 0)
    assert [(t.text, t.line, t.col) for t in tokens if t.kind != "nl"] == [
        ("a", 1, 1), ("b", 2, 6), ("#", 3, 3), ("define", 3, 4), ("X", 3, 11), ("1", 4, 2),
    ]  # fmt: skip
    assert [t.line for t in tokens if t.kind == "nl"] == [2, 4]


# The lexer's pattern as first written, a comment's or a literal's inside one alternation a
# character: the oracle for the unrolled form, which reads it a run of characters at a time.
_LEX_BY_CHARACTER = re.compile(
    r"""\n
      | (?:[ \t\f\v\r]+|\\\r?\n|//(?:[^\n\\]|\\.|\\\n)*|/\*.*?(?:\*/|\Z))+
      | [A-Za-z_][A-Za-z0-9_]*
      | \.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*
      | "(?:\\.|[^"\\\n])*"?
      | '(?:\\.|[^'\\\n])*'?
      | \#\#|\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|::|&&|\|\||[-+*/%&|^!=<>]=|[^\s]
      | .""",
    re.VERBOSE | re.DOTALL,
)


# what a comment's, a literal's or a splice's end can hang on
_PIECES = [
    "/", "*", "*/", "/*", "//", "\\", "\n", "\r", " ", "\t",
    '"', "'", "a", "1", ".", "e+", "#", "\xa0",
]  # fmt: skip


@hypothesis.settings(max_examples=2000, deadline=None)
@hypothesis.given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_the_lexers_matches_are_those_of_the_pattern_read_a_character_at_a_time(text: str) -> None:
    assert _LEX.findall(text) == _LEX_BY_CHARACTER.findall(text)


def test_the_preprocessors_lexing_is_the_tokens_without_newlines_and_its_directive_lines() -> None:
    text = "a # b\n  #define X \\\n 1\n/* x\n*/ # if X\n#\nc\n#endif"
    tokens, directives = lex_directives(text, 0)
    assert tokens == [t for t in lex(text, 0) if t.kind != "nl"]
    assert [" ".join(t.text for t in tokens[a:b]) for a, b in directives] == [
        "# define X 1", "# if X", "#", "# endif",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('#define S(x) #x\nS(a  +  "b")', '"a + \\"b\\""'),
        ("#define C(a, b) a ## b\nC(x, 1) C(, y)", "x1 y"),
        ("#define V(f, ...) f(__VA_ARGS__)\nV(g, 1, 2) V(h)", "g ( 1 , 2 ) h ( )"),
        ("#define G(f, ...) f(0, ## __VA_ARGS__)\nG(k) G(k, 1)", "k ( 0 ) k ( 0 , 1 )"),
        ("#define x x + 1\nx", "x + 1"),  # no recursion into itself
        # C99 6.10.3.5's example: the hide sets stop g from expanding into f again
        ("#define f(a) a*g\n#define g(a) f(a)\nf(2)(9)", "2 * 9 * g"),
        ("#define F(a) a\n#define G F\nG(1) F", "1 F"),  # a function-like name without (
        ("#define E\nE int E x", "int x"),
        ("a __LINE__\n__LINE__", "a 1 2"),
        ("#define ONE 1\n#undef ONE\nONE", "ONE"),
        ("#define INC <q.h>\n#if 0\n#include INC\n#endif\nz", "z"),
    ],
)
def test_macros_expand_as_c_expands_them(tmp_path: Path, source: str, expected: str) -> None:
    assert _out(tmp_path, source) == expected


def test_a_run_naming_no_macro_is_placed_as_it_is_and_one_naming_one_expands(
    tmp_path: Path,
) -> None:
    """A run of text with no name that may expand (most runs: told by one search of its words)
    is its tokens as lexed; a name of a macro, or of a built-in one, anywhere in it expands."""
    text = '#define M 2\nfloat a = 1; // M\n"M" b\n#undef M\nM c\n'
    unit = _unit(tmp_path, text)
    tokens = unit.main.tokens
    assert [t.text for t in tokens] == ["float", "a", "=", "1", ";", '"M"', "b", "M", "c"]
    assert all(t.site is None and t.hide == frozenset() for t in tokens)
    assert _out(tmp_path, "#define M 2\nfloat a = M;\n") == "float a = 2 ;"
    assert _out(tmp_path, "float a = __LINE__;\n") == "float a = 1 ;"


@pytest.mark.parametrize(
    ("condition", "taken"),
    [
        ("(1 << 4) == 16 && defined(A) || !defined B", True),
        ("defined A && A > 2", False),
        ("0x10 / 4 == 4 && 7 % 4 == 3 && -1 < 0 && ~0 == -1 && 10u == 10UL", True),
        ("UNDEFINED_NAME", False),
        ("1 ? 0 : 1", False),
        ("(2 + 3) * 2 == 10 && (1 | 2) == 3 && (6 & 3) == 2 && (5 ^ 1) == 4", True),
        ("'a' == 97", True),
    ],
)
def test_if_computes_as_c(tmp_path: Path, condition: str, taken: bool) -> None:
    text = f"#if {condition}\nyes\n#elif 1\nno\n#else\nnever\n#endif\n"
    assert _out(tmp_path, text, A="1") == ("yes" if taken else "no")


def test_only_the_branch_taken_is_read_and_nested_ones_follow(tmp_path: Path) -> None:
    text = "#ifdef X\n#if 1/0\n#error not read\n#endif\na\n#else\nb\n#ifndef Y\nc\n#endif\n#endif\n"
    assert _out(tmp_path, text) == "b c"


def test_guards_and_pragma_once_read_a_file_once_and_cycles_end(tmp_path: Path) -> None:
    files = {
        "a.h": '#ifndef A_H\n#define A_H\n#include "b.h"\nA\n#endif\n',
        "b.h": '#pragma once\n#include "a.h"\nB\n',
    }
    unit = _unit(tmp_path, '#include "a.h"\n#include "b.h"\n#include "a.h"\nM\n', files)
    assert [inc.path.name for inc in unit.inclusions()] == ["m.hlsl", "a.h", "b.h"]
    assert " ".join(t.text for inc in unit.inclusions() for t in inc.tokens) == "M A B"


def test_an_unguarded_cycle_is_a_positioned_error(tmp_path: Path) -> None:
    with pytest.raises(PreprocessorError) as err:
        _unit(tmp_path, '#include "c.h"\n', {"c.h": '\n  #include "c.h"\n'})
    assert (err.value.path.name, err.value.line, err.value.col) == ("c.h", 2, 12)
    assert "include guard" in err.value.message


@pytest.mark.parametrize(
    ("source", "line", "col", "fragment"),
    [
        ("#if\n#endif\n", 1, 2, "expects an expression"),
        ("\n#else\n", 2, 2, "#else without #if"),
        ("#if 1\n#else\n#else\n#endif\n", 3, 2, "after #else"),
        ("#define F(a) a\n  F(1\n", 2, 3, "unterminated invocation"),
        ("#define F(a, b) a\nF(1)\n", 2, 1, "takes 2 arguments"),
        ("#if 1 / 0\n#endif\n", 1, 7, "division by zero"),
        ('#include "nope.h"\n', 1, 10, "failed to find include file 'nope.h'"),
        ("#error stop  here\n", 1, 2, "#error: stop here"),
    ],
)
def test_errors_say_where_and_what(
    tmp_path: Path, source: str, line: int, col: int, fragment: str
) -> None:
    with pytest.raises(PreprocessorError) as err:
        _unit(tmp_path, source)
    assert (err.value.line, err.value.col) == (line, col)
    assert fragment in err.value.message


def test_the_rendered_text_keeps_lines_and_maps_columns_back(tmp_path: Path) -> None:
    text = (
        "#define TWICE(x) ((x) * 2)\n"  # 1
        "float a = TWICE(1) + b; // c\n"  # 2
        "#if 0\nhidden\n#endif\n"  # 3-5
        "float c = TWICE(\n  3);  float d;\n"  # 6-7
        "#pragma pack_matrix(row_major)\n"  # 8
    )
    unit = _unit(tmp_path, text)
    rendered = render(unit.main, unit.line_counts[0])
    lines = rendered.text.split("\n")
    assert len(lines) == text.count("\n") + 1
    assert lines[0] == "" and lines[2:5] == ["", "", ""]
    assert lines[1] == "float a = ((1) * 2) + b;"
    assert lines[5] == "float c = ((3) * 2)" and lines[6] == "    ;  float d;"
    assert lines[7] == "#pragma pack_matrix(row_major)"
    plus = lines[1].index("+ b") + 1
    assert rendered.origin(2, plus) == (2, text.split("\n")[1].index("+ b") + 1)
    assert rendered.origin(2, lines[1].index("* 2") + 1) == (2, 11)  # in the expansion: TWICE
    assert rendered.origin(7, 4) == (7, 4)  # a line without an expansion is as written


_SHADERS = sorted(
    p
    for folder in ("tests/corpus", "examples/shaders")
    for p in (Path(__file__).resolve().parents[2] / folder).rglob("*.hlsl*")
    if p.name != "missing_include.hlsl"  # its include is missing on purpose
)


@pytest.mark.parametrize("path", _SHADERS, ids=lambda p: p.name)
def test_a_line_without_an_expansion_is_as_written(path: Path) -> None:
    """Every token written outside a macro keeps its column (and the space between tokens),
    so a line without an expansion is the written line, comments blanked: the positions the
    queries and Slang give need no map there."""
    text = path.read_text()
    unit = preprocess(path, text, (str(path.parent),), (), lambda p, *_: p.read_text())
    rendered = render(unit.main, unit.line_counts[0])
    clean = strip_comments(text).split("\n")
    for number, line in enumerate(rendered.text.split("\n"), 1):
        if line and number not in rendered.columns:
            assert line == clean[number - 1].rstrip(), (number, line)


def test_the_digest_follows_what_is_compiled_not_the_defines(tmp_path: Path) -> None:
    """Unit.digest (the permutations' shared-compile key): equal where the defines change no
    token; different where a token, or only its origin (a diagnostic's place), differs."""
    text = "#if FOG\nfloat f = DENSITY;\n#endif\nfloat g = 1; // DENSITY\n"
    assert _unit(tmp_path, text, FOG="0", DENSITY="1").digest() == (
        _unit(tmp_path, text, FOG="0", DENSITY="2").digest()
    )
    assert _unit(tmp_path, text, FOG="1", DENSITY="1").digest() != (
        _unit(tmp_path, text, FOG="1", DENSITY="2").digest()
    )
    moved = "\n" + text
    assert _unit(tmp_path, text, FOG="0").digest() != _unit(tmp_path, moved, FOG="0").digest()
