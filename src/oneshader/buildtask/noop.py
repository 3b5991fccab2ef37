"""The no-op fast path: a build with nothing to do answers before oneshader loads anything else.

A no-op's time was mostly imports (the configuration's machinery, the compiler's key, the
state's classes). So a build that succeeded records, beside the state, every stamp its outcome
depends on: the command line, the current folder, the ``ONESHADER_*`` variables and the Python
running it (one key), and the ``(mtime, size, inode)`` of the pyproject (and of every place a
nearer one could appear), every source folder (a folder's mtime moves when a file is added or
removed), the include folders, every input and output the state records (checked equal to the
state's stamps when recorded), the state file itself, and the toolchain's files (oneshader's
code, slangpy's package and ``.dist-info``). The next run stats them with ``os`` alone: all
equal, and it prints what a no-op prints; anything else (a change, a missing or damaged record,
a doubt) and the normal build runs, which removes the record first and writes a new one when it
succeeds. This module imports no module ``python -c pass`` has not loaded but a SHA-256 (not
even ``json``, whose ``re`` costs more than the whole check; the record is lines of text), and
never the compiler (tests/test_layers.py holds that).

The record names no folder of the machine (OUT may be shipped): each path is relative to an
anchor found again at check time: the current folder, OUT, oneshader's package and slangpy's.
"""

from __future__ import annotations

import os
import sys
import time

try:  # the built-in SHA-256: hashlib's import loads OpenSSL (~4 ms, more than the check)
    from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - another Python
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment,unused-ignore]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

NOOP_NAME = ".oneshader-noop"
FORMAT = "oneshader-noop"
VERSION = 1
DISABLE_VARIABLE = "ONESHADER_NOOP"  # "0": always the normal build (the benchmark's "before")
# A file or folder changed this close to the recording may change again within the same mtime
# tick unseen: then nothing is recorded (the next build checks it the normal way).
RACY_NS = 100_000_000

Stamp = tuple[int, int, int]  # mtime_ns, size, inode; (-1, -1, -1): absent
ABSENT: Stamp = (-1, -1, -1)


def enabled() -> bool:
    return os.environ.get(DISABLE_VARIABLE, "").strip() != "0"


def invocation_key(argv: Sequence[str], cwd: str) -> str:
    """What decides a build besides files: its arguments as typed, where it runs, the
    environment it reads, and which Python and oneshader run it."""
    import oneshader

    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("ONESHADER_") or k == "CI")
    doc = [
        VERSION,
        list(argv),
        cwd,
        env,
        sys.executable,
        sys.version,
        sys.path,
        oneshader.__file__,
        oneshader.__version__,
    ]
    digest: str = sha256(repr(doc).encode("utf-8", "surrogateescape")).hexdigest()
    return digest


