"""Layouts proven on the device: probe entry points that write (or read) a distinct sentinel in
every member of a buffer's struct, run with wgpu, compared member by member with the generated
numpy view.

This module never compiles: :func:`probe_source` writes the HLSL of the probes from a
reflection, the caller compiles the shader with them (``oneshader prove-layouts`` does, through
the same compiler as the build: :mod:`oneshader.prove`), and :func:`run_probes` runs the probes
of that build on a device and checks the bindings. A read-write structured buffer is written by
the probe and read back through the bindings; a constant buffer, push block or read-only
structured buffer is written through the bindings and read by the probe, which copies every
member into an output buffer. An array is probed at its first, second and last element.
"""

from __future__ import annotations

import struct as pystruct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from oneshader.bindings.layout import scalar_dtype
from oneshader.reflection.model import (
    MatrixPacking,
    PushBlock,
    Resource,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Target,
    TypeKind,
    TypeLayout,
)
from oneshader.reflection.spelling import SCALAR_NAMES

__all__ = ["OUT", "Leaf", "Probe", "ProbeSource", "probe_source", "run_probes"]

OUT = "_os_probe_out"  # the output buffer of the probes that read
MAX_LEAVES = 1024  # per buffer: more would make a probe slower to compile than it is worth

_WRITTEN = {ResourceTypeKind.RWStructuredBuffer}
_READ = {ResourceTypeKind.ConstantBuffer, ResourceTypeKind.StructuredBuffer}
_HLSL_SCALARS = {k: name for k, name in SCALAR_NAMES.items() if k.size <= 4}  # WGSL's
_COMPONENTS = "xyzw"

# A step from a struct value to one of its scalars: ("field", member index) or ("index", i).
Step = tuple[str, int]


@dataclass(frozen=True)
class Leaf:
    """One scalar of a buffer's struct: how HLSL names it, how to reach it in the generated
    view, where the layout puts it, and the sentinel it carries."""

    path: str  # for messages: Lights[2].Color.y
    hlsl: str  # the HLSL expression
    steps: tuple[Step, ...]
    scalar: ScalarKind
    offset: int  # in the struct, as the layout says
    sentinel: int | float | bool


@dataclass(frozen=True)
class Probe:
    """The probe of one buffer: ``entry`` is its compute entry point; ``writes`` is True when
    the probe writes the buffer (else it reads it into :data:`OUT`)."""

    record: str  # "resource" or "push"
    name: str
    entry: str
    writes: bool
    layout: TypeLayout
    leaves: tuple[Leaf, ...]


@dataclass(frozen=True)
class ProbeSource:
    """What to append to the shader's source, the probes it declares, and what was skipped."""

    hlsl: str
    probes: tuple[Probe, ...]
    skipped: tuple[str, ...]


def _sentinel(kind: ScalarKind, k: int) -> int | float | bool:
    if kind is ScalarKind.Bool:
        return True
    if kind in (ScalarKind.Float, ScalarKind.Float16):
        return k + 1.25 if kind is ScalarKind.Float else (k % 1000) + 1.25
    if kind in (ScalarKind.Int16, ScalarKind.UInt16):
        return 1000 + k
    if kind is ScalarKind.Int:
        return -(70000 + k)
    return 0xA00000 + k  # below 2**24: exact as a float too


def _literal(kind: ScalarKind, value: int | float | bool) -> str:
    if kind is ScalarKind.Bool:
        return "true"
    if kind is ScalarKind.UInt:
        return f"{value}u"
    return f"({_HLSL_SCALARS[kind]})({value})"


def _indices(length: int) -> list[int]:
    """The elements probed: the first, the second and the last (an unsized array: two)."""
    if length == 0:
        return [0, 1]
    return sorted({0, min(1, length - 1), length - 1})


