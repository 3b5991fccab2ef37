"""What wgpu checks only when it creates a render pipeline, checked from the reflection first:
that a pixel stage reads what a vertex stage writes, that a fragment's outputs fit its colour
targets, and how the vertex attributes are spread over one or more vertex buffers.

Every error names both sides (shader source, entry point, semantic, location, HLSL type), so a
mismatch between two files is found where it was made, not inside ``create_render_pipeline``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from oneshader.codegen.names import mangle_all
from oneshader.reflection.linking import interpolation, stage_mismatches
from oneshader.reflection.model import (
    BuiltIn,
    EntryPoint,
    ScalarKind,
    Stage,
    StageVariable,
    VertexFormat,
)
from oneshader.reflection.spelling import describe_variable


class StageEntry(Protocol):
    """An entry point and the shader source it comes from (``bindings.shader.Entry``)."""

    @property
    def entry(self) -> EntryPoint: ...

    @property
    def source(self) -> str: ...


__all__ = ["LinkError", "VertexBuffer", "VertexBuffers", "check_link", "check_targets"]


def _where(entry: StageEntry, v: StageVariable) -> str:
    return (
        f"{entry.source} {entry.entry.name} {v.semantic}{v.index or ''} "
        f"(location {v.location}) as {describe_variable(v.scalar, v.components)}"
    )


class LinkError(ValueError):
    """Two stages (or a stage and its targets) that wgpu would refuse to put in one pipeline."""


def check_link(vertex: StageEntry, pixel: StageEntry) -> None:
    """Raise LinkError naming both sides of every pixel input the vertex stage does not write,
    writes with another type, or interpolates differently: WebGPU wants the same location,
    type and interpolation on both sides, and ``create_render_pipeline`` refuses anything else
    (wider outputs included). The two entries may come from two files."""
    vs, ps = vertex.entry, pixel.entry
    if vs.stage is not Stage.Vertex or ps.stage is not Stage.Pixel:
        raise ValueError(
            f"check_link takes a Vertex and a Pixel entry, got {vs.stage.name} {vs.name} and "
            f"{ps.stage.name} {ps.name}"
        )
    problems = []
    for m in stage_mismatches(vertex.entry, pixel.entry):
        v, out = m.input, m.output
        if out is None:
            problems.append(
                f"{_where(pixel, v)} is read, but {vs.name} writes no location {v.location}"
            )
        elif not m.types_agree:
            problems.append(f"{_where(pixel, v)} is read, but {_where(vertex, out)} is written")
        else:
            problems.append(
                f"{_where(pixel, v)} is read with {interpolation(v).name} interpolation, "
                f"{_where(vertex, out)} is written with {interpolation(out).name}"
            )
    if problems:
        raise LinkError("the stages do not match:\n  " + "\n  ".join(problems))


def _format_scalar(fmt: str) -> ScalarKind:
    if fmt.endswith("uint"):
        return ScalarKind.UInt
    if fmt.endswith("sint"):
        return ScalarKind.Int
    return ScalarKind.Float


def check_targets(pixel: StageEntry, targets: Sequence[Any]) -> None:
    """Raise LinkError if a colour output has no target, or a target's texel kind (float, uint,
    sint) is not the output's scalar kind; a target is a format string or wgpu's target dict."""
    problems = []
    for v in pixel.entry.outputs:
        if v.location is None or v.builtin is not BuiltIn.None_:
            continue
        if v.location >= len(targets) or targets[v.location] is None:
            problems.append(f"{_where(pixel, v)} is written, but there is no target {v.location}")
            continue
        target = targets[v.location]
        fmt = str(target["format"] if isinstance(target, dict) else target)
        wanted = _format_scalar(fmt)
        scalar = ScalarKind.Float if v.scalar in (ScalarKind.Float16,) else v.scalar
        if scalar is not wanted:
            problems.append(f"{_where(pixel, v)} is written to a {fmt} target")
    if problems:
        raise LinkError("the colour targets do not match:\n  " + "\n  ".join(problems))


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


def format_size(fmt: VertexFormat) -> int:
    """Bytes of one attribute in a vertex buffer."""
    return fmt.size


@dataclass(frozen=True)
class VertexBuffer:
    """Some of an entry's vertex inputs, packed in the order given, in one buffer stepped per
    vertex or per instance: its wgpu layout, stride and numpy dtype."""

    attributes: tuple[StageVariable, ...]
    offsets: tuple[int, ...]
    stride: int
    step_mode: str

    @classmethod
    def pack(cls, attributes: Sequence[StageVariable], step_mode: str) -> VertexBuffer:
        """Each attribute at the next offset that is a multiple of min(4, its size), as WebGPU
        requires; the stride a multiple of 4."""
        offsets, at = [], 0
        for v in attributes:
            size = format_size(v.format)
            align = min(4, size)
            at = -(-at // align) * align
            offsets.append(at)
            at += size
        return cls(tuple(attributes), tuple(offsets), -(-at // 4) * 4, step_mode)

    @property
    def names(self) -> tuple[str, ...]:
        """The inputs held, once each (a matrix or array input has one attribute per
        location, all of one name)."""
        return tuple(dict.fromkeys(v.name for v in self.attributes))

    @property
    def layout(self) -> dict[str, Any]:
        """wgpu's VertexBufferLayout."""
        return {
            "array_stride": self.stride,
            "step_mode": self.step_mode,
            "attributes": [
                {"format": v.format.value, "offset": off, "shader_location": v.location}
                for v, off in zip(self.attributes, self.offsets, strict=True)
            ],
        }

    @property
    def dtype(self) -> np.dtype[Any]:
        """One vertex (or instance) of this buffer, fields named like the inputs; an input of
        several locations (a matrix: one per column; an array: one per element) is one field,
        an array of its locations' vectors (they are packed one after the other)."""
        formats, offsets = [], []
        for name in self.names:
            at = [i for i, v in enumerate(self.attributes) if v.name == name]
            one = vertex_numpy(self.attributes[at[0]].format)
            formats.append(one if len(at) == 1 else np.dtype((one, (len(at),))))
            offsets.append(self.offsets[at[0]])
        return np.dtype(
            {
                "names": mangle_all(self.names),
                "formats": formats,
                "offsets": offsets,
                "itemsize": self.stride,
            }
        )

    def zeros(self, n: int) -> np.ndarray[Any, np.dtype[Any]]:
        """n zeroed vertices (instances) of this buffer's dtype, to fill by field name; a
        field refuses what numpy would change silently (a float that is not a whole number in
        an integer attribute, a value out of its range)."""
        from oneshader.bindings.checked import VertexArray

        return np.zeros(n, self.dtype).view(VertexArray)

    def create_buffer(self, device: Any, data: Any, *, usage: int = 0) -> Any:
        """A GPUBuffer holding ``data`` (an array of :attr:`dtype`), usable as a vertex buffer
        (VERTEX | COPY_DST, plus ``usage``)."""
        arr = np.asarray(data)
        if arr.dtype != self.dtype:
            raise TypeError(
                f"vertex data must have this buffer's dtype {self.dtype}, got {arr.dtype}"
            )
        raw: Any = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        return device.create_buffer_with_data(data=memoryview(raw), usage=VERTEX | COPY_DST | usage)


