"""The one way oneshader writes files: whole or not at all.

A reader (or a build killed with SIGKILL) sees either the old file or the new one, never a torn
one: data goes to a temporary file in the same folder, then is renamed over the target.
:func:`atomic_write` also fsyncs the data before the rename, so that a power loss cannot leave an
empty file under the new name either; regenerable outputs skip that (build outputs, and
:func:`write_many_if_changed` for generated bindings).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def named_path(path: str | os.PathLike[str], folders: dict[Path, Path] | None = None) -> Path:
    """``path`` absolute, with the links among its folders resolved but not its own name: a
    link given as a file is a name of its own (its outputs are named after it, and retargeting
    it is a change), not an alias of whatever it points to now. ``folders``: the folders
    resolved so far, when the caller names many files of a few folders at one moment."""
    p = Path(path).absolute()
    if folders is None:
        return p.parent.resolve() / p.name
    folder = folders.get(p.parent)
    if folder is None:
        folder = folders[p.parent] = p.parent.resolve()
    return folder / p.name


def display_path(path: str | os.PathLike[str], base: Path | None = None) -> str:
    """A path as users see it in messages: relative to ``base`` (the cwd), forward slashes."""
    try:
        rel = os.path.relpath(path, base if base is not None else Path.cwd())
    except ValueError:  # another drive on Windows
        rel = str(path)
    return rel.replace(os.sep, "/")


# The temporaries below are named ``.<target name>.<8 random characters>.oneshader-tmp``: a
# suffix no other program's files have (git's ``.pack.XXXXXX.tmp`` or an editor's ``.x.tmp``
# never match), and the target's name, so that a sweep removes only the temporaries of files
# it knows it writes (:func:`temporary_target`).
TEMPORARY_SUFFIX = ".oneshader-tmp"
_TEMPORARY = re.compile(r"^\.(.+)\.[a-z0-9_]{8}" + re.escape(TEMPORARY_SUFFIX) + "$")


def temporary_target(name: str) -> str | None:
    """The name of the file a temporary of this module called ``name`` was to replace, or None
    when ``name`` is not one of this module's temporaries (for sweeping up after a kill)."""
    m = _TEMPORARY.match(name)
    return m.group(1) if m else None


# O_EXCL: a name taken (another writer's temporary) is never opened, the next name is tried
_CREATE = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def _create_beside(target: str | os.PathLike[str]) -> tuple[int, str]:
    """A new, empty temporary beside ``target`` (its folder made if missing): its descriptor and
    path. What ``tempfile.mkstemp`` does, for a tenth of its cost (no Python-level random
    names: a build writes four files per shader from one thread that also feeds the workers),
    and without a ``mkdir`` per file: the folder is made only when the first open finds it
    missing. Made with the final mode (0644, less what the umask takes: :func:`_temporary`
    puts that back), so that the usual umask costs no ``chmod``."""
    target = os.fspath(target)
    folder, name = os.path.split(target)
    made = False  # the folder, by this call
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.{os.urandom(4).hex()}{TEMPORARY_SUFFIX}")
        try:
            return os.open(tmp, _CREATE, 0o644), tmp
        except FileExistsError:
            continue
        except (FileNotFoundError, NotADirectoryError) as err:
            if made:  # the folder was there a moment ago: something removes it
                raise OSError(err.errno, err.strerror, target) from None
            # made, or its error names the folder in the way (a file where it should be)
            os.makedirs(folder or os.curdir, exist_ok=True)
            made = True
        except OSError as err:  # named after the file the caller writes, not the temporary
            raise OSError(err.errno, err.strerror, target) from None
    raise FileExistsError(errno.EEXIST, "no free name for a temporary", target)


def _temporary(target: str, data: bytes, *, durable: bool) -> tuple[str, os.stat_result]:
    """A temporary beside ``target`` holding ``data`` (mode 0644): its path and its status
    (what the file shows once renamed: a rename moves neither its mtime nor its size). Written
    through its descriptor (no file object, no lookup of its path again to chmod it)."""
    fd, tmp = _create_beside(target)
    try:
        try:
            written = os.write(fd, data)
            if written < len(data):  # a short write: the rest, until it is all there
                view = memoryview(data)[written:]
                while view:
                    view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
            st = os.fstat(fd)
            if stat.S_IMODE(st.st_mode) != 0o644:  # a umask took some of it (or Windows)
                if _FCHMOD:
                    os.fchmod(fd, 0o644)
                else:  # Windows: no fchmod (chmod only sets the read-only flag there)
                    os.chmod(tmp, 0o644)
                st = os.fstat(fd)
        finally:
            os.close(fd)
    except BaseException as err:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(err, OSError) and err.filename is None:  # a write's: a full disk
            raise OSError(err.errno, err.strerror, target) from None
        raise
    return tmp, st


_FCHMOD = hasattr(os, "fchmod")