def _leaves(
    layout: TypeLayout, root: str, globals_: bool
) -> Iterator[tuple[str, str, tuple[Step, ...], TypeLayout, int]]:
    """(path, hlsl, steps, scalar type, offset) of every probed scalar, in layout order."""
    stack: list[tuple[TypeLayout, str, str, tuple[Step, ...], int]] = []
    for i, m in reversed(list(enumerate(layout.members))):
        hlsl = m.name if globals_ else f"{root}.{m.name}"
        stack.append((m.type, m.name, hlsl, (("field", i),), m.offset))
    while stack:
        t, path, hlsl, steps, offset = stack.pop()
        if t.kind is TypeKind.Scalar:
            yield path, hlsl, steps, t, offset
        elif t.kind is TypeKind.Vector:
            size = t.scalar.size
            for c in range(t.rows):
                yield (
                    f"{path}.{_COMPONENTS[c]}",
                    f"{hlsl}.{_COMPONENTS[c]}",
                    (*steps, ("index", c)),
                    t,
                    offset + c * size,
                )
        elif t.kind is TypeKind.Matrix:
            size = t.scalar.size
            for r in range(t.rows):
                for c in range(t.cols):
                    at = (
                        (c * t.mstride + r * size)
                        if t.packing is MatrixPacking.ColumnMajor
                        else (r * t.mstride + c * size)
                    )
                    yield (
                        f"{path}[{r}][{c}]",
                        f"{hlsl}[{r}][{c}]",
                        (*steps, ("index", r), ("index", c)),
                        t,
                        offset + at,
                    )
        elif t.kind is TypeKind.Array and t.element is not None:
            for i in reversed(_indices(t.length)):
                stack.append(
                    (
                        t.element,
                        f"{path}[{i}]",
                        f"{hlsl}[{i}]",
                        (*steps, ("index", i)),
                        offset + i * t.stride,
                    )
                )
        elif t.kind is TypeKind.Struct:
            for i, m in reversed(list(enumerate(t.members))):
                stack.append(
                    (
                        m.type,
                        f"{path}.{m.name}",
                        f"{hlsl}.{m.name}",
                        (*steps, ("field", i)),
                        offset + m.offset,
                    )
                )


def _plan(
    record: str, name: str, entry: str, writes: bool, layout: TypeLayout, root: str, globals_: bool
) -> Probe | str:
    leaves = []
    for k, (path, hlsl, steps, t, offset) in enumerate(_leaves(layout, root, globals_)):
        if t.scalar not in _HLSL_SCALARS:
            return f"{record} {name}: {path} is {t.scalar.name}, which WGSL cannot hold"
        if k >= MAX_LEAVES:
            return f"{record} {name}: more than {MAX_LEAVES} scalars to probe"
        leaves.append(Leaf(path, hlsl, steps, t.scalar, offset, _sentinel(t.scalar, k)))
    if not leaves:
        return f"{record} {name}: no members"
    return Probe(record, name, entry, writes, layout, tuple(leaves))


def _buffer(index: int, r: Resource | PushBlock) -> Probe | str:
    """The probe of one resource or push block, or why it has none."""
    entry = f"_os_probe_{index}"
    layout = r.layout
    if isinstance(r, PushBlock):
        if layout is None or layout.kind is not TypeKind.Struct:
            return f"push {r.name}: no struct"
        block = layout.name == r.name  # [[vk::push_constant]] cbuffer X { ... }: globals
        return _plan("push", r.name, entry, False, layout, r.name, block)
    if layout is None or layout.kind is not TypeKind.Struct or r.count != 1:
        return ""  # not a buffer struct: nothing to prove
    if r.name == "$Globals":  # the loose uniforms: globals in HLSL
        return _plan("resource", r.name, entry, False, layout, "", True)
    if r.name.startswith("$"):
        return f"resource {r.name}: made by the compiler, not declared"
    if r.rtype in _WRITTEN:
        return _plan("resource", r.name, entry, True, layout, f"{r.name}[0]", False)
    if r.rtype is ResourceTypeKind.ConstantBuffer:
        block = r.hlsl == ""  # cbuffer X { ... }: its members are globals
        return _plan("resource", r.name, entry, False, layout, r.name, block)
    if r.rtype in _READ:
        return _plan("resource", r.name, entry, False, layout, f"{r.name}[0]", False)
    return f"resource {r.name}: a {r.rtype.name} cannot be indexed by a probe"


def _entry_source(p: Probe) -> str:
    lines = ['[shader("compute")]', "[numthreads(1, 1, 1)]", f"void {p.entry}()", "{"]
    for k, leaf in enumerate(p.leaves):
        if p.writes:
            lines.append(f"    {leaf.hlsl} = {_literal(leaf.scalar, leaf.sentinel)};")
        else:  # every sentinel is exact as a float (asuint of a constant buffer's float
            # array element crashes Slang's WGSL back end)
            lines.append(f"    {OUT}[{k}] = (float)({leaf.hlsl});")
    lines.append("}")
    return "\n".join(lines) + "\n"


