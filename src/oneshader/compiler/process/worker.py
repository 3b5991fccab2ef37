"""A compiler in its own process, so that a crash of Slang costs one shader, not the build.

Slang segfaults on some inputs (docs/compiler.md lists the known ones), inside ``spCompile``
itself. :class:`CompilerWorker` keeps one child process with one Slang session, forked warm from
a :class:`~oneshader.compiler.process.zygote.Zygote` (workers of one pool share it, so the
session's ~200 ms are paid once), and talks to it over a socket with frames of plain data
(:mod:`.wire`: the child may be the compile server's, so nothing it sends may run code here). If
the child dies mid-request, the request returns ``crashed=True`` with an error diagnostic naming
the signal, and the next request gets a fresh child.

A caller may keep a second request waiting in the channel behind the one being compiled
(:meth:`CompilerWorker.submit`, :meth:`CompilerWorker.receive`): the child reads requests in
order, so it starts the next compile the moment it has written a reply, instead of idling while
this process reads that reply and sends the next request (~1 ms a shader: the decode, the GIL
handed between threads).
"""

from __future__ import annotations

import collections
import contextlib
import os
import select
import signal
import socket
import threading
import time
from types import TracebackType
from typing import IO

from oneshader.compiler.api import CompileOptions, CompileResult
from oneshader.compiler.process.wire import (
    HEADER_SIZE,
    decode_result,
    encode_request,
    frame_size,
    send,
)
from oneshader.compiler.process.zygote import Zygote
from oneshader.diagnostics import Code, Diagnostic, Severity

__all__ = ["CompilerWorker"]

_REAP_SECONDS = 5.0

# The largest frame written while the child is still compiling an earlier request. The child
# reads nothing while it writes a reply, so a request bigger than what the channel buffers would
# block this process in its write while the child blocks writing the reply this process is not
# reading yet. A socket pair and a POSIX pipe buffer far more than this (a compile request is
# ~1 KiB); a request over it is written once the reply before it has arrived.
_QUEUED_BYTES = 4096


# Signals of a process that broke by itself; any other came from outside (a kill, the system
# out of memory), and is no fault of the compiler's.
# (by name: Windows has no SIGBUS nor SIGTRAP, and the portable path imports this module there)
_CRASH_SIGNALS = frozenset(
    getattr(signal, name)
    for name in ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE", "SIGTRAP")
    if hasattr(signal, name)
)


def crash_message(ended: tuple[int, int] | None, memory_limit: int | None) -> str:
    """What to say about a worker that ended mid-compile with ``ended`` (its return code and
    peak memory in KiB, None if unknown) under ``memory_limit`` bytes of address space."""
    code, peak = ended if ended is not None else (None, 0)
    if code is None:
        how = "an unknown exit status"
    elif code < 0:
        try:
            how = f"signal {signal.Signals(-code).name}"
        except ValueError:
            how = f"signal {-code}"
    else:
        how = f"exit status {code}"
    if code is not None and code < 0 and -code not in _CRASH_SIGNALS:
        return (
            f"the compiler process was killed ({how}) by another process or by the system "
            "(out of memory?); the build goes on without this shader"
        )
    # Slang dies by SIGSEGV when an allocation fails; its peak resident memory is then a
    # sizeable part of the address space it was allowed (about a third, measured).
    if memory_limit is not None and peak << 10 >= memory_limit // 4:
        return (
            f"the compiler ran out of memory ({how}) at {peak >> 10} MiB resident, under the "
            f"limit of {memory_limit >> 20} MiB address space (memory-limit in "
            "[tool.oneshader] raises it); the build goes on without this shader"
        )
    return (
        f"the compiler crashed ({how}) on this shader; the build goes on without it "
        "(a Slang bug: see docs/compiler.md for the known crashes and how to avoid them)"
    )