def _holds(target: Path, data: bytes) -> bool:
    try:
        return target.read_bytes() == data
    except OSError:
        return False


def atomic_write(
    path: str | os.PathLike[str], data: bytes, *, durable: bool = True
) -> os.stat_result:
    """Write ``data`` whole: old file or new, whatever kills the writer; ``durable`` (fsync
    before the rename) also holds after a power loss, at the price of a disk flush. The
    written file's status (as a ``stat`` of ``path`` just after would give it)."""
    target = os.fspath(path)
    tmp, st = _temporary(target, data, durable=durable)
    try:
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return st


def write_if_changed(path: str | os.PathLike[str], data: bytes) -> bool:
    """Atomically write ``data`` unless the file already holds exactly it; True if written."""
    target = Path(path)
    if _holds(target, data):
        return False
    atomic_write(target, data)
    return True


def write_many_if_changed(
    files: Iterable[tuple[str | os.PathLike[str], bytes]],
) -> list[Path]:
    """:func:`write_if_changed` for a set of regenerable files (generated bindings): every
    temporary is written before the first rename, so an error while writing (a full disk)
    replaces none of them. Not fsynced: the inputs are still there, so after a power loss
    the next run (or ``--check``) puts right what the disk lost, and 1000 modules do not
    wait for 1000 flushes. Returns the paths written."""
    pending: list[tuple[str, Path]] = []
    try:
        for path, data in files:
            target = Path(path)
            if not _holds(target, data):
                pending.append((_temporary(os.fspath(target), data, durable=False)[0], target))
        for tmp, target in pending:
            os.replace(tmp, target)
    except BaseException:
        for tmp, _ in pending:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
    return [target for _, target in pending]


class NotRegularFile(OSError):
    """A path that names a FIFO, a device, a socket or a folder where a file's content is wanted:
    reading one could block for ever (a FIFO) or never end (``/dev/zero``)."""


def file_kind(mode: int) -> str:
    """What a file that is not regular is, for messages."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


# No file oneshader reads (a shader, an include, a reflection, a module's code, a state) comes
# near this: one that does is a mistake or an attack, and reading it would eat the memory.
MAX_READ_BYTES = 256 << 20


class FileTooLarge(OSError):
    """A file over :data:`MAX_READ_BYTES` (or one that grew past it while read)."""


def _open_regular(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """An open descriptor of a regular file and its status (links followed); NotRegularFile
    for anything else, found without blocking on a FIFO (O_NONBLOCK) or reading a device."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            why = f"{file_kind(st.st_mode)}, not a regular file"
            raise NotRegularFile(errno.EINVAL, why, os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _read_bounded(fd: int, st: os.stat_result, path: str | os.PathLike[str], limit: int) -> bytes:
    """The content of the open regular file ``fd``, FileTooLarge past ``limit`` bytes (checked
    on its size first, then on what is read: a file may grow meanwhile)."""
    too_large = FileTooLarge(errno.EFBIG, f"larger than {limit >> 20} MiB", os.fspath(path))
    if st.st_size > limit:
        raise too_large
    chunks = []
    total = 0
    while chunk := os.read(fd, max(min(st.st_size + 1, limit + 1 - total), 1)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise too_large
    return b"".join(chunks)


def read_regular(
    path: str | os.PathLike[str], limit: int = MAX_READ_BYTES
) -> tuple[bytes, os.stat_result]:
    """The whole content of a regular file and its status as opened (links followed): the one
    way oneshader reads a file. Raises :class:`NotRegularFile` for anything else, without
    blocking on a FIFO or reading a device, and :class:`FileTooLarge` past ``limit`` bytes."""
    fd, st = _open_regular(path)
    try:
        return _read_bounded(fd, st, path, limit), st
    finally:
        os.close(fd)


def read_file(path: str | os.PathLike[str]) -> bytes:
    """:func:`read_regular`'s bytes alone."""
    return read_regular(path)[0]


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def read_beside(mark: str | os.PathLike[str], read: Callable[[bytes], T]) -> tuple[bytes, T] | None:
    """``mark``'s bytes and ``read(them)`` (which reads the files written beside it), or None
    if ``mark`` was replaced or removed meanwhile. A build removes a shader's reflection before
    it changes the code files and writes it after them (docs/build.md), so a reflection
    unchanged across the reading of its code vouches for that code: the one-unit rule of
    readers. ``mark`` stays open meanwhile, so its inode cannot be reused by its replacement.
    FileNotFoundError (naming ``mark``) if it is missing."""
    fd, st = _open_regular(mark)
    try:
        before = _identity(st)
        data = _read_bounded(fd, st, mark, MAX_READ_BYTES)
        result = read(data)
        try:
            after: tuple[int, int, int, int] | None = _identity(os.stat(mark))
        except FileNotFoundError:
            after = None
    finally:
        os.close(fd)
    return (data, result) if after == before else None
