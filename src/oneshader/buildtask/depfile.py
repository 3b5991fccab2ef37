"""``oneshader build --depfile FILE``: what each output was built from, for make, ninja and CMake.

One make rule per shader, as ``gcc -MD`` writes them: its outputs, a colon, its source, every
file it includes and the pyproject.toml that configured it. Paths are relative to the current
folder (where make and ninja run the command; absolute when there is no relative way, another
drive), with make's escapes for spaces, ``#`` and ``$``. Shaders that failed have no outputs and
no rule. The file is written whole (a reader never sees half of it) after every build.

make and ninja compare times where the build compares content: an input saved without a change
leaves the outputs as they were, older than it, and make would run the build again and again.
So with a depfile such outputs get the current time (and their stamps in the state with it):
after a build with a depfile, no output is older than an input.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from oneshader.buildtask.config import display_path
from oneshader.buildtask.state import BuildState
from oneshader.fsutil import atomic_write

__all__ = ["depfile_text", "freshen_outputs", "make_escape", "write_depfile"]


def make_escape(path: str) -> str:
    """A path as one word of a make rule (the escapes GCC's -MD output uses)."""
    return path.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")


def _shown(path: Path, cwd: Path) -> str:
    return make_escape(display_path(path, cwd))


def _rule(targets: Iterable[str], deps: Iterable[str]) -> str:
    line = " ".join(targets) + ":"
    for dep in deps:
        line += f" \\\n  {dep}"
    return line + "\n"


def depfile_text(
    state: BuildState, root: Path, out: Path, pyproject: Path | None, cwd: Path
) -> str:
    rules = []
    for _stem, record in sorted(state.shaders.items()):
        if not record.outputs:
            continue
        targets = [_shown(out / s.path, cwd) for s in record.outputs]
        deps = [_shown(root / s.path, cwd) for s in record.inputs]
        if pyproject is not None:
            deps.append(_shown(pyproject, cwd))
        rules.append(_rule(targets, deps))
    return "".join(rules)


def freshen_outputs(state: BuildState, root: Path, out: Path, pyproject: Path | None) -> bool:
    """Give the current time to every output older than the newest input of the build (an
    input saved or touched without a change: the build found the outputs current by their
    content, make and ninja compare times), and to its stamp; whether any was.

    The newest input of the whole build, not of the output's own shader: ninja runs one
    command for every output of an edge and compares each with all the edge's inputs. Called
    under the build's lock."""
    newest = 0
    for record in state.shaders.values():
        for s in record.inputs if record.outputs else ():
            with contextlib.suppress(OSError):  # gone meanwhile: the next build sees it
                newest = max(newest, (root / s.path).stat().st_mtime_ns)
    if pyproject is not None and newest:
        with contextlib.suppress(OSError):
            newest = max(newest, pyproject.stat().st_mtime_ns)
    changed = False
    for stem, record in state.shaders.items():
        outputs = list(record.outputs)
        for i, s in enumerate(outputs):
            path = out / s.path
            try:
                if path.stat().st_mtime_ns >= newest:
                    continue
                os.utime(path)
                # the content is as stamped: just checked
                outputs[i] = replace(s, mtime_ns=path.stat().st_mtime_ns)
            except OSError:
                continue
        if outputs != record.outputs:  # a new record: the state replaces, never changes, one
            state.shaders[stem] = replace(record, outputs=outputs)
            changed = True
    return changed


def write_depfile(
    path: Path, state: BuildState, root: Path, out: Path, pyproject: Path | None
) -> None:
    """Freshen the outputs make would see as stale (:func:`freshen_outputs`), then write the
    rules whole."""
    if freshen_outputs(state, root, out, pyproject):
        state.dirty = True
    atomic_write(path, depfile_text(state, root, out, pyproject, Path.cwd()).encode("utf-8"))
