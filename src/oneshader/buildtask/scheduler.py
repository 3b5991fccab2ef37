"""Persistent compiler workers (what the user watches meanwhile is :mod:`.progress`).

Each worker is a process with its own compiler session (``CompilerWorker``), driven by one thread
of this process; the main thread receives results in completion order, so writing outputs and the
state stays single-threaded. Workers are started only when there is something to compile and
are kept across rebuilds (``--watch``) until the pool is closed.

A driver keeps a second job waiting in its worker's channel behind the one being compiled, so
that the worker starts it the moment it replies rather than after this process has read the
reply and sent the next job (~1 ms a shader of a worker's idle time, on the critical path of a
build); near the end of the queue it does not (:data:`SPARE_JOBS`).
"""

from __future__ import annotations

import collections
import contextlib
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from oneshader.buildtask.sources import ShaderJob
from oneshader.compiler.api import CompileLimits, CompileOptions, CompileResult
from oneshader.compiler.process.policy import uses_spawn
from oneshader.diagnostics import Code, Diagnostic, Severity, UserError

if TYPE_CHECKING:  # the process code is imported once there is something to compile
    from oneshader.compiler.process.server import CompileServer
    from oneshader.compiler.process.zygote import Zygote

PIP_INSTALL_HINT = "install it with: pip install 'oneshader[compiler]'"


class CompilerUnavailable(Exception):
    """The compiler cannot run here at all (not installed): the build stops, no shader fails."""


# A driver queues a second job behind its worker's compile only while the shared queue still
# holds this many jobs for each other worker. A queued job is bound to its worker: at the end
# of a build it would wait behind a long compile while another worker idles (costing up to a
# shader's compile, against the ~1 ms the queueing saves). With the compile times of a real
# tree (Sascha Willems' 255 shaders, 0.02-0.6 s), simulated over 1,000 orders at -j 2 and -j 4,
# 8 never lost to not queueing at all; 2 to 6 did, in up to 4% of the orders.
SPARE_JOBS = 8


class Worker(Protocol):
    """A compiler: :meth:`submit` requests, :meth:`receive` their results in the same order."""

    def submit(self, path: str, options: CompileOptions) -> None: ...

    def receive(self) -> CompileResult: ...

    def close(self) -> None: ...


class Compilers(Protocol):
    """What a build compiles with: a :class:`WorkerPool` here, or a cluster
    (:class:`~oneshader.buildtask.cluster.ClusterPool`) that falls back to one."""

    def run(
        self,
        jobs: Sequence[ShaderJob],
        on_start: Callable[[ShaderJob], None],
        on_result: Callable[[ShaderJob, CompileResult, float], None],
        on_tick: Callable[[], None],
        tick_seconds: float = 0.1,
    ) -> None: ...

    def close(self) -> None: ...


def _internal_failure(job: ShaderJob, err: BaseException) -> CompileResult:
    message = f"the compiler worker failed: {type(err).__name__}: {err}"
    if isinstance(err, CompilerUnavailable):
        message = str(err)
    diag = Diagnostic(job.source_name, 0, 0, Severity.ERROR, message, Code.WORKER_FAILED)
    return CompileResult(diagnostics=(diag,), crashed=True)


