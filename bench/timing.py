"""What the benchmarks share: the fastest of several runs, so that one slow run (another process
on the 2 shared cores) does not decide a figure. Import it from a script in this folder."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from pathlib import Path


def best(fn: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of ``repeat`` runs, wall-clock seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def best_cpu(fn: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of ``repeat`` runs in CPU seconds of this process (less sensitive to other
    processes competing for the cores than wall time)."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def interleaved(
    a: Callable[[], object], b: Callable[[], object], repeat: int = 9
) -> tuple[float, float]:
    """The fastest run of each, the two alternating so that both see the same machine state."""
    ta, tb = [], []
    for _ in range(repeat):
        for fn, times in ((a, ta), (b, tb)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return min(ta), min(tb)


_FRESH = itertools.count()


def fresh_folder(root: Path, prefix: str = "cold") -> str:
    """A name under ``root`` no run of this process has used, for a cold build's output: each
    timed cold build writes into a new folder, and the folders go with ``root`` at the end.

    Removing the last build's output just before the next one is timed would charge that
    build for the file system, not for oneshader: on an ext4 without a journal (this
    project's CI and benchmark machines) a file created within a minute of many deletions in
    its block group costs 0.3-0.8 ms of kernel time (``find_inode_bit`` skips each recently
    deleted inode, ``recently_deleted``) against ~0.03 ms otherwise; measured on a cold build
    of 255 shaders, 0.58-0.82 s of the build process's CPU after ``rm -rf out``, 0.05-0.07 s
    into a new folder."""
    while (root / (name := f"{prefix}-{next(_FRESH)}")).exists():
        pass
    return name
