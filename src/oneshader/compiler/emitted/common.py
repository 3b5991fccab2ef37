"""What a target's emitted code declares, in one target-neutral shape the cross-check compares.

Each reader (``spirv``, ``wgsl``, ``msl``) turns one output file into an :class:`EmittedModule`.
Layouts reuse the reflection's :class:`TypeLayout`, filled in from the code alone (decorations,
attributes and the target's own layout rules), so a layout compares against a layout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from oneshader.reflection.model import BuiltIn, Interpolation, Target, TypeLayout

__all__ = [
    "EmittedCodeError",
    "EmittedEntry",
    "EmittedModule",
    "EmittedResource",
    "EmittedSpec",
    "EmittedVariable",
    "demangle",
]


class EmittedCodeError(ValueError):
    """The output is not code this reader understands (a bug upstream, never a user error)."""


_SUFFIX = re.compile(r"_\d+$")


def demangle(name: str) -> str:
    """Slang's WGSL/MSL name for a declaration: the source name plus ``_<n>`` (``Frame_0``)."""
    return _SUFFIX.sub("", name)


@dataclass(frozen=True)
class EmittedResource:
    """A global resource variable.

    ``space`` is the target's own class: SPIR-V storage class (``Uniform``, ``StorageBuffer``,
    ``UniformConstant``, ``PushConstant``), WGSL address space or handle (``uniform``, ``storage``,
    ``handle``), MSL argument class (``buffer``, ``texture``, ``sampler``). ``layout`` is the
    block struct of a constant/push buffer or the element of a structured buffer; ``stride`` the
    element stride of a runtime array. ``set``/``binding`` are None where the code gives none.
    """

    name: str
    emitted: str
    space: str
    set: int | None = None
    binding: int | None = None
    layout: TypeLayout | None = None
    stride: int | None = None
    count: int = 1
    format: str | None = None
    type_text: str = ""
    role: str = ""  # "counter" for the hidden counter of an append/consume buffer


@dataclass(frozen=True)
class EmittedSpec:
    name: str
    emitted: str
    index: int
    default: int | None  # 32-bit pattern of the default, None when the code gives none


@dataclass(frozen=True)
class EmittedVariable:
    """A stage input or output of one entry point; ``location`` is None for built-ins."""

    name: str
    emitted: str
    location: int | None = None
    builtin: BuiltIn | None = None
    target_builtin: str = ""  # the target's own spelling, for messages
    interp: frozenset[Interpolation] = frozenset()
    semantic: str = ""  # MSL user(...) semantic, upper case with its index (``TEXCOORD_1``)


@dataclass(frozen=True)
class EmittedEntry:
    name: str
    stage: str  # vertex, pixel, compute
    workgroup: tuple[int, int, int] | None = None
    inputs: tuple[EmittedVariable, ...] = ()
    outputs: tuple[EmittedVariable, ...] = ()
    uses: frozenset[str] | None = None  # resource names the entry references, where knowable
    helpers: frozenset[str] = frozenset()  # target built-ins the compiler added on its own


@dataclass
class EmittedModule:
    target: Target
    source: str  # the output file's suffix, for messages
    resources: dict[str, list[EmittedResource]] = field(default_factory=dict)
    spec_constants: dict[str, EmittedSpec] = field(default_factory=dict)
    entries: dict[str, EmittedEntry] = field(default_factory=dict)
    capabilities: frozenset[str] = frozenset()
    enables: frozenset[str] = frozenset()
    version: tuple[int, int] | None = None

    def add_resource(self, res: EmittedResource) -> None:
        self.resources.setdefault(res.name, []).append(res)
