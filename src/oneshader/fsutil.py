"""The one way oneshader writes files: whole or not at all.

A reader (or a build killed with SIGKILL) sees either the old file or the new one, never a torn
one: data goes to a temporary file in the same folder, is flushed to disk, then renamed over.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_if_changed(path: str | os.PathLike[str], data: bytes) -> bool:
    """Atomically write ``data`` unless the file already holds exactly it; True if written."""
    target = Path(path)
    try:
        if target.read_bytes() == data:
            return False
    except OSError:
        pass
    atomic_write(target, data)
    return True


def write_many_if_changed(
    files: Iterable[tuple[str | os.PathLike[str], bytes]],
) -> list[Path]:
    """:func:`write_if_changed` for many files at once, with one ``os.sync()`` for all of them
    instead of an fsync each (1000 generated modules: one flush, not 1000). Each file is still
    replaced whole by a rename after its data is on disk. Returns the paths written."""
    pending: list[tuple[str, Path]] = []
    try:
        for path, data in files:
            target = Path(path)
            try:
                if target.read_bytes() == data:
                    continue
            except OSError:
                pass
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            pending.append((tmp, target))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if not hasattr(os, "sync"):
                    f.flush()
                    os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
        if pending and hasattr(os, "sync"):
            os.sync()
        for tmp, target in pending:
            os.replace(tmp, target)
    except BaseException:
        for tmp, _ in pending:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
    return [target for _, target in pending]
