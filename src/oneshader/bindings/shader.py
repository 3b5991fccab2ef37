"""A shader's slots, entry points and constants, and what wgpu-py wants made of them.

Every descriptor here is plain data in wgpu-py's dict form (visibility as the WebGPU flag ints),
so nothing imports wgpu; the ``create_*`` helpers take the user's device and call its methods.
WGSL is the target wgpu runs, so bind groups use the Wgsl slots; push blocks are uniform buffers
there. The reflection model is the only input.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from oneshader.codegen.names import mangle_all
from oneshader.reflection.model import (
    EntryPoint,
    PushBlock,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    SpecConstant,
    SpecSlot,
    Stage,
    Target,
    TypeKind,
    TypeLayout,
    VertexFormat,
)

__all__ = ["Binding", "Entry", "Shader", "Spec", "storage_texture_format"]

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

    def layout_entry(
        self, *, sample_type: str | None = None, access: str | None = None
    ) -> dict[str, Any]:
        """The wgpu bind group layout entry at this binding's WGSL slot.

        ``sample_type`` overrides a texture's ("unfilterable-float", "depth"): HLSL does not say.
        ``access`` overrides a storage texture's ("read-write" by default, as Slang declares).
        """
        entry: dict[str, Any] = {"binding": self.wgsl.binding, "visibility": self.visibility}
        buffer = self._buffer_type
        if buffer is not None:
            entry["buffer"] = {"type": buffer}
            return entry
        res = self.resource
        assert res is not None  # push blocks and counters are buffers
        if res.kind is ResourceKind.Sampler:
            kind = "comparison" if res.rtype is R.SamplerComparisonState else "filtering"
            entry["sampler"] = {"type": kind}
        elif res.kind is ResourceKind.UnorderedAccess and res.rtype in _VIEW_DIMENSIONS:
            entry["storage_texture"] = {
                "access": access or "read-write",
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
class Spec:
    """A specialization constant: its id and, on WGSL, the override it sets."""

    constant: SpecConstant

    @property
    def name(self) -> str:
        return self.constant.name

    @property
    def id(self) -> int:
        return self.constant.id

    @property
    def _wgsl(self) -> SpecSlot | None:
        return next((s for s in self.constant.slots if s.target is Target.Wgsl), None)

    @property
    def key(self) -> str:
        """The key of wgpu's ``constants`` dict. Slang declares every WGSL override with
        ``@id(n)``, and WebGPU keys an override that has an id by that id (as a decimal string),
        not by its name; without a WGSL slot, the constant_id (``constants`` leaves such a
        constant out where the reflection has a WGSL target: the module lacks it)."""
        slot = self._wgsl
        return str(self.constant.id if slot is None else slot.index)

    @property
    def in_wgsl(self) -> bool:
        """Whether the WGSL module declares the override (it has a WGSL slot)."""
        return self._wgsl is not None

    @property
    def wgsl_name(self) -> str:
        """The WGSL override's name (for reading the emitted code, not for ``constants``)."""
        slot = self._wgsl
        return "" if slot is None else slot.name

    @property
    def default(self) -> float | int | bool:
        bits = self.constant.default & 0xFFFFFFFF
        kind = self.constant.scalar
        if kind is ScalarKind.Float:
            return float(struct.unpack("<f", struct.pack("<I", bits))[0])
        if kind is ScalarKind.Bool:
            return bits != 0
        if kind is ScalarKind.Int:
            return bits - (1 << 32) if bits >= 1 << 31 else bits
        return bits


_VERTEX_NUMPY = {
    "uint8": "u1", "sint8": "i1", "unorm8": "u1", "snorm8": "i1",
    "uint16": "<u2", "sint16": "<i2", "unorm16": "<u2", "snorm16": "<i2", "float16": "<f2",
    "float32": "<f4", "uint32": "<u4", "sint32": "<i4",
}  # fmt: skip


def vertex_numpy(fmt: VertexFormat) -> np.dtype[Any]:
    """The numpy dtype of one vertex attribute (``unorm8x4`` -> 4 x uint8)."""
    if fmt is VertexFormat.Unorm10_10_10_2:
        return np.dtype("<u4")
    if fmt is VertexFormat.Unorm8x4Bgra:
        return np.dtype(("u1", (4,)))
    base, _, n = fmt.value.partition("x")
    scalar = np.dtype(_VERTEX_NUMPY[base])
    return scalar if not n else np.dtype((scalar, (int(n),)))


