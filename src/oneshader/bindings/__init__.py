"""What generated bindings use at run time, and the same API without generating: :func:`load`.

Importing this package loads neither numpy nor wgpu; :mod:`oneshader.bindings.runtime` (numpy)
is loaded by the first generated module or ``load``, and wgpu is never imported here at all: its
helpers take the user's device.
"""

from __future__ import annotations

import os
import types
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oneshader.bindings.reload import Reloader
from oneshader.reflection.model import ShaderReflection, Target

if TYPE_CHECKING:
    from oneshader.bindings.binding import Binding
    from oneshader.bindings.shader import Entry, Shader
    from oneshader.bindings.structs import Struct

__all__ = ["Bindings", "Reloader", "from_reflection", "load"]


class Bindings:
    """A bindings module made in memory, typed: the shader and its named parts, looked up by
    their reflection names; any other name of the generated module through attribute access
    (``b.Frame``, ``b.entries``), as the module itself would give it."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module

    @property
    def shader(self) -> Shader:
        return self.module.SHADER  # type: ignore[no-any-return]

    @property
    def reflection(self) -> ShaderReflection:
        return self.shader.reflection

    def struct(self, name: str) -> type[Struct]:
        """The struct class of a constant buffer, push block or element struct, by its class
        name (``Frame``, ``Particle``)."""
        from oneshader.bindings.structs import Struct

        cls = getattr(self.module, name, None)
        if not (isinstance(cls, type) and issubclass(cls, Struct)):
            raise LookupError(f"{self.shader.stem} has no struct class {name!r}")
        return cls

    def binding(self, name: str) -> Binding:
        """A resource or push block by its shader name."""
        for b in self.shader.bindings():
            if b.name == name:
                return b
        raise LookupError(f"{self.shader.stem} has no resource or push block {name!r}")

    def entry(self, name: str) -> Entry:
        for i, e in enumerate(self.reflection.entry_points):
            if e.name == name:
                return self.shader.entry(i)
        raise LookupError(f"{self.shader.stem} has no entry point {name!r}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(dir(self.module)))


def _module(source: str, stem: str) -> Bindings:
    from oneshader.codegen.names import identifier

    module = types.ModuleType(f"oneshader.bindings.loaded.{identifier(stem)}")
    module.__file__ = f"<oneshader bindings for {stem}>"
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return Bindings(module)


def from_reflection(
    reflection: ShaderReflection, stem: str, code: Mapping[Target, str | bytes] | None = None
) -> Bindings:
    """The bindings ``oneshader generate`` would write for ``reflection``, made in memory;
    ``stem`` names its built code files, ``code`` is the built code by target (WGSL text,
    SPIR-V bytes). LayoutError for a layout no host struct can have."""
    from oneshader.codegen import render_module

    return _module(render_module(reflection, stem, code), stem)


def load(path: str | os.PathLike[str]) -> Bindings:
    """Read a reflection file and return its bindings (the generated module's API, with the
    code built beside the file embedded); a bad file (or layout) is a UserError naming it, at
    the record at fault."""
    from oneshader.codegen.files import read_unit, render_file, stem_of

    model, code = read_unit(Path(path))
    return _module(render_file(Path(path), model, code=code), stem_of(path))
