"""The reflection model: what a compiled shader exposes to the host, for every target at once.

Everything else in oneshader produces or consumes these records; nothing here knows a compiler.
Records are frozen dataclasses holding tuples, so that equal shaders compare (and hash) equal and
the writer can promise byte-identical output for equal models. Enum member names are the tokens of
the reflection file format (the C# names of the specification), so ``Enum[token]`` parses them.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

__all__ = [
    "BUFFER_LENGTHS",
    "MAX_TYPE_BYTES",
    "BuiltIn",
    "DeviceFeatures",
    "EntryPoint",
    "Interpolation",
    "MatrixPacking",
    "PushBlock",
    "Resource",
    "ResourceKind",
    "ResourceTypeKind",
    "ScalarKind",
    "ShaderReflection",
    "Slot",
    "SpecConstant",
    "SpecSlot",
    "Stage",
    "StageVariable",
    "StructMember",
    "Target",
    "TypeKind",
    "TypeLayout",
    "VertexFormat",
    "record",
    "type_too_big",
]

_R = TypeVar("_R")


def record(cls: type[_R]) -> type[_R]:
    """A frozen dataclass given an ``__init__`` that sets the instance's fields in one step:
    the dataclass's own sets them one ``object.__setattr__`` call each (~1 us for a layout's
    13 fields), and a compile makes some hundred records (its readers', its reflection's). The
    same parameters, defaults and order; the fields stay frozen."""
    fields = dataclasses.fields(cast(Any, cls))
    if hasattr(cls, "__post_init__"):  # the dataclass's init calls it; this one would not
        raise TypeError(f"{cls.__name__}: a record has no __post_init__")
    scope: dict[str, object] = {"_set": object.__setattr__}
    params = []
    for k, f in enumerate(fields):
        if f.default_factory is not dataclasses.MISSING or not f.init:
            raise TypeError(f"{cls.__name__}.{f.name}: a record's fields are its parameters")
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            scope[f"_default{k}"] = f.default
            params.append(f"{f.name}=_default{k}")
    values = ", ".join(f"{f.name!r}: {f.name}" for f in fields)
    exec(
        f"def __init__(self, {', '.join(params)}):\n    _set(self, '__dict__', {{{values}}})", scope
    )
    init = cast(Callable[..., None], scope["__init__"])
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


class Target(enum.Enum):
    """A code target; declaration order is the canonical order of target lists."""

    SpirV = "spirv"
    Msl = "msl"
    Wgsl = "wgsl"

    @property
    def suffix(self) -> str:
        """The file suffix of this target's code, as the build names it beside the reflection."""
        return {"spirv": ".spv", "msl": ".metal", "wgsl": ".wgsl"}[self.value]


class Stage(enum.Enum):
    Vertex = "vertex"
    Pixel = "pixel"
    Compute = "compute"


class ResourceKind(enum.Enum):
    """The binding class of a resource, as HLSL's register classes group them (b, t, u, s)."""

    ConstantBuffer = "b"
    ShaderResource = "t"
    UnorderedAccess = "u"
    Sampler = "s"


class ResourceTypeKind(enum.Enum):
    """The declared HLSL resource type, without its template arguments."""

    ConstantBuffer = enum.auto()
    TextureBuffer = enum.auto()
    Buffer = enum.auto()
    RWBuffer = enum.auto()
    StructuredBuffer = enum.auto()
    RWStructuredBuffer = enum.auto()
    AppendStructuredBuffer = enum.auto()
    ConsumeStructuredBuffer = enum.auto()
    ByteAddressBuffer = enum.auto()
    RWByteAddressBuffer = enum.auto()
    Texture1D = enum.auto()
    Texture1DArray = enum.auto()
    Texture2D = enum.auto()
    Texture2DArray = enum.auto()
    Texture2DMS = enum.auto()
    Texture2DMSArray = enum.auto()
    Texture3D = enum.auto()
    TextureCube = enum.auto()
    TextureCubeArray = enum.auto()
    RWTexture1D = enum.auto()
    RWTexture1DArray = enum.auto()
    RWTexture2D = enum.auto()
    RWTexture2DArray = enum.auto()
    RWTexture3D = enum.auto()
    SamplerState = enum.auto()
    SamplerComparisonState = enum.auto()
    SubpassInput = enum.auto()  # a Vulkan input attachment (SPIR-V only); ``attachment`` says which
    SubpassInputMS = enum.auto()
    # a ray-query scene (SPIR-V and Metal; WebGPU has no ray tracing): bound, never laid out
    RaytracingAccelerationStructure = enum.auto()


