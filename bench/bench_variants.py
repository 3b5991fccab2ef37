"""Benchmark of shader variants: one source built in N variants against N separate sources.

Both projects compile the same N shaders (the same text, the same defines, the same shared
include); one declares them as N variants of one file in ``[tool.oneshader.variants]``, the
other as N files. Prints, for each: the full build (``-j CPUS``, without and with the compile
server), the no-op rebuild and the rebuild after touching the shared include, and the ratio
variants / separate of each (below 1: the variants build is faster). Every figure is measured in
this run, the two projects taking turns.

    python bench/bench_variants.py [N] [--targets spirv,msl,wgsl] [--reps R]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench_build import SHADER, run_build, stop_servers
from bench_build import SHARED as SHARED_TEMPLATE
from timing import interleaved

from oneshader.buildtask.config import available_cpus

# The shader of bench_build.py, its number a define: one source for all variants.
SHARED = SHARED_TEMPLATE.format(which="")
UBER = SHADER.format(i="VARIANT", include="Shared.hlsli", which="", threads="32 + VARIANT % 4")

PYPROJECT = """[project]
name = "bench"
version = "0"

[tool.oneshader]
sources = ["shaders"]
out = "out"
targets = [{targets}]
"""


def one_source_project(root: Path, source: str, targets: str, table: str, body: str) -> Path:
    """``shaders/Uber.hlsl`` (``source``) and the shared include, with ``body`` as its entry
    of ``[tool.oneshader.TABLE]`` (variants, permutations)."""
    (root / "shaders").mkdir(parents=True)
    (root / "shaders/Shared.hlsli").write_text(SHARED)
    (root / "shaders/Uber.hlsl").write_text(source)
    text = PYPROJECT.format(targets=targets)
    text += f'\n[tool.oneshader.{table}]\n"shaders/Uber.hlsl" = {{ {body} }}\n'
    (root / "pyproject.toml").write_text(text)
    return root


def variants_project(root: Path, n: int, targets: str) -> Path:
    table = ", ".join(f'v{i} = {{ VARIANT = "{i}" }}' for i in range(n))
    return one_source_project(root, UBER, targets, "variants", table)


def separate_project(root: Path, n: int, targets: str) -> Path:
    (root / "shaders").mkdir(parents=True)
    (root / "shaders/Shared.hlsli").write_text(SHARED)
    for i in range(n):
        (root / f"shaders/Uber{i:03d}.hlsl").write_text(f"#define VARIANT {i}\n" + UBER)
    (root / "pyproject.toml").write_text(PYPROJECT.format(targets=targets))
    return root


def full(root: Path, jobs: int, server: bool) -> Callable[[], object]:
    def run() -> None:
        shutil.rmtree(root / "out", ignore_errors=True)
        _, line = run_build(root, "-j", str(jobs), server=server)
        assert " 0 failed" in line, line

    return run


def noop(root: Path, jobs: int) -> Callable[[], object]:
    def run() -> None:
        _, line = run_build(root, "-j", str(jobs), server=True)
        if " 0 built" not in line:
            sys.exit(f"the no-op rebuild compiled something, figures are void: {line}")

    return run


def touched(root: Path, jobs: int) -> Callable[[], object]:
    def run() -> None:
        include = root / "shaders/Shared.hlsli"
        include.write_text(include.read_text() + "// touched\n")
        _, line = run_build(root, "-j", str(jobs), server=True)
        assert " 0 up to date" in line, line

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=64)
    parser.add_argument("--targets", default="spirv,msl,wgsl")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    targets = ", ".join(f'"{t}"' for t in args.targets.split(","))
    jobs = available_cpus()
    with tempfile.TemporaryDirectory(prefix="oneshader-bench-variants-") as tmp:
        var = variants_project(Path(tmp) / "variants", args.n, targets)
        sep = separate_project(Path(tmp) / "separate", args.n, targets)
        for root in (var, sep):  # bytecode cache, compile server
            full(root, jobs, server=True)()
        print(
            f"1 source x {args.n} variants vs {args.n} sources, targets {args.targets}, -j {jobs}"
        )
        print(f"  {'':<28} {'variants':>9} {'separate':>9} {'ratio':>6}")
        try:
            rows = [
                ("full build, no server", full(var, jobs, False), full(sep, jobs, False)),
                ("full build, server running", full(var, jobs, True), full(sep, jobs, True)),
                ("no-op rebuild", noop(var, jobs), noop(sep, jobs)),
                ("shared include edited", touched(var, jobs), touched(sep, jobs)),
            ]
            for label, a, b in rows:
                ta, tb = interleaved(a, b, repeat=args.reps)
                print(f"  {label:<28} {ta:8.2f}s {tb:8.2f}s {ta / tb:6.2f}")
        finally:
            for root in (var, sep):
                stop_servers(root)


if __name__ == "__main__":
    main()
