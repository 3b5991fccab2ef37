"""Slang: the only room that touches the ctypes binding (:mod:`.capi`).

One request for the targets given the same source (:mod:`.request`), each target's facts read
from its own reflection while the request is alive (:mod:`.facts`), Slang's diagnostics turned
into oneshader's (:mod:`.messages`). Rooms outside ``slang/`` take from the binding only what
this package exports: the library handle and its version, and whether it is installed
(``tests/test_layers.py`` holds that line).
"""

from __future__ import annotations

from oneshader.compiler.slang.capi import (
    SLANG_VERSION,
    library,
    library_path,
    missing_compiler,
    slangpy_version,
)

__all__ = ["SLANG_VERSION", "library", "library_path", "missing_compiler", "slangpy_version"]
