"""The zygote process (the caller's side is :mod:`.zygote`): it serves fork and wait requests
of its callers, forks each worker warm (:mod:`.worker_child`), and reaps them."""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable

from oneshader.compiler.process.zygote import REAP_GRACE_SECONDS, peer_credentials

_ORPHAN_SECONDS = 30.0  # a worker whose caller has gone is killed after this long


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
            _reap(pid, REAP_GRACE_SECONDS)
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