def probe_source(model: ShaderReflection) -> ProbeSource:
    """The probes of every buffer struct of ``model``: HLSL to append to its source (one compute
    entry point each, and the output buffer of those that read), in the order of its records."""
    probes: list[Probe] = []
    skipped: list[str] = []
    records: list[Resource | PushBlock] = [*model.resources, *model.push_blocks]
    for i, r in enumerate(records):
        made = _buffer(i, r)
        if isinstance(made, Probe):
            probes.append(made)
        elif made:
            skipped.append(made)
    text = f"\nRWStructuredBuffer<float> {OUT};\n\n" if any(not p.writes for p in probes) else "\n"
    text += "\n".join(_entry_source(p) for p in probes)
    return ProbeSource(text, tuple(probes), tuple(skipped))


# --------------------------------------------------------------------------------------------
# Running the probes.


def _struct_class(bindings: Any, layout: TypeLayout) -> Any:
    from oneshader.bindings.structs import Struct

    for value in vars(bindings.module).values():
        if isinstance(value, type) and issubclass(value, Struct) and value.layout == layout:
            return value
    raise LookupError(f"no struct class of {layout.name} in the bindings")


def _reach(
    cls: Any, data: npt.NDArray[Any], steps: Sequence[Step]
) -> tuple[npt.NDArray[Any], Step]:
    """The view that holds a leaf and the last step to it, through the generated classes' own
    field plans (their padding records, transposed matrices and nested classes)."""
    from oneshader.bindings.structs import Nested, NestedArray

    for kind, i in steps[:-1]:
        if kind == "field":
            field = list(cls._os_fields.values())[i]
            data = field.plan.view(data)
            if isinstance(field, Nested | NestedArray):
                cls = field.cls if isinstance(field, Nested) else field.cls.element
        else:
            data = data[i, ...]  # a view even of one record (data[i] would be a copy)
    kind, i = steps[-1]
    if kind == "field":
        return list(cls._os_fields.values())[i].plan.view(data), ("field", -1)
    return data, steps[-1]


def _get(cls: Any, data: npt.NDArray[Any], steps: Sequence[Step]) -> Any:
    view, (kind, i) = _reach(cls, data, steps)
    return view[()] if kind == "field" else view[i]


def _set(cls: Any, data: npt.NDArray[Any], steps: Sequence[Step], value: Any) -> None:
    view, (kind, i) = _reach(cls, data, steps)
    if kind == "field":
        view[...] = value
    else:
        view[i] = value


def _bits(leaf: Leaf, value: Any) -> bytes:
    return np.asarray(value, scalar_dtype(leaf.scalar)).tobytes()


def _found_at(raw: bytes, pattern: bytes) -> int | None:
    size = len(pattern)
    at = raw.find(pattern)
    while at >= 0 and at % size:
        at = raw.find(pattern, at + 1)
    return None if at < 0 else at


def _slot(model: ShaderReflection, name: str, target: Target) -> tuple[int, int]:
    records: list[Resource | PushBlock] = [*model.resources, *model.push_blocks]
    for r in records:
        if r.name == name:
            for s in r.slots:
                if s.target is target:
                    return s.set, s.binding
    raise LookupError(f"{name} has no {target.name} slot in the probe's build")


STORAGE, COPY_SRC, COPY_DST, UNIFORM = 128, 4, 8, 64


def _run(
    device: Any,
    module: Any,
    probe: Probe,
    model: ShaderReflection,
    target: Target,
    buffers: Mapping[str, tuple[Any, int]],
) -> None:
    pipeline = device.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": probe.entry}
    )
    groups: dict[int, list[dict[str, Any]]] = {}
    for name, (buf, size) in buffers.items():
        group, binding = _slot(model, name, target)
        groups.setdefault(group, []).append(
            {"binding": binding, "resource": {"buffer": buf, "offset": 0, "size": size}}
        )
    encoder = device.create_command_encoder()
    cp = encoder.begin_compute_pass()
    cp.set_pipeline(pipeline)
    for group, entries in sorted(groups.items()):
        layout = pipeline.get_bind_group_layout(group)
        cp.set_bind_group(group, device.create_bind_group(layout=layout, entries=entries))
    cp.dispatch_workgroups(1, 1, 1)
    cp.end()
    device.queue.submit([encoder.finish()])


