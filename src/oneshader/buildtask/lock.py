"""One build at a time per OUT folder.

An advisory lock on ``OUT/.oneshader.lock``: the kernel drops it when the holder dies, even by
SIGKILL, so a killed build never leaves a stale lock behind. A second build says once that it is
waiting, and for whom, then waits.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

LOCK_NAME = ".oneshader.lock"

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class OutLock:
    """``with OutLock(out, on_wait):`` holds the lock of ``out``; ``on_wait(message)`` is called
    once if another process holds it."""

    def __init__(
        self, out: Path, on_wait: Callable[[str], None], poll_seconds: float = 0.1
    ) -> None:
        self.path = out / LOCK_NAME
        self.on_wait = on_wait
        self.poll = poll_seconds
        self._fd: int | None = None

    def __enter__(self) -> OutLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            if err.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
            # OUT is read-only: no build can write it, so there is nothing to take turns on;
            # a build that has something to write fails there, naming the file.
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except FileNotFoundError:
                return self
        try:
            if not _try_lock(fd):
                os.lseek(fd, 0, os.SEEK_SET)
                holder = os.read(fd, 64).decode("ascii", "replace").strip() or "unknown"
                self.on_wait(f"waiting for another build of this output folder (pid {holder})")
                while not _try_lock(fd):
                    time.sleep(self.poll)
            with contextlib.suppress(OSError):  # read-only: the holder is not told, that is all
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
                os.write(fd, f"{os.getpid()}\n".encode())
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            try:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, 0)
                _unlock(self._fd)
            finally:
                os.close(self._fd)
                self._fd = None
