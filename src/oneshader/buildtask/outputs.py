"""Where a shader's outputs go in OUT, writing them whole, and removing the ones gone stale.

OUT mirrors the sources: ``shaders/ui/Sprite.hlsl`` built from ``shaders`` lands as
``OUT/ui/Sprite.spv``, ``.metal``, ``.wgsl`` and ``.reflection``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from oneshader.buildtask.sources import ShaderJob
from oneshader.buildtask.state import Stamp, is_inside, stamp
from oneshader.compiler.api import CompileResult
from oneshader.fsutil import TEMPORARY_SUFFIX, atomic_write, temporary_target
from oneshader.reflection.model import Target

REFLECTION_SUFFIX = ".reflection"
# every suffix a shader's outputs can have (what a stem owns in OUT)
OUTPUT_SUFFIXES = (*(t.suffix for t in Target), REFLECTION_SUFFIX)


def planned_files(job: ShaderJob, result: CompileResult) -> list[tuple[str, bytes]]:
    """(OUT-relative path, content) of every output of a successful compile, reflection last;
    ValueError if the reflection cannot be written (a bug, reported as that shader failing)."""
    from oneshader.reflection.format import ReflectionFormat  # not on a no-op build's path

    assert result.reflection is not None
    files = [(job.stem + o.suffix, o.data) for o in result.outputs]
    text = result.reflection_file
    if text is None:
        text = ReflectionFormat.write(result.reflection)
    files.append((job.stem + REFLECTION_SUFFIX, text))
    return files


def write_files(out: Path, files: Iterable[tuple[str, bytes]]) -> list[Stamp]:
    """Write each file atomically (old or new, never torn) and stamp what was written.

    A shader's files change as one unit for readers: its reflection (the last file) is removed
    before any code file changes and written after all of them, so a reflection present always
    sits beside the code of its own build, whenever the build is killed (docs/build.md).

    Not fsynced: a kill (even SIGKILL) cannot tear a renamed file, and outputs can be built
    again. After a power loss the state (which is fsynced, and on ext4 commits the renames
    before it) and the stamps decide: an output that lost its content has another size."""
    files = list(files)
    top, join = os.fspath(out), os.path.join  # paths as strings: no Path parsed per file
    if files:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(join(top, files[-1][0]))
    stamps = []
    for rel, data in files:
        path = join(top, rel)
        stamps.append(stamp(path, rel, data, st=atomic_write(path, data, durable=False)))
    return stamps


def remove_files(out: Path, rels: Iterable[str]) -> int:
    """Delete these OUT-relative files and the folders they leave empty; the count deleted.
    Only normalized relative paths that stay in OUT, links followed, are touched: the names
    come from a state file, which anyone who can write OUT can forge."""
    removed = 0
    folders: set[Path] = set()
    top = ""  # OUT with its links resolved, once there is a file to remove (mostly none)
    for rel in sorted(rels, key=lambda r: not r.endswith(REFLECTION_SUFFIX)):  # the mark first
        top = top or os.path.realpath(out)
        path = out / rel
        parent = os.path.realpath(path.parent)
        if not is_inside(rel) or not (parent == top or parent.startswith(top + os.sep)):
            continue
        try:
            path.unlink()
            removed += 1
        except FileNotFoundError:
            pass
        folders.add(path.parent)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        while folder != out and out in folder.parents:
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent
    return removed


def sweep_temporaries(out: Path, owned: Iterable[str]) -> int:
    """Remove the temporaries that writes of a killed build left half done; the count removed.

    Only what this build provably made goes: a temporary of :mod:`oneshader.fsutil`'s naming
    (a suffix of its own) whose target is one of ``owned``, the OUT-relative files the build
    writes (its outputs, recorded and planned, and its state). So only the folders those files
    are in are looked at, not OUT's whole tree: another program's files there (git's, another
    project's nested output folder and its in-flight temporaries) are never touched, and
    ``-o ~`` does not walk the home folder. The caller holds the lock, so no other build of
    this OUT is writing."""
    owned = owned if isinstance(owned, (set, frozenset)) else set(owned)
    # the folders first (a no-op build's sweep finds nothing: each owned name is looked at
    # only when a temporary of that name is there)
    folders = {rel.rpartition("/")[0] for rel in owned}
    top = os.path.realpath(out)
    removed = 0
    for folder in sorted(folders):
        if folder and not is_inside(folder):
            continue  # no owned file that is inside OUT is in it
        here = out / folder if folder else out
        try:
            entries = [e for e in os.scandir(here) if e.name.endswith(TEMPORARY_SUFFIX)]
        except OSError:  # not made yet, or not a folder
            continue
        real = os.path.realpath(here) if entries else top
        if real != top and not real.startswith(top + os.sep):  # a link out of OUT
            continue
        for entry in entries:
            target = temporary_target(entry.name)
            if target is None:
                continue
            rel = f"{folder}/{target}" if folder else target
            if rel in owned and is_inside(rel) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed += 1
    return removed
