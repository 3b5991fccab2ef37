"""The driver's error flow without Slang: an entry point the file does not define is one OS1005
(found in the source, before any Slang request), and a bug in any step is one OS9002 diagnostic,
never an exception (the worker's child relies on that)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from oneshader.compiler import driver
from oneshader.compiler.api import CompileOptions, EntryPointSpec
from oneshader.diagnostics import Collector, Diagnostic, Severity, UserError
from oneshader.reflection.model import Stage, Target

_SHADER = """RWStructuredBuffer<float> Data;
[numthreads(1, 1, 1)]
void Shown(uint3 id : SV_DispatchThreadID) { Data[id.x] = 2; }
"""


def _no_slang() -> object:
    raise AssertionError("this error must be found before Slang is loaded")


def test_an_entry_point_the_file_does_not_define_is_os1005(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(driver, "library", _no_slang)
    (tmp_path / "a.hlsl").write_text(_SHADER)
    entries = (EntryPointSpec("Nope", Stage.Compute), EntryPointSpec("Gone", Stage.Compute))
    options = CompileOptions(targets=(Target.SpirV,), entry_points=entries, source_name="a.hlsl")
    result = driver.compile_file(str(tmp_path / "a.hlsl"), options)
    assert result.reflection is None
    assert [(d.code, d.severity) for d in result.diagnostics] == [("OS1005", Severity.ERROR)] * 2
    assert result.diagnostics[0].message == (
        "entry point 'Nope' not found: the file defines no function of that name "
        "(it defines: Shown)"
    )


def test_a_bug_in_a_step_is_one_os9002_not_an_exception(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> None:
        raise KeyError("oops")

    monkeypatch.setattr(driver, "precheck", broken)
    (tmp_path / "a.hlsl").write_text(_SHADER)
    options = CompileOptions(targets=(Target.SpirV,), source_name="a.hlsl")
    result = driver.compile_file(str(tmp_path / "a.hlsl"), options)
    assert result.reflection is None and not result.outputs
    (diag,) = result.diagnostics
    assert diag.code == "OS9002" and diag.file == "a.hlsl"
    assert diag.message == "internal error in the compiler: KeyError: 'oops'"
    assert result.dependencies == (str((tmp_path / "a.hlsl").resolve()),)  # read before the bug


def test_the_collector_raises_at_the_boundary_only_for_errors() -> None:
    problems = Collector()
    problems.add(Diagnostic("a.hlsl", 1, 1, Severity.WARNING, "w", "E1"))
    problems.check()  # a warning alone is no failure
    first = Diagnostic("a.hlsl", 2, 1, Severity.ERROR, "one", "OS1003")
    problems.extend([first, replace(first, line=3, message="two")])
    assert problems.failed
    with pytest.raises(UserError) as raised:
        problems.check()
    assert [d.message for d in raised.value.diagnostics] == ["w", "one", "two"]


def test_an_identifier_too_long_is_an_error_at_it_before_slang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slang's SPIR-V fails on a 1 MB name with no message ("compilation failed"): the
    compiler says where, before Slang is asked."""
    monkeypatch.setattr(driver, "library", _no_slang)
    name = "B" * 1_000_000
    (tmp_path / "a.hlsl").write_text(
        "// a comment is no identifier: " + "C" * 5000 + "\n"
        'static const char* s = "' + "D" * 5000 + '";\n'
        f"RWStructuredBuffer<float> {name};\n"
        f"[numthreads(1, 1, 1)]\nvoid Shown(uint3 id : SV_DispatchThreadID) {{ {name}[0] = 2; }}\n"
    )
    options = CompileOptions(targets=(Target.SpirV,), source_name="a.hlsl")
    result = driver.compile_file(str(tmp_path / "a.hlsl"), options)
    assert [(d.code, d.file, d.line, d.column) for d in result.diagnostics] == [
        ("OS1046", "a.hlsl", 3, 27)
    ]
    assert "1000000 characters ('BBBBBBBBBBBBBBBB...')" in result.diagnostics[0].message
    assert len(result.diagnostics[0].format(with_excerpt=True)) < 1000  # no 1 MB excerpt line


@pytest.mark.parametrize(("number", "refused"), [(4294967295, True), (2147483600, False)])
def test_a_line_directive_past_32_bits_is_an_error_at_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, number: int, refused: bool
) -> None:
    """Slang's positions after it would wrap (JSON said ``"line": -1``): refused at the
    directive before Slang is asked; a large number that stays in range is not."""
    from oneshader.compiler.source.precheck import check_request
    from oneshader.compiler.source.sourceset import SourceSet

    (tmp_path / "a.hlsl").write_text(_SHADER.replace("[numthreads", f"#line {number}\n[numthreads"))
    src = SourceSet(str(tmp_path / "a.hlsl"), "a.hlsl", ())
    src.read()
    problems = Collector()
    options = CompileOptions(targets=(Target.SpirV,), source_name="a.hlsl")
    check_request(src, options, problems)
    found = [(d.code, d.line, d.column) for d in problems.diagnostics if d.code == "OS1047"]
    assert found == ([("OS1047", 2, 7)] if refused else [])
