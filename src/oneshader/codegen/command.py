"""``oneshader generate FILE.reflection... -o DIR [--check]``."""

from __future__ import annotations

import sys
from pathlib import Path

from oneshader.codegen import generate, plan
from oneshader.diagnostics import GCC, Reporter, UserError
from oneshader.fsutil import read_file


def generate_command(files: list[str], output: str, *, check: bool, report: Reporter = GCC) -> int:
    """0 when done (or, with ``check``, when DIR is up to date); 1 when a file is bad or, with
    ``check``, when a module is missing or differs (each named on stderr)."""
    try:
        if check:
            return _check([Path(f) for f in files], Path(output), report)
        paths = generate([Path(f) for f in files], Path(output))
    except UserError as err:
        report.print(err.diagnostics, sys.stderr)
        return 1
    print(f"generated {len(paths) - 1} module(s) in {output}")
    return 0


def _check(files: list[Path], out_dir: Path, report: Reporter) -> int:
    stale: list[tuple[Path, str]] = []
    for name, data in plan(files).items():
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
            report.plain(f"{len(stale)} file(s) out of date; run oneshader generate"),
            file=sys.stderr,
        )
        return 1
    return 0
