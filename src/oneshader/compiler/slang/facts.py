"""One target's facts, read out of Slang's reflection while its compile request is alive.

Every target gets its own :class:`TargetFacts`, read from its own reflection (a request of
several targets has one per target: ``capi.Request.reflection``). Everything here is plain
Python data: the request (and every reflection pointer) can be destroyed as soon as
:func:`read_facts` returns.
"""

from __future__ import annotations

import ctypes
import enum
import struct
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import TypeVar

from oneshader.compiler.emitted.common import GLOBALS
from oneshader.compiler.slang import capi as S
from oneshader.reflection.model import (
    MatrixPacking,
    ScalarKind,
    Stage,
    StructMember,
    TypeKind,
    TypeLayout,
)

_SCALARS = {
    2: (ScalarKind.Bool, 4),
    3: (ScalarKind.Int, 4),
    4: (ScalarKind.UInt, 4),
    5: (ScalarKind.Int64, 8),
    6: (ScalarKind.UInt64, 8),
    7: (ScalarKind.Float16, 2),
    8: (ScalarKind.Float, 4),
    9: (ScalarKind.Float64, 8),
    12: (ScalarKind.Int16, 2),
    13: (ScalarKind.UInt16, 2),
}


class Category(enum.Enum):
    """What a global parameter binds as: Slang's parameter category in oneshader's words, so
    that Slang's integer codes stop at ``slang/``."""

    NONE = "none"  # no binding of its own (a loose uniform, gathered into $Globals)
    CONSTANT_BUFFER = "constant buffer"
    SHADER_RESOURCE = "shader resource"
    UNORDERED_ACCESS = "unordered access"
    SAMPLER = "sampler"
    UNIFORM = "uniform"
    SPEC_CONSTANT = "specialization constant"
    PUSH_CONSTANT = "push constant buffer"
    OTHER = "other"


_CATEGORY = {
    0: Category.NONE,
    S.CAT_CONSTANT_BUFFER: Category.CONSTANT_BUFFER,
    S.CAT_SHADER_RESOURCE: Category.SHADER_RESOURCE,
    S.CAT_UNORDERED_ACCESS: Category.UNORDERED_ACCESS,
    S.CAT_SAMPLER_STATE: Category.SAMPLER,
    S.CAT_UNIFORM: Category.UNIFORM,
    S.CAT_SPECIALIZATION_CONSTANT: Category.SPEC_CONSTANT,
    S.CAT_PUSH_CONSTANT_BUFFER: Category.PUSH_CONSTANT,
}

SLANG_STAGE_ID = {
    Stage.Vertex: S.STAGE_VERTEX,
    Stage.Pixel: S.STAGE_FRAGMENT,
    Stage.Compute: S.STAGE_COMPUTE,
}
_STAGE_OF_SLANG = {slang: stage for stage, slang in SLANG_STAGE_ID.items()}

# The array a compute entry point's thread-group size is read into: its type made once (ctypes
# keeps array types only weakly, each one a reference cycle for the cycle collector to free).
_GROUP_SIZE = S._U64 * 3

# SlangResourceShape base values (SLANG_RESOURCE_BASE_SHAPE_MASK = 0x0F) and flags.
_SHAPE_ARRAY = 0x40
_SHAPE_MS = 0x80


@dataclass
class ParamFacts:
    """A global shader parameter on one target.

    ``category`` is what its binding is; ``binding``/``space`` the offset and space in that
    category (SPIR-V/WGSL: binding and set; Metal: the argument index). ``slots`` holds every
    (Slang category code, offset, space) the parameter occupies.
    """

    name: str
    type_kind: int
    category: Category
    binding: int
    space: int
    binding_count: int = 1
    slots: list[tuple[int, int, int]] = field(default_factory=list)
    shape: int = 0
    access: int = 0
    count: int = 1  # array size; 0 for unsized
    layout: TypeLayout | None = None  # cbuffer/push struct, structured element, or texel type
    scalar: ScalarKind | None = None  # specialization constants
    default_bits: int | None = None


