"""Benchmark of ``oneshader build`` on generated projects of N shaders (default N = 50 and 500).

Prints, per N: the full build with ``-j 1`` and with ``-j CPUS`` and the speed-up, the no-op
rebuild (a whole ``oneshader build`` process, and the build itself in-process), the rebuild
after touching an include shared by half of the shaders, and the ratio of a full build to the
sum of direct in-process compile times of the same shaders (the cost of the build machinery).
Every figure is measured in this run; nothing is compared with stored numbers.

    python bench/bench_build.py [N ...] [--targets spirv,msl,wgsl]

Run it on a quiet machine and a fixed checkout: any edit to the compiler package changes the
incremental key, which would turn the no-op rebuild into a full one (the script then stops).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHARED = """// Shared by half of the shaders ({which}).
#pragma once
float3 Shade{which}(float3 c, float k)
{{
    return saturate(c * k + float3(0.1, 0.2, 0.3));
}}
"""

SHADER = """// Generated shader {i}.
#include "{include}"

cbuffer Params
{{
    float4 Tint;
    float Gain;
    uint Count;
    float2 Pad;
}};

StructuredBuffer<float4> Input;
RWStructuredBuffer<float4> Output;

[shader("compute")]
[numthreads({threads}, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{{
    if (id.x >= Count)
        return;
    float4 v = Input[id.x] * Tint;
    Output[id.x] = float4(Shade{which}(v.rgb, Gain + {i}.0), v.a);
}}
"""


def make_project(root: Path, n: int) -> Path:
    shaders = root / "shaders"
    for sub in ("a", "b"):
        (shaders / sub).mkdir(parents=True, exist_ok=True)
    (shaders / "SharedA.hlsli").write_text(SHARED.format(which="A"))
    (shaders / "SharedB.hlsli").write_text(SHARED.format(which="B"))
    for i in range(n):
        which = "A" if i % 2 == 0 else "B"
        sub = "a" if i % 2 == 0 else "b"
        text = SHADER.format(
            i=i, include=f"../Shared{which}.hlsli", which=which, threads=32 + i % 4
        )
        (shaders / sub / f"S{i:04d}.hlsl").write_text(text)
    return shaders


def run_build(root: Path, *args: str) -> tuple[float, str]:
    env = dict(os.environ, CI="1")
    t0 = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "build", "-q", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
    )
    seconds = time.perf_counter() - t0
    if result.returncode != 0:
        sys.exit(f"build failed:\n{result.stdout}\n{result.stderr}")
    return seconds, result.stdout.strip().splitlines()[-1]


def noop_in_process(root: Path, args: list[str]) -> float:
    from oneshader.build.builder import Build
    from oneshader.build.config import load_config
    from oneshader.build.progress import Progress
    from oneshader.build.scheduler import WorkerPool
    from oneshader.cli import make_parser

    config = load_config(make_parser().parse_args(["build", "-q", *args]), root)
    best = float("inf")
    for _ in range(5):
        with WorkerPool(1) as pool:
            t0 = time.perf_counter()
            report = Build(config, pool, Progress(quiet=True, live=False)).run()
            best = min(best, time.perf_counter() - t0)
        assert not report.built, "a no-op build compiled something"
    return best


def direct_compile_sum(shaders: Path, targets: str) -> float:
    """Sum of in-process ``compile_file`` times (after one warm-up compile)."""
    from oneshader.build.config import parse_targets
    from oneshader.compiler import compile_file
    from oneshader.compiler.api import CompileOptions

    chosen = parse_targets(targets)
    assert chosen is not None
    files = sorted(shaders.rglob("*.hlsl"))
    compile_file(files[0], CompileOptions(targets=chosen, source_name="warmup.hlsl"))
    total = 0.0
    for f in files:
        options = CompileOptions(targets=chosen, source_name=f.relative_to(shaders).as_posix())
        t0 = time.perf_counter()
        result = compile_file(f, options)
        total += time.perf_counter() - t0
        if not result.ok:
            sys.exit(f"direct compile of {f.name} failed: {result.diagnostics}")
    return total


def bench(n: int, targets: str, jobs: int, reps: int) -> None:
    with tempfile.TemporaryDirectory(prefix="oneshader-bench-") as tmp:
        root = Path(tmp)
        shaders = make_project(root, n)
        common = ["shaders", "--targets", targets]
        # best of `reps` full builds each (the machine may be shared), alternating -j 1 and -j N
        serial = parallel = float("inf")
        for _ in range(reps):
            for folder in ("out1", "out"):
                shutil.rmtree(root / folder, ignore_errors=True)
            serial = min(serial, run_build(root, *common, "-o", "out1", "-j", "1")[0])
            parallel = min(parallel, run_build(root, *common, "-o", "out", "-j", str(jobs))[0])
        shutil.rmtree(root / "out1")
        noop, line = run_build(root, *common, "-o", "out", "-j", str(jobs))
        if " 0 built" not in line:  # the compiler's code changed under us (its digest is a key)
            sys.exit(f"the no-op rebuild compiled something, figures are void: {line}")
        noop_inproc = noop_in_process(root, [*common, "-o", "out"])
        shared = shaders / "SharedA.hlsli"
        shared.write_text(shared.read_text().replace("0.1, 0.2", "0.15, 0.2"))
        half, line = run_build(root, *common, "-o", "out", "-j", str(jobs))
        if f" {(n + 1) // 2} built" not in line:
            sys.exit(f"touching the shared include rebuilt the wrong set: {line}")
        direct = direct_compile_sum(shaders, targets)
    print(f"N = {n} shaders, targets {targets}, {jobs} CPUs, best of {reps} full builds")
    print(f"  full build -j 1           {serial:8.2f} s")
    print(
        f"  full build -j {jobs:<2}          {parallel:8.2f} s   speed-up x{serial / parallel:.2f}"
    )
    print(f"  no-op rebuild (process)   {noop:8.3f} s")
    print(f"  no-op rebuild (in-proc)   {noop_inproc:8.3f} s")
    print(f"  rebuild, half touched     {half:8.2f} s   ({(n + 1) // 2} shaders)")
    print(f"  sum of direct compiles    {direct:8.2f} s")
    print(f"  full -j 1 / direct sum    {serial / direct:8.2f}")
    print(f"  full -j {jobs:<2}/ direct sum    {parallel / direct:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[50, 500])
    parser.add_argument("--targets", default="spirv,msl,wgsl")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--reps", type=int, default=0, help="full builds per size (default 3, 1)")
    args = parser.parse_args()
    for n in args.sizes:
        bench(n, args.targets, args.jobs, args.reps or (3 if n <= 100 else 1))


if __name__ == "__main__":
    main()
