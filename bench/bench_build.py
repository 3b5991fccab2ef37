"""Benchmark of ``oneshader build`` on generated projects of N shaders (default N = 50 and 500).

Prints, per N: the full build with ``-j 1`` and with ``-j CPUS`` and the speed-up, the no-op
rebuild (a whole ``oneshader build`` process, wall and CPU, beside ``python -c pass``: the floor
of any command; the normal path, forced by ``ONESHADER_NOOP=0``, against the fast path that
answers from the record of the last build, and their ratio; and the build itself in-process),
the rebuild
after touching an include shared by half of the shaders, and the ratio of a full build to the
sum of direct in-process compile times of the same shaders (the cost of the build machinery).
Full builds are measured both without the compile server (each build starts its compiler) and
with it running (every build of a working session but its first). Every figure is measured in
this run; nothing is compared with stored numbers. The builds run as separate processes with
Python's bytecode cache on (see ``build_env``), as for an installed oneshader; the speed-up is
given best against best and per pair of runs.

    python bench/bench_build.py [N ...] [--targets spirv,msl,wgsl] [--noop-only]

``--noop-only``: one full build, then the no-op figures alone (a quick measurement).

Run it on a quiet machine and a fixed checkout: any edit to the compiler package changes the
incremental key, which would turn the no-op rebuild into a full one (the script then stops).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import fresh_folder

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
    Output[id.x] = float4(Shade{which}(v.rgb, Gain + float({i})), v.a);
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


def build_env(root: Path, server: bool, fast: bool = True) -> dict[str, str]:
    """The builds' environment: bytecode cached as an installed package has it (pip compiles
    it on install; a machine that sets PYTHONDONTWRITEBYTECODE would otherwise make every
    process compile oneshader from source, ~0.1 s each; the cache goes to a folder of this run,
    never into the source tree), and the compile server on (in a runtime folder of this run)
    or off."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(root / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("CI", None)
    (root / "run").mkdir(mode=0o700, exist_ok=True)
    env["XDG_RUNTIME_DIR"] = str(root / "run")
    env["ONESHADER_SERVER"] = "120" if server else "0"
    if not fast:
        env["ONESHADER_NOOP"] = "0"  # the normal path even when nothing is to do
    return env


def run_build(root: Path, *args: str, server: bool = False, fast: bool = True) -> tuple[float, str]:
    t0 = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "build", "-q", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=build_env(root, server, fast),
    )
    seconds = time.perf_counter() - t0
    if result.returncode != 0:
        sys.exit(f"build failed:\n{result.stdout}\n{result.stderr}")
    return seconds, result.stdout.strip().splitlines()[-1]


def stop_servers(root: Path) -> None:
    """End the compile server this run started (it would idle out anyway)."""
    from oneshader.compiler.process.server import CompileServer

    for sock in (root / "run" / "oneshader").glob("*.sock"):
        pid = CompileServer(sock).pid()
        if pid is not None:
            os.kill(pid, signal.SIGTERM)


def full_builds(root: Path, common: list[str], jobs: int, reps: int, server: bool) -> list[float]:
    """Alternating -j 1 and -j N full builds, ``reps`` of each: [j1, jN, j1, jN, ...], each
    into a new output folder (``timing.fresh_folder``)."""
    times = []
    for _ in range(reps):
        for j in ("1", str(jobs)):
            out = fresh_folder(root)
            times.append(run_build(root, *common, "-o", out, "-j", j, server=server)[0])
    return times


def speed_up(times: list[float], jobs: int, label: str) -> str:
    serials, parallels = times[0::2], times[1::2]
    serial, parallel = min(serials), min(parallels)
    pairs = sorted(s / p for s, p in zip(serials, parallels, strict=True))
    return (
        f"  {label:<25} -j 1 {serial:6.2f} s, -j {jobs} {parallel:6.2f} s, speed-up "
        f"x{serial / parallel:.2f} (best against best; run after run x{pairs[0]:.2f} to "
        f"x{pairs[-1]:.2f}, median x{statistics.median(pairs):.2f})"
    )


NoopTimes = tuple[float, float]  # best wall, best CPU seconds


def noop_processes(
    root: Path, common: list[str], jobs: int, reps: int = 7
) -> tuple[NoopTimes, NoopTimes]:
    """Best wall and CPU seconds of ``reps`` no-op ``oneshader build`` processes, as a user
    runs them (no server to ask: none is started by a build with nothing to compile), on the
    normal path (``ONESHADER_NOOP=0``) and on the fast path, taking turns: (normal, fast).
    Each normal run removes the record, so a recording run (not timed) comes between."""
    times: dict[bool, tuple[list[float], list[float]]] = {False: ([], []), True: ([], [])}
    args = [*common, "-o", "out", "-j", str(jobs)]
    record = root / "out" / ".oneshader-noop"
    for _ in range(reps):
        for fast in (False, True):
            if fast:
                run_build(root, *args)  # records
                if not record.is_file():
                    sys.exit("the no-op build left no record: the fast path cannot be measured")
            c0 = _children_cpu()
            seconds, line = run_build(root, *args, fast=fast)
            if " 0 built" not in line:  # the compiler's code changed under us (a key)
                sys.exit(f"the no-op rebuild compiled something, figures are void: {line}")
            times[fast][0].append(seconds)
            times[fast][1].append(_children_cpu() - c0)
    normal, fast_ = times[False], times[True]
    return (min(normal[0]), min(normal[1])), (min(fast_[0]), min(fast_[1]))


