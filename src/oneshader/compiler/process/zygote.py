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
fields separated by NUL: ``fork, cwd`` carrying the worker's end of a fresh socket pair, answered
with the worker's pid; ``wait, pid, seconds``, answered with its return code as ``subprocess``
gives it (negative: the signal) or ``none``. At end of file the caller's workers are reaped as
they end; a private zygote then exits.
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["Zygote", "package_root", "peer_credentials", "zygote_command"]

_REAP_GRACE_SECONDS = 2.0
_ORPHAN_SECONDS = 30.0  # a worker whose caller has gone is killed after this long


def package_root() -> str:
    """The folder this oneshader is imported from."""
    return str(Path(__file__).resolve().parents[2])


def zygote_command(*args: str) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of a zygote process for this very oneshader.

    The child imports this oneshader, installed or not, and finds everything where this process
    does: it gets this process's sys.path, but for its first entry (the script's folder, or the
    current folder under ``-m``: nothing a compiler needs), and skips the site module (-S), whose
    .pth files (some import packages) cost a start-up ~15 ms for nothing."""
    paths = dict.fromkeys(p for p in (package_root(), *sys.path[1:]) if p)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    return [sys.executable, "-S", "-m", "oneshader.compiler.process.zygote", *args], env


class Zygote:
    """The caller's side, thread-safe. ``connect`` gives the control connection: by default a
    private zygote started on first use (and again if it died); the compile server passes its
    own (connect to the resident one, starting it if none listens), and when that fails the
    caller gets a private zygote all the same."""

    def __init__(self, connect: Callable[[], socket.socket] | None = None) -> None:
        self._lock = threading.Lock()
        self._connect = connect
        self._proc: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self.starts = 0  # connections made so far (private: zygote processes started)

    @property
    def pid(self) -> int | None:
        """The private zygote's pid (None for a resident one, or before the first fork)."""
        return self._proc.pid if self._proc is not None else None

    def fork(self) -> tuple[int, socket.socket]:
        """A new warm worker: its pid and this process's end of its channel. Blocks until the
        zygote is warm; OSError if no zygote can be reached."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        request = b"fork\0" + os.fsencode(os.getcwd())
        try:
            with self._lock:
                for _ in range(2):  # a zygote that died is replaced once
                    control = self._ensure()
                    try:
                        socket.send_fds(control, [request], [theirs.fileno()])
                        reply = control.recv(64)
                    except OSError:
                        reply = b""
                    if reply and reply != b"none":
                        return int(reply), ours
                    self._stop()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.close()
        raise OSError("the compiler's zygote process ended at once (is the compiler installed?)")

    def wait(self, pid: int, timeout: float) -> int | None:
        """Reap worker ``pid``, killing it if it has not ended within ``timeout`` seconds; its
        return code, or None when it cannot be known (the zygote is gone)."""
        with self._lock:
            if self._control is None:
                return None
            try:
                self._control.send(f"wait\0{pid}\0{timeout}".encode())
                reply = self._control.recv(64)
            except OSError:
                return None
        return None if reply in (b"", b"none") else int(reply)

    def close(self) -> None:
        with self._lock:
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


def peer_credentials(connection: socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end of a Unix socket (Linux's SO_PEERCRED;
    for a listening socket's peer, of the process that called ``listen``)."""
    creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    pid, uid, gid = (int.from_bytes(creds[i : i + 4], sys.byteorder) for i in (0, 4, 8))
    return pid, uid, gid


def _ends_within(pid: int, timeout: float) -> bool:
    """Whether child ``pid`` has ended, or does within ``timeout`` seconds (woken at its exit
    through a pidfd)."""
    fd = os.pidfd_open(pid)
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def _reap(pid: int, timeout: float) -> int | None:
    """Wait for child ``pid`` (SIGKILL after ``timeout`` s); its return code, None if not ours."""
    try:
        if not _ends_within(pid, timeout):
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    except (ChildProcessError, ProcessLookupError):
        return None
    return os.waitstatus_to_exitcode(status)


