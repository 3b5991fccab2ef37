"""What a target's emitted code declares, in one target-neutral shape the cross-check compares.

Each reader (``spirv``, ``wgsl``, ``msl``) turns one output file into an :class:`EmittedModule`.
Layouts reuse the reflection's :class:`TypeLayout`, filled in from the code alone (decorations,
attributes and the target's own layout rules), so a layout compares against a layout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from oneshader.reflection.model import (
    BuiltIn,
    Interpolation,
    MatrixPacking,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
)

__all__ = [
    "EmittedCodeError",
    "EmittedEntry",
    "EmittedModule",
    "EmittedResource",
    "EmittedSpec",
    "EmittedVariable",
    "demangle",
    "round_up",
    "struct_name",
    "unwrap_slang_struct",
]


class EmittedCodeError(ValueError):
    """The output is not code this reader understands (a bug upstream, never a user error)."""


_SUFFIX = re.compile(r"_\d+$")


def demangle(name: str) -> str:
    """Slang's WGSL/MSL name for a declaration: the source name plus ``_<n>`` (``Frame_0``)."""
    return _SUFFIX.sub("", name)


def round_up(value: int, align: int) -> int:
    return -(-value // align) * align if align else value


def struct_name(name: str) -> str:
    """The source name of a struct Slang emitted as ``<Name>[_std140|_std430|_natural]_<n>``."""
    name = demangle(name)
    for suffix in ("_std140", "_std430", "_natural"):
        name = name.removesuffix(suffix)
    return name


_MATRIX_STORAGE = re.compile(
    r"^_MatrixStorage_[a-z]+?(?:16_t|32_t|64_t)?(?P<r>\d)x(?P<c>\d)(?P<col>_ColMajor)?"
)


def unwrap_slang_struct(name: str, members: list[StructMember]) -> TypeLayout | None:
    """Slang's wrapper structs, read as what they hold.

    ``_MatrixStorage_floatRxC[_ColMajor]<rules>`` (one array of vectors) is the HLSL matrix
    ``floatRxC``, column-major when ``_ColMajor`` is there, its matrix stride the array stride;
    ``_Array_<rules>_<T><N>`` (one array member) is that array.
    """
    if len(members) != 1 or members[0].type.kind is not TypeKind.Array:
        return None
    array = members[0].type
    if name.startswith("_Array_"):
        return array
    m = _MATRIX_STORAGE.match(name)
    if m is None or array.element is None:
        return None
    return TypeLayout(
        TypeKind.Matrix,
        scalar=array.element.scalar,
        rows=int(m.group("r")),
        cols=int(m.group("c")),
        size=array.size,
        align=array.align,
        mstride=array.stride,
        packing=MatrixPacking.ColumnMajor if m.group("col") else MatrixPacking.RowMajor,
    )


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
    scope: str = ""  # the entry point whose parameter it is (MSL); "" for a module-scope variable


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
    spec_uses: frozenset[str] | None = None  # emitted names of the spec constants it reads
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
