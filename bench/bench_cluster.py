"""Benchmark of the distributed path's cost per shader: the same generated projects built here
(``-j 1``) and through a Dask cluster on this machine (a scheduler and one one-thread worker on
127.0.0.1), both without the compile server. The slope between two project sizes gives each
path's seconds per shader without the fixed costs (start-up, connecting, the worker's first
fork); their difference is what the cluster adds per shader on loopback. bench/README.md turns
the figures into a model of N machines.

    python bench/bench_cluster.py [--sizes 8 32] [--reps R]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_build import make_project, run_build
from timing import interleaved


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_cluster(folder: Path) -> tuple[str, list[subprocess.Popen[bytes]]]:
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = open(folder / "cluster.log", "wb")  # noqa: SIM115 - lives as long as the processes
    common = ["--no-dashboard"]
    procs = [
        subprocess.Popen(
            ["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), *common],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    ]
    procs.append(
        subprocess.Popen(
            [
                "dask",
                "worker",
                address,
                "--nthreads",
                "1",
                "--no-nanny",
                "--host",
                "127.0.0.1",
                *common,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    )
    from distributed import Client

    deadline = time.monotonic() + 120
    while True:
        try:
            with Client(address, timeout="5s") as client:
                client.wait_for_workers(1, timeout=120)
            return address, procs
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def full(root: Path, *args: str) -> Callable[[], object]:
    def run() -> None:
        shutil.rmtree(root / "out", ignore_errors=True)
        _, line = run_build(root, "shaders", "-o", "out", "-j", "1", *args)
        assert " 0 failed" in line, line

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[8, 32])
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    small, big = args.sizes
    with tempfile.TemporaryDirectory(prefix="oneshader-bench-cluster-") as tmp:
        address, procs = start_cluster(Path(tmp))
        try:
            times: dict[int, tuple[float, float]] = {}
            for n in (small, big):
                root = Path(tmp) / f"p{n}"
                make_project(root, n)
                full(root, "--scheduler", address)()  # the worker's zygote, warm bytecode
                times[n] = interleaved(
                    full(root), full(root, "--scheduler", address), repeat=args.reps
                )
        finally:
            for p in procs:
                p.terminate()
                p.wait(timeout=30)
    print(f"full build, -j 1 here vs one one-thread Dask worker on 127.0.0.1, best of {args.reps}")
    print(f"  {'shaders':>7} {'here':>8} {'cluster':>8}")
    for n, (here, cluster) in times.items():
        print(f"  {n:7d} {here:7.2f}s {cluster:7.2f}s")
    per_here = (times[big][0] - times[small][0]) / (big - small)
    per_cluster = (times[big][1] - times[small][1]) / (big - small)
    print(
        f"  per shader (slope {small}->{big}): here {per_here * 1000:.0f} ms, "
        f"cluster {per_cluster * 1000:.0f} ms, overhead {(per_cluster - per_here) * 1000:.0f} ms"
    )
    fixed = times[small][1] - small * per_cluster - (times[small][0] - small * per_here)
    print(f"  fixed cost of the cluster path (connect, plugin, first fork): {fixed:.2f}s")


if __name__ == "__main__":
    sys.exit(main())