@dataclass
class VarFacts:
    """A flattened stage variable (one leaf of the entry point's parameters or result)."""

    name: str
    struct_name: str  # the enclosing struct's name, "" for a direct parameter/result
    semantic: str
    semantic_index: int
    location: int | None
    scalar: ScalarKind
    components: int
    span: int = 1  # the locations it occupies (an array or matrix takes more than one)


@dataclass
class EntryFacts:
    name: str
    stage: Stage | None  # None: a stage oneshader does not support
    workgroup: tuple[int, int, int]
    inputs: list[VarFacts]
    outputs: list[VarFacts]


@dataclass
class TargetFacts:
    params: list[ParamFacts]
    entries: list[EntryFacts]


def _size(value: int) -> int:
    """A size, offset or count read from Slang (a ``size_t``), 0 where it has none (unbounded
    or unknown)."""
    return 0 if value >= S.UNKNOWN else value


class TypeMemo:
    """What one request's reflections tell of its types and variables, by pointer: the types
    (``float4`` everywhere) and declarations are the program's, shared by every target of the
    request and by the members and varyings that repeat them, while each target lays them out
    anew. Valid while the request lives (a pointer may be reused after it is destroyed)."""

    def __init__(self) -> None:
        self.kinds: dict[int, int] = {}
        self.names: dict[int, str] = {}  # a type's, or a variable's
        self.scalars: dict[int, ScalarKind] = {}  # a type's or its element's scalar kind
        self.varying_types: dict[int, tuple[ScalarKind, int]] = {}  # scalar and components
        self.counts: dict[int, int] = {}  # element counts (vectors, arrays)
        self.shapes: dict[int, tuple[int, int, TypeLayout | None]] = {}  # resources
        # a leaf layout (scalar, vector, matrix) by type, size, alignment and packing: one
        # TypeLayout (immutable) serves every member and target that lays it out alike
        self.leaves: dict[tuple[int, int, int, int], TypeLayout] = {}
        self.members: dict[int, tuple[str, ...]] = {}  # a struct type's member names
        # by place in the program (entry point index, and parameter index, -1 the result): an
        # entry point's name, stage and workgroup size; its parameters' (out, inout) and trees
        self.entries: dict[int, tuple[str, int, tuple[int, int, int]]] = {}
        self.directions: dict[tuple[int, int], tuple[bool, bool]] = {}
        self.varyings: dict[tuple[int, int], _Tree] = {}


@dataclass(slots=True)
class _Leaf:
    """A stage variable as the program declares it (its place in a target's layout aside);
    never changed once read."""

    name: str
    struct_name: str
    semantic: str
    semantic_index: int
    located: bool  # has a location (not a system value but a render target)
    type: int
    scalar: ScalarKind
    components: int


# An entry point parameter's stage variables, every target's: a leaf, a struct's fields' trees,
# or None (no layout).
_Tree = _Leaf | tuple["_Tree", ...] | None


_K = TypeVar("_K")
_V = TypeVar("_V")
_BOOL = (ScalarKind.Bool, 4)  # what a scalar code _SCALARS lacks reads as


def _asked(memo: dict[_K, _V], key: _K, ask: Callable[[], _V]) -> _V:
    """``memo[key]``, asked of Slang the first time (``TypeMemo``: once a request)."""
    found = memo.get(key)
    if found is None:
        found = memo[key] = ask()
    return found


