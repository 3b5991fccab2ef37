"""The compile server: a resident zygote that outlives the build that started it.

Each build that compiles pays ~0.3 s before its first result (Python, the driver's imports,
Slang's session), which bounds the speed-up of small builds and is the whole wait of a one-file
rebuild. The server keeps one warm zygote per user and exact toolchain: the next build connects
to it and has its workers forked at once. It ends after ``idle_seconds`` without callers.

It is found by a name derived from everything that decides what a worker computes (this Python
and its module path, oneshader's code, the Slang library, ``SLANG*`` variables): any change gives
another name, so a server never serves code other than the caller's; a stale one idles out. It
listens in a folder only its user can enter, and talks only to processes of that user. A build
that cannot use it (no such folder can be made) falls back to a private zygote.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import socket
import subprocess
import sys
from pathlib import Path

from oneshader.compiler.process.folder import RefusedFolder, address, open_folder
from oneshader.compiler.process.policy import DEFAULT_IDLE_SECONDS
from oneshader.compiler.process.zygote import package_root, peer_credentials, zygote_command
from oneshader.fsutil import read_file

__all__ = ["DEFAULT_IDLE_SECONDS", "CompileServer"]

_START_SECONDS = 30.0
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux


def runtime_folder() -> Path | None:
    """Where servers listen: ``$XDG_RUNTIME_DIR/oneshader``, else ``oneshader-<uid>`` in the
    temporary folder; None when that is not a folder of this user's alone."""
    folder, why = find_runtime_folder()
    return None if why else folder


def find_runtime_folder() -> tuple[Path, str]:
    """The servers' folder, made if missing, and "" or why it is refused."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and Path(xdg).is_dir():
        folder = Path(xdg) / "oneshader"
    else:
        import tempfile  # random's import and seeding: only where a folder is looked for

        folder = Path(tempfile.gettempdir()) / f"oneshader-{os.getuid()}"
    try:
        os.close(open_folder(folder, create=True))
    except RefusedFolder as err:
        return folder, str(err)
    except OSError as err:
        return folder, f"{folder}: {err.strerror or err}"
    return folder, ""


@functools.cache
def toolchain_key() -> str:
    """A digest of everything that decides what a forked worker computes."""
    from oneshader.compiler import compiler_version
    from oneshader.compiler.slang import library_path

    digest = hashlib.sha256(compiler_version().encode())  # Slang, slangpy, the compiler's code
    for part in (sys.executable, sys.version, package_root(), *sys.path[1:]):  # as the zygote's
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    package = Path(__file__).resolve().parents[1]
    for source in sorted(package.rglob("*.py")):
        rel = source.relative_to(package)
        if rel.parts[0] != "compiler":  # the rest of oneshader that a worker runs
            digest.update(rel.as_posix().encode() + b"\0")
            digest.update(read_file(source))
    library = library_path()  # UserError when Slang is not installed: no server then
    st = library.stat()
    digest.update(f"{library}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    for name, value in sorted(os.environ.items()):
        if name.startswith("SLANG"):
            digest.update(f"{name}={value}\0".encode())
    return digest.hexdigest()[:24]


class CompileServer:
    """Where the server for this toolchain listens, and how to reach it (or start it);
    ``started`` tells whether this object started it."""

    def __init__(self, path: Path, idle_seconds: float = DEFAULT_IDLE_SECONDS) -> None:
        self.path = path
        self.idle_seconds = idle_seconds
        self.started = False
        self.refused = ""  # why a server found was not used

    @classmethod
    def for_this_process(cls, idle_seconds: float = DEFAULT_IDLE_SECONDS) -> CompileServer | None:
        """The server for this process's toolchain; None when none can be used here."""
        found = cls.find(idle_seconds)
        return found if isinstance(found, CompileServer) else None

    @classmethod
    def find(cls, idle_seconds: float = DEFAULT_IDLE_SECONDS) -> CompileServer | str:
        """The server for this process's toolchain, or why none can be used here ("" when
        there is no compiler: the private zygote reports that per shader)."""
        from oneshader.diagnostics import UserError

        folder, why = find_runtime_folder()
        if why:
            return f"its folder is refused: {why}"
        try:
            key = toolchain_key()
        except (UserError, OSError):
            return ""
        path = folder / f"zygote-{key}.sock"
        if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
            return f"the path of its socket would be too long: {path}"
        return cls(path, idle_seconds)

    def connect(self) -> socket.socket:
        """A control connection to the server, started first if none listens; OSError if it
        cannot be started or cannot be trusted (``refused`` then says why)."""
        with contextlib.suppress(FileNotFoundError, ConnectionRefusedError):
            return self._connect()
        import fcntl  # here, so that the module imports anywhere

        folder = self._open_folder()
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            lock = os.open(self.path.with_suffix(".lock").name, flags, 0o600, dir_fd=folder)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)  # one build starts it; the others then connect
                with contextlib.suppress(FileNotFoundError, ConnectionRefusedError):
                    return self._connect()
                with contextlib.suppress(FileNotFoundError):  # one that died without removing it
                    os.unlink(self.path.name, dir_fd=folder)
                self._start()
                return self._connect()
            finally:
                os.close(lock)
        finally:
            os.close(folder)

    def pid(self) -> int | None:
        """The pid of the server listening now, None if none is."""
        try:
            with self._connect() as probe:
                return peer_credentials(probe)[0]
        except OSError:
            return None

    def _open_folder(self) -> int:
        try:
            return open_folder(self.path.parent)
        except RefusedFolder as err:
            self.refused = f"its folder is refused: {err}"
            raise

    def _connect(self) -> socket.socket:
        """Connect through the checked folder, and only to a process of this user."""
        folder = self._open_folder()
        control = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            control.connect(address(folder, self.path.name))
            uid = peer_credentials(control)[1]
            if uid != os.getuid():
                self.refused = f"its socket {self.path} is held by another user (uid {uid})"
                raise PermissionError(self.refused)
        except BaseException:
            control.close()
            raise
        finally:
            os.close(folder)
        return control

    def _start(self) -> None:
        argv, env = zygote_command(
            "--listen", os.fspath(self.path), "--idle", repr(self.idle_seconds)
        )
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            env=env,
            cwd="/",  # a server must not hold any project's folder
            start_new_session=True,  # nor receive a terminal's ^C
        )
        try:
            code = proc.wait(timeout=_START_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise OSError("the compile server did not start") from None
        if code != 0:
            raise OSError(f"the compile server did not start (exit status {code})")
        self.started = True
