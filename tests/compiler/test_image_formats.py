"""Storage-image formats on SPIR-V: inferred from the texel type per variable, as DXC does,
though Slang declares one image type for every storage texture of the same scalar."""

from __future__ import annotations

from pathlib import Path

import pytest

from module_validation import spirv_errors
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.emitted.spirv import read_spirv
from oneshader.reflection.model import Target

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def _formats(tmp_path: Path, declarations: str, body: str, targets: tuple[Target, ...]) -> dict:
    (tmp_path / "s.hlsl").write_text(
        f"{declarations}\n[numthreads(8, 8, 1)]\n"
        f"void main(uint3 id : SV_DispatchThreadID)\n{{\n{body}\n}}\n"
    )
    result = compile_file(str(tmp_path / "s.hlsl"), CompileOptions(targets, "s.hlsl"))
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    spv = next(o.data for o in result.outputs if o.target is Target.SpirV)
    assert spirv_errors(spv) == ""
    emitted = {
        n: None if rs[0].format == "unknown" else rs[0].format
        for n, rs in read_spirv(spv).resources.items()
    }
    reflected = {r.name: r.format for r in result.reflection.resources}
    assert {n: emitted[n] for n in reflected} == reflected
    return reflected


@pytest.mark.parametrize(
    ("first", "second", "formats"),
    [
        ("float4", "float2", ("rgba32f", "rg32f")),
        ("float2", "float4", ("rg32f", "rgba32f")),
        ("float4", "float", ("rgba32f", "r32f")),
        ("float", "float2", ("r32f", "rg32f")),
        ("uint", "uint2", ("r32ui", "rg32ui")),
        ("int4", "int", ("rgba32i", "r32i")),
        ("float4", "float3", ("rgba32f", None)),  # float3 has no storage format: Unknown stays
        ("float4", "float4", ("rgba32f", "rgba32f")),
    ],
)
def test_two_storage_textures_of_one_scalar_keep_their_own_formats(
    first: str, second: str, formats: tuple[str | None, str | None], tmp_path: Path
) -> None:
    """MiniEngine's AoPrepareDepthBuffers1CS, post-processing code everywhere: two storage
    textures of one scalar and different widths written by one entry point. Slang's SPIR-V gave
    both one image type, and the format patched for the first held for both (OS9000 "resource
    'history_tex' image format: reflection says rg32f, emitted code says rgba32f")."""
    targets = ALL if "float3" not in (first, second) else (Target.SpirV,)
    got = _formats(
        tmp_path,
        f"RWTexture2D<{first}> output_tex;\nRWTexture2D<{second}> history_tex;",
        f"output_tex[id.xy] = ({first})1;\nhistory_tex[id.xy] = ({second})2;",
        targets,
    )
    assert got == {"output_tex": formats[0], "history_tex": formats[1]}


def test_an_array_of_storage_textures_beside_another_width_keeps_its_format(
    tmp_path: Path,
) -> None:
    """The copy of the image type reaches through the array and the access chain into it."""
    got = _formats(
        tmp_path,
        "RWTexture2D<float4> color;\nRWTexture2D<float2> pair[3];",
        "color[id.xy] = 1;\npair[id.z][id.xy] = pair[2 - id.z][id.xy] + color[id.xy].xy;",
        (Target.SpirV,),
    )
    assert got == {"color": "rgba32f", "pair": "rg32f"}


def test_a_declared_image_format_beside_an_inferred_one(tmp_path: Path) -> None:
    """``[[vk::image_format]]`` gives its own type (Slang writes it); the inferred sibling of the
    same scalar keeps the texel's format."""
    got = _formats(
        tmp_path,
        '[[vk::image_format("rgba16f")]] RWTexture2D<float4> half_color;\n'
        "RWTexture2D<float4> color;\nRWTexture2D<float> depth;",
        "half_color[id.xy] = color[id.xy] + depth[id.xy];\ncolor[id.xy] = 1;\ndepth[id.xy] = 0;",
        (Target.SpirV, Target.Msl),  # WGSL has no read_write rgba16float
    )
    assert got == {"half_color": "rgba16f", "color": "rgba32f", "depth": "r32f"}


def test_storage_textures_passed_to_a_function_keep_their_formats(tmp_path: Path) -> None:
    """A texture handed to a helper function: Slang specialises it; the loads stay typed."""
    got = _formats(
        tmp_path,
        "RWTexture2D<float4> a;\nRWTexture2D<float2> b;\n"
        "float2 twice(RWTexture2D<float2> t, uint2 p) { return t[p] * 2; }",
        "a[id.xy] = float4(twice(b, id.xy), 0, 1);\nb[id.xy] = a[id.xy].zw;",
        ALL,
    )
    assert got == {"a": "rgba32f", "b": "rg32f"}


@pytest.mark.parametrize(
    ("texel", "targets"),
    [
        ("unorm float", (Target.SpirV, Target.Msl)),
        ("unorm float4", (Target.SpirV, Target.Msl)),
        ("snorm float2", (Target.SpirV, Target.Msl)),
        ("snorm float4", (Target.SpirV, Target.Msl)),
    ],
)
def test_a_normalized_texel_takes_the_format_slang_writes(
    texel: str, targets: tuple[Target, ...], tmp_path: Path
) -> None:
    """``RWTexture2D<unorm float>`` (FidelityFX's rw_new_locks): Slang's SPIR-V says r8 itself,
    and the reflection said r32f from the texel's scalar (OS9000); the code's format is the
    reflection's (Slang's WGSL refuses normalized texels, E41400)."""
    got = _formats(
        tmp_path,
        f"RWTexture2D<{texel}> img;",
        "img[id.xy] = 0.5;",
        targets,
    )
    assert got["img"] is not None and not got["img"].endswith("32f")
