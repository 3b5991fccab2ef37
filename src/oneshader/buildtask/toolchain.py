"""What identifies the code that produces a build's outputs: a change rebuilds everything, and
keys the shared cache and the cluster's workers."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from oneshader import __version__


def toolchain_version() -> str:
    """oneshader's version and the compiler's (Slang's, slangpy's, the compiler's code)."""
    from oneshader.compiler import compiler_version

    return f"oneshader {__version__}; {compiler_version()}"


@functools.cache
def cache_toolchain() -> str:
    """What decides outputs beyond the options and the sources, for the shared cache's keys:
    :func:`toolchain_version` and the reflection writer's code."""
    digest = hashlib.sha256(toolchain_version().encode())
    package = Path(__file__).resolve().parents[1] / "reflection"
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode() + b"\0")
        digest.update(source.read_bytes())
    return digest.hexdigest()
