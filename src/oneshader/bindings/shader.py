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
from typing import Any, TypeVar

import numpy as np

from oneshader.bindings.binding import (
    READ_WRITE_FEATURE,
    READ_WRITE_FEATURES,
    Binding,
    bind_group_entry,
    read_write_feature,
)
from oneshader.bindings.stages import (
    UNIFORM,
    VertexBuffer,
    VertexBuffers,
    check_link,
    check_targets,
)
from oneshader.fsutil import read_beside, read_file
from oneshader.reflection.model import (
    BuiltIn,
    DeviceFeatures,
    EntryPoint,
    ScalarKind,
    ShaderReflection,
    SpecConstant,
    SpecSlot,
    Stage,
    Target,
    VertexFormat,
)

__all__ = ["Entry", "Layouts", "Shader", "Spec"]


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


@dataclass(frozen=True)
class Entry:
    """An entry point: stage, workgroup size, vertex buffer layout, constants it reads."""

    entry: EntryPoint
    shader: Shader

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def source(self) -> str:
        """The shader source it comes from, as the reflection names it."""
        return self.shader.reflection.source

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
        """The attributes of these inputs, in the order named (an input that takes several
        locations, a matrix or an array, is one attribute per location, in location order)."""
        out = []
        for n in names:
            located = [v for v in self.attributes if v.name == n]
            if not located:
                have = ", ".join(dict.fromkeys(v.name for v in self.attributes)) or "none"
                raise LookupError(f"{self.name} has no vertex input {n!r}; it has {have}")
            out += sorted(located, key=lambda v: v.location or 0)
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

    def buffers(self, **named: VertexBuffer) -> VertexBuffers:
        """The vertex buffers of a pipeline by name, in the order given (their slots):
        ``vs.buffers(geometry=vs.vertex_buffer("Position"), per_instance=vs.instance_buffer(
        "Offset"))``; checked to hold every input once. With none, the one interleaved buffer,
        named ``vertices``."""
        if not named:
            named = {"vertices": self.vertex_buffer()}
        self.vertex_buffers(*named.values())
        return VertexBuffers(self.name, named)

    def set_vertex_buffer(self, render_pass: Any, buffer: Any) -> None:
        """Bind the one interleaved vertex buffer of a pipeline made without ``buffers=``."""
        self.buffers().set(render_pass, vertices=buffer)

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


# Shared groups' layouts: per device, per shared name and entries, the one layout object.
_SHARED_LAYOUTS: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], Any]] = (
    weakref.WeakKeyDictionary()
)
_SHARED_CLASSES: dict[str, Any] = {}

C = TypeVar("C", bound=type)


def shared_layout(device: Any, name: str, entries: list[dict[str, Any]]) -> Any:
    """The GPUBindGroupLayout of shared group ``name`` with these entries on ``device``: the
    same object for every shader that asks (a device without weak references gets its own)."""
    key = (name, repr(entries))
    try:
        cache = _SHARED_LAYOUTS.setdefault(device, {})
    except TypeError:
        return device.create_bind_group_layout(entries=entries)
    if key not in cache:
        cache[key] = device.create_bind_group_layout(entries=entries)
    return cache[key]


def shared_class(name: str, cls: C) -> C:
    """The bind group class of shared group ``name``: the first module's, for every module
    that shares it (the generator made them equal, and checked their groups equal)."""
    return _SHARED_CLASSES.setdefault(name, cls)  # type: ignore[no-any-return]


class StaleOutputs(RuntimeError):
    """A shader's code file is not known to come from the build of its reflection."""