class _Reader:
    def __init__(self, lib: S.Library, memo: TypeMemo) -> None:
        self.lib = lib
        self.memo = memo
        self._spans: dict[tuple[int, int], int] = {}  # one reflection's: a varying's locations

    def kind_of(self, tl: int, t: int | None) -> int:
        """A type layout's kind: its type's (the same, asked once a request), else its own."""
        if not t:
            return int(self.lib.spReflectionTypeLayout_getKind(tl))
        return _asked(self.memo.kinds, t, lambda: int(self.lib.spReflectionType_GetKind(t)))

    def name_of(self, t: int | None) -> str:
        if not t:
            return ""
        return _asked(self.memo.names, t, lambda: S.text(self.lib.spReflectionType_GetName(t)))

    def var_name(self, var: int | None) -> str:
        if not var:
            return ""
        lib = self.lib
        return _asked(self.memo.names, var, lambda: S.text(lib.spReflectionVariable_GetName(var)))

    def count_of(self, t: int) -> int:
        return _asked(
            self.memo.counts, t, lambda: int(self.lib.spReflectionType_GetElementCount(t))
        )

    def layout(self, tl: int, struct_name: str = "") -> TypeLayout:
        """The uniform-data layout of a type (sizes, offsets, strides in bytes)."""
        lib = self.lib
        t = lib.spReflectionTypeLayout_GetType(tl)
        kind = self.kind_of(tl, t)
        size = _size(lib.spReflectionTypeLayout_GetSize(tl, S.CAT_UNIFORM))
        align = max(int(lib.spReflectionTypeLayout_getAlignment(tl, S.CAT_UNIFORM)), 0)
        if kind in (S.KIND_SCALAR, S.KIND_VECTOR, S.KIND_MATRIX):
            matrix = kind == S.KIND_MATRIX
            mode = lib.spReflectionTypeLayout_GetMatrixLayoutMode(tl) if matrix else 0
            key = (t or 0, size, align, mode)
            leaf = self.memo.leaves.get(key)
            if leaf is None:
                leaf = self.memo.leaves[key] = self._leaf(t, kind, size, align, mode)
            return leaf
        if kind == S.KIND_ARRAY:
            length = _size(self.count_of(t))
            element = self.layout(lib.spReflectionTypeLayout_GetElementTypeLayout(tl))
            stride = _size(lib.spReflectionTypeLayout_GetElementStride(tl, S.CAT_UNIFORM))
            return TypeLayout(
                TypeKind.Array,
                size=size,
                align=align,
                length=length,
                stride=stride,
                element=element,
            )
        if kind == S.KIND_STRUCT:
            members = []
            field_at = lib.spReflectionTypeLayout_GetFieldByIndex
            offset_of = lib.spReflectionVariableLayout_GetOffset
            type_layout = lib.spReflectionVariableLayout_GetTypeLayout
            fields = [field_at(tl, i) for i in range(lib.spReflectionTypeLayout_GetFieldCount(tl))]
            for name, vl in zip(self.member_names(t, fields), fields, strict=True):
                offset = int(offset_of(vl, S.CAT_UNIFORM))
                members.append(StructMember(name, offset, self.layout(type_layout(vl))))
            name = struct_name or self.name_of(t)
            return TypeLayout(
                TypeKind.Struct, name=name, size=size, align=align, members=tuple(members)
            )
        # Anything else (resources inside structs and the like) has no uniform layout.
        return TypeLayout(TypeKind.Struct, name=self.name_of(t), size=size, align=align)

    def member_names(self, t: int | None, fields: list[int]) -> tuple[str, ...]:
        """The names of a struct's members (of type ``t``, laid out as ``fields``): its type's,
        read once a request."""
        names = self.memo.members.get(t) if t else None
        if names is None or len(names) != len(fields):
            variable = self.lib.spReflectionVariableLayout_GetVariable
            # a derived struct's base is its first member, "base" as in DXC (and in the code
            # of every target)
            names = tuple(
                "base" if n == "$base" else n for n in (self.var_name(variable(f)) for f in fields)
            )
            if t:
                self.memo.members[t] = names
        return names

    def _leaf(self, t: int, kind: int, size: int, align: int, mode: int) -> TypeLayout:
        """The layout of a scalar, vector or matrix of type ``t``; ``mode``: a matrix's."""
        lib = self.lib
        if kind == S.KIND_SCALAR:
            scalar, _ = _SCALARS.get(lib.spReflectionType_GetScalarType(t), _BOOL)
            return TypeLayout(TypeKind.Scalar, scalar, size=size, align=align)
        scalar = self.scalar_of(t)
        if kind == S.KIND_VECTOR:
            rows = self.count_of(t)
            if rows == 1:  # float1: every target's code holds a scalar (as DXC's SPIR-V does)
                return TypeLayout(TypeKind.Scalar, scalar, size=size, align=align)
            return TypeLayout(TypeKind.Vector, scalar, rows=rows, size=size, align=align)
        rows = int(lib.spReflectionType_GetRowCount(t))
        cols = int(lib.spReflectionType_GetColumnCount(t))
        row_major = mode == S.MATRIX_ROW_MAJOR
        packing = MatrixPacking.RowMajor if row_major else MatrixPacking.ColumnMajor
        vectors = rows if packing is MatrixPacking.RowMajor else cols
        mstride = size // vectors if vectors else 0
        return TypeLayout(
            TypeKind.Matrix,
            scalar,
            rows=rows,
            cols=cols,
            size=size,
            align=align,
            mstride=mstride,
            packing=packing,
        )

    def scalar_of(self, t: int) -> ScalarKind:
        def ask() -> ScalarKind:
            e = self.lib.spReflectionType_GetElementType(t)
            return _SCALARS.get(self.lib.spReflectionType_GetScalarType(e or t), _BOOL)[0]

        return _asked(self.memo.scalars, t, ask)

    def resource(self, t: int) -> tuple[int, int, TypeLayout | None]:
        """A resource type's shape, access and texel type (:meth:`texel`)."""

        def ask() -> tuple[int, int, TypeLayout | None]:
            shape = int(self.lib.spReflectionType_GetResourceShape(t))
            access = int(self.lib.spReflectionType_GetResourceAccess(t))
            return shape, access, self.texel(t) if shape & 0x0F not in (0x06, 0x07) else None

        return _asked(self.memo.shapes, t, ask)

    def texel(self, t: int) -> TypeLayout | None:
        """The texel/element type of a texture or typed buffer, with natural (packed) sizes."""
        lib = self.lib
        rt = lib.spReflectionType_GetResourceResultType(t)
        if not rt:
            return None
        kind = lib.spReflectionType_GetKind(rt)
        if kind == S.KIND_SCALAR:
            scalar, width = _SCALARS.get(
                lib.spReflectionType_GetScalarType(rt), (ScalarKind.Float, 4)
            )
            return TypeLayout(TypeKind.Scalar, scalar, size=width, align=width)
        if kind == S.KIND_VECTOR:
            e = lib.spReflectionType_GetElementType(rt)
            scalar, width = _SCALARS.get(
                lib.spReflectionType_GetScalarType(e), (ScalarKind.Float, 4)
            )
            n = int(lib.spReflectionType_GetElementCount(rt))
            align = width * (4 if n == 3 else n)
            return TypeLayout(TypeKind.Vector, scalar, rows=n, size=width * n, align=align)
        return None

    def categories(self, vl: int, tl: int) -> list[tuple[int, int, int]]:
        lib = self.lib
        out = []
        category_at = lib.spReflectionTypeLayout_GetCategoryByIndex
        for i in range(lib.spReflectionTypeLayout_GetCategoryCount(tl)):
            cat = category_at(tl, i)
            if cat in (S.CAT_UNIFORM, S.CAT_MIXED):
                continue
            off = lib.spReflectionVariableLayout_GetOffset(vl, cat)
            space = lib.spReflectionVariableLayout_GetSpace(vl, cat)
            out.append((int(cat), _size(off), _size(space)))
        return out

    def params(self, vl: int) -> list[ParamFacts]:
        """The parameter, or for a struct of nothing but resources its fields, named
        ``x.field`` (Slang flattens such a global into one variable per field, as DXC does)."""
        lib = self.lib
        tl = lib.spReflectionVariableLayout_GetTypeLayout(vl)
        t = lib.spReflectionTypeLayout_GetType(tl)
        fields = []
        kind = self.kind_of(tl, t)
        if kind == S.KIND_STRUCT:
            count = lib.spReflectionTypeLayout_GetFieldCount(tl)
            fields = [lib.spReflectionTypeLayout_GetFieldByIndex(tl, i) for i in range(count)]
        resources = (S.KIND_RESOURCE, S.KIND_SAMPLER_STATE)
        kinds = []
        for f in fields:  # a field's kind, or an array field's element's
            ftl = lib.spReflectionVariableLayout_GetTypeLayout(f)
            fkind = self.kind_of(ftl, lib.spReflectionTypeLayout_GetType(ftl))
            if fkind == S.KIND_ARRAY:
                ftl = lib.spReflectionTypeLayout_GetElementTypeLayout(ftl)
                fkind = self.kind_of(ftl, lib.spReflectionTypeLayout_GetType(ftl))
            kinds.append(fkind)
        if not fields or any(k not in resources for k in kinds):
            return [self.param(vl, tl, t, kind)]
        name = self.var_name(lib.spReflectionVariableLayout_GetVariable(vl))
        out = []
        for f in fields:
            ftl = lib.spReflectionVariableLayout_GetTypeLayout(f)
            ft = lib.spReflectionTypeLayout_GetType(ftl)
            p = self.param(f, ftl, ft, self.kind_of(ftl, ft))
            p.name = f"{name}.{p.name}"
            p.slots = [
                (
                    cat,
                    off + _size(lib.spReflectionVariableLayout_GetOffset(vl, cat)),
                    space + _size(lib.spReflectionVariableLayout_GetSpace(vl, cat)),
                )
                for cat, off, space in p.slots
            ]
            cat, p.binding, p.space = p.slots[0] if p.slots else (0, 0, 0)
            p.category = _CATEGORY.get(cat, Category.OTHER)
            out.append(p)
        return out

    def param(self, vl: int, tl: int, t: int | None, kind: int) -> ParamFacts:
        """A parameter's facts, of type layout ``tl``, its type ``t`` and their ``kind``."""
        lib = self.lib
        var = lib.spReflectionVariableLayout_GetVariable(vl)
        name = self.var_name(var)
        slots = self.categories(vl, tl)
        cat, binding, space = slots[0] if slots else (0, 0, 0)
        count = 1
        inner = tl
        if kind == S.KIND_ARRAY:
            count = _size(self.count_of(t)) if t else 0
            inner = lib.spReflectionTypeLayout_GetElementTypeLayout(inner)
            t = lib.spReflectionTypeLayout_GetType(inner)
            kind = self.kind_of(inner, t)
        category = _CATEGORY.get(cat, Category.OTHER)
        p = ParamFacts(name, kind, category, binding, space, slots=slots, count=count)
        # How many bindings of its category it takes (an append buffer and its counter take 2).
        p.binding_count = max(_size(lib.spReflectionTypeLayout_GetSize(tl, cat)), 1) if cat else 1
        if kind in (S.KIND_CONSTANT_BUFFER, S.KIND_PARAMETER_BLOCK, S.KIND_TEXTURE_BUFFER):
            el = lib.spReflectionTypeLayout_GetElementTypeLayout(inner)
            p.layout = self.layout(el) if el else None
        elif kind == S.KIND_RESOURCE:
            p.shape, p.access, p.layout = self.resource(t) if t else (0, 0, None)
            if p.shape & 0x0F == 0x06:  # SLANG_STRUCTURED_BUFFER
                el = lib.spReflectionTypeLayout_GetElementTypeLayout(inner)
                p.layout = self.layout(el) if el else None
        elif kind == S.KIND_SCALAR and category is Category.SPEC_CONSTANT:
            p.scalar, _ = _SCALARS.get(lib.spReflectionType_GetScalarType(t), (ScalarKind.Int, 4))
            p.default_bits = self.default_bits(var, p.scalar)
        return p

    def default_bits(self, var: int, scalar: ScalarKind) -> int | None:
        lib = self.lib
        if not lib.spReflectionVariable_HasDefaultValue(var):
            return None
        if scalar is ScalarKind.Float:
            f = ctypes.c_float()
            if lib.spReflectionVariable_GetDefaultValueFloat(var, ctypes.byref(f)) < 0:
                return None
            return int(struct.unpack("<I", struct.pack("<f", f.value))[0])
        i = ctypes.c_int64()
        if lib.spReflectionVariable_GetDefaultValueInt(var, ctypes.byref(i)) < 0:
            return None
        return int(i.value) & 0xFFFFFFFF

    def varyings(self, vl: int, category: int, place: tuple[int, int]) -> list[VarFacts]:
        """The stage variables of the entry point parameter (or result) ``vl`` at ``place``
        (``TypeMemo.varyings``) in ``category``: what the program declares read once a request
        (:meth:`tree`), where this target lays them out read here."""
        tree = self.memo.varyings.get(place)
        if tree is None and place not in self.memo.varyings:
            tree = self.memo.varyings[place] = self.tree(vl, "")
        out: list[VarFacts] = []
        self._place(vl, tree, category, 0, out)
        return out

    def tree(self, vl: int, struct_name: str) -> _Tree:
        """The stage variables of ``vl`` as the program declares them (a struct flattened)."""
        lib = self.lib
        if not vl:
            return None
        tl = lib.spReflectionVariableLayout_GetTypeLayout(vl)
        if not tl:
            return None
        t = lib.spReflectionTypeLayout_GetType(tl)
        kind = self.kind_of(tl, t)
        if kind == S.KIND_STRUCT:
            inner_name = self.name_of(t)
            field_at = lib.spReflectionTypeLayout_GetFieldByIndex
            count = lib.spReflectionTypeLayout_GetFieldCount(tl)
            return tuple(self.tree(field_at(tl, i), inner_name) for i in range(count))
        name = self.var_name(lib.spReflectionVariableLayout_GetVariable(vl))
        semantic = S.text(lib.spReflectionVariableLayout_GetSemanticName(vl))
        index = int(lib.spReflectionVariableLayout_GetSemanticIndex(vl))
        known = self.memo.varying_types.get(t) if t else None
        if known is None:
            known = self.varying_type(t, kind)
            if t:
                self.memo.varying_types[t] = known
        upper = semantic.upper()
        located = not upper.startswith("SV_") or upper.startswith("SV_TARGET")
        return _Leaf(name, struct_name, semantic, index, located, t or 0, *known)

    def _place(self, vl: int, tree: _Tree, category: int, base: int, out: list[VarFacts]) -> None:
        """``tree``'s variables as this target lays out ``vl`` (locations, spans), onto ``out``."""
        if tree is None:
            return
        lib = self.lib
        offset = _size(lib.spReflectionVariableLayout_GetOffset(vl, category))
        if isinstance(tree, tuple):
            tl = lib.spReflectionVariableLayout_GetTypeLayout(vl)
            field_at = lib.spReflectionTypeLayout_GetFieldByIndex
            for i, field_tree in enumerate(tree):
                self._place(field_at(tl, i), field_tree, category, base + offset, out)
            return
        t = tree.type
        span = self._spans.get((t, category)) if t else None
        if span is None:
            tl = lib.spReflectionVariableLayout_GetTypeLayout(vl)
            span = max(_size(lib.spReflectionTypeLayout_GetSize(tl, category)), 1)
            if t:
                self._spans[(t, category)] = span
        location = base + offset if tree.located else None
        out.append(
            VarFacts(
                tree.name,
                tree.struct_name,
                tree.semantic,
                tree.semantic_index,
                location,
                tree.scalar,
                tree.components,
                span,
            )
        )

    def varying_type(self, t: int | None, kind: int) -> tuple[ScalarKind, int]:
        """A varying's scalar kind and components, from its type ``t`` of kind ``kind``."""
        lib = self.lib
        if kind == S.KIND_VECTOR:
            return self.scalar_of(t), self.count_of(t)  # type: ignore[arg-type]
        if kind == S.KIND_SCALAR:
            code = lib.spReflectionType_GetScalarType(t)
            return _SCALARS.get(code, (ScalarKind.Float, 4))[0], 1
        if kind == S.KIND_MATRIX:
            # One location per column (column-major, as Slang's SPIR-V stores it), each a
            # vector of the matrix's rows.
            return self.scalar_of(t), int(lib.spReflectionType_GetRowCount(t))  # type: ignore[arg-type]
        scalar = self.scalar_of(t) if t else ScalarKind.Float
        if kind == S.KIND_ARRAY and t:  # an array of varyings: its element's components
            t = lib.spReflectionType_GetElementType(t)
        if t and lib.spReflectionType_GetKind(t) == S.KIND_MATRIX:  # a matrix's columns
            components = int(lib.spReflectionType_GetRowCount(t))
        else:
            components = int(lib.spReflectionType_GetElementCount(t)) if t else 1
        return scalar, max(components, 1)

    def directions(self, vl: int, place: tuple[int, int]) -> tuple[bool, bool]:
        """Whether an entry point's parameter ``vl`` at ``place`` is ``out``, and whether
        ``inout``."""

        def ask() -> tuple[bool, bool]:
            var = self.lib.spReflectionVariableLayout_GetVariable(vl)
            if not var:
                return False, False
            has = self.lib.spReflectionVariable_FindModifier
            return bool(has(var, S.MODIFIER_OUT)), bool(has(var, S.MODIFIER_INOUT))

        return _asked(self.memo.directions, place, ask)

    def entry(self, ep: int, index: int) -> EntryFacts:
        """The ``index``-th entry point ``ep``: its name, stage and stage variables."""
        lib = self.lib

        def ask() -> tuple[str, int, tuple[int, int, int]]:
            stage = int(lib.spReflectionEntryPoint_getStage(ep))
            workgroup = (0, 0, 0)
            if stage == S.STAGE_COMPUTE:  # (asked of a compute entry point only: a costly ask)
                sizes = _GROUP_SIZE()
                lib.spReflectionEntryPoint_getComputeThreadGroupSize(ep, 3, sizes)
                workgroup = (int(sizes[0]), int(sizes[1]), int(sizes[2]))
            return S.text(lib.spReflectionEntryPoint_getName(ep)), stage, workgroup

        name, stage, workgroup = _asked(self.memo.entries, index, ask)
        inputs: list[VarFacts] = []
        result = lib.spReflectionEntryPoint_getResultVarLayout(ep)
        outputs = self.varyings(result, S.CAT_VARYING_OUTPUT, (index, -1)) if result else []
        for v in outputs:
            if not v.name and not v.struct_name:
                v.name = "result"
        # Parameters after the result, as DXC creates its outputs (and counts locations):
        # an ``out`` parameter is an output, an ``inout`` one both (Slang lists them all
        # with the inputs).
        for i in range(lib.spReflectionEntryPoint_getParameterCount(ep)):
            vl = lib.spReflectionEntryPoint_getParameterByIndex(ep, i)
            out, inout = self.directions(vl, (index, i))
            if inout or not out:
                inputs.extend(self.varyings(vl, S.CAT_VARYING_INPUT, (index, i)))
            if out or inout:  # (a system value has no location, so no output category)
                outputs.extend(self.varyings(vl, S.CAT_VARYING_OUTPUT, (index, i)))
        return EntryFacts(name, _STAGE_OF_SLANG.get(stage), workgroup, inputs, outputs)


