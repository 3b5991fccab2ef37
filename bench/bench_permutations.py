"""Benchmark of permutations: one source declared with 6 binary axes ([tool.oneshader.permutations],
64 variants) against the same 64 shaders as 64 separate sources (each file its defines written in
it), side by side in one run, the two taking turns.

Two sources are measured: one that reads 3 of the 6 axes (the others are declared for the family
of files a glob gives them to, as a studio's table does: 8 distinct compiles serve the 64
variants), and one that reads all 6 (64 distinct compiles: what sharing cannot help). A full
build without the compile server, ``-j CPUS``, all three targets; best of ``--reps``.

    python bench/bench_permutations.py [--reps R] [--targets spirv,msl,wgsl]
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench_build import SHADER, run_build
from bench_variants import PYPROJECT, SHARED, one_source_project
from timing import interleaved

from oneshader.buildtask.config import available_cpus

AXES = ("FOG", "SHADOWS", "QUALITY", "DEBUG_VIEW", "WIND", "SNOW")


def uber(read: int) -> str:
    """The shader of bench_build.py whose number is made of the first ``read`` axes."""
    number = " + ".join(f"{1 << k} * {axis}" for k, axis in enumerate(AXES[:read]))
    return SHADER.format(i=f"({number})", include="Shared.hlsli", which="", threads="64")


def permutations_project(root: Path, read: int, targets: str) -> Path:
    axes = ", ".join(f"{a} = [0, 1]" for a in AXES)
    return one_source_project(root, uber(read), targets, "permutations", axes)


def separate_project(root: Path, read: int, targets: str) -> Path:
    (root / "shaders").mkdir(parents=True)
    (root / "shaders/Shared.hlsli").write_text(SHARED)
    for values in itertools.product((0, 1), repeat=len(AXES)):
        defines = "".join(f"#define {a} {v}\n" for a, v in zip(AXES, values, strict=True))
        name = "".join(map(str, values))
        (root / f"shaders/Uber{name}.hlsl").write_text(defines + uber(read))
    (root / "pyproject.toml").write_text(PYPROJECT.format(targets=targets))
    return root


def full(root: Path, jobs: int) -> Callable[[], object]:
    def run() -> None:
        shutil.rmtree(root / "out", ignore_errors=True)
        _, line = run_build(root, "-j", str(jobs), server=False)
        assert " 0 failed" in line and "64 built" in line, line

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="spirv,msl,wgsl")
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    targets = ", ".join(f'"{t}"' for t in args.targets.split(","))
    jobs = available_cpus()
    print(f"1 source x 64 permutations vs 64 sources, targets {args.targets}, -j {jobs}, no server")
    print(f"  {'source':<26} {'permutations':>12} {'separate':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory(prefix="oneshader-bench-permutations-") as tmp:
        for read in (3, len(AXES)):
            perm = permutations_project(Path(tmp) / f"perm{read}", read, targets)
            sep = separate_project(Path(tmp) / f"sep{read}", read, targets)
            ta, tb = interleaved(full(perm, jobs), full(sep, jobs), repeat=args.reps)
            label = f"reads {read} of {len(AXES)} axes"
            print(f"  {label:<26} {ta:11.2f}s {tb:8.2f}s {ta / tb:6.2f}")


if __name__ == "__main__":
    main()
