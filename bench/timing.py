"""What the benchmarks share: the fastest of several runs, so that one slow run (another process
on the 2 shared cores) does not decide a figure. Import it from a script in this folder."""

from __future__ import annotations

import time
from collections.abc import Callable


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
