"""HLSL written for DXC marks no entry point: ``-E NAME -T PROFILE`` as DXC, the stage from the
file's name (``[tool.oneshader.stages]``, ``.vsh``/``.psh``/``.csh``, ``*.vert.hlsl``...) with
``main`` the entry, and an error that says what to write where none applies (it was Slang's
E57004 "no exported symbols")."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from build_helpers import run_cli

from oneshader.buildtask.config import load_config
from oneshader.buildtask.sources import discover
from oneshader.buildtask.stages import stage_from_profile
from oneshader.cli import make_parser
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import EntryPointSpec
from oneshader.diagnostics import UserError
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import Stage, Target

VERTEX = "float4 main(float2 pos : POSITION) : SV_Position { return float4(pos, 0, 1); }\n"
PIXEL = "float4 main() : SV_Target { return float4(1, 0, 0, 1); }\n"
NAMED = "float4 VSMain(float2 pos : POSITION) : SV_Position { return float4(pos, 0, 1); }\n"
MARKED = '[shader("pixel")] float4 Tint() : SV_Target { return float4(1, 0, 0, 1); }\n'


def _args(*argv: str) -> argparse.Namespace:
    return make_parser().parse_args(["build", *argv])


def _project(root: Path, table: str = "") -> None:
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0"\n\n[tool.oneshader]\n'
        'sources = ["shaders"]\nout = "out"\ntargets = ["wgsl"]\n' + table,
        encoding="utf-8",
    )
    (root / "shaders").mkdir()


def _entries(root: Path, *argv: str) -> dict[str, tuple[EntryPointSpec, ...]]:
    return {
        j.options.source_name: j.options.entry_points
        for j in discover(load_config(_args(*argv), root))
    }


@pytest.mark.parametrize(
    ("profile", "stage"),
    [
        ("vs_6_0", Stage.Vertex),
        ("ps_5_1", Stage.Pixel),
        ("cs_6_6", Stage.Compute),
        ("PS", Stage.Pixel),
    ],
)
def test_profiles_name_stages(profile: str, stage: Stage) -> None:
    assert stage_from_profile(profile) is stage


def test_an_unknown_profile_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="vs_6_0, ps_6_0 or cs_6_0"):
        stage_from_profile("gs_6_0")


def test_dash_e_and_dash_t_name_the_entry_of_the_files_given(tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "shaders/sprite.hlsl").write_text(NAMED)
    got = _entries(tmp_path, "-E", "VSMain", "-T", "vs_6_0")
    assert got == {"shaders/sprite.hlsl": (EntryPointSpec("VSMain", Stage.Vertex),)}
    got = _entries(tmp_path, "--profile", "ps_6_0")  # main, the default entry
    assert got == {"shaders/sprite.hlsl": (EntryPointSpec("main", Stage.Pixel),)}


def test_dash_e_without_dash_t_is_a_usage_error(tmp_path: Path) -> None:
    _project(tmp_path)
    with pytest.raises(UserError, match="-E VSMain needs -T PROFILE"):
        load_config(_args("-E", "VSMain"), tmp_path)


def test_file_name_patterns_give_stages(tmp_path: Path) -> None:
    _project(
        tmp_path,
        '[tool.oneshader.stages]\n"*VS.hlsl" = "vertex"\n'
        '"*PS.hlsl" = { stage = "pixel", entry = "PSMain" }\n',
    )
    files = {
        "spriteVS.hlsl": VERTEX,
        "spritePS.hlsl": PIXEL,
        "blur.csh": "[numthreads(8, 1, 1)] void main() {}\n",
        "sky.vert.hlsl": VERTEX,
        "marked.frag.hlsl": MARKED,  # marks its entry: kept
        "other.hlsl": MARKED,
    }
    for name, text in files.items():
        (tmp_path / "shaders" / name).write_text(text)
    assert _entries(tmp_path) == {
        "shaders/blur.csh": (EntryPointSpec("main", Stage.Compute),),
        "shaders/marked.frag.hlsl": (),
        "shaders/other.hlsl": (),
        "shaders/sky.vert.hlsl": (EntryPointSpec("main", Stage.Vertex),),
        "shaders/spritePS.hlsl": (EntryPointSpec("PSMain", Stage.Pixel),),
        "shaders/spriteVS.hlsl": (EntryPointSpec("main", Stage.Vertex),),
    }


def test_a_bad_stage_is_an_error_at_the_key(tmp_path: Path) -> None:
    _project(tmp_path, '[tool.oneshader.stages]\n"*VS.hlsl" = "geometry"\n')
    with pytest.raises(UserError, match='must be "vertex", "pixel" or "compute"'):
        load_config(_args(), tmp_path)


def test_a_file_without_entry_points_says_what_to_write(tmp_path: Path) -> None:
    path = tmp_path / "tint.hlsl"
    path.write_text("\n" + PIXEL)
    result = compile_file(
        str(path), CompileOptions(targets=(Target.Wgsl,), source_name="tint.hlsl")
    )
    assert not result.ok
    (diag,) = result.diagnostics
    assert (diag.code, diag.line, diag.column) == ("OS1006", 2, 8)
    assert "-E main -T ps_6_0" in diag.message and "[tool.oneshader.stages]" in diag.message
    assert "E57004" not in diag.format()


def test_the_command_line_builds_dxc_style_files(tmp_path: Path) -> None:
    (tmp_path / "shaders").mkdir()
    (tmp_path / "shaders/tint.psh").write_text(PIXEL)
    (tmp_path / "shaders/spriteVS.hlsl").write_text(NAMED)
    done = run_cli(tmp_path, "shaders/tint.psh", "-o", "out", "--targets", "wgsl")
    assert done.returncode == 0, done.stderr
    done = run_cli(
        tmp_path,
        "shaders/spriteVS.hlsl",
        "-o",
        "out2",
        "--targets",
        "wgsl",
        "-E",
        "VSMain",
        "-T",
        "vs_6_0",
    )
    assert done.returncode == 0, done.stderr
    for reflection, name, stage in (
        (tmp_path / "out/tint.reflection", "main", Stage.Pixel),
        (tmp_path / "out2/spriteVS.reflection", "VSMain", Stage.Vertex),
    ):
        model = ReflectionFormat.try_read(reflection.read_bytes())
        assert model is not None
        assert [(e.name, e.stage) for e in model.entry_points] == [(name, stage)]
