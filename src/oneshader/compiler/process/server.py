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
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from oneshader.compiler.process.zygote import package_root, peer_credentials, zygote_command

__all__ = ["DEFAULT_IDLE_SECONDS", "CompileServer"]

DEFAULT_IDLE_SECONDS = 600.0
_START_SECONDS = 30.0
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux


def _own_folder(folder: Path) -> bool:
    """``folder`` made if missing, and checked to be this user's alone (not a link)."""
    with contextlib.suppress(OSError):
        folder.mkdir(mode=0o700)
    try:
        st = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def runtime_folder() -> Path | None:
    """Where servers listen: ``$XDG_RUNTIME_DIR/oneshader``, else ``oneshader-<uid>`` in the
    temporary folder; None when that is not a folder of this user's alone."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and Path(xdg).is_dir():
        folder = Path(xdg) / "oneshader"
    else:
        folder = Path(tempfile.gettempdir()) / f"oneshader-{os.getuid()}"
    return folder if _own_folder(folder) else None


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
            digest.update(source.read_bytes())
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

    @classmethod
    def for_this_process(cls, idle_seconds: float = DEFAULT_IDLE_SECONDS) -> CompileServer | None:
        """The server for this process's toolchain; None when none can be used here."""
        from oneshader.diagnostics import UserError

        folder = runtime_folder()
        if folder is None:
            return None
        try:
            key = toolchain_key()
        except (UserError, OSError):  # no compiler: the private zygote reports it per shader
            return None
        path = folder / f"zygote-{key}.sock"
        return cls(path, idle_seconds) if len(os.fsencode(path)) <= _MAX_SOCKET_PATH else None

    def connect(self) -> socket.socket:
        """A control connection to the server, started first if none listens; OSError if it
        cannot be started."""
        with contextlib.suppress(FileNotFoundError, ConnectionRefusedError):
            return self._connect()
        import fcntl  # here, so that the module imports anywhere

        lock = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one build starts it; the others then connect
            with contextlib.suppress(FileNotFoundError, ConnectionRefusedError):
                return self._connect()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # a server that died without removing its socket
            self._start()
            return self._connect()
        finally:
            os.close(lock)

    def pid(self) -> int | None:
        """The pid of the server listening now, None if none is."""
        try:
            with self._connect() as probe:
                return peer_credentials(probe)[0]
        except OSError:
            return None

    def _connect(self) -> socket.socket:
        control = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            control.connect(os.fspath(self.path))
        except BaseException:
            control.close()
            raise
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