def _padded(n: int) -> int:
    return max(16, -(-n // 16) * 16)


def run_probes(
    bindings: Any,
    source: ProbeSource,
    probe_model: ShaderReflection,
    code: Mapping[Target, str | bytes],
    device: Any,
    where: str,
) -> tuple[list[str], list[str], list[Target]]:
    """Run every probe of ``source`` (built into ``code``, whose reflection is ``probe_model``)
    on ``device`` for each target of ``code``, and check ``bindings``' struct classes against
    what the device wrote or read. (problems, notes, targets run): each problem names the shader
    (``where``), the buffer, the member, the target and both offsets; a SPIR-V module wgpu
    (naga) refuses is a note, a WGSL one a problem."""
    problems: list[str] = []
    notes: list[str] = []
    lacking = [f for f in bindings.shader.required_features if f not in device.features]
    if lacking:
        return [], [f"{where}: not run: it needs {', '.join(lacking)}, which the device lacks"], []
    ran: list[Target] = []
    for target, text in code.items():
        try:
            module = device.create_shader_module(code=text)
        except Exception as err:  # wgpu's validation error, with naga's message
            first = str(err).strip().splitlines()[-1].strip() if str(err).strip() else repr(err)
            line = f"{where}: {target.name} not run: wgpu refused the module: {first}"
            (notes if target is Target.SpirV else problems).append(line)
            continue
        ran.append(target)
        for probe in source.probes:
            if probe.record == "push" and target is Target.SpirV:
                continue  # push constants: wgpu binds no buffer for them
            cls = _struct_class(bindings, probe.layout)
            problems += _check(device, module, probe, probe_model, target, cls, where)
    return problems, notes, ran


def _check(
    device: Any,
    module: Any,
    probe: Probe,
    model: ShaderReflection,
    target: Target,
    cls: Any,
    where: str,
) -> list[str]:
    size = _padded(cls.size * (2 if probe.writes else 1))
    host = np.zeros((), cls.dtype)
    label = f"{where}: {probe.record} {probe.name}"
    if probe.writes:
        buf = device.create_buffer(size=size, usage=STORAGE | COPY_SRC | COPY_DST)
        _run(device, module, probe, model, target, {probe.name: (buf, size)})
        raw = bytes(device.queue.read_buffer(buf))[: cls.size]
        host = np.frombuffer(raw, cls.dtype).reshape(()).copy()
        out = []
        for leaf in probe.leaves:
            got = _get(cls, host, leaf.steps)
            if _bits(leaf, got) != _bits(leaf, leaf.sentinel):
                at = (
                    None
                    if leaf.scalar is ScalarKind.Bool
                    else _found_at(raw, _bits(leaf, leaf.sentinel))
                )
                device_at = "nowhere in the element" if at is None else f"at offset {at}"
                out.append(
                    f"{label} member {leaf.path}: {target.name}: the device wrote it {device_at}, "
                    f"the bindings read offset {leaf.offset}"
                )
        return out
    for leaf in probe.leaves:
        _set(cls, host, leaf.steps, leaf.sentinel)
    data = host.tobytes() + bytes(size - cls.size)
    usage = (
        UNIFORM if probe.record == "push" or _is_cbuffer(model, probe.name) else STORAGE
    ) | COPY_DST
    buf = device.create_buffer_with_data(data=data, usage=usage)
    n = len(probe.leaves)
    out_buf = device.create_buffer(size=_padded(4 * n), usage=STORAGE | COPY_SRC)
    _run(
        device,
        module,
        probe,
        model,
        target,
        {probe.name: (buf, size), OUT: (out_buf, _padded(4 * n))},
    )
    words = pystruct.unpack(f"<{n}f", bytes(device.queue.read_buffer(out_buf))[: 4 * n])
    expected = [float(leaf.sentinel) for leaf in probe.leaves]
    out = []
    for leaf, word, want in zip(probe.leaves, words, expected, strict=True):
        if word != want:
            seen = _bits(leaf, word)  # what the device read, as the member's type
            at = None if word == 0 or leaf.scalar is ScalarKind.Bool else _found_at(data, seen)
            device_at = (
                f"offset {at}"
                if at is not None
                else f"{word!r}, which the bindings wrote nowhere (padding, or past the struct)"
            )
            out.append(
                f"{label} member {leaf.path}: {target.name}: the bindings wrote offset "
                f"{leaf.offset}, the device read {device_at}"
            )
    return out


def _is_cbuffer(model: ShaderReflection, name: str) -> bool:
    return any(
        r.name == name and r.rtype is ResourceTypeKind.ConstantBuffer for r in model.resources
    )
