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
succeeds. This module imports nothing heavier than ``json`` and ``hashlib``, and never the
compiler (tests/test_layers.py holds that).

The record names no folder of the machine (OUT may be shipped): each path is relative to an
anchor found again at check time: the current folder, OUT, oneshader's package and slangpy's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable, Sequence

NOOP_NAME = ".oneshader-noop.json"
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
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()


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


def _read(out: str) -> dict[str, object] | None:
    """The record in ``out``, or None when there is none or it is damaged."""
    try:
        with open(os.path.join(out, NOOP_NAME), "rb") as f:
            raw = f.read()
    except OSError:
        return None
    checksum, _, body = raw.partition(b"\n")
    if hashlib.sha256(body).hexdigest().encode() != checksum:
        return None
    doc = json.loads(body)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        return None
    return doc


def anchors(cwd: str, out: str) -> dict[str, str]:
    """The folders the record's paths are relative to, as this process finds them."""
    import importlib.util

    import oneshader

    found = {
        "cwd": cwd,
        "out": out,
        "oneshader": os.path.dirname(os.path.abspath(oneshader.__file__)),
    }
    try:
        spec = importlib.util.find_spec("slangpy")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        found["slangpy"] = os.path.abspath(next(iter(spec.submodule_search_locations)))
    return found


def _holds(doc: dict[str, object], where: dict[str, str]) -> bool:
    """Whether every recorded stamp is still what it was."""
    by_anchor = doc["stamps"]
    assert isinstance(by_anchor, dict)
    join = os.path.join
    for anchor, folders in by_anchor.items():
        base = where[anchor]  # KeyError (slangpy gone): not a no-op
        for folder, entries in folders.items():
            here = join(base, folder)
            for name, mtime, size, inode in entries:
                try:
                    st = os.stat(join(here, name))
                except OSError:
                    if mtime != -1:
                        return False
                    continue
                if (st.st_mtime_ns, st.st_size, st.st_ino) != (mtime, size, inode):
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
        doc = _read(out)
        if doc is None or doc.get("key") != invocation_key(argv, cwd):
            return None
        if not _holds(doc, anchors(cwd, out)):
            return None
        count = doc["up_to_date"]
        if not isinstance(count, int):
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
    by_anchor: dict[str, dict[str, list[list[object]]]] = {}
    for (anchor, path), (mtime, size, inode) in sorted(stamps.items()):
        folder, name = os.path.split(os.path.normpath(path))
        entry = [name or ".", mtime, size, inode]
        by_anchor.setdefault(anchor, {}).setdefault(folder or ".", []).append(entry)
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "key": key,
        "up_to_date": up_to_date,
        "stamps": by_anchor,
    }
    body = json.dumps(doc, separators=(",", ":")).encode()
    from oneshader.fsutil import atomic_write  # a build that records has it loaded

    try:
        atomic_write(
            os.path.join(where["out"], NOOP_NAME),
            hashlib.sha256(body).hexdigest().encode() + b"\n" + body,
            durable=False,  # lost after a power cut: then the normal build runs, that is all
        )
    except OSError:
        return False
    return True