class _Child:
    """One forked worker as this process sees it: its pid and the two ends of its channel."""

    def __init__(self, pid: int, channel: socket.socket) -> None:
        self.pid = pid
        self.channel = channel
        self.writer: IO[bytes] = channel.makefile("wb")

    def receive(self, deadline: float | None) -> bytes:
        """One frame of the child's (:func:`.wire.receive`), waiting until ``deadline`` (of
        ``time.monotonic``; None: no limit) at most: TimeoutError past it, EOFError when the
        child ended. The wait is the socket's own (no timer thread per compile: starting one
        took the build's thread ~1 ms and a hand-over of the GIL, while the worker idled)."""
        header = self._exactly(HEADER_SIZE, deadline)
        return self._exactly(frame_size(header), deadline)

    def _exactly(self, size: int, deadline: float | None) -> bytes:
        data = bytearray(size)
        view = memoryview(data)
        got = 0
        channel = self.channel
        while got < size:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([channel], [], [], left)[0]:
                    raise TimeoutError
            n = channel.recv_into(view[got:])
            if n == 0:
                raise EOFError
            got += n
        return bytes(data)

    def idle_and_alive(self) -> bool:
        """An idle worker never writes unasked: a readable channel means it has ended."""
        readable, _, _ = select.select([self.channel], [], [], 0)
        return not readable

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.writer.close()
        self.channel.close()


