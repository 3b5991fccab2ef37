"""``oneshader generate FILE.reflection... -o DIR [--check]``."""

from __future__ import annotations

import sys
from pathlib import Path

from oneshader.codegen import generate, plan
from oneshader.diagnostics import UserError


def generate_command(files: list[str], output: str, *, check: bool) -> int:
    """0 when done (or, with ``check``, when DIR is up to date); 1 when a file is bad or, with
    ``check``, when a module is missing or differs (each named on stderr)."""
    try:
        if check:
            return _check([Path(f) for f in files], Path(output))
        paths = generate([Path(f) for f in files], Path(output))
    except UserError as err:
        for d in err.diagnostics:
            print(d.format(with_excerpt=True), file=sys.stderr)
        return 1
    print(f"generated {len(paths) - 1} module(s) in {output}")
    return 0


def _check(files: list[Path], out_dir: Path) -> int:
    stale = []
    for name, data in plan(files).items():
        path = out_dir / name
        try:
            current = path.read_bytes()
        except FileNotFoundError:
            stale.append(f"{path}: missing")
            continue
        except OSError as err:
            stale.append(f"{path}: unreadable ({err.strerror})")
            continue
        if current != data:
            stale.append(f"{path}: differs from what the reflection files generate")
    for line in stale:
        print(line, file=sys.stderr)
    if stale:
        print(f"{len(stale)} file(s) out of date; run oneshader generate", file=sys.stderr)
        return 1
    return 0
