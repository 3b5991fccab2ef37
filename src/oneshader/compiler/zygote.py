"""The warm process every compiler worker is forked from, so that Slang's start-up is paid once.

A worker started from nothing costs ~0.3-0.4 s before its first compile (Python, the driver's
imports, Slang's global session: Slang issue #7338), as much as five compiles. The zygote pays
that once, then forks a ready worker per request in a few milliseconds: ``-j N`` starts N workers
for the price of one, and a worker lost to a Slang crash is replaced at once. It never compiles
a user's shader itself, so no shader can crash it.

A forked worker is the zygote's child, not the caller's, so only the zygote can read its exit
status (the signal in a crash report): the caller asks with :meth:`Zygote.wait`. The zygote reaps
nothing unasked, so a dead worker's pid stays reserved (a zombie) until then, and a kill sent by
the caller cannot reach a recycled pid.

Protocol, on a SOCK_SEQPACKET socket (messages keep their bounds and can carry descriptors):
``fork`` carrying the worker's end of a fresh socket pair, answered with the worker's pid;
``wait PID SECONDS``, answered with its return code as ``subprocess`` gives it (negative: the
signal) or ``none``. At end of file the zygote reaps what is left and exits.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["Zygote"]

_REAP_GRACE_SECONDS = 2.0


class Zygote:
    """The caller's side: starts the zygote on first use (and again if it died), thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self.starts = 0  # zygote processes started so far

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def fork(self) -> tuple[int, socket.socket]:
        """A new warm worker: its pid and this process's end of its channel. Blocks until the
        zygote is warm; OSError if no zygote can be started."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self._lock:
                for _ in range(2):  # a zygote that died is replaced once
                    control = self._ensure()
                    try:
                        socket.send_fds(control, [b"fork"], [theirs.fileno()])
                        reply = control.recv(64)
                    except OSError:
                        reply = b""
                    if reply:
                        return int(reply), ours
                    self._stop()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.close()
        raise OSError("the compiler's zygote process exits at once (is the compiler installed?)")

    def wait(self, pid: int, timeout: float) -> int | None:
        """Reap worker ``pid``, killing it if it has not ended within ``timeout`` seconds; its
        return code, or None when it cannot be known (the zygote is gone)."""
        with self._lock:
            if self._control is None:
                return None
            try:
                self._control.send(f"wait {pid} {timeout}".encode())
                reply = self._control.recv(64)
            except OSError:
                return None
        return None if reply in (b"", b"none") else int(reply)

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _ensure(self) -> socket.socket:
        if self._control is not None and self._proc is not None and self._proc.poll() is None:
            return self._control
        self._stop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # The child imports this very oneshader, installed or not, and finds everything where
        # this process does: it gets this process's sys.path and skips the site module (-S),
        # whose .pth files (some import packages) cost a start-up ~15 ms for nothing.
        package_root = str(Path(__file__).resolve().parents[2])
        paths = dict.fromkeys(p for p in (package_root, *sys.path) if p)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-S", "-m", "oneshader.compiler.zygote"],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                env=env,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._control = ours
        self.starts += 1
        return ours

    def _stop(self) -> None:
        control, self._control = self._control, None
        proc, self._proc = self._proc, None
        if control is not None:
            with contextlib.suppress(OSError):
                control.shutdown(socket.SHUT_WR)  # end of file: it reaps its workers and exits
                control.settimeout(_REAP_GRACE_SECONDS + 3)
                control.recv(64)  # returns when the zygote has exited (or timed out)
            control.close()
        if proc is not None:
            try:
                proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


# --- the zygote process --------------------------------------------------------------------


def _ends_within(pid: int, timeout: float) -> bool:
    """Whether child ``pid`` has ended, or does within ``timeout`` seconds (woken at its exit
    through a pidfd where the kernel has them, else by polling)."""
    if hasattr(os, "pidfd_open"):
        fd = os.pidfd_open(pid)
        try:
            return bool(select.select([fd], [], [], timeout)[0])
        finally:
            os.close(fd)
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while not os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
    return True


def _reap(pid: int, timeout: float) -> int | None:
    """Wait for child ``pid`` (SIGKILL after ``timeout`` s); its return code, None if not ours."""
    try:
        if not _ends_within(pid, timeout):
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    except (ChildProcessError, ProcessLookupError):
        return None
    return os.waitstatus_to_exitcode(status)


def _main() -> None:
    from oneshader.compiler import worker

    # ^C reaches the whole process group; the caller decides what it means (it closes us).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # workers must not hold the control socket; stdin is nothing of theirs
    os.close(devnull)
    worker.prepare()  # single-threaded again when it returns: safe to fork
    children: set[int] = set()
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(control, 256, 4)
        except OSError:
            break
        if not message:
            break
        verb, *args = message.decode("ascii", "replace").split()
        if verb == "fork" and len(fds) == 1:
            pid = os.fork()
            if pid == 0:
                control.close()
                worker.serve(fds[0])  # never returns
            os.close(fds[0])
            children.add(pid)
            reply = str(pid)
        elif verb == "wait" and len(args) == 2 and not fds:
            pid = int(args[0])
            code = _reap(pid, float(args[1])) if pid in children else None
            children.discard(pid)
            reply = "none" if code is None else str(code)
        else:  # not from oneshader: nothing to do with it
            for fd in fds:
                os.close(fd)
            reply = "none"
        control.send(reply.encode())
    for pid in children:
        _reap(pid, _REAP_GRACE_SECONDS)
    os._exit(0)


if __name__ == "__main__":
    _main()
