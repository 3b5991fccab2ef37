"""One error flow: the steps add to one collector and the driver checks it at each step's end,
so a step reports every error it finds in one run (here: the entry-point step, through Slang)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oneshader.compiler import compile_file
from oneshader.compiler.api import CompileOptions
from oneshader.compiler.verify import crosscheck
from oneshader.reflection.model import Target

_TWO_BAD_ENTRIES = """struct A { half3 p : POSITION; };
struct B { half3 q : TEXCOORD0; };
[shader("vertex")]
float4 First(A a) : SV_Position { return float4(a.p, 1); }
[shader("vertex")]
float4 Second(B b) : SV_Position { return float4(b.q, 1); }
"""


def test_every_entry_point_in_error_is_reported_in_one_run(tmp_path: Path) -> None:
    (tmp_path / "two.hlsl").write_text(_TWO_BAD_ENTRIES)
    options = CompileOptions(targets=(Target.SpirV,), source_name="two.hlsl")
    result = compile_file(str(tmp_path / "two.hlsl"), options)
    assert result.reflection is None
    assert [(d.code, d.line) for d in result.diagnostics if d.is_error] == [
        ("OS1014", 1),
        ("OS1014", 2),
    ]


_REFUSED_AND_CLASHING = """cbuffer A : register(b0) { float4 a; };
cbuffer B : register(b0) { float4 b; };
RWStructuredBuffer<float4> Out;
[shader("compute")] [numthreads(1, 1, 1)]
void Main() { double d = Out[1].x; Out[0] = a + b + float4(d * d, 0, 0, 0); }
"""


def test_targets_refused_before_slang_and_a_compiled_targets_slots_come_in_one_run(
    tmp_path: Path,
) -> None:
    """precheck's refusals (per target, in target order), then the slot errors of the target
    that did compile: one collector, checked once every target has compiled."""
    (tmp_path / "r.hlsl").write_text(_REFUSED_AND_CLASHING)
    options = CompileOptions(targets=tuple(Target), source_name="r.hlsl")
    result = compile_file(str(tmp_path / "r.hlsl"), options)
    assert result.reflection is None and not result.outputs
    errors = [(d.code, d.line, d.message.partition(":")[0]) for d in result.diagnostics]
    assert errors[:2] == [("OS1003", 5, "Metal"), ("OS1003", 5, "WGSL")]
    assert [code for code, _, _ in errors[2:]] == ["OS3001"]


def test_a_crosscheck_mismatch_is_os9000_and_withholds_the_reflection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(crosscheck, "verify", lambda *_: ["first", "second"])
    (tmp_path / "m.hlsl").write_text(_REFUSED_AND_CLASHING.replace(": register(b0) ", ""))
    options = CompileOptions(targets=(Target.SpirV,), source_name="m.hlsl")
    result = compile_file(str(tmp_path / "m.hlsl"), options)
    assert result.reflection is None
    assert [o.target for o in result.outputs] == [Target.SpirV]  # the code, as emitted
    assert [(d.file, d.line, d.code, d.message) for d in result.diagnostics if d.is_error] == [
        (
            "m.hlsl",
            0,
            "OS9000",
            f"internal error: the reflection disagrees with the emitted code: {m}",
        )
        for m in ("first", "second")
    ]