# The groups of resource types that the compiler's steps and its verifier tell apart.
TEXTURE_TYPES = frozenset(
    t for t in ResourceTypeKind if "Texture" in t.name and t.name != "TextureBuffer"
)
SAMPLER_TYPES = frozenset({ResourceTypeKind.SamplerState, ResourceTypeKind.SamplerComparisonState})
BLOCK_TYPES = frozenset({ResourceTypeKind.ConstantBuffer, ResourceTypeKind.TextureBuffer})
# Vulkan input attachments: SPIR-V only (docs/compiler.md, OS1021); a texel type, as textures.
SUBPASS_INPUT_TYPES = frozenset({ResourceTypeKind.SubpassInput, ResourceTypeKind.SubpassInputMS})
COUNTED_TYPES = frozenset(
    {ResourceTypeKind.AppendStructuredBuffer, ResourceTypeKind.ConsumeStructuredBuffer}
)
STRUCTURED_TYPES = frozenset(
    {ResourceTypeKind.StructuredBuffer, ResourceTypeKind.RWStructuredBuffer, *COUNTED_TYPES}
)
# Buffers whose GetDimensions Metal answers from the companion constant buffer BUFFER_LENGTHS:
# a resource on Metal only, one uint per such buffer (named as it) holding its size in bytes.
MEASURED_TYPES = frozenset(
    {*STRUCTURED_TYPES, ResourceTypeKind.ByteAddressBuffer, ResourceTypeKind.RWByteAddressBuffer}
)
BUFFER_LENGTHS = "$BufferLengths"
BUFFER_TYPES = frozenset(
    {
        *BLOCK_TYPES,
        *STRUCTURED_TYPES,
        ResourceTypeKind.ByteAddressBuffer,
        ResourceTypeKind.RWByteAddressBuffer,
    }
)


class Access(enum.Enum):
    """What a shader does to a storage texture (an RWTexture*): WGSL's ``read``, ``write`` and
    ``read_write``; core WebGPU allows ``read_write`` for r32float/r32sint/r32uint only."""

    ReadWrite = enum.auto()
    ReadOnly = enum.auto()
    WriteOnly = enum.auto()


class ScalarKind(enum.Enum):
    """Scalar element kinds; Bool is the default (structs and arrays carry it as a placeholder)."""

    Bool = enum.auto()
    Int = enum.auto()
    UInt = enum.auto()
    Float = enum.auto()
    Int16 = enum.auto()
    UInt16 = enum.auto()
    Float16 = enum.auto()
    Int64 = enum.auto()
    UInt64 = enum.auto()
    Float64 = enum.auto()

    @property
    def size(self) -> int:
        """Bytes of one scalar in a buffer (Bool is 4, as HLSL stores it)."""
        if self.name.endswith("16"):
            return 2
        return 8 if self.name.endswith("64") else 4


class TypeKind(enum.Enum):
    Scalar = enum.auto()
    Vector = enum.auto()
    Matrix = enum.auto()
    Array = enum.auto()
    Struct = enum.auto()


class MatrixPacking(enum.Enum):
    ColumnMajor = enum.auto()
    RowMajor = enum.auto()


class BuiltIn(enum.Enum):
    """System values; None marks an ordinary (located) stage variable."""

    None_ = "None"
    Position = "SV_Position"
    VertexId = "SV_VertexID"
    InstanceId = "SV_InstanceID"
    FrontFacing = "SV_IsFrontFace"
    SampleIndex = "SV_SampleIndex"
    SampleMask = "SV_Coverage"
    Depth = "SV_Depth"
    PrimitiveId = "SV_PrimitiveID"
    ClipDistance = "SV_ClipDistance"
    CullDistance = "SV_CullDistance"
    PointSize = "PointSize"
    BaseVertex = "BaseVertex"
    BaseInstance = "BaseInstance"
    DispatchThreadId = "SV_DispatchThreadID"
    GroupId = "SV_GroupID"
    GroupThreadId = "SV_GroupThreadID"
    GroupIndex = "SV_GroupIndex"
    DrawIndex = "DrawIndex"  # DXC's [[vk::builtin("DrawIndex")]], SPIR-V only (added in v1)

    @property
    def token(self) -> str:
        return "None" if self is BuiltIn.None_ else self.name

    @classmethod
    def from_token(cls, token: str) -> BuiltIn:
        return cls.None_ if token == "None" else cls[token]


