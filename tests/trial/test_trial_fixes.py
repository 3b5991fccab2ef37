"""Bugs outside the compiler that the trial found and fixed (FINDINGS.md), each held here."""

from __future__ import annotations

import shutil
from pathlib import Path

from trial_helpers import SHADERS, oneshader


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