def stamp_of(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ABSENT
    return (st.st_mtime_ns, st.st_size, st.st_ino)


# --- the check (before any other import) ------------------------------------------------------


def _out_from_argv(argv: Sequence[str], cwd: str) -> str | None:
    """OUT as ``-o``/``--output`` gives it (the last one), or from [tool.oneshader] ``out``.
    A wrong guess costs nothing but the fast path: the record there names other arguments."""
    out = None
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            break
        if a == "-o" or (a.startswith("--o") and "--output".startswith(a)):
            if i + 1 >= len(argv):
                return None
            out, i = argv[i + 1], i + 2
            continue
        if a.startswith("--o") and "=" in a and "--output".startswith(a.partition("=")[0]):
            out = a.partition("=")[2]
        elif a.startswith("-o") and not a.startswith("--"):
            out = a[2:]
        i += 1
    if out is not None:
        return os.path.join(cwd, out)
    folder = cwd
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            import tomllib

            with open(candidate, "rb") as f:
                table = tomllib.load(f).get("tool", {}).get("oneshader", {})
            value = table.get("out") if isinstance(table, dict) else None
            return os.path.join(folder, value) if isinstance(value, str) else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


# The record: lines of text, tab-separated (a path holding a tab or a line break is not
# recorded). The first line is the SHA-256 of the rest; then the format, the key, the number of
# shaders; then per folder "@ANCHOR<tab>FOLDER" (two fields) and its entries
# "NAME<tab>MTIME<tab>SIZE<tab>INODE" (four; -1 -1 -1: absent).
HEADER = f"{FORMAT} {VERSION}"


def _read(out: str) -> list[str] | None:
    """The lines of the record in ``out``, or None when there is none or it is damaged."""
    try:
        with open(os.path.join(out, NOOP_NAME), "rb") as f:
            raw = f.read()
    except OSError:
        return None
    checksum, _, body = raw.partition(b"\n")
    if sha256(body).hexdigest().encode() != checksum:
        return None
    lines = body.decode("utf-8", "surrogateescape").split("\n")
    return lines if lines[0] == HEADER else None


def anchors(cwd: str, out: str) -> dict[str, str]:
    """The folders the record's paths are relative to, as this process finds them (slangpy's
    as ``importlib.util.find_spec`` would, without importing it)."""
    import oneshader

    found = {
        "cwd": cwd,
        "out": out,
        "oneshader": os.path.dirname(os.path.abspath(oneshader.__file__)),
    }
    module = sys.modules.get("slangpy")
    spec = getattr(module, "__spec__", None)
    for finder in sys.meta_path if spec is None else ():
        find = getattr(finder, "find_spec", None)
        try:
            spec = find("slangpy", None) if find is not None else None
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            break
    locations = getattr(spec, "submodule_search_locations", None)
    if locations:
        found["slangpy"] = os.path.abspath(next(iter(locations)))
    return found


def _holds(lines: list[str], where: dict[str, str]) -> bool:
    """Whether every recorded stamp is still what it was."""
    join, stat = os.path.join, os.stat
    here = ""
    for line in lines:
        fields = line.split("\t")
        if len(fields) == 2:
            anchor, folder = fields
            here = join(where[anchor[1:]], folder)  # KeyError (slangpy gone): not a no-op
            continue
        name, mtime, size, inode = fields
        try:
            st = stat(join(here, name))
        except OSError:
            if mtime != "-1":
                return False
            continue
        if (str(st.st_mtime_ns), str(st.st_size), str(st.st_ino)) != (mtime, size, inode):
            return False
    return True


def up_to_date(argv: Sequence[str]) -> int | None:
    """0 after printing the no-op's summary when the record of the last build still holds for
    ``argv`` (the command line after ``oneshader``); None when the normal build must run."""
    t0 = time.perf_counter()
    if not argv or argv[0] != "build" or not enabled():
        return None
    try:
        cwd = os.getcwd()
        out = _out_from_argv(argv, cwd)
        if out is None:
            return None
        out = os.path.realpath(out)
        lines = _read(out)
        if lines is None or lines[1] != invocation_key(argv, cwd):
            return None
        count = int(lines[2])
        if not _holds(lines[3:], anchors(cwd, out)):
            return None
    except Exception:  # a doubt: the normal build decides
        return None
    seconds = time.perf_counter() - t0
    # what BuildReport.summary says of a build that compiled nothing
    sys.stdout.write(f"oneshader build: 0 built, {count} up to date, 0 failed in {seconds:.2f}s\n")
    sys.stdout.flush()
    return 0


# --- the record (by a build that succeeded, under its lock) -----------------------------------


def forget(out: str) -> None:
    """Remove the record: a build is about to change what it describes."""
    import contextlib

    # none, or OUT read-only: a record is trusted only while all its stamps hold anyway
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(out, NOOP_NAME))


