"""One binding of a shader (a resource, push block or hidden counter buffer) as wgpu sees it: its
slots, its bind group layout entry (with ``min_binding_size``), the buffer it needs, and the check
of the object bound to it, which names the binding before wgpu would fail far from the cause.

Every descriptor here is plain data in wgpu-py's dict form (visibility as the WebGPU flag ints),
so nothing imports wgpu.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oneshader.bindings.stages import COPY_DST, COPY_SRC, STORAGE, UNIFORM
from oneshader.reflection.model import (
    Access,
    PushBlock,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    Slot,
    Stage,
    Target,
    TypeKind,
    TypeLayout,
)

__all__ = [
    "STORAGE_ACCESS",
    "Binding",
    "BufferRange",
    "bind_group_entry",
    "read_write_feature",
    "storage_texture_format",
]

VISIBILITY = {Stage.Vertex: 1, Stage.Pixel: 2, Stage.Compute: 4}  # GPUShaderStage flags

R = ResourceTypeKind
_BUFFER_TYPES = {
    R.ConstantBuffer: "uniform",
    R.TextureBuffer: "read-only-storage",
    R.Buffer: "read-only-storage",
    R.StructuredBuffer: "read-only-storage",
    R.ByteAddressBuffer: "read-only-storage",
    R.RWBuffer: "storage",
    R.RWStructuredBuffer: "storage",
    R.AppendStructuredBuffer: "storage",
    R.ConsumeStructuredBuffer: "storage",
    R.RWByteAddressBuffer: "storage",
}
_VIEW_DIMENSIONS = {
    R.Texture1D: ("1d", False),
    R.Texture2D: ("2d", False),
    R.Texture2DArray: ("2d-array", False),
    R.Texture2DMS: ("2d", True),
    R.Texture3D: ("3d", False),
    R.TextureCube: ("cube", False),
    R.TextureCubeArray: ("cube-array", False),
    R.RWTexture1D: ("1d", False),
    R.RWTexture2D: ("2d", False),
    R.RWTexture2DArray: ("2d-array", False),
    R.RWTexture3D: ("3d", False),
}
_SAMPLE_TYPES = {ScalarKind.Float: "float", ScalarKind.Int: "sint", ScalarKind.UInt: "uint"}

# [[vk::image_format]] names whose WebGPU name is not the systematic one.
_SPECIAL_FORMATS = {
    "r11g11b10f": "rg11b10ufloat",
    "rgb10a2": "rgb10a2unorm",
    "rgb10a2ui": "rgb10a2uint",
}


def storage_texture_format(vk_format: str | None, texel: TypeLayout | None) -> str:
    """The WebGPU texture format for a read-write texture's ``[[vk::image_format]]`` name, or,
    when none was given, the 32-bit format of its texel type (``float4`` -> rgba32float)."""
    if vk_format:
        if vk_format in _SPECIAL_FORMATS:
            return _SPECIAL_FORMATS[vk_format]
        for suffix, kind in (("ui", "uint"), ("i", "sint"), ("f", "float"), ("snorm", "snorm")):
            if vk_format.endswith(suffix):
                return vk_format[: -len(suffix)] + kind
        return vk_format + "unorm"
    if texel is None or texel.scalar not in _SAMPLE_TYPES:
        raise ValueError("a storage texture needs [[vk::image_format]] or a 32-bit texel type")
    n = texel.rows if texel.kind is TypeKind.Vector else 1
    channels = {1: "r", 2: "rg", 4: "rgba"}.get(n)
    if channels is None:
        raise ValueError(f"no storage texture format has {n} channels")
    return f"{channels}32{_SAMPLE_TYPES[texel.scalar]}"


STORAGE_ACCESS = {
    Access.ReadWrite: "read-write",
    Access.ReadOnly: "read-only",
    Access.WriteOnly: "write-only",
}
# The formats core WebGPU lets a shader read and write in one storage texture; the others need
# the adapter's own format features (wgpu's "texture-adapter-specific-format-features"; the
# WebGPU standard's "texture-formats-tier2" names the same for the common formats).
CORE_READ_WRITE_FORMATS = frozenset({"r32float", "r32sint", "r32uint"})
READ_WRITE_FEATURE = "texture-adapter-specific-format-features"
READ_WRITE_FEATURES = frozenset({READ_WRITE_FEATURE, "texture-formats-tier2"})


def read_write_feature(res: Resource) -> bool:
    """Whether ``res`` is a storage texture read and written in a format core WebGPU does not
    allow ``read_write`` for (then the device needs :data:`READ_WRITE_FEATURE`)."""
    if res.kind is not ResourceKind.UnorderedAccess or res.rtype not in _VIEW_DIMENSIONS:
        return False
    if res.access is not Access.ReadWrite:
        return False
    try:
        return storage_texture_format(res.format, res.layout) not in CORE_READ_WRITE_FORMATS
    except ValueError:  # no WebGPU format at all: the layout says so
        return False


def _slot(name: str, slots: Sequence[Slot], target: Target) -> Slot:
    for s in slots:
        if s.target is target:
            return s
    raise LookupError(f"{name!r} has no {target.name} slot (was the shader built for it?)")


@dataclass(frozen=True)
class Binding:
    """A resource, push block or hidden counter buffer: its slot on each target and the stages
    that use it."""

    name: str
    stages: tuple[Stage, ...]
    slots: tuple[Slot, ...]
    resource: Resource | None = None
    push_block: PushBlock | None = None
    counter_of: Resource | None = None

    @property
    def counter(self) -> Binding:
        """The hidden counter (one uint in a storage buffer) of an append/consume buffer, or of a
        RW structured buffer that uses IncrementCounter/DecrementCounter: bind it like any other
        binding (``{resources.X: data, resources.X.counter: count}``)."""
        res = self.resource
        if res is None or not res.counters:
            raise LookupError(f"{self.name!r} has no counter buffer")
        return Binding(f"{self.name}.counter", self.stages, res.counters, counter_of=res)

    @property
    def spirv(self) -> Slot:
        """SPIR-V descriptor set and binding (push blocks have none: push constants)."""
        return _slot(self.name, self.slots, Target.SpirV)

    @property
    def msl(self) -> Slot:
        """Metal argument index (``binding``; ``set`` is 0)."""
        return _slot(self.name, self.slots, Target.Msl)

    @property
    def wgsl(self) -> Slot:
        """WGSL ``@group`` (``set``) and ``@binding``."""
        return _slot(self.name, self.slots, Target.Wgsl)

    @property
    def on_webgpu(self) -> bool:
        """Whether WebGPU has such a binding. An acceleration structure (ray queries) has none:
        a shader built for WGSL can only declare one it never uses (Slang refuses ray queries
        there), which the WGSL module leaves out, so its bind groups leave it out too."""
        res = self.resource
        return res is None or res.rtype is not R.RaytracingAccelerationStructure

    @property
    def visibility(self) -> int:
        flags = 0
        for s in self.stages:
            flags |= VISIBILITY[s]
        return flags

    @property
    def _buffer_type(self) -> str | None:
        """wgpu's buffer binding type (a push block is a uniform buffer, a counter a storage
        one), or None for a texture or sampler: the layout entry and the bind group agree."""
        if self.counter_of is not None:
            return "storage"
        if self.resource is None:
            return "uniform"
        return _BUFFER_TYPES.get(self.resource.rtype)

    @property
    def is_buffer(self) -> bool:
        return self._buffer_type is not None

    @property
    def min_binding_size(self) -> int:
        """The fewest bytes the shader reads through this buffer binding (the struct of a
        constant buffer or push block; one element of a structured buffer; one word of a raw
        buffer or counter), 0 for a texture or sampler. The layout entry carries it, so wgpu
        refuses a smaller buffer in ``create_bind_group`` rather than at ``encoder.finish()``."""
        if not self.is_buffer:
            return 0
        layout = self.push_block.layout if self.push_block is not None else None
        if self.resource is not None and self.counter_of is None:
            layout = self.resource.layout
        if layout is None:
            return 4
        align = max(layout.align, 1)
        return -(-layout.size // align) * align

    @property
    def usage(self) -> int:
        """The GPUBufferUsage a buffer for this binding needs: UNIFORM or STORAGE, with
        COPY_DST to fill it (and COPY_SRC for one the shader writes, to read it back)."""
        kind = self._buffer_type
        if kind is None:
            raise TypeError(f"{self.name!r} is not a buffer")
        if kind == "uniform":
            return UNIFORM | COPY_DST
        return STORAGE | COPY_DST | (COPY_SRC if kind == "storage" else 0)

    def create_buffer(
        self, device: Any, data: Any = None, *, size: int | None = None, usage: int = 0
    ) -> Any:
        """A GPUBuffer for this binding with the usage it needs (plus ``usage``): holding
        ``data`` (a generated struct or struct array, or anything with the buffer protocol),
        or ``size`` zeroed bytes (default: :attr:`min_binding_size`)."""
        flags = self.usage | usage
        if data is not None:
            if hasattr(data, "__array_interface__"):  # numpy's arrays: raw bytes are as given
                self.check_array(data)
            raw = data.bytes_view() if hasattr(data, "bytes_view") else memoryview(data).cast("B")
            self._check_size(raw.nbytes)
            return device.create_buffer_with_data(data=raw, usage=flags)
        nbytes = self.min_binding_size if size is None else size
        self._check_size(nbytes)
        return device.create_buffer(size=nbytes, usage=flags)

    def check_array(self, data: Any) -> None:
        """TypeError, naming the field, for a numpy array whose bytes are not this buffer's
        layout: another dtype (a member missing, moved or of another type; float64 for
        float) or strides that are not contiguous. Generated structs are right by making."""
        from oneshader.bindings.checked import check_array

        layout = None
        if self.counter_of is None:
            holder = self.resource if self.resource is not None else self.push_block
            layout = holder.layout if holder is not None else None
        check_array(self.name, layout, data)

    def _check_size(self, nbytes: int) -> None:
        if nbytes < self.min_binding_size:
            raise ValueError(
                f"{self.name!r} needs at least {self.min_binding_size} bytes, got {nbytes}"
            )

    def layout_entry(
        self,
        *,
        sample_type: str | None = None,
        access: str | None = None,
        dynamic: bool = False,
    ) -> dict[str, Any]:
        """The wgpu bind group layout entry at this binding's WGSL slot.

        ``sample_type`` overrides a texture's ("unfilterable-float", "depth"): HLSL does not say.
        ``access`` overrides a storage texture's (by default what the shader does to it:
        "write-only", "read-only" or "read-write", as its WGSL declares).
        ``dynamic`` gives a buffer a dynamic offset (one buffer, many objects' data).
        """
        entry: dict[str, Any] = {"binding": self.wgsl.binding, "visibility": self.visibility}
        buffer = self._buffer_type
        if buffer is not None:
            entry["buffer"] = {
                "type": buffer,
                "has_dynamic_offset": dynamic,
                "min_binding_size": self.min_binding_size,
            }
            return entry
        if dynamic:
            raise ValueError(f"{self.name!r} is not a buffer: only buffers have dynamic offsets")
        res = self.resource
        assert res is not None  # push blocks and counters are buffers
        if res.kind is ResourceKind.Sampler:
            kind = "comparison" if res.rtype is R.SamplerComparisonState else "filtering"
            entry["sampler"] = {"type": kind}
        elif res.kind is ResourceKind.UnorderedAccess and res.rtype in _VIEW_DIMENSIONS:
            entry["storage_texture"] = {
                "access": access or STORAGE_ACCESS[res.access],
                "format": storage_texture_format(res.format, res.layout),
                "view_dimension": _VIEW_DIMENSIONS[res.rtype][0],
            }
        elif res.rtype in _VIEW_DIMENSIONS:
            dim, ms = _VIEW_DIMENSIONS[res.rtype]
            if sample_type is None and res.depth:
                sample_type = "depth"  # the WGSL declares a texture_depth_*
            elif sample_type is None:
                scalar = res.layout.scalar if res.layout is not None else ScalarKind.Float
                sample_type = _SAMPLE_TYPES.get(scalar, "float")
            entry["texture"] = {
                "sample_type": sample_type,
                "view_dimension": dim,
                "multisampled": ms,
            }
        else:
            raise ValueError(f"{res.name!r}: WebGPU has no binding for {res.rtype.name}")
        return entry


@dataclass(frozen=True)
class BufferRange:
    """Part of a buffer bound to one binding: ``size`` bytes from ``offset`` (None: to the end;
    for a dynamic binding, the binding's struct)."""

    buffer: Any
    offset: int = 0
    size: int | None = None


def _type_names(obj: object) -> set[str]:
    return {k.__name__ for k in type(obj).__mro__}


def _check_object(b: Binding, obj: object) -> None:
    """The wrong kind of object for a binding, named before wgpu sees it."""
    kinds = _type_names(obj)
    if b.is_buffer:
        buffer = obj.buffer if isinstance(obj, BufferRange) else obj
        if "GPUBuffer" not in _type_names(buffer):
            raise TypeError(f"{b.name!r} is a buffer binding; got a {type(obj).__name__}")
        need = UNIFORM if b.usage & UNIFORM else STORAGE
        usage = int(getattr(buffer, "usage", need))
        if not usage & need:
            what = "UNIFORM" if need == UNIFORM else "STORAGE"
            raise ValueError(
                f"{b.name!r} needs a buffer with usage {what} (create it with "
                f"resources.{b.name}.create_buffer)"
            )
        return
    res = b.resource
    assert res is not None
    if res.kind.name == "Sampler":
        if "GPUSampler" not in kinds:
            raise TypeError(f"{b.name!r} is a sampler binding; got a {type(obj).__name__}")
    elif "GPUTextureView" not in kinds:
        hint = " (pass texture.create_view())" if "GPUTexture" in kinds else ""
        raise TypeError(
            f"{b.name!r} is a texture binding and takes a GPUTextureView; got a "
            f"{type(obj).__name__}{hint}"
        )


def bind_group_entry(b: Binding, obj: Any, dynamic: bool = False) -> dict[str, Any]:
    """wgpu's bind group entry for one binding, after checking the object's kind and size."""
    _check_object(b, obj)
    if not b.is_buffer:
        return {"binding": b.wgsl.binding, "resource": obj}
    part = obj if isinstance(obj, BufferRange) else BufferRange(obj)
    total = int(part.buffer.size)
    if part.size is not None:
        size = part.size
    elif dynamic:
        size = b.min_binding_size  # the window each dynamic offset moves
    else:
        size = total - part.offset
    if size < b.min_binding_size:
        raise ValueError(
            f"{b.name!r} needs at least {b.min_binding_size} bytes, got a {size}-byte "
            f"{'range' if isinstance(obj, BufferRange) else 'buffer'}"
        )
    if part.offset + size > total:
        raise ValueError(
            f"{b.name!r}: bytes {part.offset}..{part.offset + size} run past the "
            f"{total}-byte buffer"
        )
    resource = {"buffer": part.buffer, "offset": part.offset, "size": size}
    return {"binding": b.wgsl.binding, "resource": resource}
