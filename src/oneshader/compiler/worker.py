"""A compiler in its own process, so that a crash of Slang costs one shader, not the build.

Slang segfaults on some inputs (docs/compiler.md lists the known ones), inside ``spCompile``
itself. :class:`CompilerWorker` keeps one child process with one Slang session (the session costs
~160 ms, so it is reused across requests) and talks to it over a pipe with pickled frames. If the
child dies mid-request, the request returns ``crashed=True`` with an error diagnostic naming the
signal, and the next request starts a fresh child.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import IO

from oneshader.compiler.api import CompileOptions, CompileResult
from oneshader.diagnostics import Diagnostic, Severity

__all__ = ["CompilerWorker"]

_HEADER = struct.Struct("<Q")


def _send(stream: IO[bytes], obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> object:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class CompilerWorker:
    """One persistent compiler process; ``compile`` is safe against the child crashing.

    ``timeout`` (seconds, None for none) bounds one compile; a compile that exceeds it is treated
    as a crash (the child is killed). One worker serves one request at a time (a lock holds that).
    """

    def __init__(self, timeout: float | None = None) -> None:
        self.timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self.restarts = 0

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the child now (it warms up its Slang session while the caller goes on)."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        if self._proc is not None:
            self._reap()
            self.restarts += 1
        # The child imports this very oneshader, installed or not, and finds everything where this
        # process does: it gets this process's sys.path and skips the site module (-S), whose
        # .pth files (some import packages) cost a start-up ~15 ms for nothing.
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        paths = dict.fromkeys(p for p in (package_root, *sys.path) if p)
        env["PYTHONPATH"] = os.pathsep.join(paths)
        self._proc = subprocess.Popen(
            [sys.executable, "-S", "-m", "oneshader.compiler.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            env=env,
        )
        return self._proc

    def _reap(self) -> None:
        proc = self._proc
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def compile(self, path: str, options: CompileOptions) -> CompileResult:
        with self._lock:
            proc = self._ensure()
            assert proc.stdin is not None and proc.stdout is not None
            timer: threading.Timer | None = None
            if self.timeout is not None:
                timer = threading.Timer(self.timeout, proc.kill)
                timer.start()
            try:
                _send(proc.stdin, (path, options))
                result = _receive(proc.stdout)
            except (EOFError, BrokenPipeError, OSError, pickle.UnpicklingError):
                return self._crashed(proc, options)
            finally:
                if timer is not None:
                    timer.cancel()
            if not isinstance(result, CompileResult):
                return self._crashed(proc, options)
            return result

    def _crashed(self, proc: subprocess.Popen[bytes], options: CompileOptions) -> CompileResult:
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        if code < 0:
            try:
                how = f"signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"signal {-code}"
        else:
            how = f"exit status {code}"
        self._reap()
        self._proc = None
        self.restarts += 1
        message = (
            f"the compiler crashed ({how}) on this shader; the build goes on without it "
            "(a Slang bug: see docs/compiler.md for the known crashes and how to avoid them)"
        )
        name = options.source_name or "<shader>"
        diag = Diagnostic(name, 0, 0, Severity.ERROR, message, "OS9001")
        return CompileResult(diagnostics=(diag,), crashed=True)

    def close(self) -> None:
        with self._lock:
            proc = self._proc
            if proc is None:
                return
            if proc.poll() is None and proc.stdin is not None:
                with contextlib.suppress(OSError):
                    _send(proc.stdin, None)
            self._reap()
            self._proc = None

    def __enter__(self) -> CompilerWorker:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()


def _warm_up() -> None:
    from oneshader.compiler import _slang

    with contextlib.suppress(Exception):  # a missing compiler is reported by the first compile
        _slang.library().session.bit_length()


def _prepare() -> None:
    """What every compile imports on first use (the verifier and its readers), imported while
    Slang's session is being made rather than during the first request."""
    import oneshader.compiler.crosscheck  # noqa: F401


def _serve() -> None:
    """The child: frames in on stdin, frames out on a private copy of stdout (native code that
    prints goes to stderr, never into the protocol)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    # The Slang session (loading Slang's core module, ~180 ms) is made on a thread: ctypes
    # releases the GIL in the call, so the driver's imports and the wait for the first request
    # run meanwhile. The first compile joins it (the session is not thread-safe).
    warm = threading.Thread(target=_warm_up, name="slang-session", daemon=True)
    warm.start()
    from oneshader.compiler.driver import compile_file

    _prepare()
    joined = False
    while True:
        try:
            request = _receive(inp)
        except EOFError:
            return
        if request is None:
            return
        assert isinstance(request, tuple)
        path: str = request[0]
        options: CompileOptions = request[1]
        if not joined:
            warm.join()
            joined = True
        try:
            result = compile_file(path, options)
        except Exception as err:  # a bug in oneshader: one shader fails, the worker stays
            name = options.source_name or path
            message = f"internal error in the compiler: {type(err).__name__}: {err}"
            diag = Diagnostic(name, 0, 0, Severity.ERROR, message, "OS9002")
            result = CompileResult(diagnostics=(diag,))
        _send(out, result)


if __name__ == "__main__":
    _serve()
