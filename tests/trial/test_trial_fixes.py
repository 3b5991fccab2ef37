"""Bugs outside the compiler that the trial found and fixed (FINDINGS.md), each held here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from trial_helpers import SHADERS, Project, oneshader


def test_a_deleted_shader_loses_its_bindings_module_too(tmp_path: Path) -> None:
    """FINDINGS.md #5: the build removed a deleted shader's outputs but left its module in the
    --bindings folder, importable and naming files that were gone."""
    for name in ("fullscreen", "skinned"):
        shutil.copy(SHADERS / f"{name}.hlsl", tmp_path)
    mine = tmp_path / "gen" / "notes.py"  # a file of the user's in the same folder stays
    args = ("build", ".", "-q", "--targets", "spirv", "-o", "out", "--bindings", "gen")
    first = oneshader(tmp_path, *args)
    assert first.returncode == 0, first.stderr
    assert sorted(p.name for p in (tmp_path / "gen").iterdir()) == [
        "__init__.py",
        "fullscreen.py",
        "skinned.py",
    ]
    mine.write_text("# not generated\n")
    (tmp_path / "fullscreen.hlsl").unlink()
    second = oneshader(tmp_path, *args)
    assert second.returncode == 0, second.stderr
    assert "4 stale outputs removed" not in second.stdout  # spirv only: .spv and .reflection
    assert "2 stale outputs removed" in second.stdout
    assert sorted(p.name for p in (tmp_path / "gen").iterdir()) == [
        "__init__.py",
        "notes.py",
        "skinned.py",
    ]
    assert '"skinned"' in (tmp_path / "gen" / "__init__.py").read_text()
    check = oneshader(tmp_path, "generate", "out/skinned.reflection", "-o", "gen", "--check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_wgpu_helpers_refuse_a_shader_built_without_wgsl(project: Project) -> None:
    """FINDINGS.md #6: the histogram (SPIR-V and Metal only: WGSL refuses InterlockedAdd) gave an
    empty pipeline layout, and wgpu failed later with 'binding is missing from the pipeline
    layout'; now the helper says why at once. The slots themselves stay readable."""
    histogram = project.module("histogram")
    assert histogram.resources.Histogram.spirv.binding == 30
    message = "histogram: the wgpu helpers use the Wgsl slots, but this shader was built for "
    with pytest.raises(LookupError, match=f"^{message}SpirV, Msl only; build it for wgsl too$"):
        histogram.SHADER.create_bind_group_layouts(device=None)
    with pytest.raises(LookupError, match=message):
        histogram.SHADER.bind_group_layout_entries(0)
    with pytest.raises(LookupError, match="'Histogram' has no Wgsl slot"):
        _ = histogram.resources.Histogram.wgsl
    assert project.module("blur").SHADER.groups() == [0]
