"""The warm process every compiler worker is forked from, so that Slang's start-up is paid once.

A worker started from nothing costs ~0.3-0.4 s before its first compile (Python, the driver's
imports, Slang's global session: Slang issue #7338), as much as five compiles. The zygote pays
that once, then forks a ready worker per request in a few milliseconds: ``-j N`` starts N workers
for the price of one, and a worker lost to a Slang crash is replaced at once. It never compiles
a user's shader itself, so no shader can crash it.

A zygote is private (a child of its caller, serving it alone, ending with it) or resident (the
compile server of :mod:`.server`: it outlives the build that started it and serves later ones).

A forked worker is the zygote's child, not the caller's, so only the zygote can read its exit
status (the signal in a crash report): the caller asks with :meth:`Zygote.wait`. The zygote reaps
a worker unasked only once the caller that asked for it has gone, so a pid the caller may still
kill (a time-out) is never recycled under it.

Protocol, on a SOCK_SEQPACKET connection (messages keep their bounds and carry descriptors),
fields separated by NUL: ``fork, cwd, limits`` carrying the worker's end of a fresh socket pair,
answered with the worker's pid (the worker runs in ``cwd`` under the caller's resource limits);
``wait, pid, seconds``, answered with its return code as ``subprocess`` gives it (negative: the
signal) and its peak memory (KiB), or ``none``; ``retire`` (a newer server to an older one):
stop listening, end when the callers have gone. At end of file the caller's workers are killed
at once (a killed build's compiles stop with it) and reaped; a private zygote then exits.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["Zygote", "package_root", "peer_credentials", "zygote_command"]

REAP_GRACE_SECONDS = 2.0  # how long the zygote waits for a worker at its end before killing it


def package_root() -> str:
    """The folder this oneshader is imported from."""
    return str(Path(__file__).resolve().parents[2])


def zygote_command(*args: str) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of a zygote process for this very oneshader."""
    return python_command("oneshader.compiler.process.zygote_child", *args)


