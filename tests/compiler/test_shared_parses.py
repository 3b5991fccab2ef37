"""The emitted code's parses are shared within a compile (one parse per text, for the readers,
the entry points and the patches): no step may change a shared parse, else a later step would
read code that is not there."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.emitted import msl, wgsl
from oneshader.reflection.model import Target

# A matrix and an array between stages: WGSL's patch wraps the entry points (it reads the
# parse the entry points and the cross-check read too); Metal's entry points are read twice.
SHADER = """\
struct VSOut
{
    float4 pos : SV_Position;
    float4x4 view : VIEW;
    float3 c[2] : COLOR;
};

[shader("vertex")]
VSOut vs(float2 p : POSITION, float4x4 m : MATRIX)
{
    VSOut o;
    o.pos = float4(p, 0, 1);
    o.view = m;
    o.c[0] = float3(0.75, 0, 0);
    o.c[1] = float3(0, 0, 1);
    return o;
}

[shader("pixel")]
float4 ps(VSOut i) : SV_Target
{
    return float4(i.view[0][1], i.view[1][0], i.c[0].x, i.c[1].z);
}
"""


def test_no_step_changes_a_shared_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts: dict[str, set[str]] = {"wgsl": set(), "msl": set()}
    wgsl_init, msl_parse = wgsl._Parser.__init__, msl._parse.__wrapped__

    def wgsl_seen(self: wgsl._Parser, text: str, bodies: bool = False) -> None:
        texts["wgsl"].add(text)
        wgsl_init(self, text, bodies)

    def msl_seen(text: str) -> msl._Parsed:
        texts["msl"].add(text)
        return msl_parse(text)

    monkeypatch.setattr(wgsl._Parser, "__init__", wgsl_seen)
    monkeypatch.setattr(msl, "_parse", functools.lru_cache(maxsize=4)(msl_seen))
    wgsl.parse_wgsl.cache_clear()
    path = tmp_path / "wide.hlsl"
    path.write_text(SHADER)
    targets = (Target.SpirV, Target.Msl, Target.Wgsl)
    result = compile_file(str(path), CompileOptions(targets=targets, source_name="wide.hlsl"))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    assert len(texts["wgsl"]) >= 2 and texts["msl"]  # Slang's WGSL and the wrapped one
    for text in texts["wgsl"]:
        assert wgsl.parse_wgsl(text) == wgsl._Parser(text).parse()
    for text in texts["msl"]:
        assert msl._parse(text) == msl_parse(text)
