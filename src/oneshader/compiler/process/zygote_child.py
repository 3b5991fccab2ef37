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
from pathlib import Path

from oneshader.compiler.process.folder import address, open_folder
from oneshader.compiler.process.zygote import REAP_GRACE_SECONDS, apply_limits, peer_credentials

_ORPHAN_SECONDS = 30.0  # a worker whose caller has gone is killed after this long


def _ends_within(pid: int, timeout: float) -> bool:
    """Whether child ``pid`` has ended, or does within ``timeout`` seconds (woken at its exit
    through a pidfd)."""
    fd = os.pidfd_open(pid)
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def _reap(pid: int, timeout: float) -> tuple[int, int] | None:
    """Wait for child ``pid`` (SIGKILL after ``timeout`` s); its return code and peak resident
    memory in KiB, None if not ours."""
    try:
        if not _ends_within(pid, timeout):
            os.kill(pid, signal.SIGKILL)
        _, status, usage = os.wait4(pid, 0)
    except (ChildProcessError, ProcessLookupError):
        return None
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss


class _Serving:
    """The zygote's state: its callers' connections and the workers each asked for."""

    def __init__(
        self,
        listener: socket.socket | None,
        idle_seconds: float,
        stop_listening: Callable[[], None] = lambda: None,
        still_ours: Callable[[], bool] = lambda: True,
    ) -> None:
        self.listener = listener
        self.idle_seconds = idle_seconds
        self.stop_listening = stop_listening  # removes the socket file (if still ours)
        self.still_ours = still_ours  # whether the socket file is still the one we listen on
        self.selector = selectors.DefaultSelector()
        self.workers: dict[socket.socket, set[int]] = {}
        self.orphans: dict[int, float] = {}  # pid -> when it is killed, its caller gone
        if listener is not None:
            self.selector.register(listener, selectors.EVENT_READ)

    def add(self, connection: socket.socket) -> None:
        self.workers[connection] = set()
        self.selector.register(connection, selectors.EVENT_READ)

    def drop(self, connection: socket.socket) -> None:
        """A caller has gone (closed, or killed): its workers are killed now, not left
        compiling for nobody, and reaped as they end."""
        deadline = time.monotonic() + _ORPHAN_SECONDS
        for pid in self.workers.pop(connection):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
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
            if verb == b"fork" and len(args) == 2 and len(fds) == 1:
                pid = self.fork(fds[0], args[0], args[1])
                fds.clear()
                self.workers[connection].add(pid)
                reply = str(pid).encode()
            elif verb == b"wait" and len(args) == 2 and not fds:
                pid, seconds = int(args[0]), float(args[1])
                if pid in self.workers[connection]:
                    self.workers[connection].discard(pid)
                    ended = _reap(pid, seconds)
                    reply = b"none" if ended is None else b"%d\0%d" % ended
            elif verb == b"retire" and not args and not fds and self.listener is not None:
                self.retire()
                reply = b"ok"
        except (OSError, ValueError):  # fork refused (no memory, no pids) or a malformed number
            pass
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            connection.send(reply)
        return True

    def retire(self) -> None:
        """Stop taking callers (a newer server has come); the ones here finish their builds."""
        assert self.listener is not None
        self.selector.unregister(self.listener)
        self.listener.close()
        self.listener = None
        self.stop_listening()

    def fork(self, fd: int, cwd: bytes, limits: bytes) -> int:
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
            try:
                apply_limits(limits)
            except (ValueError, OSError):
                os._exit(3)  # the caller's limits cannot be kept: no compile without them
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

    def run(self) -> None:
        idle_since = time.monotonic()
        while True:
            timeout = None if self.listener is None and not self.orphans else 1.0
            for key, _ in self.selector.select(timeout):
                if key.fileobj is self.listener:
                    self.accept()
                    continue
                connection = key.fileobj
                if connection not in self.workers:  # the listener, closed by a retire just now
                    continue
                assert isinstance(connection, socket.socket)
                if not self.answer(connection):
                    self.drop(connection)
                    if self.listener is None and not self.workers:  # private, or retired:
                        self.finish()  # its callers have gone
                        return
            self.reap_orphans()
            if self.listener is not None and not self.still_ours():
                # the socket file was removed or replaced: no build can reach this server any
                # more, so it ends as soon as the builds it serves have (not at its idle time)
                self.retire()
                if not self.workers:
                    self.finish()
                    return
            if self.workers or self.orphans:
                idle_since = time.monotonic()
            elif self.listener is not None and time.monotonic() - idle_since > self.idle_seconds:
                self.stop_listening()
                return

    def finish(self) -> None:
        for pid in list(self.orphans):
            _reap(pid, REAP_GRACE_SECONDS)
        self.orphans.clear()


def _listen_alone(folder: int, name: str) -> socket.socket:
    """Listen on ``name`` in the folder open as ``folder``, in a process of its own: the one
    started returns (exits) once the socket accepts connections, from the process that serves
    them (its peer credentials name the server). The socket is its owner's alone from the
    start."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    old = os.umask(0o077)
    try:
        listener.bind(address(folder, name))
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


def _socket_file(folder: int, name: str) -> tuple[Callable[[], None], Callable[[], bool]]:
    """What removes the socket file ``name``, unless another file has taken its place (a newer
    server's), and what tells whether it is still there, the one this server listens on."""
    st = os.stat(name, dir_fd=folder, follow_symlinks=False)
    ident = (st.st_dev, st.st_ino)

    def ours() -> bool:
        try:
            st = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == ident

    def remove() -> None:
        with contextlib.suppress(OSError):
            if ours():
                os.unlink(name, dir_fd=folder)

    return remove, ours


def _retire_others(folder: int, name: str) -> int:
    """Ask the other servers in the folder (older toolchains of this user: an upgrade or an
    edit of oneshader) to stop listening and end once their builds have; how many agreed."""
    retired = 0
    for other in os.listdir(folder):
        if other == name or not (other.startswith("zygote-") and other.endswith(".sock")):
            continue
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as control:
            try:
                control.settimeout(5)
                control.connect(address(folder, other))
                if peer_credentials(control)[1] != os.getuid():
                    continue
                control.send(b"retire")
                retired += control.recv(64) == b"ok"
            except OSError:
                continue
    return retired


def _main(argv: list[str]) -> None:
    from oneshader.compiler.process import worker_child

    # ^C reaches the whole process group; the caller decides what it means (and closes us).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if argv[:1] == ["--listen"] and len(argv) == 4 and argv[2] == "--idle":
        path, idle = Path(argv[1]), float(argv[3])
        folder = open_folder(path.parent)  # checked as the caller checked it
        listener = _listen_alone(folder, path.name)
        serving = _Serving(listener, idle, *_socket_file(folder, path.name))
        worker_child.prepare()  # single-threaded again when it returns: safe to fork
        _retire_others(folder, path.name)
        serving.run()
    else:
        control = socket.socket(fileno=os.dup(0))
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)  # workers must not hold the control socket
        os.close(devnull)
        serving = _Serving(None, 0.0)
        serving.add(control)
        worker_child.prepare()
        serving.run()
    os._exit(0)


if __name__ == "__main__":
    _main(sys.argv[1:])
