"""Persistent compiler workers and what the user watches while they run.

Each worker is a process with its own compiler session (``CompilerWorker``), driven by one thread
of this process; the main thread receives results in completion order, so writing outputs and the
state stays single-threaded. Workers are started only when there is something to compile and
are kept across rebuilds (``--watch``) until the pool is closed.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol, TextIO

from oneshader.build.sources import ShaderJob
from oneshader.compiler.api import CompileOptions, CompileResult
from oneshader.diagnostics import Diagnostic, Severity, UserError


class Worker(Protocol):
    def compile(self, path: str, options: CompileOptions) -> CompileResult: ...

    def close(self) -> None: ...


def default_worker() -> Worker:
    from oneshader.compiler.worker import CompilerWorker

    worker: Worker = CompilerWorker()
    return worker


def _internal_failure(job: ShaderJob, err: BaseException) -> CompileResult:
    message = f"the compiler worker failed: {type(err).__name__}: {err}"
    diag = Diagnostic(job.source_name, 0, 0, Severity.ERROR, message, "OS3001")
    return CompileResult(diagnostics=(diag,), crashed=True)


class WorkerPool:
    """Up to ``size`` workers; :meth:`run` compiles jobs on as many as there are jobs."""

    def __init__(self, size: int, factory: Callable[[], Worker] = default_worker) -> None:
        self.size = max(1, size)
        self.factory = factory
        self._workers: list[Worker | None] = [None] * self.size

    def run(
        self,
        jobs: Sequence[ShaderJob],
        on_start: Callable[[ShaderJob], None],
        on_result: Callable[[ShaderJob, CompileResult, float], None],
        on_tick: Callable[[], None],
        tick_seconds: float = 0.1,
    ) -> None:
        """Compile every job; callbacks run on the calling thread, ``on_tick`` while waiting."""
        todo: queue.SimpleQueue[ShaderJob | None] = queue.SimpleQueue()
        events: queue.SimpleQueue[tuple[str, ShaderJob, CompileResult | None, float]]
        events = queue.SimpleQueue()
        for job in jobs:
            todo.put(job)
        threads = min(self.size, len(jobs))
        for _ in range(threads):
            todo.put(None)

        def drive(slot: int) -> None:
            while (job := todo.get()) is not None:
                events.put(("start", job, None, 0.0))
                t0 = time.perf_counter()
                try:
                    worker = self._workers[slot]
                    if worker is None:
                        worker = self._workers[slot] = self.factory()
                except ImportError as err:  # no compiler installed: no point going on
                    events.put(("fatal", job, _internal_failure(job, err), 0.0))
                    return
                except Exception as err:  # could not start this one; the next job tries again
                    events.put(("done", job, _internal_failure(job, err), 0.0))
                    continue
                try:
                    result = worker.compile(str(job.source), job.options)
                except Exception as err:  # a broken worker fails one shader, not the build
                    result = _internal_failure(job, err)
                    self._discard(slot)
                events.put(("done", job, result, time.perf_counter() - t0))

        pool = [
            threading.Thread(target=drive, args=(i,), daemon=True, name=f"oneshader-worker-{i}")
            for i in range(threads)
        ]
        for t in pool:
            t.start()
        try:
            self._collect(len(jobs), events, on_start, on_result, on_tick, tick_seconds)
        except BaseException:  # ^C or a failure writing outputs: start nothing new
            while True:
                try:
                    todo.get_nowait()
                except queue.Empty:
                    break
            for _ in range(threads):
                todo.put(None)  # each driver stops after its current compile
            raise
        for t in pool:
            t.join()

    @staticmethod
    def _collect(
        total: int,
        events: queue.SimpleQueue[tuple[str, ShaderJob, CompileResult | None, float]],
        on_start: Callable[[ShaderJob], None],
        on_result: Callable[[ShaderJob, CompileResult, float], None],
        on_tick: Callable[[], None],
        tick_seconds: float,
    ) -> None:
        done = 0
        while done < total:
            try:
                kind, job, result, seconds = events.get(timeout=tick_seconds)
            except queue.Empty:
                on_tick()
                continue
            if kind == "fatal":
                raise UserError.at(
                    "oneshader build",
                    0,
                    0,
                    "cannot start the compiler (install it with: pip install "
                    f"'oneshader[compiler]'): {result.diagnostics[0].message if result else ''}",
                    "OS3004",
                )
            if kind == "start":
                on_start(job)
            else:
                done += 1
                assert result is not None
                on_result(job, result, seconds)

    def _discard(self, slot: int) -> None:
        worker, self._workers[slot] = self._workers[slot], None
        if worker is not None:
            with contextlib.suppress(Exception):
                worker.close()

    def close(self) -> None:
        for slot in range(self.size):
            self._discard(slot)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def wants_live_line(stream: TextIO, quiet: bool) -> bool:
    """A live progress line only on an interactive terminal, never in CI or with --quiet."""
    if quiet or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """Progress on ``stream``: a live line (done/total, current file, elapsed) on a terminal,
    otherwise one plain line per compiled shader (none with ``quiet``); diagnostics always go to
    ``errors``, clearing the live line first."""

    def __init__(
        self,
        stream: TextIO | None = None,
        errors: TextIO | None = None,
        *,
        quiet: bool = False,
        live: bool | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.errors = errors if errors is not None else sys.stderr
        self.quiet = quiet
        self.live = wants_live_line(self.stream, quiet) if live is None else live
        self.total = 0
        self.done = 0
        self.started = time.perf_counter()
        self.running: dict[str, float] = {}
        self._shown = False

    def begin(self, total: int) -> None:
        self.total, self.done = total, 0
        self.started = time.perf_counter()
        self.running.clear()

    def _clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False

    def _draw(self) -> None:
        if not self.live or not self.total:
            return
        current = next(iter(self.running), "")
        elapsed = time.perf_counter() - self.started
        width = shutil.get_terminal_size((80, 24)).columns
        line = f"[{self.done}/{self.total}] {elapsed:5.1f}s {current}"
        self.stream.write("\r\x1b[K" + line[: max(width - 1, 10)])
        self.stream.flush()
        self._shown = True

    def start(self, name: str) -> None:
        self.running[name] = time.perf_counter()
        self._draw()

    def finish(self, name: str, verdict: str, seconds: float) -> None:
        self.running.pop(name, None)
        self.done += 1
        if self.live:
            self._draw()
        elif not self.quiet:
            self.stream.write(f"[{self.done}/{self.total}] {verdict} {name} ({seconds:.2f}s)\n")
            self.stream.flush()

    def tick(self) -> None:
        self._draw()

    def diagnostic(self, diag: Diagnostic) -> None:
        self.message(diag.format(with_excerpt=True))

    def message(self, text: str) -> None:
        """A line for the user (diagnostics, notes); never lost under the live line."""
        self._clear()
        self.errors.write(text + "\n")
        self.errors.flush()
        self._draw()

    def summary(self, text: str) -> None:
        self._clear()
        self.stream.write(text + "\n")
        self.stream.flush()
