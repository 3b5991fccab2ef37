"""The worker pool's own machinery, with stand-in workers (the real compiler is used by every
other build test): a worker that breaks fails one shader and is replaced."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from oneshader.buildtask.scheduler import WorkerPool
from oneshader.buildtask.sources import ShaderJob
from oneshader.compiler.api import CompileLimits, CompileOptions, CompileResult
from oneshader.compiler.process.worker import CompilerWorker


def job(name: str) -> ShaderJob:
    return ShaderJob(Path(name), name, name, CompileOptions(source_name=name), "k")


class StandIn:
    """Answers with an empty result; raises on files named ``boom``."""

    made = 0
    lock = threading.Lock()

    def __init__(self) -> None:
        with StandIn.lock:
            StandIn.made += 1
        self.closed = False

    def compile(self, path: str, options: CompileOptions) -> CompileResult:
        if Path(path).name.startswith("boom"):
            raise BrokenPipeError("worker went away")
        return CompileResult()

    def close(self) -> None:
        self.closed = True


def test_a_broken_worker_fails_one_job_and_is_replaced() -> None:
    StandIn.made = 0
    jobs = [job(n) for n in ("a", "boom1", "b", "c", "boom2", "d")]  # one worker: in order
    results: dict[str, CompileResult] = {}
    started: list[str] = []
    with WorkerPool(1, StandIn) as pool:
        pool.run(
            jobs,
            lambda j: started.append(j.source_name),
            lambda j, r, _s: results.__setitem__(j.source_name, r),
            lambda: None,
        )
    assert sorted(started) == sorted(results) == sorted(j.source_name for j in jobs)
    for name in ("boom1", "boom2"):
        assert results[name].crashed
        (diag,) = results[name].diagnostics
        assert diag.code == "OS9003" and "BrokenPipeError" in diag.message
    assert not any(results[n].crashed for n in "abcd")
    assert StandIn.made == 3  # the first, and one replacement after each break


def test_workers_start_only_for_work_and_at_most_one_per_job() -> None:
    StandIn.made = 0
    with WorkerPool(8, StandIn) as pool:
        pool.run([], lambda j: None, lambda j, r, s: None, lambda: None)
        assert StandIn.made == 0
        pool.run([job("a"), job("b")], lambda j: None, lambda j, r, s: None, lambda: None)
        assert StandIn.made <= 2
        made = StandIn.made
        pool.run([job("c")], lambda j: None, lambda j, r, s: None, lambda: None)
        assert StandIn.made == made  # kept across runs (--watch)


def test_a_worker_that_cannot_start_fails_its_job_and_the_next_one_retries() -> None:
    attempts: list[int] = []

    def flaky() -> StandIn:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("fork failed")
        return StandIn()

    results: dict[str, CompileResult] = {}
    with WorkerPool(1, flaky) as pool:
        pool.run(
            [job("a"), job("b")],
            lambda j: None,
            lambda j, r, _s: results.__setitem__(j.source_name, r),
            lambda: None,
        )
    assert results["a"].crashed and "fork failed" in results["a"].diagnostics[0].message
    assert not results["b"].crashed and len(attempts) == 2


def test_an_error_in_the_caller_stops_new_compiles() -> None:
    compiled: list[str] = []

    class Counting(StandIn):
        def compile(self, path: str, options: CompileOptions) -> CompileResult:
            compiled.append(path)
            time.sleep(0.01)
            return CompileResult()

    def explode(j: ShaderJob, r: CompileResult, s: float) -> None:
        raise KeyboardInterrupt

    jobs = [job(f"j{i}") for i in range(50)]
    with WorkerPool(1, Counting) as pool:
        try:
            pool.run(jobs, lambda j: None, explode, lambda: None)
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError("the interrupt was swallowed")
    time.sleep(0.1)
    assert len(compiled) < 10  # the rest of the queue was dropped


def test_the_pools_workers_take_the_builds_limits() -> None:
    with WorkerPool(1, limits=CompileLimits(5.0, 100)) as pool:
        worker = pool._compiler_worker()
        assert isinstance(worker, CompilerWorker)
        assert worker.timeout == 5.0 and worker.memory_limit == 100 << 20
        worker.close()
