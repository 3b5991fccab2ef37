"""A reader of what a SPIR-V module declares: names, decorations, types, variables, entry points.

Standard library only; it walks the binary once and keeps the few instructions the cross-check
needs (debug names, annotations, types, constants, global variables, entry points, modes,
capabilities). Layouts follow the module's own Offset/ArrayStride/MatrixStride decorations; a
struct's size is its extent rounded up to its alignment under the rules of the storage class that
reaches it (std140 for Uniform blocks, std430 for storage and push-constant blocks).

Slang writes an HLSL ``floatRxC`` as a SPIR-V matrix of R columns of C-vectors and flips the
majority decoration, so SPIR-V ``RowMajor`` is HLSL column-major and vice versa; a
``_Array_std140_*`` struct with one ``data`` member wraps an array in a constant buffer and reads
as that array.
"""

from __future__ import annotations

import functools
import struct as _struct
from dataclasses import dataclass, field
from typing import TypeVar

from oneshader.compiler.emitted.common import (
    EmittedCodeError,
    EmittedEntry,
    EmittedModule,
    EmittedResource,
    EmittedSpec,
    EmittedVariable,
    round_up,
)
from oneshader.compiler.emitted.spirv_ops import (
    DECO_ARRAY_STRIDE,
    DECO_BINDING,
    DECO_BLOCK,
    DECO_BUILTIN,
    DECO_CENTROID,
    DECO_DESCRIPTOR_SET,
    DECO_FLAT,
    DECO_INPUT_ATTACHMENT_INDEX,
    DECO_LOCATION,
    DECO_MATRIX_STRIDE,
    DECO_NO_PERSPECTIVE,
    DECO_NON_READABLE,
    DECO_NON_WRITABLE,
    DECO_OFFSET,
    DECO_PER_VERTEX_KHR,
    DECO_ROW_MAJOR,
    DECO_SAMPLE,
    DECO_SPEC_ID,
    MAGIC,
    OP_CAPABILITY,
    OP_CONSTANT,
    OP_DECORATE,
    OP_ENTRY_POINT,
    OP_EXECUTION_MODE,
    OP_EXECUTION_MODE_ID,
    OP_FIRST_TYPE,
    OP_FUNCTION,
    OP_LAST_TYPE,
    OP_MEMBER_DECORATE,
    OP_MEMBER_NAME,
    OP_NAME,
    OP_SPEC_CONSTANT,
    OP_SPEC_CONSTANT_FALSE,
    OP_SPEC_CONSTANT_TRUE,
    OP_TYPE_ACCELERATION_STRUCTURE,
    OP_TYPE_ARRAY,
    OP_TYPE_BOOL,
    OP_TYPE_FLOAT,
    OP_TYPE_IMAGE,
    OP_TYPE_INT,
    OP_TYPE_MATRIX,
    OP_TYPE_POINTER,
    OP_TYPE_RUNTIME_ARRAY,
    OP_TYPE_SAMPLED_IMAGE,
    OP_TYPE_SAMPLER,
    OP_TYPE_STRUCT,
    OP_TYPE_VECTOR,
    OP_VARIABLE,
    STORAGE_CROSS_WORKGROUP,
    STORAGE_FUNCTION,
    STORAGE_INPUT,
    STORAGE_OUTPUT,
    STORAGE_PRIVATE,
    STORAGE_PUSH_CONSTANT,
    STORAGE_STORAGE_BUFFER,
    STORAGE_UNIFORM,
    STORAGE_UNIFORM_CONSTANT,
    STORAGE_WORKGROUP,
)
from oneshader.reflection.model import (
    BuiltIn,
    DeviceFeatures,
    Interpolation,
    MatrixPacking,
    ScalarKind,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
)

__all__ = [
    "CAPABILITY_FEATURES",
    "CAPABILITY_NAMES",
    "Declarations",
    "declarations",
    "features_of",
    "read_spirv",
    "read_spirv_shared",
    "wgsl_features",
]


