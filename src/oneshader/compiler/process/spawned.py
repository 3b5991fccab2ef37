"""The portable process path: compiler workers started as new processes, for where the zygote's
path cannot run (macOS, Windows: no fork of a warm process that is safe there, no pidfds, no
``SO_PEERCRED``).

Chosen by :func:`uses_spawn`: automatically where the fork path's system calls are missing,
and forced by ``ONESHADER_PROCESS=spawn`` (``fork`` forces the other; CI runs the build's tests
both ways). A :class:`SpawnedWorker` keeps one child (:mod:`.spawned_child`) with one Slang
session, talks to it over its stdin/stdout with the same plain-data frames as the fork path
(:mod:`.wire`), and gives the same crash containment: a child that dies mid-request fails that
shader (``crashed=True``, the signal or exit status named) and the next request gets a fresh
child. What the OS has, it keeps:

- the time limit everywhere (the child is killed at the deadline: OS9004);
- the memory limit where ``RLIMIT_AS`` is enforced (Linux, the BSDs; macOS accepts the limit but
  does not enforce it, Windows has no ``resource`` module): none there;
- the build's own ``ulimit``, inherited by the child on every POSIX system;
- a killed build's busy worker ends within a second (it watches its parent on POSIX; on
  Windows it finishes its compile, then reads the end of its input and ends);
- no compile server: it needs a peer check (``SO_PEERCRED``) that this path does without, so
  every build pays each worker's start (~0.3 s, the workers starting in parallel).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time

from oneshader.compiler.process.policy import PROCESS_ENV, fork_path_available, uses_spawn
from oneshader.compiler.process.wire import receive
from oneshader.compiler.process.worker import CompilerWorker, _Child
from oneshader.compiler.process.zygote import python_command

__all__ = ["PROCESS_ENV", "SpawnedWorker", "fork_path_available", "uses_spawn"]

_REAP_SECONDS = 5.0


class _SpawnedChild(_Child):
    """A spawned worker as this process sees it: its process and its stdin/stdout."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:  # no socket: pipes
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self.pid = proc.pid
        self.reader = proc.stdout
        self.writer = proc.stdin

    def idle_and_alive(self) -> bool:
        return self.proc.poll() is None

    def receive(self, deadline: float | None) -> bytes:
        """One frame from the child's stdout, the child killed at ``deadline`` (a timer: a
        pipe cannot be waited on with ``select`` on Windows); TimeoutError then."""
        if deadline is None:
            return receive(self.reader)
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            self.kill()

        timer = threading.Timer(max(0.0, deadline - time.monotonic()), stop)
        timer.start()
        try:
            return receive(self.reader)
        except (EOFError, OSError):
            if timed_out.is_set():
                raise TimeoutError from None
            raise
        finally:
            timer.cancel()  # before the child is reaped: its pid must not be killed then

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()

    def close(self) -> None:
        for stream in (self.writer, self.reader):
            with contextlib.suppress(OSError):
                stream.close()


class SpawnedWorker(CompilerWorker):
    """:class:`CompilerWorker` whose child is a new process rather than a zygote's fork.
    ``memory_limit``: bytes of address space the child may use (where the OS enforces it)."""

    # A request waits in a pipe behind another only where the pipe's buffer is known to hold it
    # (POSIX: 4 KiB at least); Windows does not document an anonymous pipe's default buffer.
    queued_bytes = 0 if sys.platform == "win32" else CompilerWorker.queued_bytes

    def __init__(self, timeout: float | None = None, memory_limit: int | None = None) -> None:
        self._setup(timeout, memory_limit)
        self._owns_zygote = False

    def _start_child(self) -> _Child:
        limit = [] if self.memory_limit is None else ["--memory", str(self.memory_limit)]
        args = ["--parent", str(os.getpid()), *limit]
        argv, env = python_command("oneshader.compiler.process.spawned_child", *args)
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            env=env,
        )
        return _SpawnedChild(proc)

    def _reap(self, child: _Child) -> tuple[int, int] | None:
        """Wait for the child (killed after a grace): its return code and, where the OS says
        (``wait4``), its peak resident memory in KiB."""
        assert isinstance(child, _SpawnedChild)
        proc = child.proc
        if not hasattr(os, "wait4"):  # Windows
            try:
                return proc.wait(_REAP_SECONDS), 0
            except subprocess.TimeoutExpired:
                proc.kill()
                return proc.wait(), 0
        deadline = time.monotonic() + _REAP_SECONDS
        while True:
            try:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            except ChildProcessError:  # reaped already (by Popen)
                return (proc.returncode, 0) if proc.returncode is not None else None
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                peak = usage.ru_maxrss >> 10 if sys.platform == "darwin" else usage.ru_maxrss
                return proc.returncode, peak
            if time.monotonic() >= deadline:
                child.kill()
                deadline = float("inf")
            time.sleep(0.005)