class CompilerWorker:
    """One persistent compiler process; ``compile`` is safe against the child crashing.

    ``timeout`` (seconds, None for none) bounds one compile; a compile that exceeds it is treated
    as a crash (the child is killed). :meth:`submit` and :meth:`receive` keep requests waiting in
    the channel (results in the order of the requests); :meth:`compile` is one request and its
    result. One thread drives a worker (a lock keeps each call whole against :meth:`close`).
    Without a ``zygote`` the worker starts (and closes) a private one.
    """

    queued_bytes = _QUEUED_BYTES  # the largest request written behind another (0: none)

    def __init__(self, timeout: float | None = None, zygote: Zygote | None = None) -> None:
        self._setup(timeout, zygote.memory_limit if zygote is not None else None)
        self._owns_zygote = zygote is None
        self._zygote = zygote if zygote is not None else Zygote()

    def _setup(self, timeout: float | None, memory_limit: int | None) -> None:
        self.timeout = timeout
        self.memory_limit = memory_limit
        self._child: _Child | None = None
        self._lock = threading.Lock()
        self.restarts = 0
        # Requests not answered yet, oldest first (path, options, frame); the first ``_sent``
        # of them are written to the current child; ``_started``: when the oldest's compile
        # started (``time.monotonic``), which its time limit counts from.
        self._pending: collections.deque[tuple[str, CompileOptions, bytes]]
        self._pending = collections.deque()
        self._sent = 0
        self._started = 0.0

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def start(self) -> None:
        """Have a child ready now (the first one waits for the zygote to be warm)."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> _Child:
        """The child, started if there is none; one that ended while idle is replaced (only
        while no request is pending: a pending reply makes the channel readable)."""
        if self._child is not None:
            if self._child.idle_and_alive():
                return self._child
            self._end_child(kill=True)
            self.restarts += 1
        self._child = self._start_child()
        return self._child

    def _start_child(self) -> _Child:
        """A new warm child (forked by the zygote)."""
        pid, channel = self._zygote.fork()
        return _Child(pid, channel)

    def _reap(self, child: _Child) -> tuple[int, int] | None:
        """Wait for ``child`` (killing it after a grace); its return code and peak memory."""
        return self._zygote.wait(child.pid, _REAP_SECONDS)

    def _end_child(self, *, kill: bool) -> tuple[int, int] | None:
        """Close the channel (the child exits at end of file), reap the child; its exit code
        and peak memory (KiB). The requests written to it are unanswered: they are written
        again to the next child."""
        child, self._child = self._child, None
        self._sent = 0
        if child is None:
            return None
        if kill:
            child.kill()
        child.close()
        return self._reap(child)

    def compile(self, path: str, options: CompileOptions) -> CompileResult:
        """One request's result (with no other request pending)."""
        self.submit(path, options)
        return self.receive()

    def submit(self, path: str, options: CompileOptions) -> None:
        """Send a request; :meth:`receive` gives its result, after those of the requests
        submitted before it. Behind a request being compiled it waits in the channel, and the
        child starts it as soon as it has written the reply before."""
        with self._lock:
            if not self._pending:
                self._ensure()
                self._started = time.monotonic()
            self._pending.append((path, options, encode_request(path, options)))
            self._write_pending()

    def _write_pending(self) -> None:
        """Write the pending requests not yet written to the child, in order: the oldest
        always, the others while small enough to wait in the channel (``queued_bytes``). A write
        that fails (the child ended) is found by :meth:`receive`, reading the reply."""
        child = self._child
        if child is None:
            return
        while self._sent < len(self._pending):
            frame = self._pending[self._sent][2]
            if self._sent and len(frame) + HEADER_SIZE > self.queued_bytes:
                return
            with contextlib.suppress(OSError):
                send(child.writer, frame)
            self._sent += 1

    def receive(self) -> CompileResult:
        """The result of the oldest pending request. Its time limit counts from when its compile
        started: when it was sent, or when the reply before it arrived if it waited behind that
        one. If the child ends on it (a crash, the time limit, a reply that is no result), it
        gets that verdict and the requests behind it go to a fresh child, started at the next
        call: a request is never lost nor failed for a crash that was not its own (a fork that
        fails raises from the call that needed it)."""
        with self._lock:
            if not self._pending:
                raise RuntimeError("no request is pending (the worker was closed)")
            if self._child is None:  # the last child ended with these requests written to it
                self._ensure()
                self._started = time.monotonic()
                self._write_pending()
            _, options, _ = self._pending.popleft()
            self._sent -= 1
            return self._reply(options)

    def _reply(self, options: CompileOptions) -> CompileResult:
        """The result of the request just taken off ``_pending`` (written to the child): the
        child's reply, or what ended the child."""
        child = self._child
        assert child is not None
        deadline = None if self.timeout is None else self._started + self.timeout
        timed_out = False
        try:
            reply = child.receive(deadline)
        except TimeoutError:
            timed_out = True
            child.kill()
            reply = None
        except (EOFError, OSError):
            reply = None
        if reply is None:
            return self._crashed(options, timed_out)
        self._started = time.monotonic()  # the next request's compile began with this reply
        self._write_pending()  # one too big to wait in the channel goes now
        try:
            return decode_result(reply)
        except ValueError as err:
            return self._garbled(options, err)

    def _garbled(self, options: CompileOptions, err: ValueError) -> CompileResult:
        """A reply that is no compile result: not oneshader's worker (whatever holds the compile
        server's socket can answer), or a bug; it is not read further, and the child goes."""
        self._end_child(kill=True)
        self.restarts += 1
        message = (
            f"the compiler process answered with something that is not a compile result ({err}):"
            " is another program listening at the compile server's socket? (--no-server or "
            "ONESHADER_SERVER=0 builds without it)"
        )
        diag = Diagnostic(
            options.source_name or "<shader>", 0, 0, Severity.ERROR, message, Code.WORKER_FAILED
        )
        return CompileResult(diagnostics=(diag,), crashed=True)

    def _crashed(self, options: CompileOptions, timed_out: bool) -> CompileResult:
        ended = self._end_child(kill=False)
        self.restarts += 1
        name = options.source_name or "<shader>"
        if timed_out:
            message = (
                f"the compile took longer than the time limit of {self.timeout:g} s and was "
                "stopped (time-limit in [tool.oneshader] sets it)"
            )
            diag = Diagnostic(name, 0, 0, Severity.ERROR, message, Code.TIME_LIMIT)
        else:
            message = crash_message(ended, self.memory_limit)
            diag = Diagnostic(name, 0, 0, Severity.ERROR, message, Code.COMPILER_CRASHED)
        return CompileResult(diagnostics=(diag,), crashed=True)

    def close(self) -> None:
        """End the child; requests still pending are dropped, and a child busy with them is
        killed (no one would read its replies)."""
        with self._lock:
            busy = bool(self._pending)
            self._pending.clear()
            if self._child is not None:
                if not busy:
                    with contextlib.suppress(OSError):
                        send(self._child.writer, b"")
                self._end_child(kill=busy)
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
