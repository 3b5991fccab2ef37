"""The compiler back end: the only package that knows Slang.

Nothing outside ``oneshader.compiler`` (and ``oneshader.buildtask``, which drives it) may import it;
``tests/test_seam.py`` holds that line. Importing this package does not load Slang: the library is
loaded on the first compile.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oneshader.compiler.api import (
        BindRegister,
        CompileOptions,
        CompileResult,
        EntryPointSpec,
        InputFile,
        OutputFile,
        RegisterShift,
        stage_from_name,
    )
    from oneshader.compiler.source.sourceset import SourceSet

# Bumped by hand when outputs change meaning; the digest below catches every other code change.
COMPILER_CODE_VERSION = "1"

__all__ = [
    "BindRegister",
    "CompileOptions",
    "CompileResult",
    "EntryPointSpec",
    "InputFile",
    "OutputFile",
    "RegisterShift",
    "compile_file",
    "compiler_version",
    "missing_compiler",
    "preprocessed_digest",
    "source_files",
    "stage_from_name",
]


# The request and result types of ``__all__``, from :mod:`.api` at their first use (PEP 562):
# a process that only starts the compiler imports this package first (the CLI before it spawns
# its early zygote, the zygote before it starts Slang's session), and api's imports (the
# reflection model, dataclasses, diagnostics: ~40 ms) would delay both.
def __getattr__(name: str) -> object:
    if name not in __all__:  # (this module's own functions never reach here)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oneshader.compiler import api

    value = getattr(api, name)
    globals()[name] = value
    return value


def compile_file(path: str, options: CompileOptions) -> CompileResult:
    """Compile one HLSL file in this process (see ``worker.CompilerWorker`` for crash safety)."""
    from oneshader.compiler.driver import compile_file as _compile

    return _compile(path, options)


def source_files(
    path: str,
    name: str,
    include_dirs: tuple[str, ...],
    defines: tuple[tuple[str, str], ...] = (),
) -> tuple[tuple[InputFile, ...], tuple[str, ...]] | None:
    """What a compile of ``path`` with ``defines`` reads, without Slang: the files the source
    model includes (the ``#if`` branches those defines take) as read now, main file first, and
    their texts as written; None when they cannot be read (the compile reports why). The
    cluster's file bundles are built from it."""
    src = _read_sources(path, name, include_dirs, defines)
    return None if src is None else (tuple(src.inputs), tuple(src.written.values()))


def preprocessed_digest(path: str, name: str, options: CompileOptions) -> str | None:
    """A digest of the source a compile of ``path`` with ``options`` hands on after
    preprocessing, without Slang (``Unit.digest``): two compiles of one file whose options
    differ only in their defines, with equal digests, give the same outputs (the permutations'
    shared compiles). None when the files cannot be read (the compile reports why)."""
    src = _read_sources(path, name, options.include_dirs, options.preprocessor_defines)
    return None if src is None or src.unit is None else src.unit.digest()


def _read_sources(
    path: str, name: str, include_dirs: tuple[str, ...], defines: tuple[tuple[str, str], ...]
) -> SourceSet | None:
    from oneshader.compiler.source.sourceset import SourceSet
    from oneshader.diagnostics import UserError

    src = SourceSet(path, name, include_dirs, defines)
    try:
        src.read()
    except (UserError, OSError, ValueError):
        return None
    return src


def missing_compiler() -> str | None:
    """Why the compiler cannot run here (Slang is not installed, or not the pinned build), or
    None; loads nothing, so a build can check before it starts a worker."""
    from oneshader.compiler.slang import missing_compiler as _missing

    return _missing()


@functools.cache
def compiler_version() -> str:
    """Identifies the compiler build for incremental-build keys, without loading Slang: the Slang
    and slangpy versions and a digest of this package's code (any change to how oneshader
    compiles changes the key)."""
    import hashlib
    from pathlib import Path

    from oneshader.compiler.slang import SLANG_VERSION, slangpy_version
    from oneshader.fsutil import read_file

    slangpy = slangpy_version()
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.rglob("*.py")):
        digest.update(source.relative_to(Path(__file__).parent).as_posix().encode())
        digest.update(read_file(source))
    code = f"{COMPILER_CODE_VERSION}.{digest.hexdigest()[:12]}"
    return f"slang-{SLANG_VERSION}+slangpy-{slangpy}+oneshader-compiler-{code}"