_STORAGE_CLASSES = {
    STORAGE_UNIFORM_CONSTANT: "UniformConstant",
    STORAGE_INPUT: "Input",
    STORAGE_UNIFORM: "Uniform",
    STORAGE_OUTPUT: "Output",
    STORAGE_WORKGROUP: "Workgroup",
    STORAGE_CROSS_WORKGROUP: "CrossWorkgroup",
    STORAGE_PRIVATE: "Private",
    STORAGE_FUNCTION: "Function",
    STORAGE_PUSH_CONSTANT: "PushConstant",
    STORAGE_STORAGE_BUFFER: "StorageBuffer",
}
_RESOURCE_CLASSES = frozenset({"UniformConstant", "Uniform", "PushConstant", "StorageBuffer"})

_EXECUTION_MODELS = {0: "vertex", 4: "pixel", 5: "compute"}

CAPABILITY_NAMES: dict[int, str] = {
    0: "Matrix",
    1: "Shader",
    2: "Geometry",
    3: "Tessellation",
    9: "Float16",
    10: "Float64",
    11: "Int64",
    12: "Int64Atomics",
    22: "Int16",
    32: "ClipDistance",
    33: "CullDistance",
    35: "SampleRateShading",
    39: "Int8",
    40: "InputAttachment",
    43: "Sampled1D",
    44: "Image1D",
    45: "SampledCubeArray",
    46: "SampledBuffer",
    47: "ImageBuffer",
    48: "ImageMSArray",
    49: "StorageImageExtendedFormats",
    50: "ImageQuery",
    51: "DerivativeControl",
    52: "InterpolationFunction",
    55: "StorageImageReadWithoutFormat",
    56: "StorageImageWriteWithoutFormat",
    61: "GroupNonUniform",
    62: "GroupNonUniformVote",
    63: "GroupNonUniformArithmetic",
    64: "GroupNonUniformBallot",
    65: "GroupNonUniformShuffle",
    66: "GroupNonUniformShuffleRelative",
    67: "GroupNonUniformClustered",
    68: "GroupNonUniformQuad",
    4427: "DrawParameters",
    4433: "StorageBuffer16BitAccess",
    4434: "UniformAndStorageBuffer16BitAccess",
    4435: "StoragePushConstant16",
    4436: "StorageInputOutput16",
    4448: "StorageBuffer8BitAccess",
    4449: "UniformAndStorageBuffer8BitAccess",
    4450: "StoragePushConstant8",
    4472: "RayQueryKHR",
}

# The device features a capability asks for; the one table both the producer and the check use.
CAPABILITY_FEATURES: dict[str, DeviceFeatures] = {
    "Float16": DeviceFeatures.Float16,
    "Int16": DeviceFeatures.Int16,
    "Float64": DeviceFeatures.Float64,
    "Int64": DeviceFeatures.Int64,
    "Int64Atomics": DeviceFeatures.Int64Atomics,
    **{
        f"GroupNonUniform{kind}": DeviceFeatures.Subgroups
        for kind in ("", "Vote", "Arithmetic", "Ballot", "Shuffle", "ShuffleRelative", "Quad")
    },
    "GroupNonUniformClustered": DeviceFeatures.Subgroups,
    "StorageBuffer16BitAccess": DeviceFeatures.StorageBuffer16,
    "UniformAndStorageBuffer16BitAccess": DeviceFeatures.UniformBuffer16,
    "StoragePushConstant16": DeviceFeatures.PushConstant16,
    "StorageInputOutput16": DeviceFeatures.InputOutput16,
}

_BUILTINS: dict[int, tuple[str, BuiltIn | None]] = {
    0: ("Position", BuiltIn.Position),
    1: ("PointSize", BuiltIn.PointSize),
    3: ("ClipDistance", BuiltIn.ClipDistance),
    4: ("CullDistance", BuiltIn.CullDistance),
    5: ("VertexId", BuiltIn.VertexId),
    6: ("InstanceId", BuiltIn.InstanceId),
    7: ("PrimitiveId", BuiltIn.PrimitiveId),
    15: ("FragCoord", BuiltIn.Position),
    17: ("FrontFacing", BuiltIn.FrontFacing),
    18: ("SampleId", BuiltIn.SampleIndex),
    20: ("SampleMask", BuiltIn.SampleMask),
    22: ("FragDepth", BuiltIn.Depth),
    24: ("NumWorkgroups", None),
    26: ("WorkgroupId", BuiltIn.GroupId),
    27: ("LocalInvocationId", BuiltIn.GroupThreadId),
    28: ("GlobalInvocationId", BuiltIn.DispatchThreadId),
    29: ("LocalInvocationIndex", BuiltIn.GroupIndex),
    42: ("VertexIndex", BuiltIn.VertexId),
    43: ("InstanceIndex", BuiltIn.InstanceId),
    4424: ("BaseVertex", None),
    4425: ("BaseInstance", None),
    4426: ("DrawIndex", BuiltIn.DrawIndex),
}

