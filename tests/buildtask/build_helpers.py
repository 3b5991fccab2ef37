"""Helpers of the build tests: a small shader project built with the real compiler."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from oneshader.compiler.process.spawned import uses_spawn

CORPUS = Path(__file__).parent.parent / "corpus"

# Tests of the zygote's fork path itself (its zygote, the compile server it makes): skipped when
# the run forces the portable path (CI's second run, ONESHADER_PROCESS=spawn: docs/build.md).
fork_path_only = pytest.mark.skipif(
    uses_spawn(), reason="a test of the fork path; this run forces the portable path"
)

KERNEL = """// A tiny compute kernel for build tests ({name}).
RWStructuredBuffer<uint> Data;

[shader("compute")]
[numthreads(8, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{{
    Data[id.x] = id.x * {factor}u + SCALE;
}}
"""

PYPROJECT = """[project]
name = "demo"
version = "0"

[tool.oneshader]
sources = ["shaders"]
out = "out"
defines = {{ SCALE = "3" }}
{extra}
[tool.oneshader.entry-points]
"shaders/NoMarkup.hlsl" = [{{ name = "main", stage = "compute" }}]
"""


def kernel(name: str, factor: int = 2) -> str:
    return KERNEL.format(name=name, factor=factor)


def make_project(root: Path, *, kernels: int = 2, extra: str = "") -> Path:
    """``root`` holds pyproject.toml and shaders/: Sprite (VS+PS), ui/Lit (includes a file that
    includes another), NoMarkup (entry points from pyproject) and ``kernels`` tiny kernels."""
    shaders = root / "shaders"
    (shaders / "ui").mkdir(parents=True)
    shutil.copy(CORPUS / "sprite.hlsl", shaders / "Sprite.hlsl")
    shutil.copy(CORPUS / "includes.hlsl", shaders / "ui" / "Lit.hlsl")
    shutil.copytree(CORPUS / "inc", shaders / "ui" / "inc")
    shutil.copy(CORPUS / "nomarkup.hlsl", shaders / "NoMarkup.hlsl")
    for i in range(kernels):
        (shaders / f"K{i}.hlsl").write_text(kernel(f"K{i}", i + 2))
    (root / "pyproject.toml").write_text(PYPROJECT.format(extra=extra))
    return root


BuildRun = Callable[..., tuple[int, str, str]]


def run_cli(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``oneshader build ARGS`` in a fresh process (for kills and concurrency)."""
    env = dict(os.environ, CI="1")
    return subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "build", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def summary_counts(stdout: str) -> tuple[int, int, int]:
    """(built, up to date, failed) from the last summary line."""
    line = [x for x in stdout.splitlines() if x.startswith("oneshader build:")][-1]
    words = line.replace(",", "").split()
    return (
        int(words[words.index("built") - 1]),
        int(words[words.index("up") - 1]),
        int(words[words.index("failed") - 1]),
    )
