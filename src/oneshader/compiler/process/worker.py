"""A compiler in its own process, so that a crash of Slang costs one shader, not the build.

Slang segfaults on some inputs (docs/compiler.md lists the known ones), inside ``spCompile``
itself. :class:`CompilerWorker` keeps one child process with one Slang session, forked warm from
a :class:`~oneshader.compiler.process.zygote.Zygote` (workers of one pool share it, so the session's
~200 ms are paid once), and talks to it over a socket with pickled frames. If the child dies
mid-request, the request returns ``crashed=True`` with an error diagnostic naming the signal, and
the next request gets a fresh child.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import socket
import threading
from types import TracebackType

from oneshader.compiler.api import CompileOptions, CompileResult
from oneshader.compiler.process.wire import receive, send
from oneshader.compiler.process.zygote import Zygote
from oneshader.diagnostics import Code, Diagnostic, Severity

__all__ = ["CompilerWorker"]

_REAP_SECONDS = 5.0


class _Child:
    """One forked worker as this process sees it: its pid and the two ends of its channel."""

    def __init__(self, pid: int, channel: socket.socket) -> None:
        self.pid = pid
        self.channel = channel
        self.reader = channel.makefile("rb")
        self.writer = channel.makefile("wb")

    def idle_and_alive(self) -> bool:
        """An idle worker never writes unasked: a readable channel means it has ended."""
        readable, _, _ = select.select([self.channel], [], [], 0)
        return not readable

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def close(self) -> None:
        for stream in (self.writer, self.reader):
            with contextlib.suppress(OSError):
                stream.close()
        self.channel.close()


class CompilerWorker:
    """One persistent compiler process; ``compile`` is safe against the child crashing.

    ``timeout`` (seconds, None for none) bounds one compile; a compile that exceeds it is treated
    as a crash (the child is killed). One worker serves one request at a time (a lock holds that).
    Without a ``zygote`` the worker starts (and closes) a private one.
    """

    def __init__(self, timeout: float | None = None, zygote: Zygote | None = None) -> None:
        self.timeout = timeout
        self._owns_zygote = zygote is None
        self._zygote = zygote if zygote is not None else Zygote()
        self._child: _Child | None = None
        self._lock = threading.Lock()
        self.restarts = 0

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def start(self) -> None:
        """Have a child ready now (the first one waits for the zygote to be warm)."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> _Child:
        if self._child is not None:
            if self._child.idle_and_alive():
                return self._child
            self._end_child(kill=True)
            self.restarts += 1
        pid, channel = self._zygote.fork()
        self._child = _Child(pid, channel)
        return self._child

    def _end_child(self, *, kill: bool) -> int | None:
        """Close the channel (the child exits at end of file), reap the child; its exit code."""
        child, self._child = self._child, None
        if child is None:
            return None
        if kill:
            child.kill()
        child.close()
        return self._zygote.wait(child.pid, _REAP_SECONDS)

    def compile(self, path: str, options: CompileOptions) -> CompileResult:
        with self._lock:
            child = self._ensure()
            timer: threading.Timer | None = None
            if self.timeout is not None:
                timer = threading.Timer(self.timeout, child.kill)
                timer.start()
            try:
                send(child.writer, (path, options))
                result = receive(child.reader)
            except (EOFError, OSError, pickle.UnpicklingError):
                result = None
            finally:
                if timer is not None:
                    timer.cancel()  # before the child is reaped: its pid must not be killed then
            if not isinstance(result, CompileResult):
                return self._crashed(options)
            return result

    def _crashed(self, options: CompileOptions) -> CompileResult:
        code = self._end_child(kill=False)
        self.restarts += 1
        if code is None:
            how = "an unknown exit status"
        elif code < 0:
            try:
                how = f"signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"signal {-code}"
        else:
            how = f"exit status {code}"
        message = (
            f"the compiler crashed ({how}) on this shader; the build goes on without it "
            "(a Slang bug: see docs/compiler.md for the known crashes and how to avoid them)"
        )
        name = options.source_name or "<shader>"
        diag = Diagnostic(name, 0, 0, Severity.ERROR, message, Code.COMPILER_CRASHED)
        return CompileResult(diagnostics=(diag,), crashed=True)

    def close(self) -> None:
        with self._lock:
            child = self._child
            if child is not None:
                with contextlib.suppress(OSError):
                    send(child.writer, None)
                self._end_child(kill=False)
            if self._owns_zygote:
                self._zygote.close()

    def __enter__(self) -> CompilerWorker:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
