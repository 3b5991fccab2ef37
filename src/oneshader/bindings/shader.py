"""A shader's slots, entry points and constants, and what wgpu-py wants made of them.

Every descriptor here is plain data in wgpu-py's dict form (visibility as the WebGPU flag ints),
so nothing imports wgpu; the ``create_*`` helpers take the user's device and call its methods.
WGSL is the target wgpu runs, so bind groups use the Wgsl slots; push blocks are uniform buffers
there. The reflection model is the only input.
"""

from __future__ import annotations

import base64
import struct
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from oneshader.bindings.stages import (
    COPY_DST,
    COPY_SRC,
    STORAGE,
    UNIFORM,
    VertexBuffer,
    check_link,
    check_targets,
)
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

if TYPE_CHECKING:
    from oneshader.bindings.bindgroups import Layouts

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
            raw = data.bytes_view() if hasattr(data, "bytes_view") else memoryview(data).cast("B")
            self._check_size(raw.nbytes)
            return device.create_buffer_with_data(data=raw, usage=flags)
        nbytes = self.min_binding_size if size is None else size
        self._check_size(nbytes)
        return device.create_buffer(size=nbytes, usage=flags)

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
        ``access`` overrides a storage texture's ("read-write" by default, as Slang declares).
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
        not by its name; without a WGSL slot, the constant_id."""
        slot = self._wgsl
        return str(self.constant.id if slot is None else slot.index)

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

    def workgroups(self, x: int, y: int = 1, z: int = 1) -> tuple[int, int, int]:
        """How many workgroups of this compute entry cover an x*y*z problem (rounded up)."""
        if self.entry.stage is not Stage.Compute:
            raise ValueError(f"{self.name} is a {self.entry.stage.name} entry point")
        size = self.entry.workgroup
        return (-(-x // size[0]), -(-y // size[1]), -(-z // size[2]))

    def dispatch(self, compute_pass: Any, x: int, y: int = 1, z: int = 1) -> None:
        """``compute_pass.dispatch_workgroups`` for an x*y*z problem: every thread id below
        (x, y, z) runs (the shader skips the rest of the last workgroup itself)."""
        compute_pass.dispatch_workgroups(*self.workgroups(x, y, z))

    def _inputs(self, names: Iterable[str]) -> list[Any]:
        by_name = {v.name: v for v in self.attributes}
        out = []
        for n in names:
            if n not in by_name:
                have = ", ".join(by_name) or "none"
                raise LookupError(f"{self.name} has no vertex input {n!r}; it has {have}")
            out.append(by_name[n])
        return out

    def vertex_buffer(self, *names: str, step_mode: str = "vertex") -> VertexBuffer:
        """A buffer holding these vertex inputs (all of them if none are named), packed in the
        order named, stepped per vertex (or ``step_mode="instance"``)."""
        if self.entry.stage is not Stage.Vertex:
            raise ValueError(f"{self.name} is a {self.entry.stage.name} entry point")
        if names:
            return VertexBuffer.pack(self._inputs(names), step_mode)
        attrs = self.attributes  # the reflection's own interleaved buffer
        return VertexBuffer(attrs, tuple(v.offset for v in attrs), self.entry.stride, step_mode)

    def instance_buffer(self, *names: str) -> VertexBuffer:
        """A buffer of these inputs stepped once per instance."""
        return self.vertex_buffer(*names, step_mode="instance")

    def vertex_buffers(
        self, *buffers: VertexBuffer, step_mode: str = "vertex"
    ) -> list[dict[str, Any]]:
        """``vertex={"buffers": ...}``. With no buffers, the one interleaved buffer of the
        reflection (none if the entry reads no attributes); else the given buffers' layouts,
        in slot order, after checking that they hold every input exactly once."""
        if not buffers:
            return [self.vertex_buffer_layout(step_mode)] if self.attributes else []
        seen: dict[str, int] = {}
        for slot, b in enumerate(buffers):
            for n in b.names:
                if n in seen:
                    raise ValueError(
                        f"{self.name}: {n!r} is in vertex buffers {seen[n]} and {slot}"
                    )
                seen[n] = slot
        missing = [v.name for v in self.attributes if v.name not in seen]
        if missing:
            raise ValueError(f"{self.name} reads {', '.join(missing)}, which no buffer holds")
        self._inputs(seen)  # every name is one of this entry's
        return [b.layout for b in buffers]

    def vertex_buffer_layout(self, step_mode: str = "vertex") -> dict[str, Any]:
        """wgpu's VertexBufferLayout for the interleaved vertex buffer this entry reads."""
        return self.vertex_buffer(step_mode=step_mode).layout

    def vertex_dtype(self) -> np.dtype[Any]:
        """A numpy dtype of one interleaved vertex (fields named like the inputs), for filling
        the vertex buffer with exactly the stride and offsets of the layout above."""
        return self.vertex_buffer().dtype

    def stage_descriptor(
        self, module: Any, constants: Mapping[str, float] | None = None
    ) -> dict[str, Any]:
        """``{"module", "entry_point", "constants"}`` for a pipeline's vertex/fragment/compute."""
        out: dict[str, Any] = {"module": module, "entry_point": self.name}
        if constants:
            out["constants"] = dict(constants)
        return out


