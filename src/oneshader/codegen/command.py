"""``oneshader generate FILE.reflection... -o DIR [--check]``."""

from __future__ import annotations

import sys
from pathlib import Path

from oneshader.codegen import generate, plan
from oneshader.codegen.shared import SharedGroup, from_pyproject
from oneshader.diagnostics import GCC, Diagnostic, Reporter, Severity, UserError
from oneshader.fsutil import read_file


def generate_command(files: list[str], output: str, *, check: bool, report: Reporter = GCC) -> int:
    """0 when done (or, with ``check``, when DIR is up to date); 1 when a file is bad or, with
    ``check``, when a module is missing or differs (each named on stderr)."""
    try:
        shared = from_pyproject(Path("pyproject.toml"))  # as the build's --bindings has them
        if check:
            return _check([Path(f) for f in files], Path(output), report, shared)
        paths = generate([Path(f) for f in files], Path(output), shared=shared)
    except UserError as err:
        report.print(err.diagnostics, sys.stderr)
        return 1
    print(f"generated {len(paths) - 1} module(s) in {output}")
    return 0


# What --check compares, said on every run: the generator reads reflection files only, so it
# cannot know whether they are current with the HLSL (the build's state knows).
SCOPE = (
    "checked the modules against the reflection files only, not the reflections against the "
    "HLSL: run `oneshader build` first for that"
)


def _newer_sources(files: list[Path]) -> list[tuple[str, Path]]:
    """(source, reflection) for each reflection whose source file (named as the build names it,
    relative to this folder) was modified after the reflection was written: an edit not
    rebuilt, which --check cannot see. Includes are not followed (the build's state has them)."""
    from oneshader.reflection.format import ReflectionFormat

    found = []
    for f in files:
        try:
            model = ReflectionFormat.read_file(f)
            source = Path(model.source)
            if source.is_file() and source.stat().st_mtime_ns > f.stat().st_mtime_ns:
                found.append((model.source, f))
        except (OSError, UserError, ValueError):
            continue
    return found


def _check(
    files: list[Path], out_dir: Path, report: Reporter, shared: tuple[SharedGroup, ...]
) -> int:
    report.print(
        [
            Diagnostic(
                source,
                0,
                0,
                Severity.WARNING,
                f"changed after {reflection} was built: the modules follow the reflection, not "
                "this edit (run oneshader build)",
            )
            for source, reflection in _newer_sources(files)
        ],
        sys.stderr,
    )
    stale: list[tuple[Path, str]] = []
    for name, data in plan(files, shared=shared).items():
        path = out_dir / name
        try:
            current = read_file(path)
        except FileNotFoundError:
            stale.append((path, "missing"))
            continue
        except OSError as err:
            stale.append((path, f"unreadable ({err.strerror})"))
            continue
        if current != data:
            stale.append((path, "differs from what the reflection files generate"))
    for path, what in stale:
        print(report.plain(f"{path}: {what}", str(path)), file=sys.stderr)
    if stale:
        print(
            report.plain(f"{len(stale)} file(s) out of date; run oneshader generate ({SCOPE})"),
            file=sys.stderr,
        )
        return 1
    print(f"{len(files)} reflection file(s): the modules are up to date ({SCOPE})")
    return 0