class VertexFormat(enum.Enum):
    """WebGPU vertex formats (GPUVertexFormat, CapWords); None for all but vertex inputs."""

    None_ = "none"
    Uint8 = "uint8"
    Uint8x2 = "uint8x2"
    Uint8x4 = "uint8x4"
    Sint8 = "sint8"
    Sint8x2 = "sint8x2"
    Sint8x4 = "sint8x4"
    Unorm8 = "unorm8"
    Unorm8x2 = "unorm8x2"
    Unorm8x4 = "unorm8x4"
    Snorm8 = "snorm8"
    Snorm8x2 = "snorm8x2"
    Snorm8x4 = "snorm8x4"
    Uint16 = "uint16"
    Uint16x2 = "uint16x2"
    Uint16x4 = "uint16x4"
    Sint16 = "sint16"
    Sint16x2 = "sint16x2"
    Sint16x4 = "sint16x4"
    Unorm16 = "unorm16"
    Unorm16x2 = "unorm16x2"
    Unorm16x4 = "unorm16x4"
    Snorm16 = "snorm16"
    Snorm16x2 = "snorm16x2"
    Snorm16x4 = "snorm16x4"
    Float16 = "float16"
    Float16x2 = "float16x2"
    Float16x4 = "float16x4"
    Float32 = "float32"
    Float32x2 = "float32x2"
    Float32x3 = "float32x3"
    Float32x4 = "float32x4"
    Uint32 = "uint32"
    Uint32x2 = "uint32x2"
    Uint32x3 = "uint32x3"
    Uint32x4 = "uint32x4"
    Sint32 = "sint32"
    Sint32x2 = "sint32x2"
    Sint32x3 = "sint32x3"
    Sint32x4 = "sint32x4"
    Unorm10_10_10_2 = "unorm10-10-10-2"
    Unorm8x4Bgra = "unorm8x4-bgra"

    @property
    def token(self) -> str:
        return "None" if self is VertexFormat.None_ else self.name

    @classmethod
    def from_token(cls, token: str) -> VertexFormat:
        return cls.None_ if token == "None" else cls[token]

    @property
    def size(self) -> int:
        """Bytes of one attribute of this format in a vertex buffer (0 for None)."""
        if self is VertexFormat.None_:
            return 0
        if self in (VertexFormat.Unorm10_10_10_2, VertexFormat.Unorm8x4Bgra):
            return 4
        base, _, n = self.value.partition("x")
        return int(base.lstrip("abcdefghijklmnopqrstuvwxyz")) // 8 * int(n or 1)

    @property
    def shader_scalar(self) -> ScalarKind:
        """The 32-bit scalar a shader reads this format as (WebGPU converts on fetch): Float for
        float, unorm and snorm formats, UInt for uint, Int for sint."""
        if self.value.startswith("uint"):
            return ScalarKind.UInt
        if self.value.startswith("sint"):
            return ScalarKind.Int
        return ScalarKind.Float


class Interpolation(enum.Enum):
    """HLSL interpolation modifiers of a stage variable; Default is perspective-correct."""

    Default = enum.auto()
    Linear = enum.auto()
    Flat = enum.auto()
    NoPerspective = enum.auto()
    Centroid = enum.auto()
    Sample = enum.auto()


class DeviceFeatures(enum.IntFlag):
    """Optional device features an entry point needs; the values are the format's bits."""

    Float16 = 1
    Int16 = 2
    Float64 = 4
    Int64 = 8
    StorageBuffer16 = 16
    UniformBuffer16 = 32
    PushConstant16 = 64
    InputOutput16 = 128
    Int64Atomics = 256
    Subgroups = 512  # wave/quad operations: WebGPU's 'subgroup' feature (Vulkan 1.1, Metal: core)


@record
@dataclass(frozen=True)
class TypeLayout:
    """One node of a buffer layout tree: sizes, offsets and strides in bytes, true on every target.

    ``element`` is set for arrays only and ``members`` for structs only. For a matrix, ``rows`` and
    ``cols`` are its math shape, ``mstride`` the stride between stored columns (ColumnMajor) or rows
    (RowMajor). ``length == 0`` is an unsized (runtime) array.
    """

    kind: TypeKind
    scalar: ScalarKind = ScalarKind.Bool
    rows: int = 0
    cols: int = 0
    name: str = ""
    size: int = 0
    align: int = 0
    length: int = 0
    stride: int = 0
    mstride: int = 0
    packing: MatrixPacking = MatrixPacking.ColumnMajor
    element: TypeLayout | None = None
    members: tuple[StructMember, ...] = ()


@record
@dataclass(frozen=True)
class StructMember:
    """``doc`` is the comment written beside the member in the source (for the generated
    docstring); it takes no part in comparing layouts, which only the bytes decide."""

    name: str
    offset: int
    type: TypeLayout
    doc: str = field(default="", compare=False)


@record
@dataclass(frozen=True)
class Slot:
    """Where one target binds a resource: SPIR-V set/binding, WGSL group/binding, MSL index."""

    target: Target
    set: int
    binding: int