IMAGE_FORMATS: tuple[str, ...] = (
    "unknown", "rgba32f", "rgba16f", "r32f", "rgba8", "rgba8snorm", "rg32f", "rg16f",
    "r11g11b10f", "r16f", "rgba16", "rgb10a2", "rg16", "rg8", "r16", "r8", "rgba16snorm",
    "rg16snorm", "rg8snorm", "r16snorm", "r8snorm", "rgba32i", "rgba16i", "rgba8i", "r32i",
    "rg32i", "rg16i", "rg8i", "r16i", "r8i", "rgba32ui", "rgba16ui", "rgba8ui", "r32ui",
    "rgb10a2ui", "rg32ui", "rg16ui", "rg8ui", "r16ui", "r8ui", "r64ui", "r64i",
)  # fmt: skip


def features_of(capabilities: frozenset[str]) -> DeviceFeatures:
    """The device features a module's capabilities require."""
    out = DeviceFeatures(0)
    for cap in capabilities:
        out |= CAPABILITY_FEATURES.get(cap, DeviceFeatures(0))
    return out


def module_features(module: EmittedModule) -> DeviceFeatures:
    """The device features a module's own code needs: SPIR-V's capabilities; WGSL's ``enable
    f16`` (shader-f16); Metal's code needs none of them (half is core)."""
    if module.target is Target.SpirV:
        return features_of(module.capabilities)
    if module.target is Target.Wgsl:
        return wgsl_features(module.enables)
    return DeviceFeatures(0)


def wgsl_features(enables: frozenset[str]) -> DeviceFeatures:
    """The device features a WGSL module's extensions need: ``f16`` (shader-f16) and
    ``subgroups`` (the reader's name for a module that uses subgroup operations)."""
    out = DeviceFeatures(0)
    if "f16" in enables:
        out |= DeviceFeatures.Float16
    if "subgroups" in enables:
        out |= DeviceFeatures.Subgroups
    return out


_K = TypeVar("_K")


@dataclass
class _Decorations:
    flags: set[int] = field(default_factory=set)
    values: dict[int, int] = field(default_factory=dict)


