"""Slang's machine-readable diagnostics turned into oneshader's (``slang.messages``), from
hand-written output lines, without Slang: spans folded into their message, suppressed warning
groups, repeats removed, names and excerpts, and each error's target named."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from oneshader.compiler.slang.messages import dedupe, explain, name_targets, parse
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Diagnostic, Severity
from oneshader.reflection.model import Target

_TEXT = "float4 main() : SV_Target\n{\n    return x;\n}\n"


def _line(code: str, kind: str, line: int, col: int, message: str, path: str = "a.slang") -> str:
    return "\t".join([code, kind, path, str(line), str(col), str(line), str(col + 1), message])


def _parse(*lines: str) -> list[Diagnostic]:
    return parse(
        "\n".join(lines),
        lambda path: {"a.slang": "shader.hlsl"}.get(path, path),
        lambda path: _TEXT if path == "a.slang" else None,
    )


def test_an_error_with_its_span_is_one_positioned_diagnostic_with_an_excerpt() -> None:
    (d,) = _parse(
        "some text Slang prints that is not a diagnostic",
        _line("E30015", "error", 3, 12, "undefined identifier"),
        _line("E30015", "span", 3, 12, "'x' is not declared"),
    )
    assert (d.file, d.line, d.column, d.severity, d.code) == (
        "shader.hlsl",
        3,
        12,
        Severity.ERROR,
        "E30015",
    )
    assert d.message == "undefined identifier: 'x' is not declared"
    assert d.excerpt.splitlines()[0].endswith("|     return x;")


@pytest.mark.parametrize(
    ("code", "kind", "line"), [("E99999", "internal error", 0), ("E56003", "fatal error", 3)]
)
def test_errors_of_two_word_kinds_are_read(code: str, kind: str, line: int) -> None:
    """Slang's ``internal error`` (E99999, a back end's unimplemented case, no position) and
    ``fatal error`` (E56003, positioned) records were not read (the kind is two words), and
    the shader failed with "compilation failed" and nothing else (DXC's spirv.legal.cbuffer,
    oo.inheritance.base-with-byte-address-buffer)."""
    (d,) = _parse(
        _line(code, kind, line, 2 if line else 0, "what Slang says", "a.slang" if line else ""),
        "For assistance, file an issue on GitHub",
    )
    assert (d.severity, d.code, d.message, d.line) == (
        Severity.ERROR,
        code,
        "what Slang says",
        line,
    )


def test_a_span_that_restates_the_title_replaces_it() -> None:
    (d,) = _parse(
        _line("E1", "error", 1, 1, "bad thing"),
        _line("E1", "span", 1, 1, "Bad thing: in detail"),
    )
    assert d.message == "Bad thing: in detail"


def test_suppressed_warnings_go_with_their_notes_and_repeats_are_kept_once() -> None:
    diags = _parse(
        _line("E39001", "warning", 1, 1, "explicit binding overlaps"),
        _line("E39001", "note", 1, 1, "see the other declaration"),
        _line("E2", "error", 2, 1, "real"),
        _line("E2", "error", 2, 1, "real"),
        _line("E3", "note", 2, 1, "a note stays a note"),
    )
    assert [(d.code, d.severity) for d in diags] == [
        ("E2", Severity.ERROR),
        ("E3", Severity.NOTE),
    ]


def test_dedupe_drops_an_unpositioned_copy_of_a_positioned_message() -> None:
    positioned = Diagnostic("s.hlsl", 3, 1, Severity.ERROR, "m", "E1")
    bare = Diagnostic("s.hlsl", 0, 0, Severity.ERROR, "m", "E1")
    assert dedupe([bare, positioned, positioned]) == [positioned]


def test_name_targets_prefixes_what_not_every_target_said() -> None:
    both = Diagnostic("s.hlsl", 1, 1, Severity.ERROR, "everywhere", "E1")
    only = Diagnostic("s.hlsl", 2, 1, Severity.ERROR, "only here", "E2")
    out = name_targets({Target.SpirV: [both], Target.Msl: [both, only]})
    assert [d.message for d in out] == ["everywhere", "everywhere", "Metal: only here"]


def test_explain_adds_what_to_write_instead() -> None:
    mismatch = "expected an expression of type 'vector<float,3>', got 'vector<float,4>'"
    d = Diagnostic("s.hlsl", 1, 1, Severity.ERROR, mismatch, "E30019")
    assert "make the conversion explicit" in explain(d).message
    widening = "expected an expression of type 'vector<float,4>', got 'vector<float,3>'"
    assert explain(replace(d, message=widening)).message == widening
    other = Diagnostic("s.hlsl", 1, 1, Severity.ERROR, "x", "E1")
    assert explain(other) == other


def test_a_line_past_slangs_counter_is_unknown_not_negative() -> None:
    """Slang counts lines in 32 bits: after ``#line 4294967295`` it says -1."""
    (d,) = _parse(_line("E30015", "error", -1, 9, "undefined identifier"))
    assert (d.line, d.column, d.excerpt) == (0, 0, "")
    assert '"line": 0' in json.dumps(d.to_json())


def test_paths_of_this_machine_in_a_message_are_the_names_users_see(tmp_path: Path) -> None:
    """Slang names files where it read them, in a message's text too; a diagnostic carries no
    path of the machine: the file's name for users there as in the file field, and Slang's own
    module (a static assertion of hlsl.meta.slang, E41400) by its name, not resolved against
    the working folder (it was the working folder joined to that name)."""
    (tmp_path / "shader.hlsl").write_text(_TEXT)
    src = SourceSet(str(tmp_path / "shader.hlsl"), "shader.hlsl", ())
    line = _line("E1", "error", 3, 12, f"see {tmp_path / 'shader.hlsl'}: x", "hlsl.meta.slang")
    (d,) = parse(line, src.display, src.text_of)
    assert (d.file, d.message) == ("hlsl.meta.slang", "see shader.hlsl: x")
    assert str(tmp_path) not in d.format()
