"""Building the probe shaders of tests/codegen/shaders with the real compiler, and importing the
generated bindings, for the GPU-execution tests."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

SHADERS = Path(__file__).parent / "shaders"
ROOT = Path(__file__).resolve().parents[2]


def build_probes(
    folder: Path, package: str, names: Sequence[str]
) -> tuple[Path, dict[str, ModuleType]]:
    """Build every probe (SPIR-V and WGSL) into ``folder/out`` with bindings in the package
    ``folder/package``; the output folder and the modules ``names`` of it."""
    result = subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "build", str(SHADERS.relative_to(ROOT)), "-q",
         "--targets", "spirv,wgsl", "-o", str(folder / "out"),
         "--bindings", str(folder / package)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(folder))
    try:
        mods = {n: importlib.import_module(f"{package}.{n}") for n in names}
    finally:
        sys.path.remove(str(folder))
    return folder / "out", mods
