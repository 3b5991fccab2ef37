"""Bind groups a user fills by resource name: what generated ``BindGroupN`` classes derive from.

A generated class's constructor has one keyword parameter per resource of its WGSL group, so a
type checker and an editor see them; this base checks what wgpu would check later and further
from the cause (a missing buffer usage, a buffer smaller than the shader reads, a texture where a
view belongs), knows its group index and its dynamic offsets, and sets itself on a pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oneshader.bindings.stages import STORAGE, UNIFORM

if TYPE_CHECKING:
    from oneshader.bindings.shader import Binding, Shader

__all__ = ["BindGroup", "BufferRange", "Layouts", "bind_group_entry", "set_bind_groups"]


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
        used = shader.groups()
        top = used[-1] + 1 if used else 0
        groups = tuple(
            device.create_bind_group_layout(
                entries=shader.bind_group_layout_entries(
                    g, sample_types=sample_types, access=access, dynamic=dynamic
                )
            )
            for g in range(top)
        )
        pipeline = device.create_pipeline_layout(bind_group_layouts=list(groups))
        return cls(shader, device, groups, pipeline, dynamic)

    @property
    def uniform_alignment(self) -> int:
        """The device's min_uniform_buffer_offset_alignment: the stride of per-object data."""
        return int(self.device.limits["min-uniform-buffer-offset-alignment"])

    def alignment(self, binding: Binding) -> int:
        """What a dynamic offset of ``binding`` must be a multiple of, on this device."""
        kind = "uniform" if binding.usage & UNIFORM else "storage"
        return int(self.device.limits[f"min-{kind}-buffer-offset-alignment"])


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


class BindGroup:
    """A GPUBindGroup of one WGSL group of one shader, with its index and dynamic bindings."""

    __slots__ = ("bind_group", "bindings", "dynamic", "index", "layouts")

    def __init__(self, shader: Shader, index: int, device: Any, *resources: Any) -> None:
        """``device`` is a GPUDevice (the shader's default layouts on it) or a :class:`Layouts`;
        ``resources`` come in binding order, as the generated constructor passes them."""
        layouts = device if isinstance(device, Layouts) else shader.layouts(device)
        bindings = shader.group_bindings(index)
        if len(resources) != len(bindings):
            raise TypeError(f"group {index} has {len(bindings)} bindings, got {len(resources)}")
        self.index = index
        self.layouts = layouts
        self.bindings = tuple(bindings)
        self.dynamic = tuple(b for b in bindings if b.name in layouts.dynamic)
        entries = [
            bind_group_entry(b, obj, b.name in layouts.dynamic)
            for b, obj in zip(bindings, resources, strict=True)
        ]
        self.bind_group = layouts.device.create_bind_group(
            layout=layouts.groups[index], entries=entries
        )

    def set(self, render_or_compute_pass: Any, *offsets: int) -> None:
        """``pass.set_bind_group`` at this group's index, with one byte offset per dynamic
        binding (in binding order), each a multiple of the device's alignment."""
        if len(offsets) != len(self.dynamic):
            names = ", ".join(b.name for b in self.dynamic) or "none"
            raise ValueError(
                f"group {self.index} takes {len(self.dynamic)} dynamic offsets ({names}), "
                f"got {len(offsets)}"
            )
        for b, offset in zip(self.dynamic, offsets, strict=True):
            align = self.layouts.alignment(b)
            if offset % align:
                raise ValueError(
                    f"the dynamic offset of {b.name!r} must be a multiple of {align}, got {offset}"
                )
        render_or_compute_pass.set_bind_group(self.index, self.bind_group, list(offsets))


def set_bind_groups(render_or_compute_pass: Any, *groups: BindGroup) -> None:
    """Set every group (without dynamic offsets) at its own index."""
    for g in groups:
        g.set(render_or_compute_pass)
