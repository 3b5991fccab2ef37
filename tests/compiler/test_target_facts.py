"""Each target's facts from its own code: what one target's code needs never lands in the
reflection as another's, and a build for all three targets builds what each one-target build
builds (MiniEngine's BlurCS: f32tof16 needs 16-bit types in Slang's SPIR-V, none in WGSL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import EntryPointSpec
from oneshader.compiler.slang import library
from oneshader.compiler.slang.request import _compile_once, compile_together
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.reflection.model import DeviceFeatures, Stage, Target

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)
NONE = DeviceFeatures(0)
HALF = DeviceFeatures.Float16 | DeviceFeatures.Int16

# MiniEngine's BlurCS packs two colour channels into a uint with f32tof16
PACKED = """RWStructuredBuffer<uint> Cache : register(u0);
[numthreads(8, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    float2 pixel = float2(id.xy) * 0.5;
    Cache[id.x] = f32tof16(pixel.x) | f32tof16(pixel.y) << 16;
    Cache[id.x + 8] = asuint(f16tof32(Cache[id.x] >> 16));
}
"""
# ... and real 16-bit floats, which every target's code needs
HALVES = """RWStructuredBuffer<float> Out : register(u0);
[numthreads(8, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    half h = (half)Out[id.x];
    Out[id.x] = h * h;
}
"""
STORAGE = """RWTexture2D<float4> output_tex;
RWTexture2D<float2> history_tex;
[numthreads(8, 8, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    history_tex[id.xy] = output_tex[id.xy].xy;
    output_tex[id.xy] = float4(history_tex[id.xy], 0, 1);
}
"""


def _build(tmp_path: Path, text: str, targets: tuple[Target, ...]) -> DeviceFeatures:
    (tmp_path / "s.hlsl").write_text(text)
    options = CompileOptions(
        targets, "s.hlsl", entry_points=(EntryPointSpec("main", Stage.Compute),)
    )
    result = compile_file(str(tmp_path / "s.hlsl"), options)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    (entry,) = result.reflection.entry_points
    return entry.features


@pytest.mark.parametrize(
    ("text", "spirv", "wgsl"), [(PACKED, HALF, NONE), (HALVES, DeviceFeatures.Float16, None)]
)
def test_features_are_each_targets_own_and_their_union_for_all(
    text: str, spirv: DeviceFeatures, wgsl: DeviceFeatures | None, tmp_path: Path
) -> None:
    """Each one-target build says what its own code needs (Metal's none: a Metal-only build
    took the features of the SPIR-V compile it makes for ``uses``); the build for all three
    says what their code needs together (it was OS9000: "the reflection's features hold
    Float16 but the module does not enable f16")."""
    assert _build(tmp_path, text, (Target.SpirV,)) == spirv
    assert _build(tmp_path, text, (Target.Msl,)) == NONE
    if wgsl is not None:  # WGSL's f16 needs the device's shader-f16
        assert _build(tmp_path, text, (Target.Wgsl,)) == wgsl
        assert _build(tmp_path, text, ALL) == spirv | wgsl


@pytest.mark.parametrize("text", [PACKED, STORAGE], ids=["f32tof16", "storage-formats"])
def test_a_shared_request_gives_what_requests_of_their_own_give(text: str, tmp_path: Path) -> None:
    """The corpus check (bench/shared_check.py) on the shaders of the leaks found: the shared
    request's code, facts and warnings per target equal a request of the target's own."""
    (tmp_path / "s.hlsl").write_text(text)
    src = SourceSet(str(tmp_path / "s.hlsl"), "s.hlsl", ())
    src.read()
    options = CompileOptions(entry_points=(EntryPointSpec("main", Stage.Compute),))
    together = compile_together(library(), src, options, list(ALL))
    assert list(together) == list(ALL)
    for target in ALL:
        alone, errors = _compile_once(library(), src, options, target, ())
        assert alone is not None and not errors
        assert together[target].code == alone.code
        assert together[target].facts == alone.facts
        assert together[target].warnings == alone.warnings