@dataclass
class Declarations:
    """What a module declares before its first function, by id (:func:`declarations`)."""

    names: dict[int, str] = field(default_factory=dict)
    member_names: dict[tuple[int, int], str] = field(default_factory=dict)
    decos: dict[int, _Decorations] = field(default_factory=dict)
    member_decos: dict[tuple[int, int], _Decorations] = field(default_factory=dict)
    types: dict[int, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    constants: dict[int, int] = field(default_factory=dict)
    spec: dict[int, int | None] = field(default_factory=dict)
    variables: dict[int, tuple[int, str]] = field(default_factory=dict)
    entries: list[tuple[int, int, str, tuple[int, ...]]] = field(default_factory=list)
    local_size: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    local_size_id: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    capabilities: set[str] = field(default_factory=set)

    def deco(self, target: int) -> _Decorations:
        return self.decos.get(target) or _Decorations()

    def mdeco(self, target: int, member: int) -> _Decorations:
        return self.member_decos.get((target, member)) or _Decorations()


def _string(raw: bytes, start: int, end: int) -> tuple[str, int]:
    """A literal string in ``raw[start:end]`` (the module's bytes, little-endian words): it and
    the number of words it took (sliced from the bytes: a word at a time cost a fifth of the
    reader)."""
    stop = raw.find(b"\0", start, end)
    if stop < 0:
        raise EmittedCodeError("SPIR-V: unterminated literal string")
    return raw[start:stop].decode("utf-8", "replace"), (stop - start) // 4 + 1


@functools.lru_cache(maxsize=4)
def declarations(data: bytes) -> tuple[Declarations, tuple[int, int]]:
    """The module's declarations and its SPIR-V version, read once per module: the reader and
    the patches that would leave a module as it is (``patch.spirv``) read the same bytes, and
    the last patch's module is the one the reader reads. Shared: callers must not change it."""
    if len(data) < 20 or len(data) % 4:
        raise EmittedCodeError("SPIR-V: not a module (size is not a multiple of 4 bytes)")
    order = "<"
    if _struct.unpack_from("<I", data)[0] != MAGIC:
        if _struct.unpack_from(">I", data)[0] != MAGIC:
            raise EmittedCodeError("SPIR-V: bad magic number")
        order = ">"
    words = _struct.unpack(f"{order}{len(data) // 4}I", data)
    if order == ">":
        data = _struct.pack(f"<{len(words)}I", *words)  # (the strings' bytes in word order)
    version = ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF)
    m = Declarations()
    pos = 5
    n = len(words)
    while pos < n:
        head = words[pos]
        count = head >> 16
        op = head & 0xFFFF
        if count == 0 or pos + count > n:
            raise EmittedCodeError(f"SPIR-V: bad instruction length at word {pos}")
        if op == OP_FUNCTION:
            break  # everything the check needs precedes the first function
        ops = words[pos + 1 : pos + count]
        at, end = pos * 4, (pos + count) * 4  # the instruction's bytes
        pos += count
        if op == OP_NAME:
            m.names[ops[0]] = _string(data, at + 8, end)[0]
        elif op == OP_MEMBER_NAME:
            m.member_names[(ops[0], ops[1])] = _string(data, at + 12, end)[0]
        elif op == OP_DECORATE:
            _add_deco(m.decos, ops[0], ops[1:])
        elif op == OP_MEMBER_DECORATE:
            _add_deco(m.member_decos, (ops[0], ops[1]), ops[2:])
        elif op == OP_CAPABILITY:
            m.capabilities.add(CAPABILITY_NAMES.get(ops[0], f"Capability{ops[0]}"))
        elif op == OP_ENTRY_POINT:
            name, used = _string(data, at + 12, end)
            m.entries.append((ops[0], ops[1], name, tuple(ops[2 + used :])))
        elif op == OP_EXECUTION_MODE:
            if ops[1] == 17 and len(ops) >= 5:  # LocalSize
                m.local_size[ops[0]] = (ops[2], ops[3], ops[4])
        elif op == OP_EXECUTION_MODE_ID:
            if ops[1] == 38 and len(ops) >= 5:  # LocalSizeId
                m.local_size_id[ops[0]] = (ops[2], ops[3], ops[4])
        elif OP_FIRST_TYPE <= op <= OP_LAST_TYPE or op == OP_TYPE_ACCELERATION_STRUCTURE:
            m.types[ops[0]] = (op, tuple(ops[1:]))
        elif op == OP_CONSTANT:
            m.constants[ops[1]] = ops[2] if len(ops) > 2 else 0
        elif op == OP_SPEC_CONSTANT_TRUE:
            m.spec[ops[1]] = 1
        elif op == OP_SPEC_CONSTANT_FALSE:
            m.spec[ops[1]] = 0
        elif op == OP_SPEC_CONSTANT:
            m.spec[ops[1]] = ops[2] if len(ops) > 2 else None
        elif op == OP_VARIABLE:
            m.variables[ops[1]] = (ops[0], _STORAGE_CLASSES.get(ops[2], f"Storage{ops[2]}"))
    return m, version


def _add_deco(decos: dict[_K, _Decorations], key: _K, ops: tuple[int, ...]) -> None:
    d = decos.get(key)
    if d is None:  # (not setdefault: a new one made for every decoration cost more)
        d = decos[key] = _Decorations()
    if len(ops) > 1:
        d.values[ops[0]] = ops[1]
    else:
        d.flags.add(ops[0])