COPY_SRC, COPY_DST, INDEX, VERTEX, UNIFORM, STORAGE = 4, 8, 16, 32, 64, 128  # GPUBufferUsage


class VertexBuffers:
    """An entry's vertex buffers by name, in slot order (``Entry.buffers``): a pipeline takes
    them as ``buffers=``, and :meth:`set` binds GPU buffers by those names at their slots, so
    no slot number is typed by hand; each is also an attribute (``buffers.geometry``)."""

    def __init__(self, entry: str, named: dict[str, VertexBuffer]) -> None:
        self.entry = entry
        self.named = dict(named)

    def __getattr__(self, name: str) -> VertexBuffer:
        named = self.__dict__.get("named", {})
        if name in named:
            return named[name]  # type: ignore[no-any-return]
        raise AttributeError(name)

    def __iter__(self) -> Iterator[VertexBuffer]:
        return iter(self.named.values())

    def slot(self, name: str) -> int:
        """The vertex buffer slot of the buffer ``name``."""
        if name not in self.named:
            have = ", ".join(self.named)
            raise LookupError(f"{self.entry} has no vertex buffer {name!r}; it has {have}")
        return list(self.named).index(name)

    def set(self, render_pass: Any, **buffers: Any) -> None:
        """``render_pass.set_vertex_buffer`` for each GPU buffer given by its buffer's name;
        all of them, so a draw never reads an unbound slot."""
        slots = {n: self.slot(n) for n in buffers}
        missing = [n for n in self.named if n not in buffers]
        if missing:
            raise ValueError(f"{self.entry}: no GPU buffer given for {', '.join(missing)}")
        for n, buf in buffers.items():
            render_pass.set_vertex_buffer(slots[n], buf)