def python_floor(root: Path, reps: int = 5) -> tuple[float, float]:
    """Best wall and CPU seconds of ``python -c pass`` with the builds' environment: the
    start-up no command of this Python can go below."""
    walls, cpus = [], []
    for _ in range(reps):
        c0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=build_env(root, False))
        walls.append(time.perf_counter() - t0)
        cpus.append(_children_cpu() - c0)
    return min(walls), min(cpus)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def noop_in_process(root: Path, args: list[str]) -> float:
    from oneshader.buildtask.builder import Build
    from oneshader.buildtask.config import load_config
    from oneshader.buildtask.progress import Progress
    from oneshader.buildtask.scheduler import WorkerPool
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
    from oneshader.buildtask.config import parse_targets
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
        try:
            run_build(root, *common, "-o", "out", "-j", str(jobs))  # fills the bytecode cache
            run_build(root, *common, "-o", "out", "--force", server=True)  # starts the server
            # best of `reps` full builds each (the machine may be shared), the two kinds of
            # build taking turns: without the server (each build starts its compiler: a fresh
            # shell) and with it (each build after the first one of a working session)
            cold: list[float] = []
            warm: list[float] = []
            for _ in range(reps):
                cold += full_builds(root, common, jobs, 1, server=False)
                warm += full_builds(root, common, jobs, 1, server=True)
            (noop, noop_cpu), (fast, fast_cpu) = noop_processes(root, common, jobs)
            floor, floor_cpu = python_floor(root)
            noop_inproc = noop_in_process(root, [*common, "-o", "out"])
            shared = shaders / "SharedA.hlsli"
            shared.write_text(shared.read_text().replace("0.1, 0.2", "0.15, 0.2"))
            half, line = run_build(root, *common, "-o", "out", "-j", str(jobs))
            if f" {(n + 1) // 2} built" not in line:
                sys.exit(f"touching the shared include rebuilt the wrong set: {line}")
            shared.write_text(shared.read_text().replace("0.15, 0.2", "0.125, 0.2"))
            half_warm, _ = run_build(root, *common, "-o", "out", "-j", str(jobs), server=True)
        finally:
            stop_servers(root)
        direct = direct_compile_sum(shaders, targets)
    print(f"N = {n} shaders, targets {targets}, {jobs} CPUs, best of {reps} full builds each")
    print(speed_up(cold, jobs, "without compile server"))
    print(speed_up(warm, jobs, "with a running server"))
    print_noop(noop, noop_cpu, fast, fast_cpu)
    print(f"  python -c pass (floor)    {floor:8.3f} s   ({floor_cpu:.3f} s CPU)")
    print(f"  no-op rebuild (in-proc)   {noop_inproc:8.3f} s")
    print(
        f"  rebuild, half touched     {half:8.2f} s   ({(n + 1) // 2} shaders; "
        f"{half_warm:.2f} s with the server running)"
    )
    print(f"  sum of direct compiles    {direct:8.2f} s")
    print(f"  full -j 1 / direct sum    {min(cold[0::2]) / direct:8.2f}   (without the server)")
    print(f"  full -j {jobs:<2}/ direct sum    {min(cold[1::2]) / direct:8.2f}", flush=True)


def print_noop(noop: float, noop_cpu: float, fast: float, fast_cpu: float) -> None:
    print(f"  no-op, normal path        {noop:8.3f} s   ({noop_cpu:.3f} s CPU; best of 7)")
    print(
        f"  no-op, fast path          {fast:8.3f} s   ({fast_cpu:.3f} s CPU; best of 7; "
        f"x{noop / fast:.2f} faster wall, x{noop_cpu / fast_cpu:.2f} CPU)"
    )


def noop_only(n: int, targets: str, jobs: int) -> None:
    """One full build of N shaders, then the no-op figures alone."""
    with tempfile.TemporaryDirectory(prefix="oneshader-bench-") as tmp:
        root = Path(tmp)
        make_project(root, n)
        common = ["shaders", "--targets", targets]
        run_build(root, *common, "-o", "out", "-j", str(jobs))
        (noop, noop_cpu), (fast, fast_cpu) = noop_processes(root, common, jobs)
        floor, floor_cpu = python_floor(root)
    print(f"N = {n} shaders, targets {targets}, -j {jobs}, no-op builds only")
    print_noop(noop, noop_cpu, fast, fast_cpu)
    print(f"  python -c pass (floor)    {floor:8.3f} s   ({floor_cpu:.3f} s CPU)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[50, 500])
    parser.add_argument("--targets", default="spirv,msl,wgsl")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--reps", type=int, default=0, help="full builds per size (default 5, 1)")
    parser.add_argument("--noop-only", action="store_true", help="the no-op figures alone")
    args = parser.parse_args()
    for n in args.sizes:
        if args.noop_only:
            noop_only(n, args.targets, args.jobs)
            continue
        bench(n, args.targets, args.jobs, args.reps or (5 if n <= 100 else 1))


if __name__ == "__main__":
    main()