@dataclass(frozen=True)
class Entry:
    """An entry point: stage, workgroup size, vertex buffer layout, constants it reads."""

    entry: EntryPoint
    shader: Shader

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def stage(self) -> Stage:
        return self.entry.stage

    @property
    def workgroup(self) -> tuple[int, int, int]:
        return self.entry.workgroup

    @property
    def stride(self) -> int:
        return self.entry.stride

    @property
    def attributes(self) -> tuple[Any, ...]:
        """The located vertex inputs (built-ins such as SV_VertexID have no buffer)."""
        return tuple(v for v in self.entry.inputs if v.format is not VertexFormat.None_)

    @property
    def spec_constants(self) -> tuple[Spec, ...]:
        return tuple(self.shader.spec(n) for n in self.entry.specuse)

    def vertex_buffer_layout(self, step_mode: str = "vertex") -> dict[str, Any]:
        """wgpu's VertexBufferLayout for the interleaved vertex buffer this entry reads."""
        if self.entry.stage is not Stage.Vertex:
            raise ValueError(f"{self.name} is a {self.entry.stage.name} entry point")
        return {
            "array_stride": self.entry.stride,
            "step_mode": step_mode,
            "attributes": [
                {"format": v.format.value, "offset": v.offset, "shader_location": v.location}
                for v in self.attributes
            ],
        }

    def vertex_buffers(self, step_mode: str = "vertex") -> list[dict[str, Any]]:
        """``vertex={"buffers": ...}``: one layout, or none if the entry reads no attributes."""
        return [self.vertex_buffer_layout(step_mode)] if self.attributes else []

    def vertex_dtype(self) -> np.dtype[Any]:
        """A numpy dtype of one interleaved vertex (fields named like the inputs), for filling
        the vertex buffer with exactly the stride and offsets of the layout above."""
        attrs = self.attributes
        return np.dtype(
            {
                "names": mangle_all(v.name for v in attrs),
                "formats": [vertex_numpy(v.format) for v in attrs],
                "offsets": [v.offset for v in attrs],
                "itemsize": self.entry.stride,
            }
        )

    def stage_descriptor(
        self, module: Any, constants: Mapping[str, float] | None = None
    ) -> dict[str, Any]:
        """``{"module", "entry_point", "constants"}`` for a pipeline's vertex/fragment/compute."""
        out: dict[str, Any] = {"module": module, "entry_point": self.name}
        if constants:
            out["constants"] = dict(constants)
        return out