@record
@dataclass(frozen=True)
class Resource:
    """A bound resource.

    ``layout`` is the constant buffer's struct, the structured buffer's element, or the texel type
    of a texture or typed buffer; None where there is none (samplers, raw buffers). ``counters``
    are the hidden counter buffers of append/consume/counter buffers, one per target.
    ``depth`` marks a texture the shader only samples with comparison samplers: WGSL declares it
    ``texture_depth_*``, so WebGPU must bind it with sample type "depth". ``attachment`` is the
    input attachment index (``[[vk::input_attachment_index(i)]]``) of a SubpassInput: which
    input attachment of the render pass's subpass it reads; None for every other resource.
    ``access`` is what the shader does to a storage texture (ReadWrite for every other
    resource): its WGSL declaration and SPIR-V decorations say the same.
    """

    name: str
    kind: ResourceKind
    rtype: ResourceTypeKind
    count: int = 1
    stages: tuple[Stage, ...] = ()
    hlsl: str = ""
    format: str | None = None
    depth: bool = False
    attachment: int | None = None
    access: Access = Access.ReadWrite
    slots: tuple[Slot, ...] = ()
    counters: tuple[Slot, ...] = ()
    layout: TypeLayout | None = None


@record
@dataclass(frozen=True)
class PushBlock:
    """A push-constant block; SPIR-V delivers it as push constants (no slot), others as buffers."""

    name: str
    stages: tuple[Stage, ...] = ()
    layout: TypeLayout | None = None
    slots: tuple[Slot, ...] = ()


@record
@dataclass(frozen=True)
class SpecSlot:
    """A specialization constant on one target: SPIR-V SpecId, MSL function-constant, WGSL @id."""

    target: Target
    index: int
    name: str


@record
@dataclass(frozen=True)
class SpecConstant:
    """``default`` is the 32-bit pattern of the default value (an IEEE float's bits for Float)."""

    name: str
    id: int
    scalar: ScalarKind
    default: int = 0
    slots: tuple[SpecSlot, ...] = ()


@record
@dataclass(frozen=True)
class StageVariable:
    """A stage input or output; ``location`` is None for built-ins."""

    name: str
    semantic: str
    index: int = 0
    location: int | None = None
    builtin: BuiltIn = BuiltIn.None_
    scalar: ScalarKind = ScalarKind.Float
    components: int = 1
    format: VertexFormat = VertexFormat.None_
    offset: int = 0
    interp: Interpolation = Interpolation.Default


@record
@dataclass(frozen=True)
class EntryPoint:
    name: str
    stage: Stage
    workgroup: tuple[int, int, int] = (0, 0, 0)
    stride: int = 0
    features: DeviceFeatures = DeviceFeatures(0)  # noqa: RUF009 (an immutable int flag)
    inputs: tuple[StageVariable, ...] = ()
    outputs: tuple[StageVariable, ...] = ()
    uses: tuple[str, ...] = ()
    pushuse: tuple[str, ...] = ()
    specuse: tuple[str, ...] = ()


@record
@dataclass(frozen=True)
class ShaderReflection:
    """Everything the host needs to know about one shader source file, for all its targets."""

    source: str
    targets: tuple[Target, ...] = ()
    resources: tuple[Resource, ...] = ()
    push_blocks: tuple[PushBlock, ...] = ()
    spec_constants: tuple[SpecConstant, ...] = ()
    entry_points: tuple[EntryPoint, ...] = field(default=())


MAX_TYPE_BYTES = 2**31 - 1
"""The most bytes one type of a layout may span (its size; an array's length times stride; a
matrix's stored vectors times their stride): what a host struct can hold (numpy's itemsize is a
C int), and beyond any buffer binding a GPU API offers for one element."""


def type_too_big(t: TypeLayout) -> tuple[str, str] | None:
    """(attribute, message) when ``t`` spans more than :data:`MAX_TYPE_BYTES`, else None."""
    if t.size > MAX_TYPE_BYTES:
        return "size", f"size {t.size} is beyond the limit of {MAX_TYPE_BYTES} bytes for a type"
    if t.kind is TypeKind.Array and max(t.length, 1) * t.stride > MAX_TYPE_BYTES:
        return "stride", (
            f"{t.length} elements of stride {t.stride} span beyond the limit of "
            f"{MAX_TYPE_BYTES} bytes for a type"
        )
    if t.kind is TypeKind.Matrix:
        vectors = t.cols if t.packing is MatrixPacking.ColumnMajor else t.rows
        if max(vectors, 1) * t.mstride > MAX_TYPE_BYTES:
            return "mstride", (
                f"{vectors} vectors of stride {t.mstride} span beyond the limit of "
                f"{MAX_TYPE_BYTES} bytes for a type"
            )
    return None
