"""What generated bindings use at run time, and the same API without generating: :func:`load`.

Importing this package loads neither numpy nor wgpu; :mod:`oneshader.bindings.runtime` (numpy)
is loaded by the first generated module or ``load``, and wgpu is never imported here at all: its
helpers take the user's device.
"""

from __future__ import annotations

import os
import types
from pathlib import Path

from oneshader.reflection.model import ShaderReflection

__all__ = ["from_reflection", "load"]


def _module(source: str, stem: str) -> types.ModuleType:
    from oneshader.codegen.names import identifier

    module = types.ModuleType(f"oneshader.bindings.loaded.{identifier(stem)}")
    module.__file__ = f"<oneshader bindings for {stem}>"
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def from_reflection(reflection: ShaderReflection, stem: str) -> types.ModuleType:
    """The module ``oneshader generate`` would write for ``reflection``, made in memory;
    ``stem`` names its built code files. LayoutError for a layout no host struct can have."""
    from oneshader.codegen import render_module

    return _module(render_module(reflection, stem), stem)


def load(path: str | os.PathLike[str]) -> types.ModuleType:
    """Read a reflection file and return its bindings module (the generated module's API);
    a bad file (or layout) is a UserError naming it, at the record at fault."""
    from oneshader.codegen import render_file, stem_of
    from oneshader.reflection.validate import read_checked_file

    model = read_checked_file(path)
    return _module(render_file(Path(path), model), stem_of(path))
