"""The worker pool's own machinery, with stand-in workers (the real compiler is used by every
other build test): a worker that breaks fails one shader and is replaced."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import ClassVar

import pytest

from oneshader.buildtask.scheduler import WorkerPool
from oneshader.buildtask.sources import ShaderJob
from oneshader.compiler.api import CompileLimits, CompileOptions, CompileResult
from oneshader.compiler.process.worker import CompilerWorker
from oneshader.diagnostics import Diagnostic, Severity


def job(name: str) -> ShaderJob:
    return ShaderJob(Path(name), name, name, CompileOptions(source_name=name), "k")


class StandIn:
    """Answers with an empty result; raises on files named ``boom``. Requests wait in
    ``pending`` until received, as in a real worker's channel."""

    made = 0
    lock = threading.Lock()

    def __init__(self) -> None:
        with StandIn.lock:
            StandIn.made += 1
        self.closed = False
        self.pending: list[tuple[str, CompileOptions]] = []

    def submit(self, path: str, options: CompileOptions) -> None:
        self.pending.append((path, options))

    def receive(self) -> CompileResult:
        return self.compile(*self.pending.pop(0))

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


class Named(StandIn):
    """Answers each job with a result naming it (a warning carrying its path), after
    ``seconds``; records how many requests it held at each receive."""

    seconds = 0.0
    held: ClassVar[list[int]] = []

    def receive(self) -> CompileResult:
        Named.held.append(len(self.pending))
        time.sleep(self.seconds)
        return named_result(self.pending.pop(0)[0])


def named_result(path: str) -> CompileResult:
    diag = Diagnostic(path, 1, 1, Severity.WARNING, f"compiled {path}", "OS0000")
    return CompileResult(diagnostics=(diag,))


def run_all(pool: WorkerPool, jobs: list[ShaderJob]) -> list[tuple[str, CompileResult, str]]:
    """Every job's result, in the order reported, with the thread that reported it."""
    results: list[tuple[str, CompileResult, str]] = []
    pool.run(
        jobs,
        lambda j: None,
        lambda j, r, _s: results.append((str(j.source), r, threading.current_thread().name)),
        lambda: None,
    )
    return results


def test_a_worker_is_handed_its_next_job_before_its_current_result_is_read() -> None:
    """The worker's process starts the next compile as soon as it replies: each job is
    submitted before the result of the one before is received. The results are each job's
    own, reported on the calling thread."""
    Named.held = []
    jobs = [job(f"j{i}") for i in range(6)]
    with WorkerPool(1, Named) as pool:
        results = run_all(pool, jobs)
    assert Named.held == [2, 2, 2, 2, 2, 1]
    assert [(path, r) for path, r, _ in results] == [
        (f"j{i}", named_result(f"j{i}")) for i in range(6)
    ]
    assert {thread for _, _, thread in results} == {threading.current_thread().name}


def test_no_job_waits_behind_a_long_compile_while_another_worker_could_run_it() -> None:
    """Near the end of the queue a job is not queued behind another: at -j 2, the last short
    job runs on the second worker, not after the long one."""

    class Slow(Named):
        def receive(self) -> CompileResult:
            self.seconds = 0.5 if self.pending[0][0] == "long" else 0.0
            return super().receive()

    with WorkerPool(2, Slow) as pool:
        results = run_all(pool, [job("long"), job("short")])
    assert [path for path, _, _ in results] == ["short", "long"]


def test_the_jobs_a_broken_worker_held_go_to_another() -> None:
    """A worker that raises fails the job it was answering; the job queued behind it is
    compiled by the replacement, not lost nor failed."""
    StandIn.made = 0
    results = {}
    with WorkerPool(1, StandIn) as pool:
        for path, result, _ in run_all(pool, [job("boom"), job("a"), job("b")]):
            results[path] = result
    assert results["boom"].crashed and not results["a"].crashed and not results["b"].crashed
    assert StandIn.made == 2


def test_an_interrupt_drops_the_queued_job_with_its_worker() -> None:
    """^C (or a failure writing outputs): the job queued behind the one whose result came
    is not compiled, its worker is closed, and no driver uses a worker once run has raised."""
    made: list[Named] = []
    dropped: list[int] = []

    class Kept(Named):
        seconds = 0.05

        def __init__(self) -> None:
            super().__init__()
            made.append(self)

        def close(self) -> None:
            dropped.append(len(self.pending))
            super().close()

    def explode(j: ShaderJob, r: CompileResult, s: float) -> None:
        raise KeyboardInterrupt

    Named.held = []
    with WorkerPool(1, Kept) as pool:
        with pytest.raises(KeyboardInterrupt):
            pool.run([job(f"j{i}") for i in range(20)], lambda j: None, explode, lambda: None)
        assert pool._workers == [None]  # no driver is left using a worker the next run gets
        received = len(Named.held)
        time.sleep(0.2)
        assert len(Named.held) == received
        assert len(made) == 1 and dropped == [1]  # closed with the job queued behind


def test_a_one_run_pool_ends_its_workers_while_the_build_goes_on() -> None:
    """A build's pool (``one_run``) ends its compiler processes as soon as the last job is
    answered, beside what the build still does (its state, its no-op record), not after it:
    ``run`` returns while a worker's end is still under way, and ``close`` waits for it."""
    release = threading.Event()
    closing: list[str] = []

    class SlowToEnd(StandIn):
        def close(self) -> None:
            closing.append(threading.current_thread().name)
            release.wait(5)
            super().close()

    made: list[SlowToEnd] = []

    def factory() -> SlowToEnd:
        made.append(SlowToEnd())
        return made[-1]

    pool = WorkerPool(1, factory, one_run=True)
    pool.run([job("a"), job("b")], lambda j: None, lambda j, r, s: None, lambda: None)
    deadline = time.monotonic() + 5
    while not closing and time.monotonic() < deadline:
        time.sleep(0.01)
    assert closing and closing[0] != threading.current_thread().name  # ending, not waited for
    assert not made[0].closed
    release.set()
    pool.close()
    assert made[0].closed and len(closing) == 1 and pool._workers == [None]


def test_a_pool_for_many_runs_keeps_its_workers_between_them() -> None:
    StandIn.made = 0
    with WorkerPool(1, StandIn) as pool:
        for name in ("a", "b"):
            pool.run([job(name)], lambda j: None, lambda j, r, s: None, lambda: None)
            (worker,) = pool._workers
            assert isinstance(worker, StandIn) and not worker.closed
        assert StandIn.made == 1