class _Serving:
    """The zygote's state: its callers' connections and the workers each asked for."""

    def __init__(self, listener: socket.socket | None, idle_seconds: float) -> None:
        self.listener = listener
        self.idle_seconds = idle_seconds
        self.selector = selectors.DefaultSelector()
        self.workers: dict[socket.socket, set[int]] = {}
        self.orphans: dict[int, float] = {}  # pid -> when it is killed, its caller gone
        if listener is not None:
            self.selector.register(listener, selectors.EVENT_READ)

    def add(self, connection: socket.socket) -> None:
        self.workers[connection] = set()
        self.selector.register(connection, selectors.EVENT_READ)

    def drop(self, connection: socket.socket) -> None:
        deadline = time.monotonic() + _ORPHAN_SECONDS
        for pid in self.workers.pop(connection):
            self.orphans[pid] = deadline
        self.selector.unregister(connection)
        connection.close()

    def accept(self) -> None:
        assert self.listener is not None
        try:
            connection, _ = self.listener.accept()
        except OSError:  # the caller gave up before we answered
            return
        if peer_credentials(connection)[1] != os.getuid():
            connection.close()  # only the user who owns the server may use it
            return
        self.add(connection)

    def answer(self, connection: socket.socket) -> bool:
        """Serve one request; False when the caller has gone."""
        try:
            message, fds, _flags, _address = socket.recv_fds(connection, 4096, 4)
        except OSError:
            message, fds = b"", []
        if not message:
            for fd in fds:
                os.close(fd)
            return False
        verb, *args = message.split(b"\0")
        reply = b"none"  # also the answer to what is not oneshader's, or cannot be done now
        try:
            if verb == b"fork" and len(args) == 1 and len(fds) == 1:
                pid = self.fork(fds[0], args[0])
                fds.clear()
                self.workers[connection].add(pid)
                reply = str(pid).encode()
            elif verb == b"wait" and len(args) == 2 and not fds:
                pid, seconds = int(args[0]), float(args[1])
                if pid in self.workers[connection]:
                    self.workers[connection].discard(pid)
                    code = _reap(pid, seconds)
                    reply = b"none" if code is None else str(code).encode()
        except (OSError, ValueError):  # fork refused (no memory, no pids) or a malformed number
            pass
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            connection.send(reply)
        return True

    def fork(self, fd: int, cwd: bytes) -> int:
        from oneshader.compiler.process import worker_child

        home = os.getcwd()
        with contextlib.suppress(OSError):
            os.chdir(os.fsdecode(cwd))  # relative paths mean to the worker what they meant to
        try:  # the caller (changed here, before the fork, so it holds from the worker's start)
            pid = os.fork()
        except BaseException:
            os.chdir(home)
            raise
        if pid == 0:
            for key in list(self.selector.get_map().values()):
                with contextlib.suppress(OSError):
                    key.fileobj.close()  # type: ignore[union-attr]
            worker_child.serve(fd)  # never returns
        os.chdir(home)
        os.close(fd)
        return pid

    def reap_orphans(self) -> None:
        now = time.monotonic()
        for pid, deadline in list(self.orphans.items()):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if not done and now >= deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                continue
            if done:
                del self.orphans[pid]

    def run(self, on_idle: Callable[[], None]) -> None:
        idle_since = time.monotonic()
        while True:
            timeout = None if self.listener is None and not self.orphans else 1.0
            for key, _ in self.selector.select(timeout):
                if key.fileobj is self.listener:
                    self.accept()
                    continue
                connection = key.fileobj
                assert isinstance(connection, socket.socket)
                if not self.answer(connection):
                    self.drop(connection)
                    if self.listener is None:  # a private zygote: its one caller has gone
                        self.finish()
                        return
            self.reap_orphans()
            if self.workers or self.orphans:
                idle_since = time.monotonic()
            elif self.listener is not None and time.monotonic() - idle_since > self.idle_seconds:
                on_idle()
                return

    def finish(self) -> None:
        for pid in list(self.orphans):
            _reap(pid, _REAP_GRACE_SECONDS)
        self.orphans.clear()


def _listen_alone(path: str) -> socket.socket:
    """Listen on ``path`` in a process of its own: the one started returns (exits) once the
    socket accepts connections, from the process that serves them (its peer credentials name
    the server). The socket is its owner's alone from the start."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    old = os.umask(0o077)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    ready, tell = os.pipe()
    if os.fork():
        os.close(tell)
        os._exit(0 if os.read(ready, 1) else 1)
    os.close(ready)
    listener.listen(16)
    os.write(tell, b"1")
    os.close(tell)
    return listener


def _remove_if_ours(path: str, ident: tuple[int, int]) -> None:
    """Remove the socket file, unless a newer server has put its own there."""
    with contextlib.suppress(OSError):
        st = os.stat(path)
        if (st.st_dev, st.st_ino) == ident:
            os.unlink(path)


def _main(argv: list[str]) -> None:
    from oneshader.compiler.process import worker_child

    # ^C reaches the whole process group; the caller decides what it means (and closes us).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if argv[:1] == ["--listen"] and len(argv) == 4 and argv[2] == "--idle":
        path, idle = argv[1], float(argv[3])
        listener = _listen_alone(path)
        st = os.stat(path)
        serving = _Serving(listener, idle)
        worker_child.prepare()  # single-threaded again when it returns: safe to fork
        serving.run(on_idle=lambda: _remove_if_ours(path, (st.st_dev, st.st_ino)))
    else:
        control = socket.socket(fileno=os.dup(0))
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)  # workers must not hold the control socket
        os.close(devnull)
        serving = _Serving(None, 0.0)
        serving.add(control)
        worker_child.prepare()
        serving.run(on_idle=lambda: None)
    os._exit(0)


if __name__ == "__main__":
    _main(sys.argv[1:])