class Shader:
    """Everything the host needs from one reflection, with the stem its built files share, and
    the built code the generator embedded (WGSL text, SPIR-V as base64 text)."""

    def __init__(
        self,
        reflection: ShaderReflection,
        stem: str,
        code: Mapping[Target, str] | None = None,
    ) -> None:
        self.reflection = reflection
        self.stem = stem
        self._code = dict(code or {})
        self._per_device: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = (
            weakref.WeakKeyDictionary()
        )

    def _cached(self, device: Any, key: Any, make: Any) -> Any:
        """One object per device and key (layouts, modules), so that bind groups made by the
        generated classes fit the pipelines made here without the user passing layouts."""
        try:
            cache = self._per_device.setdefault(device, {})
        except TypeError:  # a device that cannot be weakly referenced: no cache
            return make()
        if key not in cache:
            cache[key] = make()
        return cache[key]

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

    def group_bindings(self, group: int) -> list[Binding]:
        """The bindings of WGSL bind group ``group``, ordered by binding number."""
        self._require_wgsl()
        found = [
            b
            for b in self.bindings()
            if any(s.target is Target.Wgsl and s.set == group for s in b.slots)
        ]
        return sorted(found, key=lambda b: b.wgsl.binding)

    def bind_group_layout_entries(
        self,
        group: int,
        *,
        sample_types: Mapping[str, str] | None = None,
        access: Mapping[str, str] | None = None,
        dynamic: Iterable[str] = (),
    ) -> list[dict[str, Any]]:
        """The entries of WGSL bind group ``group``, ordered by binding; ``sample_types`` and
        ``access`` override textures' by resource name; ``dynamic`` names the buffers bound
        with a dynamic offset."""
        self._require_wgsl()
        dyn = frozenset(dynamic)
        entries: list[dict[str, Any]] = []
        for b in self.group_bindings(group):
            entries.append(
                b.layout_entry(
                    sample_type=(sample_types or {}).get(b.name),
                    access=(access or {}).get(b.name),
                    dynamic=b.name in dyn,
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
        from oneshader.bindings.bindgroups import bind_group_entry

        entries = [bind_group_entry(b, obj) for b, obj in resources.items()]
        entries.sort(key=lambda e: int(e["binding"]))
        return device.create_bind_group(layout=layout, entries=entries)

    def constants(self, values: Mapping[int, float | int | bool | None]) -> dict[str, float]:
        """wgpu's ``constants`` dict from {spec constant index: value}; None keeps the default."""
        out: dict[str, float] = {}
        for index, value in values.items():
            if value is not None:
                out[self.spec_constant(index).key] = float(value)
        return out

    # -- built code ------------------------------------------------------------------------
    def code_path(self, directory: str | Path, target: Target = Target.Wgsl) -> Path:
        """Where the build put this shader's code for ``target`` in ``directory`` (one file per
        target, every entry point in it)."""
        return Path(directory) / f"{self.stem}{target.suffix}"

    def code(self, target: Target = Target.Wgsl) -> str | bytes:
        """The built code the module carries: WGSL text, or SPIR-V bytes."""
        text = self._code.get(target)
        if text is None:
            have = ", ".join(t.name for t in self._code) or "none"
            raise LookupError(
                f"{self.stem}: no {target.name} code was embedded (embedded: {have}); generate "
                f"the bindings from a build output that has {self.stem}{target.suffix}, or pass "
                "the folder that holds it"
            )
        return base64.b64decode(text) if target is Target.SpirV else text

    def create_shader_module(
        self,
        device: Any,
        directory: str | Path | None = None,
        *,
        target: Target = Target.Wgsl,
    ) -> Any:
        """A GPUShaderModule from the embedded code (one per device), or, with ``directory``,
        from the built WGSL (or SPIR-V) file in it."""
        label = f"{self.stem}{target.suffix}"
        if directory is None:
            return self._cached(
                device,
                ("module", target),
                lambda: device.create_shader_module(label=label, code=self.code(target)),
            )
        path = self.code_path(directory, target)
        code: str | bytes = path.read_bytes() if target is Target.SpirV else path.read_text("utf-8")
        return device.create_shader_module(label=label, code=code)

    # -- layouts and pipelines -------------------------------------------------------------
    def layouts(
        self,
        device: Any,
        *,
        dynamic: Iterable[Binding] = (),
        sample_types: Mapping[str, str] | None = None,
        access: Mapping[str, str] | None = None,
    ) -> Layouts:
        """The bind group layouts and pipeline layout on ``device`` (made once per device and
        options). ``dynamic``: buffer bindings bound with a dynamic offset (per-object data)."""
        from oneshader.bindings.bindgroups import Layouts

        names = frozenset(b.name for b in dynamic)
        key = (
            "layouts",
            names,
            tuple(sorted((sample_types or {}).items())),
            tuple(sorted((access or {}).items())),
        )
        return self._cached(  # type: ignore[no-any-return]
            device,
            key,
            lambda: Layouts.create(self, device, names, sample_types or {}, access or {}),
        )

    def create_render_pipeline(
        self,
        device: Any,
        vertex: Entry,
        fragment: Entry,
        targets: Sequence[Any],
        *,
        buffers: Sequence[VertexBuffer] = (),
        layouts: Layouts | None = None,
        constants: Mapping[str, float] | None = None,
        **descriptor: Any,
    ) -> Any:
        """A render pipeline of two entries of this shader, from the embedded code, after
        checking what wgpu would check: that ``fragment`` reads what ``vertex`` writes, that
        the colour ``targets`` (formats, or wgpu's target dicts) fit its outputs, and that the
        vertex ``buffers`` (default: one interleaved buffer) hold every input. ``descriptor``
        passes on (``primitive``, ``depth_stencil``, ``multisample``)."""
        check_link(vertex, fragment)
        check_targets(fragment, targets)
        module = self.create_shader_module(device)
        chosen = layouts if layouts is not None else self.layouts(device)
        return device.create_render_pipeline(
            layout=chosen.pipeline,
            vertex={
                **vertex.stage_descriptor(module, constants),
                "buffers": vertex.vertex_buffers(*buffers),
            },
            fragment={
                **fragment.stage_descriptor(module, constants),
                "targets": [t if isinstance(t, dict) else {"format": t} for t in targets],
            },
            **descriptor,
        )

    def create_compute_pipeline(
        self,
        device: Any,
        entry: Entry,
        *,
        layouts: Layouts | None = None,
        constants: Mapping[str, float] | None = None,
    ) -> Any:
        """A compute pipeline of one entry of this shader, from the embedded code."""
        if entry.stage is not Stage.Compute:
            raise ValueError(f"{entry.name} is a {entry.stage.name} entry point")
        chosen = layouts if layouts is not None else self.layouts(device)
        return device.create_compute_pipeline(
            layout=chosen.pipeline,
            compute=entry.stage_descriptor(self.create_shader_module(device), constants),
        )