class _Layouts:
    """Builds TypeLayout trees from the module's types and decorations."""

    def __init__(self, m: Declarations) -> None:
        self.m = m

    def scalar(self, tid: int) -> tuple[ScalarKind, int]:
        op, ops = self.m.types[tid]
        if op == OP_TYPE_BOOL:
            return ScalarKind.Bool, 4
        if op == OP_TYPE_FLOAT:
            kinds = {16: ScalarKind.Float16, 32: ScalarKind.Float, 64: ScalarKind.Float64}
        elif op == OP_TYPE_INT:
            if ops[1]:
                kinds = {16: ScalarKind.Int16, 32: ScalarKind.Int, 64: ScalarKind.Int64}
            else:
                kinds = {16: ScalarKind.UInt16, 32: ScalarKind.UInt, 64: ScalarKind.UInt64}
        else:
            raise EmittedCodeError(f"SPIR-V: type %{tid} is not a scalar")
        if ops[0] not in kinds:
            raise EmittedCodeError(f"SPIR-V: unsupported {ops[0]}-bit scalar %{tid}")
        return kinds[ops[0]], ops[0] // 8

    def layout(self, tid: int, std140: bool, member: _Decorations | None = None) -> TypeLayout:
        op, ops = self.m.types[tid]
        if op in (OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_FLOAT):
            kind, size = self.scalar(tid)
            return TypeLayout(TypeKind.Scalar, scalar=kind, size=size, align=size)
        if op == OP_TYPE_VECTOR:
            kind, size = self.scalar(ops[0])
            n = ops[1]
            return TypeLayout(
                TypeKind.Vector,
                scalar=kind,
                rows=n,
                size=n * size,
                align=(2 if n == 2 else 4) * size,
            )
        if op == OP_TYPE_MATRIX:
            return self._matrix(ops[0], ops[1], std140, member or _Decorations())
        if op in (OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY):
            element = self.layout(ops[0], std140, member)
            length = self.m.constants.get(ops[1], 0) if op == OP_TYPE_ARRAY else 0
            stride = self.m.deco(tid).values.get(DECO_ARRAY_STRIDE, 0)
            align = max(element.align, 16) if std140 else element.align
            return TypeLayout(
                TypeKind.Array,
                size=length * stride,
                align=align,
                length=length,
                stride=stride,
                element=element,
            )
        if op == OP_TYPE_STRUCT:
            return self._struct(tid, ops, std140)
        raise EmittedCodeError(f"SPIR-V: type %{tid} (opcode {op}) has no buffer layout")

    def _matrix(self, column: int, columns: int, std140: bool, d: _Decorations) -> TypeLayout:
        kind, size = self.scalar(self.m.types[column][1][0])
        vec = self.m.types[column][1][1]
        mstride = d.values.get(DECO_MATRIX_STRIDE, 0)
        # SPIR-V ColMajor stores SPIR-V columns: HLSL rows (Slang transposes): HLSL row-major.
        row_major_hlsl = DECO_ROW_MAJOR not in d.flags
        stored, length = (columns, vec) if row_major_hlsl else (vec, columns)
        align = (2 if length == 2 else 4) * size
        if std140:
            align = max(align, 16)
        return TypeLayout(
            TypeKind.Matrix,
            scalar=kind,
            rows=columns,
            cols=vec,
            size=stored * mstride,
            align=align,
            mstride=mstride,
            packing=MatrixPacking.RowMajor if row_major_hlsl else MatrixPacking.ColumnMajor,
        )

    def _struct(self, tid: int, ops: tuple[int, ...], std140: bool) -> TypeLayout:
        name = self.m.names.get(tid, "")
        if (name.startswith("_Array_") or name.startswith("_MatrixStorage_")) and len(ops) == 1:
            return self.layout(ops[0], std140, self.m.mdeco(tid, 0))
        members = []
        extent = 0
        align = 16 if std140 else 1
        for i, mtid in enumerate(ops):
            d = self.m.mdeco(tid, i)
            t = self.layout(mtid, std140, d)
            off = d.values.get(DECO_OFFSET, 0)
            members.append(StructMember(self.m.member_names.get((tid, i), f"_{i}"), off, t))
            extent = max(extent, off + t.size)
            align = max(align, t.align)
        for suffix in ("_std140", "_std430"):
            name = name.removesuffix(suffix)
        return TypeLayout(
            TypeKind.Struct,
            name=name,
            size=round_up(extent, align),
            align=align,
            members=tuple(members),
        )


def _pointee(m: Declarations, var_type: int) -> int:
    op, ops = m.types.get(var_type, (0, ()))
    if op != OP_TYPE_POINTER:
        raise EmittedCodeError(f"SPIR-V: variable type %{var_type} is not a pointer")
    return ops[1]


