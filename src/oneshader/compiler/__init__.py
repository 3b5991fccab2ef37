"""The compiler back end: the only package that knows Slang.

Nothing outside ``oneshader.compiler`` (and ``oneshader.build``, which drives it) may import it;
``tests/test_seam.py`` holds that line.
"""

from oneshader.compiler.api import (
    BindRegister,
    CompileOptions,
    CompileResult,
    EntryPointSpec,
    OutputFile,
    RegisterShift,
)

__all__ = [
    "BindRegister",
    "CompileOptions",
    "CompileResult",
    "EntryPointSpec",
    "OutputFile",
    "RegisterShift",
]
