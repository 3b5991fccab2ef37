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
import resource
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

from oneshader.compiler.process.folder import address, open_folder

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


# The limits a worker takes from its caller: what `ulimit` set for the build holds in its
# workers, wherever they were forked.
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
    ) -> None:
        self.listener = listener
        self.idle_seconds = idle_seconds
        self.stop_listening = stop_listening  # removes the socket file (if still ours)
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
            if self.workers or self.orphans:
                idle_since = time.monotonic()
            elif self.listener is not None and time.monotonic() - idle_since > self.idle_seconds:
                self.stop_listening()
                return

    def finish(self) -> None:
        for pid in list(self.orphans):
            _reap(pid, _REAP_GRACE_SECONDS)
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


def _remover(folder: int, name: str) -> Callable[[], None]:
    """What removes the socket file ``name``, unless a newer server has put its own there."""
    st = os.stat(name, dir_fd=folder)
    ident = (st.st_dev, st.st_ino)

    def remove() -> None:
        with contextlib.suppress(OSError):
            st = os.stat(name, dir_fd=folder)
            if (st.st_dev, st.st_ino) == ident:
                os.unlink(name, dir_fd=folder)

    return remove


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
        serving = _Serving(listener, idle, _remover(folder, path.name))
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