def _resource(m: Declarations, lay: _Layouts, vid: int, storage: str) -> EmittedResource:
    emitted = m.names.get(vid, f"%{vid}")
    name, role = emitted, ""
    for suffix, r in ((".counter", "counter"), (".elements", "")):
        if emitted.endswith(suffix):
            name, role = emitted.removesuffix(suffix), r
    d = m.deco(vid)
    tid = _pointee(m, m.variables[vid][0])
    count = 1
    op, ops = m.types[tid]
    if op in (OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY) and storage != "PushConstant":
        count = m.constants.get(ops[1], 0) if op == OP_TYPE_ARRAY else 0
        tid = ops[0]
        op, ops = m.types[tid]
    layout: TypeLayout | None = None
    stride: int | None = None
    fmt: str | None = None
    access = ""
    if op == OP_TYPE_STRUCT:
        std140 = storage == "Uniform" and DECO_BLOCK in m.deco(tid).flags
        inner = m.types.get(ops[0], (0, ())) if len(ops) == 1 else (0, ())
        if storage == "StorageBuffer" and inner[0] == OP_TYPE_RUNTIME_ARRAY:
            stride = m.deco(ops[0]).values.get(DECO_ARRAY_STRIDE, 0)
            layout = lay.layout(inner[1][0], False, m.mdeco(tid, 0))
        else:
            layout = lay.layout(tid, std140)
    elif op == OP_TYPE_IMAGE and len(ops) >= 7:
        fmt = IMAGE_FORMATS[ops[6]] if ops[6] < len(IMAGE_FORMATS) else str(ops[6])
        if ops[5] == 2:  # a storage image: readable and writable unless decorated
            access = "read" if DECO_NON_WRITABLE in d.flags else "read_write"
            access = "write" if DECO_NON_READABLE in d.flags else access
    type_text = {
        OP_TYPE_IMAGE: "OpTypeImage",
        OP_TYPE_SAMPLER: "OpTypeSampler",
        OP_TYPE_SAMPLED_IMAGE: "OpTypeSampledImage",
        OP_TYPE_STRUCT: "OpTypeStruct",
        OP_TYPE_ACCELERATION_STRUCTURE: "OpTypeAccelerationStructureKHR",
    }.get(op, f"opcode {op}")
    return EmittedResource(
        name=name,
        emitted=emitted,
        space=storage,
        set=d.values.get(DECO_DESCRIPTOR_SET),
        binding=d.values.get(DECO_BINDING),
        layout=layout,
        stride=stride,
        count=count,
        format=fmt,
        type_text=type_text,
        role=role,
        attachment=d.values.get(DECO_INPUT_ATTACHMENT_INDEX),
        access=access,
    )


_INTERP = {
    DECO_FLAT: Interpolation.Flat,
    # HLSL's nointerpolation input read with GetAttributeAtVertex: each vertex's value as it
    # is, never interpolated (DXC and Slang decorate it PerVertexKHR instead of Flat)
    DECO_PER_VERTEX_KHR: Interpolation.Flat,
    DECO_NO_PERSPECTIVE: Interpolation.NoPerspective,
    DECO_CENTROID: Interpolation.Centroid,
    DECO_SAMPLE: Interpolation.Sample,
}


def _stage_variables(m: Declarations, vid: int, entry: str) -> list[EmittedVariable]:
    emitted = m.names.get(vid, "")
    # Slang names flattened fields "param.field" and outputs "entryPointParam_<Entry>.field".
    leaf = emitted.rsplit(".", 1)[-1] if "." in emitted else emitted
    if leaf == f"entryPointParam_{entry}":
        leaf = ""
    d = m.deco(vid)
    tid = _pointee(m, m.variables[vid][0])
    op, ops = m.types.get(tid, (0, ()))
    if DECO_PER_VERTEX_KHR in d.flags and op == OP_TYPE_ARRAY:
        tid = ops[0]  # the array of the primitive's vertices takes no locations of its own
        op, ops = m.types.get(tid, (0, ()))
    if op == OP_TYPE_STRUCT and DECO_LOCATION not in d.values and DECO_BUILTIN not in d.values:
        out = []
        for i in range(len(ops)):
            md = m.mdeco(tid, i)
            out.append(
                _variable(m.member_names.get((tid, i), ""), emitted, md, _locations(m, ops[i]))
            )
        return out
    return [_variable(leaf, emitted, d, _locations(m, tid))]