class WorkerPool:
    """Up to ``size`` workers; :meth:`run` compiles jobs on as many as there are jobs."""

    def __init__(
        self,
        size: int,
        factory: Callable[[], Worker] | None = None,
        *,
        server_idle_seconds: float | None = None,
        install_hint: str = PIP_INSTALL_HINT,
        limits: CompileLimits | None = None,
        early: Zygote | None = None,
        one_run: bool = False,
    ) -> None:
        """``server_idle_seconds``: fork workers from the compile server (started if needed,
        ending after that long without callers) instead of a zygote of this pool's own.
        ``install_hint`` tells how to install the compiler when it is missing (the packaging
        hook names its ``[build-system]`` table instead of pip). ``limits``: each compile's time
        and memory (the defaults when None). ``early``: a private zygote started before the
        configuration was read (:mod:`.early`), adopted when this pool would start one, else
        closed unused. ``one_run``: the pool serves a single :meth:`run` (one build, not
        ``--watch``): its compiler processes are ended as soon as that run's last job is
        answered, on a thread of their own while the build writes its state (their exits and
        reaping cost ~30-60 ms), and :meth:`close` waits for that."""
        self.size = max(1, size)
        self.install_hint = install_hint
        self.factory = factory or self._compiler_worker
        self.server_idle_seconds = server_idle_seconds
        self.limits = limits or CompileLimits()
        self.spawn = uses_spawn()  # the portable process path (no zygote, no server)
        self.server: CompileServer | None = None
        self.server_refused = ""  # why no compile server was used, when one was wanted
        self._workers: list[Worker | None] = [None] * self.size
        self._zygote: Zygote | None = None
        self._zygote_lock = threading.Lock()
        self._early = early
        self.one_run = one_run
        self._ending: threading.Thread | None = None  # ending the processes after a one_run

    def _compiler_worker(self) -> Worker:
        """A real worker, forked from the pool's one zygote (Slang's start-up paid once), or
        on the portable path a process of its own."""
        if self.spawn:
            from oneshader.compiler import missing_compiler
            from oneshader.compiler.process.spawned import SpawnedWorker

            reason = missing_compiler()
            if reason is not None:
                raise CompilerUnavailable(reason)
            return SpawnedWorker(self.limits.seconds, self.limits.memory_bytes)
        from oneshader.compiler.process.server import CompileServer
        from oneshader.compiler.process.worker import CompilerWorker
        from oneshader.compiler.process.zygote import Zygote

        with self._zygote_lock:
            if self._zygote is None:
                from oneshader.compiler import missing_compiler

                reason = missing_compiler()
                if reason is not None:
                    raise CompilerUnavailable(reason)
                if self.server_idle_seconds is not None:
                    found = CompileServer.find(self.server_idle_seconds)
                    if isinstance(found, str):
                        self.server_refused = found
                    else:
                        self.server = found
                connect = self.server.connect if self.server else None
                early, self._early = self._early, None
                if connect is None and early is not None:
                    early.memory_limit = self.limits.memory_bytes  # sent with each fork
                    self._zygote = early
                else:
                    if early is not None:
                        early.abandon()
                    self._zygote = Zygote(connect, self.limits.memory_bytes)
            zygote = self._zygote
        return CompilerWorker(self.limits.seconds, zygote)

    def run(
        self,
        jobs: Sequence[ShaderJob],
        on_start: Callable[[ShaderJob], None],
        on_result: Callable[[ShaderJob, CompileResult, float], None],
        on_tick: Callable[[], None],
        tick_seconds: float = 0.1,
    ) -> None:
        """Compile every job; callbacks run on the calling thread, ``on_tick`` while waiting."""
        self._join_ending()  # (a ``one_run`` pool run again starts new processes)
        todo = collections.deque(jobs)  # popped and pushed back by the drivers (atomic)
        events: queue.SimpleQueue[tuple[str, ShaderJob, CompileResult | None, float]]
        events = queue.SimpleQueue()
        threads = min(self.size, len(jobs))
        stop = threading.Event()
        spare = SPARE_JOBS * (threads - 1)

        def drive(slot: int) -> None:
            held: collections.deque[ShaderJob] = collections.deque()  # sent, not answered
            since = 0.0  # when the compile of held[0] started
            worker: Worker | None = None

            def broken(job: ShaderJob, err: Exception) -> CompileResult:
                """A worker that raised fails ``job``, not the build: it is replaced, and the
                other jobs it held go back to the queue (never lost)."""
                self._discard(slot)
                todo.extendleft(reversed(held))
                held.clear()
                return _internal_failure(job, err)

            while True:
                while len(held) < 2 and not stop.is_set() and (not held or len(todo) >= spare):
                    try:
                        job = todo.popleft()
                    except IndexError:
                        break
                    if not held:
                        events.put(("start", job, None, 0.0))
                        since = time.perf_counter()
                    try:
                        worker = self._workers[slot]
                        if worker is None:
                            worker = self._workers[slot] = self.factory()
                    except (ImportError, CompilerUnavailable) as err:  # no point going on
                        events.put(("fatal", job, _internal_failure(job, err), 0.0))
                        return
                    except Exception as err:  # could not start this one; the next job tries again
                        events.put(("done", job, _internal_failure(job, err), 0.0))
                        continue
                    try:
                        worker.submit(str(job.source), job.options)
                    except Exception as err:
                        events.put(("done", job, broken(job, err), 0.0))
                        continue
                    held.append(job)
                if not held:
                    return
                job = held.popleft()
                assert worker is not None  # the one the held jobs were submitted to
                try:
                    result = worker.receive()
                except Exception as err:
                    result = broken(job, err)
                now = time.perf_counter()
                events.put(("done", job, result, now - since))
                if held and stop.is_set():  # the job queued behind goes with the worker's child
                    self._discard(slot)
                    held.clear()
                elif held:  # its compile started as this reply was written
                    events.put(("start", held[0], None, 0.0))
                    since = now

        pool = [
            threading.Thread(target=drive, args=(i,), daemon=True, name=f"oneshader-worker-{i}")
            for i in range(threads)
        ]
        for t in pool:
            t.start()
        try:
            self._collect(len(jobs), events, on_start, on_result, on_tick, tick_seconds)
        except BaseException:  # ^C or a failure writing outputs: start nothing new
            stop.set()  # each driver ends after its compile in progress, as before queueing
            for t in pool:  # no driver of this run is left using a worker the next run gets
                t.join()
            raise
        for t in pool:
            t.join()
        if self.one_run:
            self._ending = threading.Thread(target=self._end_quietly, name="oneshader-ending")
            self._ending.start()

    def _end_quietly(self) -> None:
        with contextlib.suppress(Exception):  # never the build's failure: close() ends the rest
            self._end_processes()

    def _end_processes(self) -> None:
        """Every worker closed, then the zygote (it reaps them)."""
        for slot in range(self.size):
            self._discard(slot)
        with self._zygote_lock:
            zygote, self._zygote = self._zygote, None
        if zygote is not None:
            zygote.close()

    def _collect(
        self,
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
                reason = result.diagnostics[0].message if result else ""
                raise UserError.at(
                    "oneshader build",
                    0,
                    0,
                    f"cannot start the compiler: {reason}; {self.install_hint}",
                    Code.NO_COMPILER,
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

    def warm(self) -> None:
        """Every worker started and its compiler process forked and ready, so that the next
        compile waits for neither (``--watch`` warms its pool while the user edits)."""
        for slot in range(self.size):
            try:
                worker = self._workers[slot]
                if worker is None:
                    worker = self._workers[slot] = self.factory()
                start = getattr(worker, "start", None)
                if start is not None:
                    start()
            except Exception:  # the next compile starts it, and reports what fails then
                self._discard(slot)

    def refusal(self) -> str:
        """Why the compile server was not used though one was wanted ("" if it was, or none
        was wanted): a folder or a socket that is not this user's alone."""
        if self.server is not None and self.server.refused:
            return self.server.refused
        return self.server_refused

    def _join_ending(self) -> None:
        ending, self._ending = self._ending, None
        if ending is not None:
            ending.join()

    def close(self) -> None:
        self._join_ending()
        self._end_processes()
        with self._zygote_lock:
            early, self._early = self._early, None
        if early is not None:
            early.abandon()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
