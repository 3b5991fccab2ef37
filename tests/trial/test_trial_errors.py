"""What a user sees where a target refuses a trial shader: one positioned line per problem
(file:line:col, code, what to write instead), exit status 1, no traceback, no outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from trial_helpers import SHADERS, Project, oneshader

# (shader, targets, extra options, [(file, line, col, code, fragment), ...])
CASES = [
    pytest.param(
        "not_portable", "spirv,msl,wgsl", (),
        [("not_portable", 4, 11, "OS2001", "Lights.Intensities: not portable: the array stride "
          "is 16 on SpirV but 4 on Msl; write it portably: declare an array of 16-byte elements, "
          "float4 Intensities[1] instead of float[4]")],
        id="float-array-in-cbuffer",
    ),
    pytest.param(
        "histogram", "wgsl", (),
        [("histogram", 27, 9, "OS1015", "WGSL: InterlockedAdd on groupshared 'LocalBins' "
          "cannot be expressed")],  # (the byte-address buffer's is WGSL's atomic words)
        id="interlocked-add-on-wgsl",
    ),
    pytest.param(
        "sprites", "spirv", ("--fvk-t-shift", "0", "all"),
        [("sprites", 11, 9, "OS3001", "SPIR-V: 'View' and 'Sprites' (line 9) are both bound to "
          "set 0, binding 0; give one of them another register or [[vk::binding]], or shift a "
          "register class apart")],
        id="b0-and-t0-without-shifts",
    ),
]  # fmt: skip


def failing_build(root: Path, out: Path, shader: str, targets: str, *extra: str) -> str:
    result = oneshader(
        root, "build", f"shaders/{shader}.hlsl", "-q", "--targets", targets, "-o", str(out), *extra
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert f"failed: shaders/{shader}.hlsl" in result.stdout
    assert not any(out.glob(f"{shader}.*")), sorted(out.iterdir())
    return result.stderr


@pytest.mark.parametrize(("shader", "targets", "extra", "expected"), CASES)
def test_refused_with_a_positioned_message(
    project: Project,
    tmp_path: Path,
    shader: str,
    targets: str,
    extra: tuple[str, ...],
    expected: list[tuple[str, int, int, str, str]],
) -> None:
    stderr = failing_build(project.root, tmp_path / "out", shader, targets, *extra)
    errors = [line for line in stderr.splitlines() if ": error " in line]
    wanted = [
        f"shaders/{f}.hlsl:{line}:{col}: error {code}: {text}"
        for f, line, col, code, text in expected
    ]
    assert len(errors) == len(wanted), stderr
    for line, want in zip(errors, wanted, strict=True):
        assert line.startswith(want), (line, want)


def test_missing_include_and_missing_define(tmp_path: Path) -> None:
    """Outside the project (no [tool.oneshader]): no include folder, then no SCALE."""
    shutil.copytree(SHADERS, tmp_path / "shaders")
    out = tmp_path / "out"
    stderr = failing_build(tmp_path, out, "with_include", "spirv")
    assert stderr.startswith(
        "shaders/with_include.hlsl:2:10: error E15300: include file not found: "
        "failed to find include file 'common.hlsli'"
    ), stderr
    stderr = failing_build(tmp_path, out, "with_include", "spirv", "-I", "shaders/include")
    assert stderr.startswith(
        "shaders/include/common.hlsli:5:2: error E15900: preprocessor error: "
        '#error: "SCALE must be defined (-D SCALE=...)"'
    ), stderr
    built = oneshader(
        tmp_path, "build", "shaders/with_include.hlsl", "-q", "--targets", "spirv", "-o",
        str(out), "-I", "shaders/include", "-D", "SCALE=2",
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