def _locations(m: Declarations, tid: int) -> int:
    """The locations a stage variable of type ``tid`` occupies (Vulkan's interface rules:
    an array's elements and a matrix's columns one each; a 64-bit vector of 3 or 4, two)."""
    op, ops = m.types.get(tid, (0, ()))
    if op == OP_TYPE_ARRAY:
        return max(m.constants.get(ops[1], 1), 1) * _locations(m, ops[0])
    if op == OP_TYPE_MATRIX:
        return ops[1] * _locations(m, ops[0])
    if op == OP_TYPE_VECTOR:
        scalar = m.types.get(ops[0], (0, ()))
        wide = scalar[0] in (OP_TYPE_INT, OP_TYPE_FLOAT) and scalar[1][0] == 64
        return 2 if wide and ops[1] > 2 else 1
    return 1


def _variable(name: str, emitted: str, d: _Decorations, span: int) -> EmittedVariable:
    builtin: BuiltIn | None = None
    spelled = ""
    if DECO_BUILTIN in d.values:
        spelled, builtin = _BUILTINS.get(
            d.values[DECO_BUILTIN], (f"BuiltIn{d.values[DECO_BUILTIN]}", None)
        )
    return EmittedVariable(
        name=name,
        emitted=emitted,
        location=d.values.get(DECO_LOCATION),
        builtin=builtin,
        target_builtin=spelled,
        interp=frozenset(_INTERP[k] for k in d.flags if k in _INTERP),
        span=span,
    )


def read_spirv(data: bytes, source: str = ".spv") -> EmittedModule:
    """Everything the cross-check compares, as this module declares it."""
    m, version = declarations(data)
    lay = _Layouts(m)
    out = EmittedModule(
        Target.SpirV, source, capabilities=frozenset(m.capabilities), version=version
    )
    resource_of: dict[int, EmittedResource] = {}
    for vid, (_vtype, storage) in m.variables.items():
        if storage in _RESOURCE_CLASSES:
            res = _resource(m, lay, vid, storage)
            resource_of[vid] = res
            out.add_resource(res)
    for sid, default in m.spec.items():
        d = m.deco(sid)
        if DECO_SPEC_ID in d.values:
            emitted = m.names.get(sid, f"%{sid}")
            out.spec_constants[emitted] = EmittedSpec(
                emitted, emitted, d.values[DECO_SPEC_ID], default
            )
    interface_lists_globals = version >= (1, 4)
    for model, fid, name, interface in m.entries:
        inputs: list[EmittedVariable] = []
        outputs: list[EmittedVariable] = []
        uses: set[str] = set()
        for vid in interface:
            storage = m.variables.get(vid, (0, ""))[1]
            if storage == "Input":
                inputs.extend(_stage_variables(m, vid, name))
            elif storage == "Output":
                outputs.extend(_stage_variables(m, vid, name))
            elif vid in resource_of:
                uses.add(resource_of[vid].name)
        workgroup = m.local_size.get(fid)
        if workgroup is None and fid in m.local_size_id:
            ids = m.local_size_id[fid]
            if all(i in m.constants for i in ids):  # a spec-constant size is the host's choice
                workgroup = (m.constants[ids[0]], m.constants[ids[1]], m.constants[ids[2]])
        helpers = frozenset(
            v.target_builtin for v in inputs + outputs if v.builtin is None and v.target_builtin
        )
        out.entries[name] = EmittedEntry(
            name=name,
            stage=_EXECUTION_MODELS.get(model, f"model{model}"),
            workgroup=workgroup,
            inputs=tuple(v for v in inputs if not (v.builtin is None and v.target_builtin)),
            outputs=tuple(v for v in outputs if not (v.builtin is None and v.target_builtin)),
            uses=frozenset(uses) if interface_lists_globals else None,
            helpers=helpers,
        )
    return out


@functools.lru_cache(maxsize=4)
def read_spirv_shared(data: bytes) -> EmittedModule:
    """:func:`read_spirv` of ``data``, read once for the reflection's steps and the cross-check,
    which only look at the module (they read the same code up to four times); they must not
    change it."""
    return read_spirv(data)
