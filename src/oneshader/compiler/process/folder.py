"""The folder compile servers listen in, opened so that it cannot be swapped under a build.

A build finds its server by a path; whoever can rename things on that path could put a socket of
their own there. The folder is therefore opened once, without following a link, and checked to
be this user's alone in a parent only this user or root can change; sockets are then bound and
connected through that descriptor, so renames afterwards redirect nothing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

__all__ = ["RefusedFolder", "address", "open_folder"]


class RefusedFolder(PermissionError):
    """The servers' folder is not this user's alone, so a server found there cannot be trusted."""


def _parent_problem(st: os.stat_result, parent: Path) -> str:
    if st.st_uid not in (0, os.getuid()):
        return f"{parent} belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return f"{parent} can be changed by other users"
    return ""


def open_folder(folder: Path, *, create: bool = False) -> int:
    """A descriptor of ``folder`` (made first if ``create``), opened without following a link
    and checked: this user's, closed to others, in a parent that only this user or root can
    change (or a sticky one, as /tmp). Addresses then go through the descriptor
    (:func:`address`), so renaming folders afterwards cannot redirect them.
    :class:`RefusedFolder` says why a folder is refused; other OSErrors that it cannot be used."""
    parent = os.open(folder.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        why = _parent_problem(os.fstat(parent), folder.parent)
        if why:
            raise RefusedFolder(why)
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder.name, 0o700, dir_fd=parent)
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(folder.name, flags, dir_fd=parent)
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENOTDIR):
                raise RefusedFolder(f"{folder} is not a folder (a link?)") from None
            raise
    finally:
        os.close(parent)
    st = os.fstat(fd)
    why = ""
    if st.st_uid != os.getuid():
        why = f"{folder} belongs to another user (uid {st.st_uid})"
    elif st.st_mode & 0o077:
        why = f"{folder} is open to other users (mode {stat.S_IMODE(st.st_mode):o})"
    if why:
        os.close(fd)
        raise RefusedFolder(why)
    return fd


def address(folder_fd: int, name: str) -> str:
    """The path of ``name`` in the folder open as ``folder_fd``, resolved through the descriptor
    (Linux's /proc/self/fd), for binding and connecting sockets."""
    return f"/proc/self/fd/{folder_fd}/{name}"
