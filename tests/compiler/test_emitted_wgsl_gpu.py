"""The WGSL reader's layout rules held against the GPU: random structs (vectors, matrices,
arrays, a nested struct) whose every scalar a compute shader writes with a marker; each marker
must land where the reader's layout says, in a buffer exactly the reader's struct size (wgpu
rejects a smaller one)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from module_validation import device
from oneshader.compiler.emitted.wgsl import read_wgsl
from oneshader.reflection.model import TypeKind, TypeLayout


@dataclass(frozen=True)
class _Type:
    """A WGSL type, and how to enumerate its scalars: (access suffix, path, scalar)."""

    text: str
    leaves: tuple[tuple[str, tuple[object, ...], str], ...]
    size: int  # natural size
    align: int


def _scalar(name: str) -> _Type:
    return _Type(name, (("", (), name),), 4, 4)


def _vector(n: int, scalar: str) -> _Type:
    leaves = tuple((f"[{i}]", (i,), scalar) for i in range(n))
    align = 8 if n == 2 else 16
    return _Type(f"vec{n}<{scalar}>", leaves, 4 * n, align)


def _matrix(c: int, r: int) -> _Type:
    leaves = tuple((f"[{i}][{j}]", (("col", i), j), "f32") for i in range(c) for j in range(r))
    col_align = 8 if r == 2 else 16
    return _Type(f"mat{c}x{r}<f32>", leaves, c * col_align, col_align)


def _array(element: _Type, n: int) -> _Type:
    stride = -(-element.size // element.align) * element.align
    leaves = tuple(
        (f"[{i}]{acc}", (("idx", i), *path), s) for i in range(n) for acc, path, s in element.leaves
    )
    return _Type(f"array<{element.text}, {n}>", leaves, n * stride, element.align)


_LEAF_TYPES = st.one_of(
    st.sampled_from(["f32", "i32", "u32"]).map(_scalar),
    st.builds(_vector, st.integers(2, 4), st.sampled_from(["f32", "u32", "i32"])),
    st.builds(_matrix, st.integers(2, 4), st.integers(2, 4)),
)
_MEMBER_TYPES = st.one_of(_LEAF_TYPES, st.builds(_array, _LEAF_TYPES, st.integers(1, 3)))


@st.composite
def _member(draw: st.DrawFn, types: st.SearchStrategy[_Type]) -> tuple[str, _Type]:
    # No @align/@size: naga's GLSL back end (this machine's OpenGL adapter) lays structs out by
    # std430 and ignores both attributes where they go beyond the natural layout (measured), so
    # the GPU cannot judge them here; test_emitted_wgsl.py checks the reader honours them.
    return "", draw(types)


@st.composite
def _modules(draw: st.DrawFn) -> tuple[str, list[tuple[str, tuple[object, ...], str]]]:
    inner = draw(st.lists(_member(_LEAF_TYPES), min_size=1, max_size=3))
    outer = draw(st.lists(_member(_MEMBER_TYPES), min_size=1, max_size=6))
    inner_leaves = [
        (f".i{k}_0{acc}", (f"i{k}", *path), s)
        for k, (_, t) in enumerate(inner)
        for acc, path, s in t.leaves
    ]
    inner_type = _Type("Inner_0", tuple(inner_leaves), 0, 0)
    at = draw(st.integers(0, len(outer)))
    outer.insert(at, ("", inner_type))
    lines = ["struct Inner_0 {"]
    lines += [f"    {a}i{k}_0 : {t.text}," for k, (a, t) in enumerate(inner)]
    lines += ["};", "struct S_0 {"]
    lines += [f"    {a}m{k}_0 : {t.text}," for k, (a, t) in enumerate(outer)]
    lines += ["};", "@group(0) @binding(0) var<storage, read_write> s_0 : S_0;"]
    body = []
    leaves: list[tuple[str, tuple[object, ...], str]] = []
    for k, (_, t) in enumerate(outer):
        for acc, path, scalar in t.leaves:
            marker = len(leaves) + 1
            body.append(f"    s_0.m{k}_0{acc} = {scalar}({marker});")
            leaves.append((f"m{k}", path, scalar))
    lines += ["@compute @workgroup_size(1)", "fn main() {", *body, "}"]
    return "\n".join(lines), leaves


def _offset(layout: TypeLayout, path: tuple[object, ...]) -> int:
    """Byte offset of one scalar, by walking the reader's layout."""
    offset = 0
    node = layout
    for step in path:
        if isinstance(step, str):
            member = next(m for m in node.members if m.name == step)
            offset += member.offset
            node = member.type
        elif isinstance(step, tuple) and step[0] == "idx":
            assert node.element is not None
            offset += int(step[1]) * node.stride  # type: ignore[call-overload]
            node = node.element
        elif isinstance(step, tuple) and step[0] == "col":
            assert node.kind is TypeKind.Matrix
            offset += int(step[1]) * node.mstride  # type: ignore[call-overload]
            node = TypeLayout(TypeKind.Vector, scalar=node.scalar, rows=node.cols, size=4)
        else:
            assert isinstance(step, int)
            offset += step * 4
    return offset


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(_modules())
def test_markers_land_where_the_reader_says(module: tuple[str, list[Any]]) -> None:
    import wgpu

    source, leaves = module
    read = read_wgsl(source.encode())
    layout = read.resources["s"][0].layout
    assert layout is not None and layout.kind is TypeKind.Struct
    dev = device()
    shader = dev.create_shader_module(code=source)
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": shader, "entry_point": "main"}
    )
    buf = dev.create_buffer(
        size=layout.size, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    )
    group = dev.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[{"binding": 0, "resource": {"buffer": buf, "offset": 0, "size": layout.size}}],
    )
    encoder = dev.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    cpass.set_bind_group(0, group)
    cpass.dispatch_workgroups(1)
    cpass.end()
    dev.queue.submit([encoder.finish()])
    data = bytes(dev.queue.read_buffer(buf))
    for marker, (member, path, scalar) in enumerate(leaves, start=1):
        at = _offset(layout, (member, *path))
        fmt = {"f32": "<f", "u32": "<I", "i32": "<i"}[scalar]
        got = struct.unpack_from(fmt, data, at)[0]
        assert got == marker, f"{member}{path} at {at}: {got} (source:\n{source})"
    # Nothing but markers was written: the count of non-zero words is the number of scalars.
    words = np.frombuffer(data, np.uint32)
    assert int(np.count_nonzero(words)) == len(leaves)
