"""One error flow: the steps add to one collector and the driver checks it at each step's end,
so a step reports every error it finds in one run (here: the entry-point step, through Slang)."""

from __future__ import annotations

from pathlib import Path

from oneshader.compiler import compile_file
from oneshader.compiler.api import CompileOptions
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