def toolchain_paths(where: dict[str, str]) -> list[tuple[str, str]]:
    """The files and folders whose change may change what a build does, as (anchor, path):
    oneshader's code (its modules and folders), and slangpy's package, the folder holding it
    and its ``.dist-info`` (an upgrade replaces them). Found here, at record time; the check
    only stats them."""
    paths: list[tuple[str, str]] = []
    package = where["oneshader"]
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        rel = os.path.relpath(dirpath, package)
        paths.append(("oneshader", rel))
        paths.extend(("oneshader", os.path.join(rel, f)) for f in filenames if f.endswith(".py"))
    folder = where.get("slangpy")
    if folder is not None:
        paths.append(("slangpy", "."))
        with os.scandir(folder) as entries:
            paths.extend(("slangpy", e.name) for e in entries if e.is_file())
        paths.append(("slangpy", ".."))
        with os.scandir(os.path.dirname(folder)) as entries:
            for e in entries:
                if e.name.startswith("slangpy-") and e.name.endswith(".dist-info"):
                    meta = os.path.join("..", e.name)
                    paths.extend((("slangpy", meta), ("slangpy", os.path.join(meta, "METADATA"))))
    return paths


def project_paths(cwd: str) -> list[str]:
    """Every place ``find_project_root`` looks for a pyproject.toml, up to the one it finds: a
    new one nearer, or the one found edited, changes the configuration."""
    paths = []
    folder = cwd
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        paths.append(os.path.relpath(candidate, cwd))
        if os.path.isfile(candidate):
            return paths
        parent = os.path.dirname(folder)
        if parent == folder:
            return paths
        folder = parent


Place = tuple[str, str]  # (anchor, path relative to it)


def record(
    where: dict[str, str],
    key: str,
    up_to_date: int,
    free: Iterable[Place],
    expected: Iterable[tuple[Place, int, int, str]],
    written: Iterable[Place],
) -> bool:
    """Write the record of a build that succeeded into OUT (``where["out"]``); False (nothing
    written) on any doubt.

    ``free``: files and folders whose stamps are taken as they are now, unless one changed too
    recently to be sure of; ``expected``: ``(place, mtime_ns, size, identity)`` as the state
    recorded them (the inputs as compiled, the outputs as written), each of which must still
    be so; ``written``: what this build wrote itself (its state), taken as is."""
    now = time.time_ns()
    join = os.path.join
    stamps: dict[Place, Stamp] = {}
    for place in free:
        now_stamp = stamp_of(join(where[place[0]], place[1]))
        if now_stamp != ABSENT and now - now_stamp[0] <= RACY_NS:
            return False
        stamps[place] = now_stamp
    for place, mtime, size, identity in expected:
        try:
            st = os.stat(join(where[place[0]], place[1]))
        except OSError:
            return False
        if mtime == 0 or (st.st_mtime_ns, st.st_size) != (mtime, size):
            return False
        if identity and identity != f"{st.st_dev}:{st.st_ino}":
            return False
        stamps[place] = (st.st_mtime_ns, st.st_size, st.st_ino)
    for place in written:
        stamps[place] = stamp_of(join(where[place[0]], place[1]))
    if any("\t" in path or "\n" in path for _, path in stamps):
        return False  # a name the record cannot hold: the normal build every time
    lines = [HEADER, key, str(up_to_date)]
    group = None
    for (anchor, path), (mtime, size, inode) in sorted(stamps.items()):
        folder, name = os.path.split(os.path.normpath(path))
        if group != (anchor, folder or "."):
            group = (anchor, folder or ".")
            lines.append(f"@{anchor}\t{group[1]}")
        lines.append(f"{name or '.'}\t{mtime}\t{size}\t{inode}")
    body = "\n".join(lines).encode("utf-8", "surrogateescape")
    from oneshader.fsutil import atomic_write  # a build that records has it loaded

    try:
        atomic_write(
            os.path.join(where["out"], NOOP_NAME),
            sha256(body).hexdigest().encode() + b"\n" + body,
            durable=False,  # lost after a power cut: then the normal build runs, that is all
        )
    except OSError:
        return False
    return True
