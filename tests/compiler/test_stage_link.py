"""A vertex/pixel pair of one file that WebGPU would refuse in create_render_pipeline (the pixel
stage reads a location with another type or interpolation, or one the vertex stage does not
write) is a build error at the pixel input's declaration, when the build targets WGSL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from oneshader.compiler import CompileOptions, compile_file
from oneshader.reflection.model import Target

VS = """\
struct VSOut
{
    float4 Position : SV_Position;
    float2 Uv : TEXCOORD0;
    nointerpolation uint Id : ID;
};

[shader("vertex")]
VSOut VSMain(float2 p : POSITION)
{
    VSOut o;
    o.Position = float4(p, 0, 1);
    o.Uv = p;
    o.Id = 1;
    return o;
}

"""


def _compile(tmp_path: Path, pixel: str, targets: tuple[Target, ...] = (Target.Wgsl,)):  # type: ignore[no-untyped-def]
    (tmp_path / "pair.hlsl").write_text(VS + pixel)
    return compile_file(
        str(tmp_path / "pair.hlsl"), CompileOptions(targets=targets, source_name="pair.hlsl")
    )


MISMATCHES = [
    (
        "struct PSIn\n{\n    float4 Position : SV_Position;\n    float3 Uv : TEXCOORD0;\n};\n",
        (21, 12),
        "pixel input 'Uv' (TEXCOORD, location 0) of PSMain is float3, but VSMain writes "
        "float2 'Uv' (TEXCOORD) there",
    ),
    (
        "struct PSIn\n{\n    float4 Position : SV_Position;\n    float2 Uv : TEXCOORD0;\n"
        "    nointerpolation uint Id : ID;\n    float4 Extra : EXTRA;\n};\n",
        (23, 12),
        "pixel input 'Extra' (EXTRA, location 2) of PSMain is not written by VSMain",
    ),
    (  # locations follow the declaration order, not the semantics
        "struct PSIn\n{\n    float4 Position : SV_Position;\n    nointerpolation uint Id : ID;\n"
        "    float2 Uv : TEXCOORD0;\n};\n",
        (21, 26),
        "pixel input 'Id' (ID, location 0) of PSMain is uint, but VSMain writes float2 'Uv' "
        "(TEXCOORD) there",
    ),
]


@pytest.mark.parametrize(("structs", "position", "message"), MISMATCHES)
def test_mismatch_is_a_positioned_error(
    tmp_path: Path, structs: str, position: tuple[int, int], message: str
) -> None:
    pixel = structs + (
        '[shader("pixel")]\nfloat4 PSMain(PSIn i) : SV_Target\n{\n    return i.Position;\n}\n'
    )
    result = _compile(tmp_path, pixel)
    err = next(d for d in result.diagnostics if d.is_error)  # the first, in declaration order
    assert (err.code, err.file, (err.line, err.column)) == ("OS1016", "pair.hlsl", position)
    assert message in err.message
    assert result.reflection is None
    # a build without WGSL is not held to WebGPU's rule
    assert _compile(tmp_path, pixel, (Target.SpirV,)).reflection is not None


def test_interpolation_mismatch_and_matching_pairs(tmp_path: Path) -> None:
    flat = (
        "struct PSIn\n{\n    float4 Position : SV_Position;\n"
        "    nointerpolation float2 Uv : TEXCOORD0;\n    uint Id : ID;\n};\n"
        '[shader("pixel")]\nfloat4 PSMain(PSIn i) : SV_Target\n'
        "{\n    return float4(i.Uv, i.Id, 1);\n}\n"
    )
    result = _compile(tmp_path, flat)
    (err,) = [d for d in result.diagnostics if d.is_error]
    assert (err.code, err.line, err.column) == ("OS1016", 21, 28)
    want = (
        "'Uv' (TEXCOORD, location 0) of PSMain is interpolated Flat, but VSMain's 'Uv' is Default"
    )
    assert want in err.message
    # an integer is flat on both sides whether written nointerpolation or not; the same struct
    # on both sides always matches
    same = (
        '[shader("pixel")]\nfloat4 PSMain(VSOut i) : SV_Target\n'
        "{\n    return float4(i.Uv, i.Id, 1);\n}\n"
    )
    assert _compile(tmp_path, same).reflection is not None


def test_files_with_two_vertex_entries_are_left_to_the_bindings(tmp_path: Path) -> None:
    other_vs = (
        '[shader("vertex")]\nfloat4 Other(float2 p : POSITION) : SV_Position\n'
        "{\n    return float4(p, 0, 1);\n}\n"
    )
    pixel = (
        "struct PSIn\n{\n    float4 Position : SV_Position;\n    float3 Uv : TEXCOORD0;\n};\n"
        '[shader("pixel")]\nfloat4 PSMain(PSIn i) : SV_Target\n{\n    return i.Position;\n}\n'
    )
    assert _compile(tmp_path, other_vs + pixel).reflection is not None


def test_the_build_fails_with_the_position(tmp_path: Path) -> None:
    pixel = MISMATCHES[0][0] + (
        '[shader("pixel")]\nfloat4 PSMain(PSIn i) : SV_Target\n{\n    return i.Position;\n}\n'
    )
    (tmp_path / "pair.hlsl").write_text(VS + pixel)
    result = subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "build", "pair.hlsl", "-q", "-o", "out"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 1
    assert "pair.hlsl:21:12: error OS1016: pixel input 'Uv'" in result.stderr