class Shader:
    """Everything the host needs from one reflection, with the stem its built files share."""

    def __init__(self, reflection: ShaderReflection, stem: str) -> None:
        self.reflection = reflection
        self.stem = stem

    # -- named parts -------------------------------------------------------------------------
    def resource(self, index: int) -> Binding:
        r = self.reflection.resources[index]
        return Binding(r.name, r.stages, r.slots, resource=r)

    def push_block(self, index: int) -> Binding:
        p = self.reflection.push_blocks[index]
        return Binding(p.name, p.stages, p.slots, push_block=p)

    def spec_constant(self, index: int) -> Spec:
        return Spec(self.reflection.spec_constants[index])

    def spec(self, name: str) -> Spec:
        for c in self.reflection.spec_constants:
            if c.name == name:
                return Spec(c)
        raise LookupError(f"no specialization constant {name!r}")

    def entry(self, index: int) -> Entry:
        return Entry(self.reflection.entry_points[index], self)

    def bindings(self) -> list[Binding]:
        """Every resource (each followed by its counter, if it has one), then the push blocks."""
        out: list[Binding] = []
        for i, r in enumerate(self.reflection.resources):
            out.append(self.resource(i))
            if r.counters:
                out.append(out[-1].counter)
        return out + [self.push_block(i) for i in range(len(self.reflection.push_blocks))]

    # -- wgpu descriptors --------------------------------------------------------------------
    def _require_wgsl(self) -> None:
        """The wgpu helpers read the Wgsl slots: without them every layout would come out empty
        and the mismatch would surface only when wgpu creates the pipeline."""
        if Target.Wgsl not in self.reflection.targets:
            built = ", ".join(t.name for t in self.reflection.targets)
            raise LookupError(
                f"{self.stem}: the wgpu helpers use the Wgsl slots, but this shader was built "
                f"for {built} only; build it for wgsl too"
            )

    def groups(self) -> list[int]:
        """The WGSL bind groups used, ascending."""
        self._require_wgsl()
        out = set()
        for b in self.bindings():
            for s in b.slots:
                if s.target is Target.Wgsl:
                    out.add(s.set)
        return sorted(out)

    def bind_group_layout_entries(
        self,
        group: int,
        *,
        sample_types: Mapping[str, str] | None = None,
        access: Mapping[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        """The entries of WGSL bind group ``group``, ordered by binding; ``sample_types`` and
        ``access`` override textures' by resource name."""
        self._require_wgsl()
        entries: list[dict[str, Any]] = []
        for b in self.bindings():
            if any(s.target is Target.Wgsl and s.set == group for s in b.slots):
                entries.append(
                    b.layout_entry(
                        sample_type=(sample_types or {}).get(b.name),
                        access=(access or {}).get(b.name),
                    )
                )
        return sorted(entries, key=lambda e: int(e["binding"]))

    def create_bind_group_layouts(self, device: Any, **overrides: Any) -> list[Any]:
        """One GPUBindGroupLayout per group 0..max (empty ones fill gaps)."""
        groups = self.groups()
        top = groups[-1] + 1 if groups else 0
        return [
            device.create_bind_group_layout(entries=self.bind_group_layout_entries(g, **overrides))
            for g in range(top)
        ]

    def create_pipeline_layout(
        self, device: Any, bind_group_layouts: Sequence[Any] | None = None
    ) -> Any:
        layouts = (
            self.create_bind_group_layouts(device)
            if bind_group_layouts is None
            else bind_group_layouts
        )
        return device.create_pipeline_layout(bind_group_layouts=list(layouts))

    def create_bind_group(self, device: Any, layout: Any, resources: Mapping[Binding, Any]) -> Any:
        """A bind group from {binding: GPUBuffer | GPUTextureView | GPUSampler}; all of them must
        be in one WGSL group and, together, fill it."""
        groups = {b.wgsl.set for b in resources}
        if len(groups) != 1:
            raise ValueError(f"the resources of one bind group share a group, got {sorted(groups)}")
        entries: list[dict[str, Any]] = []
        for b, obj in resources.items():
            is_buffer = b._buffer_type is not None
            res = {"buffer": obj, "offset": 0, "size": obj.size} if is_buffer else obj
            entries.append({"binding": b.wgsl.binding, "resource": res})
        entries.sort(key=lambda e: int(e["binding"]))
        return device.create_bind_group(layout=layout, entries=entries)

    def constants(self, values: Mapping[int, float | int | bool | None]) -> dict[str, float]:
        """wgpu's ``constants`` dict from {spec constant index: value}; None keeps the default.
        A constant the WGSL module does not declare (no entry point reads it, so the compiler
        dropped it and the reflection gives it no WGSL slot) is left out: wgpu refuses a key
        the module lacks, and the value could change nothing."""
        wgsl = Target.Wgsl in self.reflection.targets
        out: dict[str, float] = {}
        for index, value in values.items():
            spec = self.spec_constant(index)
            if value is not None and (spec.in_wgsl or not wgsl):
                out[spec.key] = float(value)
        return out

    # -- built code ------------------------------------------------------------------------
    def code_path(self, directory: str | Path, target: Target = Target.Wgsl) -> Path:
        """Where the build put this shader's code for ``target`` in ``directory`` (one file per
        target, every entry point in it)."""
        return Path(directory) / f"{self.stem}{target.suffix}"

    def create_shader_module(
        self,
        device: Any,
        directory: str | Path,
        *,
        target: Target = Target.Wgsl,
    ) -> Any:
        """A GPUShaderModule from the built WGSL (or SPIR-V) file next to the reflection."""
        path = self.code_path(directory, target)
        code: str | bytes = path.read_bytes() if target is Target.SpirV else path.read_text("utf-8")
        return device.create_shader_module(label=path.name, code=code)
