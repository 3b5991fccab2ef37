"""Bind groups a user fills by resource name: what generated ``BindGroupN`` classes derive from.

A generated class's constructor has one keyword parameter per resource of its WGSL group, so a
type checker and an editor see them; this base checks what wgpu would check later and further
from the cause (see :func:`oneshader.bindings.binding.bind_group_entry`), knows its group index
and its dynamic offsets, and sets itself on a pass.
"""

from __future__ import annotations

from typing import Any

from oneshader.bindings.binding import bind_group_entry
from oneshader.bindings.shader import Layouts, Shader

__all__ = ["BindGroup", "set_bind_groups"]


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
