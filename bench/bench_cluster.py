"""Benchmark of the distributed path's cost per shader: the same generated projects built here
(``-j 1``) and through a Dask cluster on this machine (a scheduler and one one-thread worker on
127.0.0.1), both without the compile server. The slope between two project sizes gives each
path's seconds per shader without the fixed costs (start-up, connecting, the worker's first
fork); their difference is what the cluster adds per shader on loopback. Besides wall time,
each side's CPU seconds (the build process and every process it waited for; on the cluster side
also the scheduler's and the worker's process trees), which other load on the machine barely
moves: the CPU slope's difference is the per-shader overhead to trust on a busy machine.
bench/README.md turns the figures into a model of N machines.

    python bench/bench_cluster.py [--sizes 8 32] [--reps R]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_build import make_project, run_build


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


def tree_cpu(procs: list[subprocess.Popen[bytes]]) -> float:
    """CPU seconds of these processes and their descendants, those they reaped included (a
    process's time moves to its parent's children times when reaped, so the sum is steady)."""
    import psutil

    total = 0.0
    for p in procs:
        root = psutil.Process(p.pid)
        for proc in (root, *root.children(recursive=True)):
            try:
                t = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += t.user + t.system + t.children_user + t.children_system
    return total


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# (project, CPU seconds of the build process and what it waited for, of the scheduler) of each
# cluster build
PARTS: list[tuple[Path, float, float]] = []


def idle_rate(cluster: list[subprocess.Popen[bytes]], seconds: float = 10.0) -> float:
    """CPU seconds per second the idle cluster spends (heartbeats, the scheduler's periodic
    work): what a build through it pays for its wall time, whatever it compiles."""
    t0 = tree_cpu(cluster)
    time.sleep(seconds)
    return (tree_cpu(cluster) - t0) / seconds


def full(
    root: Path, *args: str, cluster: list[subprocess.Popen[bytes]] | None = None, idle: float = 0
) -> Callable[[], float]:
    """A cold build; returns its CPU seconds (the build's and, through a cluster, the
    cluster's processes' less their idle spending over the build's wall time)."""

    def run() -> float:
        shutil.rmtree(root / "out", ignore_errors=True)
        c0, t0, s0 = children_cpu(), tree_cpu(cluster or []), tree_cpu((cluster or [])[:1])
        wall, line = run_build(root, "shaders", "-o", "out", "-j", "1", *args)
        assert " 0 failed" in line, line
        client = children_cpu() - c0
        if cluster is not None:
            PARTS.append((root, client, tree_cpu(cluster[:1]) - s0))
        return client + tree_cpu(cluster or []) - t0 - idle * wall

    return run


def interleaved_wall_cpu(
    a: Callable[[], float], b: Callable[[], float], repeat: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The best wall time and the best CPU time of each, the two alternating."""
    runs: tuple[list[tuple[float, float]], list[tuple[float, float]]] = ([], [])
    for _ in range(repeat):
        for fn, times in zip((a, b), runs, strict=True):
            w0 = time.perf_counter()
            cpu = fn()
            times.append((time.perf_counter() - w0, cpu))
    return tuple(  # type: ignore[return-value]
        (min(w for w, _ in times), min(c for _, c in times)) for times in runs
    )


def slope(figures: dict[int, float], small: int, big: int) -> tuple[float, float]:
    """Seconds per shader between the two sizes, and the fixed cost left at the small size."""
    per = (figures[big] - figures[small]) / (big - small)
    return per, figures[small] - small * per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[8, 32])
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    small, big = args.sizes
    with tempfile.TemporaryDirectory(prefix="oneshader-bench-cluster-") as tmp:
        address, procs = start_cluster(Path(tmp))
        try:
            here: dict[int, tuple[float, float]] = {}
            there: dict[int, tuple[float, float]] = {}
            idle = idle_rate(procs)
            for n in (small, big):
                root = Path(tmp) / f"p{n}"
                make_project(root, n)
                via = full(root, "--scheduler", address, cluster=procs, idle=idle)
                via()  # the worker's zygote, warm bytecode
                here[n], there[n] = interleaved_wall_cpu(full(root), via, args.reps)
        finally:
            for p in procs:
                p.terminate()
                p.wait(timeout=30)
    print(f"full build, -j 1 here vs one one-thread Dask worker on 127.0.0.1, best of {args.reps}")
    print(f"  {'shaders':>7} {'wall here':>10} {'cluster':>8} {'CPU here':>9} {'cluster':>8}")
    for n in (small, big):
        print(
            f"  {n:7d} {here[n][0]:9.2f}s {there[n][0]:7.2f}s "
            f"{here[n][1]:8.2f}s {there[n][1]:7.2f}s"
        )
    print(f"  the idle cluster spends {idle * 1000:.0f} ms of CPU a second (left out above)")
    client = {n: min(c for root, c, _ in PARTS if root.name == f"p{n}") for n in (small, big)}
    scheduler = {n: min(c for root, _, c in PARTS if root.name == f"p{n}") for n in (small, big)}
    for i, what in ((0, "wall"), (1, "CPU")):
        per_here, fixed_here = slope({n: f[i] for n, f in here.items()}, small, big)
        per_there, fixed_there = slope({n: f[i] for n, f in there.items()}, small, big)
        print(
            f"  {what} per shader (slope {small}->{big}): here {per_here * 1000:.0f} ms, "
            f"cluster {per_there * 1000:.0f} ms, overhead {(per_there - per_here) * 1000:.0f} ms;"
            f" fixed cost of the cluster path {fixed_there - fixed_here:.2f}s"
        )
    per_client, _ = slope(client, small, big)
    per_scheduler, _ = slope(scheduler, small, big)
    print(
        f"  of the cluster path's CPU per shader, the client's: {per_client * 1000:.0f} ms, "
        f"the scheduler's: {per_scheduler * 1000:.0f} ms (idle spending included)"
    )


if __name__ == "__main__":
    sys.exit(main())