def read_facts(lib: S.Library, reflection: int, memo: TypeMemo | None = None) -> TargetFacts:
    """The facts of one target's ``reflection``; ``memo``: shared by the reflections of one
    request (the targets of a shared request), else this one's own."""
    r = _Reader(lib, memo or TypeMemo())
    params = [
        p
        for i in range(lib.spReflection_GetParameterCount(reflection))
        for p in r.params(lib.spReflection_GetParameterByIndex(reflection, i))
    ]
    params = _gather_globals(lib, r, reflection, params)
    entries = [
        r.entry(lib.spReflection_getEntryPointByIndex(reflection, i), i)
        for i in range(lib.spReflection_getEntryPointCount(reflection))
    ]
    return TargetFacts(params, entries)


def _gather_globals(
    lib: S.Library, r: _Reader, reflection: int, params: list[ParamFacts]
) -> list[ParamFacts]:
    """Loose global uniforms (``float4 Tint;`` outside any cbuffer) as the one constant buffer
    DXC makes of them, ``$Globals``, in the place of the first of them (where DXC creates it).
    Slang gathers them the same way into its ``globalParams`` buffer, laid out by the target's
    constant-buffer rules; its reflection gives each its offset there."""
    loose = {p.name for p in params if not p.slots and p.category is Category.NONE}
    if not loose:
        return params
    tl = lib.spReflection_getGlobalParamsTypeLayout(reflection)
    if tl and lib.spReflectionTypeLayout_getKind(tl) == S.KIND_CONSTANT_BUFFER:
        tl = lib.spReflectionTypeLayout_GetElementTypeLayout(tl)
    whole = r.layout(tl) if tl else TypeLayout(TypeKind.Struct)
    members = tuple(m for m in whole.members if m.name in loose)
    size = _size(lib.spReflection_getGlobalConstantBufferSize(reflection))
    align = max((m.type.align for m in members), default=1)
    block = ParamFacts(GLOBALS, S.KIND_CONSTANT_BUFFER, Category.CONSTANT_BUFFER, 0, 0)
    block.layout = TypeLayout(
        TypeKind.Struct, name=GLOBALS, size=size, align=align, members=members
    )
    out: list[ParamFacts] = []
    for p in params:
        if p.name not in loose:
            out.append(p)
        elif not any(q is block for q in out):
            out.append(block)
    return out


def with_bools(facts: TargetFacts, members: Collection[tuple[str, str]]) -> TargetFacts:
    """``facts`` with the members ``members`` (owner, member) bool again, as the source
    declares them (WGSL's code holds them as uint: ``rewrite.bool_edits``)."""
    params = [
        replace(p, layout=_with_bools(p.layout, p.name, "", members)) if p.layout else p
        for p in facts.params
    ]
    return replace(facts, params=params)


def _with_bools(
    t: TypeLayout, owner: str, member: str, members: Collection[tuple[str, str]]
) -> TypeLayout:
    """:func:`with_bools` of one layout (a function, not a closure calling itself: that cycle
    would wait for the cycle collector)."""
    if t.kind is TypeKind.Struct:  # a cbuffer's layout is nameless: the block's name
        here = t.name or owner
        inner = tuple(
            replace(m, type=_with_bools(m.type, here, m.name, members)) for m in t.members
        )
        return replace(t, members=inner)
    if t.kind is TypeKind.Array and t.element is not None:
        return replace(t, element=_with_bools(t.element, owner, member, members))
    if (owner, member) in members and t.scalar is ScalarKind.UInt:
        return replace(t, scalar=ScalarKind.Bool)
    return t