class Shader:
    """Everything the host needs from one reflection, with the stem its built files share, and
    the built code the generator embedded (WGSL text, SPIR-V as base64 text)."""

    def __init__(
        self,
        reflection: ShaderReflection,
        stem: str,
        code: Mapping[Target, str] | None = None,
        shared: Mapping[int, tuple[str, int]] | None = None,
    ) -> None:
        self.reflection = reflection
        self.stem = stem
        self._code = dict(code or {})
        # WGSL groups shared with other shaders: group -> (shared name, visibility of all)
        self.shared = dict(shared or {})
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
            if not b.on_webgpu:
                continue
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
            if b.on_webgpu and any(s.target is Target.Wgsl and s.set == group for s in b.slots)
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
            if group in self.shared:  # visible wherever any sharing shader uses it
                entries[-1]["visibility"] = self.shared[group][1]
        return sorted(entries, key=lambda e: int(e["binding"]))

    def create_bind_group_layouts(self, device: Any, **overrides: Any) -> list[Any]:
        """One GPUBindGroupLayout per group 0..max (empty ones fill gaps); a group shared
        with other shaders is one layout object per device for all of them (with equal
        entries), so one bind group binds in every sharing shader's pipelines."""
        groups = self.groups()
        top = groups[-1] + 1 if groups else 0
        out = []
        for g in range(top):
            entries = self.bind_group_layout_entries(g, **overrides)
            if g in self.shared:
                out.append(shared_layout(device, self.shared[g][0], entries))
            else:
                out.append(device.create_bind_group_layout(entries=entries))
        return out

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
        entries = [bind_group_entry(b, obj) for b, obj in resources.items()]
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

    def read_code(self, directory: str | Path, target: Target = Target.Wgsl) -> bytes:
        """The built code for ``target``, checked to come from the build of this module's
        reflection: the build removes a shader's reflection before it changes the code files
        and writes it after them, so the reflection file beside the code, unchanged while the
        code is read and equal to this module's, vouches for it. :class:`StaleOutputs` if not
        (a build killed or still running, or bindings generated from another build)."""
        path = self.code_path(directory, target)
        mark = Path(directory) / f"{self.stem}.reflection"
        try:
            unit = read_beside(mark, lambda _: read_file(path))
        except FileNotFoundError as err:
            if err.filename != str(mark):
                raise
            raise StaleOutputs(
                f"{mark} is missing: the outputs of {self.stem} are incomplete (a build was "
                "interrupted or is running); build again"
            ) from None
        if unit is None:
            raise StaleOutputs(
                f"{mark} changed while {path.name} was read (a build is running); try again"
            )
        text, code = unit
        from oneshader.reflection.format import ReflectionFormat

        if ReflectionFormat.try_read(text) != self.reflection:
            raise StaleOutputs(
                f"{mark} is not the reflection these bindings were generated from: generate "
                f"them again (or build with --bindings) so that they match {path.name}"
            )
        return code

    @property
    def required_features(self) -> tuple[str, ...]:
        """The WebGPU features a device must have been granted to run this shader's code
        (``adapter.request_device_sync(required_features=SHADER.required_features)``):
        ``shader-f16`` for 16-bit floats, ``clip-distances`` where a vertex entry writes
        SV_ClipDistance (the WGSL enables them), ``subgroup`` for wave/quad operations,
        ``texture-adapter-specific-format-features``
        where a storage texture is read and written in a format core WebGPU allows only one
        of the two for (rgba8unorm, rgba32float...; ``texture-formats-tier2`` serves too)."""
        entries = self.reflection.entry_points
        out = []
        if any(DeviceFeatures.Float16 in e.features for e in entries):
            out.append("shader-f16")
        if any(
            e.stage is Stage.Vertex and any(v.builtin is BuiltIn.ClipDistance for v in e.outputs)
            for e in entries
        ):
            out.append("clip-distances")
        if any(DeviceFeatures.Subgroups in e.features for e in entries):
            out.append("subgroup")
        if any(read_write_feature(r) for r in self.reflection.resources):
            out.append(READ_WRITE_FEATURE)
        return tuple(out)

    def check_features(self, device: Any) -> None:
        """A clear error, before wgpu's, when ``device`` lacks a feature the code needs."""
        granted = getattr(device, "features", None)
        if granted is None:  # not a GPUDevice (a stand-in): wgpu will say
            return
        missing = [
            f
            for f in self.required_features
            if f not in granted
            and not (f == READ_WRITE_FEATURE and READ_WRITE_FEATURES & set(granted))
        ]
        if missing:
            names = ", ".join(repr(f) for f in missing)
            raise LookupError(
                f"{self.stem}: the device lacks the WebGPU feature(s) {names} that this shader "
                "needs; request the device with adapter.request_device_sync(required_features="
                "SHADER.required_features) (the adapter must list them)"
            )

    def create_shader_module(
        self,
        device: Any,
        directory: str | Path | None = None,
        *,
        target: Target = Target.Wgsl,
    ) -> Any:
        """A GPUShaderModule from the embedded code (one per device), or, with ``directory``,
        from the built WGSL (or SPIR-V) file in it, checked by :meth:`read_code`; the device
        must have the :attr:`required_features`."""
        self.check_features(device)
        label = f"{self.stem}{target.suffix}"
        if directory is None:
            return self._cached(
                device,
                ("module", target),
                lambda: device.create_shader_module(label=label, code=self.code(target)),
            )
        data = self.read_code(directory, target)
        code: str | bytes = data if target is Target.SpirV else data.decode("utf-8")
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
        buffers: Sequence[VertexBuffer] | VertexBuffers = (),
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
        self.check_features(device)
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
        self.check_features(device)
        chosen = layouts if layouts is not None else self.layouts(device)
        return device.create_compute_pipeline(
            layout=chosen.pipeline,
            compute=entry.stage_descriptor(self.create_shader_module(device), constants),
        )


@dataclass(frozen=True)
class Layouts:
    """One shader's bind group layouts and pipeline layout on one device."""

    shader: Shader
    device: Any
    groups: tuple[Any, ...]  # GPUBindGroupLayout per group index (empty ones fill gaps)
    pipeline: Any  # GPUPipelineLayout
    dynamic: frozenset[str]  # names of the buffers bound with a dynamic offset

    @classmethod
    def create(
        cls,
        shader: Shader,
        device: Any,
        dynamic: frozenset[str],
        sample_types: Mapping[str, str],
        access: Mapping[str, str],
    ) -> Layouts:
        known = {b.name for b in shader.bindings()}
        unknown = sorted(dynamic - known)
        if unknown:
            raise LookupError(f"{shader.stem} has no binding {', '.join(map(repr, unknown))}")
        groups = shader.create_bind_group_layouts(
            device, sample_types=sample_types, access=access, dynamic=dynamic
        )
        pipeline = shader.create_pipeline_layout(device, groups)
        return cls(shader, device, tuple(groups), pipeline, dynamic)

    @property
    def uniform_alignment(self) -> int:
        """The device's min_uniform_buffer_offset_alignment: the stride of per-object data."""
        return int(self.device.limits["min-uniform-buffer-offset-alignment"])

    def alignment(self, binding: Binding) -> int:
        """What a dynamic offset of ``binding`` must be a multiple of, on this device."""
        kind = "uniform" if binding.usage & UNIFORM else "storage"
        return int(self.device.limits[f"min-{kind}-buffer-offset-alignment"])
