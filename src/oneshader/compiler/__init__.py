"""The compiler back end: the only package that knows Slang.

Nothing outside ``oneshader.compiler`` (and ``oneshader.build``, which drives it) may import it;
``tests/test_seam.py`` holds that line. Importing this package does not load Slang: the library is
loaded on the first compile.
"""

from __future__ import annotations

from oneshader.compiler.api import (
    BindRegister,
    CompileOptions,
    CompileResult,
    EntryPointSpec,
    OutputFile,
    RegisterShift,
)
from oneshader.reflection.model import Stage

__all__ = [
    "BindRegister",
    "CompileOptions",
    "CompileResult",
    "EntryPointSpec",
    "OutputFile",
    "RegisterShift",
    "compile_file",
    "compiler_version",
    "stage_from_name",
]


def compile_file(path: str, options: CompileOptions) -> CompileResult:
    """Compile one HLSL file in this process (see ``worker.CompilerWorker`` for crash safety)."""
    from oneshader.compiler.driver import compile_file as _compile

    return _compile(path, options)


def compiler_version() -> str:
    """Identifies the compiler build for incremental-build keys, without loading Slang."""
    import importlib.metadata

    from oneshader.compiler._slang import SLANG_VERSION
    from oneshader.compiler.driver import COMPILER_CODE_VERSION

    try:
        slangpy = importlib.metadata.version("slangpy")
    except importlib.metadata.PackageNotFoundError:
        slangpy = "missing"
    return f"slang-{SLANG_VERSION}+slangpy-{slangpy}+oneshader-compiler-{COMPILER_CODE_VERSION}"


def stage_from_name(name: str) -> Stage:
    """vertex/vs, pixel/ps/fragment/fs, compute/cs (any case) to a :class:`Stage`."""
    from oneshader.compiler.driver import stage_from_name as _stage

    return _stage(name)
