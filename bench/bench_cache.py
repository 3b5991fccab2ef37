"""Benchmark of the shared cache: a cold build of N generated shaders in one checkout (filling a
shared folder), then the same project in another checkout (another folder, OUT and runtime
folder) built from the cache, and the cold build again without a cache, side by side; no compile
server, ``-j CPUS``. The second checkout must compile nothing.

    python bench/bench_cache.py [N] [--reps R]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from bench_build import make_project, run_build
from timing import interleaved

from oneshader.buildtask.config import available_cpus

SOURCES = ("shaders", "-o", "out")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=50)
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    jobs = str(available_cpus())
    with tempfile.TemporaryDirectory(prefix="oneshader-bench-cache-") as tmp:
        shared = Path(tmp) / "share"
        first, other = Path(tmp) / "alice", Path(tmp) / "bob"
        make_project(first, args.n)
        make_project(other, args.n)

        def cold() -> None:
            shutil.rmtree(first / "out", ignore_errors=True)
            shutil.rmtree(shared, ignore_errors=True)
            _, line = run_build(first, *SOURCES, "-j", jobs, "--cache", str(shared))
            assert f"{args.n} built" in line, line

        def warm() -> None:
            shutil.rmtree(other / "out", ignore_errors=True)
            _, line = run_build(
                other, *SOURCES, "-j", jobs, "--cache", str(shared), "--cache-mode", "read"
            )
            assert f"0 built, {args.n} from cache" in line, line

        def plain() -> None:
            shutil.rmtree(first / "out", ignore_errors=True)
            _, line = run_build(first, *SOURCES, "-j", jobs)
            assert f"{args.n} built" in line, line

        t_cold, t_plain = interleaved(cold, plain, repeat=args.reps)
        cold()
        t_warm, _ = interleaved(warm, lambda: None, repeat=args.reps)
    print(f"{args.n} shaders, all three targets, -j {jobs}, no compile server, best of {args.reps}")
    print(f"  cold build, no cache:                        {t_plain:7.2f}s")
    print(f"  cold build, filling a shared folder:         {t_cold:7.2f}s")
    print(
        f"  another checkout, from the cache (0 built):  {t_warm:7.2f}s  ({t_warm / t_plain:.2f}x)"
    )


if __name__ == "__main__":
    main()