def python_command(module: str, *args: str) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of a process running ``module`` of this very oneshader.

    The child imports this oneshader, installed or not, and finds everything where this process
    does: it gets this process's sys.path, but for its first entry (the script's folder, or the
    current folder under ``-m``: nothing a compiler needs), and skips the site module (-S), whose
    .pth files (some import packages) cost a start-up ~15 ms for nothing."""
    paths = dict.fromkeys(p for p in (package_root(), *sys.path[1:]) if p)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    return [sys.executable, "-S", "-m", module, *args], env


class Zygote:
    """The caller's side, thread-safe. ``connect`` gives the control connection: by default a
    private zygote started on first use (and again if it died); the compile server passes its
    own (connect to the resident one, starting it if none listens), and when that fails the
    caller gets a private zygote all the same."""

    def __init__(
        self,
        connect: Callable[[], socket.socket] | None = None,
        memory_limit: int | None = None,
    ) -> None:
        """``memory_limit``: the address space (bytes) a worker may use, on top of this
        process's own limits, which every worker gets (a resident zygote's are its own)."""
        self._lock = threading.Lock()
        self._connect = connect
        self.memory_limit = memory_limit
        self._proc: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self.starts = 0  # connections made so far (private: zygote processes started)
        self.forks = 0  # workers asked for so far

    @property
    def pid(self) -> int | None:
        """The private zygote's pid (None for a resident one, or before the first fork)."""
        return self._proc.pid if self._proc is not None else None

    def fork(self) -> tuple[int, socket.socket]:
        """A new warm worker: its pid and this process's end of its channel. Blocks until the
        zygote is warm; OSError if no zygote can be reached."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        request = b"fork\0" + os.fsencode(os.getcwd()) + b"\0" + caller_limits(self.memory_limit)
        try:
            with self._lock:
                self.forks += 1
                for _ in range(2):  # a zygote that died is replaced once
                    control = self._ensure()
                    try:
                        socket.send_fds(control, [request], [theirs.fileno()])
                        reply = control.recv(64)
                    except OSError:
                        reply = b""
                    if reply == b"none":
                        # refused (no memory, no pids): the zygote lives on, and so do the
                        # workers it forked before (closing its connection would kill them)
                        raise OSError("the compiler's zygote could not fork a worker")
                    if reply:
                        return int(reply), ours
                    self._stop()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.close()
        raise OSError("the compiler's zygote process ended at once (is the compiler installed?)")

    def wait(self, pid: int, timeout: float) -> tuple[int, int] | None:
        """Reap worker ``pid``, killing it if it has not ended within ``timeout`` seconds; its
        return code and peak resident memory (KiB), or None when they cannot be known (the
        zygote is gone)."""
        with self._lock:
            if self._control is None:
                return None
            try:
                self._control.send(f"wait\0{pid}\0{timeout}".encode())
                reply = self._control.recv(64)
            except OSError:
                return None
        try:
            code, peak = reply.split(b"\0")
            return int(code), int(peak)
        except ValueError:  # "none", or not a zygote's answer
            return None

    def start(self) -> None:
        """Start the zygote (or connect to it) now, without waiting for it to be warm: the
        first :meth:`fork` waits for that."""
        with self._lock:
            self._ensure()

    def close(self) -> None:
        with self._lock:
            self._stop()

    def abandon(self) -> None:
        """End a private zygote that forked no worker at once (no workers to reap, so no wait
        for it to be warm and read its end of file): one started for a build that turned out
        to need none."""
        with self._lock:
            if self._proc is not None and self.forks == 0:
                with contextlib.suppress(OSError):
                    self._proc.kill()
            self._stop()

    def _ensure(self) -> socket.socket:
        if self._control is not None and (self._proc is None or self._proc.poll() is None):
            return self._control
        self._stop()
        control = None
        if self._connect is not None:
            try:
                control = self._connect()
            except OSError:  # no server can be reached or started: a zygote of this caller's
                self._connect = None
        self._control = control or self._start_private()
        self.starts += 1
        return self._control

    def _start_private(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv, env = zygote_command()
        try:
            self._proc = subprocess.Popen(
                argv,
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
        return ours

    def _stop(self) -> None:
        control, self._control = self._control, None
        proc, self._proc = self._proc, None
        if control is not None:
            if proc is not None:  # a private zygote: wait until it has reaped its workers
                with contextlib.suppress(OSError):
                    control.shutdown(socket.SHUT_WR)  # end of file: it reaps and exits
                    control.settimeout(REAP_GRACE_SECONDS + 3)
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


# The limits a worker takes from its caller: what `ulimit` set for the build holds in its
# workers, wherever they were forked.
if sys.platform != "win32":  # (the module stays importable there: the portable path uses it)
    import resource

    _LIMITS = (
        resource.RLIMIT_AS,
        resource.RLIMIT_DATA,
        resource.RLIMIT_CPU,
        resource.RLIMIT_FSIZE,
        resource.RLIMIT_NOFILE,
        resource.RLIMIT_STACK,
        resource.RLIMIT_CORE,
    )


def caller_limits(memory_limit: int | None) -> bytes:
    """This process's limits, the address space at most ``memory_limit``, as a fork request
    carries them: ``resource=soft,hard`` joined by ``;`` (-1 for none)."""
    parts = []
    for res in _LIMITS:
        soft, hard = resource.getrlimit(res)
        if res == resource.RLIMIT_AS and memory_limit is not None:
            soft = memory_limit if soft == resource.RLIM_INFINITY else min(soft, memory_limit)
        parts.append(f"{res}={soft},{hard}")
    return ";".join(parts).encode()


def _lower(limit: int, bound: int) -> int:
    if bound == resource.RLIM_INFINITY:
        return limit
    return bound if limit == resource.RLIM_INFINITY else min(limit, bound)


def apply_limits(text: bytes) -> None:
    """In a forked worker: take the caller's limits (never above the zygote's own hard ones,
    which an unprivileged process cannot raise). ValueError for a malformed list."""
    for item in text.split(b";") if text else ():
        res_s, _, pair = item.partition(b"=")
        soft_s, _, hard_s = pair.partition(b",")
        res, soft, hard = int(res_s), int(soft_s), int(hard_s)
        if res not in _LIMITS:
            raise ValueError(f"not a limit a caller passes: {res}")
        hard = _lower(hard, resource.getrlimit(res)[1])
        resource.setrlimit(res, (_lower(soft, hard), hard))


# --- both sides -------------------------------------------------------------------------


def peer_credentials(connection: socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end of a Unix socket (Linux's SO_PEERCRED;
    for a listening socket's peer, of the process that called ``listen``)."""
    creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    pid, uid, gid = (int.from_bytes(creds[i : i + 4], sys.byteorder) for i in (0, 4, 8))
    return pid, uid, gid
