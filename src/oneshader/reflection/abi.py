"""What a shader edit did to the host code built on the last build: the changes between two
reflections, each classified *breaking* or *compatible* for host code built against the old one.

The rules (docs/bindings.md, "ABI changes") are one table, applied by ``oneshader reflection
diff`` and by :class:`oneshader.bindings.Reloader` alike. Standard library only: it reads
models, never the compiler.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from oneshader.reflection.model import (
    BuiltIn,
    EntryPoint,
    PushBlock,
    Resource,
    ResourceTypeKind,
    ShaderReflection,
    Slot,
    SpecConstant,
    Stage,
    StageVariable,
    TypeKind,
    TypeLayout,
)
from oneshader.reflection.spelling import describe_type, describe_variable

__all__ = ["Change", "breaking", "diff_reflections"]

# Buffers whose layout is one element of an array the host fills: any change of its size moves
# every element after the first.
_ELEMENT_BUFFERS = frozenset(
    {
        ResourceTypeKind.StructuredBuffer,
        ResourceTypeKind.RWStructuredBuffer,
        ResourceTypeKind.AppendStructuredBuffer,
        ResourceTypeKind.ConsumeStructuredBuffer,
        ResourceTypeKind.Buffer,
        ResourceTypeKind.RWBuffer,
    }
)


@dataclass(frozen=True)
class Change:
    """One difference: ``record`` is the kind of record (``resource``, ``push``, ``spec``,
    ``entry``, ``shader``), ``name`` its name, ``member`` the member or variable within it
    (``Frame.Lights[].Color``; empty for the record itself)."""

    shader: str
    record: str
    name: str
    member: str
    breaking: bool
    what: str

    @property
    def kind(self) -> str:
        return "breaking" if self.breaking else "compatible"

    def line(self) -> str:
        where = f"{self.record} {self.name}" if self.name else self.record
        if self.member:
            where += f" member {self.member}"
        return f"{self.shader}: {self.kind}: {where}: {self.what}"


def breaking(changes: Sequence[Change]) -> list[Change]:
    return [c for c in changes if c.breaking]


# (member path, breaking, what)
_Found = tuple[str, bool, str]


def _slot_text(s: Slot) -> str:
    if s.target.name == "Msl":
        return f"index {s.binding}"
    return f"set {s.set} binding {s.binding}"


def _slots(old: Sequence[Slot], new: Sequence[Slot], label: str) -> Iterator[_Found]:
    new_by = {s.target: s for s in new}
    old_by = {s.target: s for s in old}
    for target, s in old_by.items():
        n = new_by.get(target)
        if n is None:
            yield "", True, f"{target.name} {label} removed (was {_slot_text(s)})"
        elif (n.set, n.binding) != (s.set, s.binding):
            yield "", True, f"{target.name} {label} moved: {_slot_text(s)} -> {_slot_text(n)}"
    for target, n in new_by.items():
        if target not in old_by:
            yield "", False, f"{target.name} {label} added ({_slot_text(n)})"


def _type_text(t: TypeLayout) -> str:
    text = describe_type(t)
    if t.kind is TypeKind.Matrix:
        text += f" ({t.packing.name}, mstride {t.mstride})"
    return text


def _layouts(old: TypeLayout, new: TypeLayout, path: str) -> Iterator[_Found]:
    """The changes from ``old`` to ``new`` below the record (its size judged by the caller).
    Iterative: layouts may be deep."""
    stack = [(old, new, path)]
    while stack:
        o, n, p = stack.pop()
        if o.kind is not n.kind or o.kind in (TypeKind.Scalar, TypeKind.Vector, TypeKind.Matrix):
            shape = ("kind", "scalar", "rows", "cols", "packing", "mstride", "size")
            if any(getattr(o, a) != getattr(n, a) for a in shape):
                yield p, True, f"type {_type_text(o)} -> {_type_text(n)}"
            continue
        if o.kind is TypeKind.Array:
            if o.length != n.length:
                yield p, True, f"array length {o.length} -> {n.length}"
            if o.stride != n.stride:
                yield p, True, f"array stride {o.stride} -> {n.stride}"
            if o.element is not None and n.element is not None:
                stack.append((o.element, n.element, p + "[]"))
            continue
        # Struct
        if o.name != n.name:
            yield p, True, f"struct {o.name} renamed {n.name} (the generated class is renamed)"
        if p and o.size != n.size:
            yield p, True, f"size {o.size} -> {n.size}"
        found: list[tuple[TypeLayout, TypeLayout, str]] = []
        yield from _members(o, n, p, found)
        stack.extend(reversed(found))


def _members(
    o: TypeLayout, n: TypeLayout, path: str, nested: list[tuple[TypeLayout, TypeLayout, str]]
) -> Iterator[_Found]:
    prefix = f"{path}." if path else ""
    new_by = {m.name: m for m in n.members}
    old_names = {m.name for m in o.members}
    renamed: set[str] = set()
    for m in o.members:
        where = prefix + m.name
        now = new_by.get(m.name)
        if now is None:
            twin = next(
                (
                    x
                    for x in n.members
                    if x.name not in old_names
                    and x.name not in renamed
                    and x.offset == m.offset
                    and x.type == m.type
                ),
                None,
            )
            if twin is not None:
                renamed.add(twin.name)
                yield where, True, f"renamed {twin.name} (host code names it {m.name})"
            else:
                yield where, True, f"removed (was {describe_type(m.type)} at offset {m.offset})"
            continue
        if now.offset != m.offset:
            yield where, True, f"offset {m.offset} -> {now.offset}"
        if now.doc != m.doc:
            yield where, False, "documentation changed"
        nested.append((m.type, now.type, where))
    for m in n.members:
        if m.name in old_names or m.name in renamed:
            continue
        where = prefix + m.name
        end = m.offset + m.type.size
        if end <= o.size:
            yield where, False, f"added at offset {m.offset}, inside the old size {o.size}"
        else:
            yield where, False, f"added at offset {m.offset} (the struct ends at {n.size})"


def _buffer_size(old: TypeLayout, new: TypeLayout, element: bool) -> Iterator[_Found]:
    """A buffer's own size: what the host allocates (a constant buffer, a push block) may shrink
    but not grow; the element of a structured buffer is its stride, so it may do neither."""
    if old.size == new.size:
        return
    if element:
        yield "", True, f"element size {old.size} -> {new.size} (every later element moves)"
    elif new.size > old.size:
        yield "", True, f"grew from {old.size} to {new.size} bytes, past what the host allocates"
    else:
        yield "", False, f"shrank from {old.size} to {new.size} bytes"


def _layout(old: TypeLayout | None, new: TypeLayout | None, element: bool) -> Iterator[_Found]:
    if old is None or new is None:
        if old is not new:
            yield "", True, "layout " + ("added" if old is None else "removed")
        return
    if old.kind is TypeKind.Struct and new.kind is TypeKind.Struct:
        yield from _buffer_size(old, new, element)
    yield from _layouts(old, new, "")


def _stages(old: Sequence[Stage], new: Sequence[Stage]) -> Iterator[_Found]:
    added = [s.name for s in new if s not in old]
    dropped = [s.name for s in old if s not in new]
    if added:
        yield "", True, f"now used by {', '.join(added)} (the bind group layout's visibility)"
    if dropped:
        yield "", False, f"no longer used by {', '.join(dropped)}"


def _resource(o: Resource, n: Resource) -> Iterator[_Found]:
    for attr in ("kind", "rtype", "count", "format", "depth", "attachment", "access"):
        a, b = getattr(o, attr), getattr(n, attr)
        if a != b:
            show = (lambda v: v.name) if hasattr(a, "name") else repr
            yield "", True, f"{attr} {show(a)} -> {show(b)}"
    if o.hlsl != n.hlsl:
        yield "", False, f"declared type spelled {o.hlsl!r} -> {n.hlsl!r}"
    yield from _stages(o.stages, n.stages)
    yield from _slots(o.slots, n.slots, "slot")
    yield from _slots(o.counters, n.counters, "counter")
    yield from _layout(o.layout, n.layout, o.rtype in _ELEMENT_BUFFERS)


def _push(o: PushBlock, n: PushBlock) -> Iterator[_Found]:
    yield from _stages(o.stages, n.stages)
    yield from _slots(o.slots, n.slots, "slot")
    yield from _layout(o.layout, n.layout, element=False)


def _spec(o: SpecConstant, n: SpecConstant) -> Iterator[_Found]:
    if o.id != n.id:
        yield "", True, f"id {o.id} -> {n.id}"
    if o.scalar != n.scalar:
        yield "", True, f"type {o.scalar.name} -> {n.scalar.name}"
    if o.default != n.default:
        yield "", False, f"default bits {o.default} -> {n.default}"
    new_by = {s.target: s for s in n.slots}
    for s in o.slots:
        now = new_by.get(s.target)
        if now is None:
            yield "", True, f"{s.target.name} index {s.index} removed"
        elif now.index != s.index:
            yield "", True, f"{s.target.name} index {s.index} -> {now.index}"


def _variable(v: StageVariable) -> str:
    where = "built-in" if v.location is None else f"location {v.location}"
    text = f"{describe_variable(v.scalar, v.components)} {v.semantic}{v.index or ''} at {where}"
    if v.format.name != "None_":
        text += f" as {v.format.name} at offset {v.offset}"
    if v.builtin is not BuiltIn.None_:
        text += f" ({v.builtin.name})"
    if v.interp.name != "Default":
        text += f" {v.interp.name}"
    return text


def _keyed(variables: Sequence[StageVariable]) -> dict[tuple[str, int], StageVariable]:
    """Variables by (name, occurrence): a variable of several locations is several records."""
    seen: dict[str, int] = {}
    keyed = {}
    for v in variables:
        k = seen.get(v.name, 0)
        seen[v.name] = k + 1
        keyed[v.name, k] = v
    return keyed


def _variables(
    old: Sequence[StageVariable], new: Sequence[StageVariable], label: str, vertex: bool
) -> Iterator[_Found]:
    """Vertex inputs and outputs, and every located variable (what links to another stage or
    names a colour target), must not change; a built-in of another stage may."""
    o, n = _keyed(old), _keyed(new)
    for key in [*o, *(k for k in n if k not in o)]:
        a, b = o.get(key), n.get(key)
        if a == b:
            continue
        matters = vertex or any(v is not None and v.location is not None for v in (a, b))
        name = f"{label} {key[0]}" + (f"[{key[1]}]" if key[1] else "")
        was = "none" if a is None else _variable(a)
        now = "none" if b is None else _variable(b)
        yield name, matters, f"{was} -> {now}"


def _entry(o: EntryPoint, n: EntryPoint) -> Iterator[_Found]:
    if o.stage != n.stage:
        yield "", True, f"stage {o.stage.name} -> {n.stage.name}"
    if o.workgroup != n.workgroup:
        size = "x".join(map(str, o.workgroup)), "x".join(map(str, n.workgroup))
        yield "", True, f"workgroup {size[0]} -> {size[1]} (the host's dispatch counts change)"
    if o.stride != n.stride:
        yield "", True, f"vertex stride {o.stride} -> {n.stride}"
    if n.features & ~o.features:
        yield "", True, f"needs device features {(n.features & ~o.features)!r}"
    elif o.features != n.features:
        yield "", False, f"needs fewer device features ({n.features!r})"
    vertex = o.stage is Stage.Vertex
    yield from _variables(o.inputs, n.inputs, "input", vertex)
    yield from _variables(o.outputs, n.outputs, "output", vertex)
    for label, a, b in (
        ("uses", o.uses, n.uses),
        ("pushuse", o.pushuse, n.pushuse),
        ("specuse", o.specuse, n.specuse),
    ):
        if a != b:
            yield "", False, f"{label} {', '.join(a) or '-'} -> {', '.join(b) or '-'}"


def _taken(model: ShaderReflection) -> dict[tuple[str, int, int], str]:
    """Every (target, set, binding) the shader's resources and push blocks occupy."""
    taken = {}
    for r in model.resources:
        for s in (*r.slots, *r.counters):
            taken[s.target.name, s.set, s.binding] = r.name
    for p in model.push_blocks:
        for s in p.slots:
            taken[s.target.name, s.set, s.binding] = p.name
    return taken


def diff_reflections(
    old: ShaderReflection, new: ShaderReflection, shader: str = ""
) -> list[Change]:
    """Every change from ``old`` to ``new``, in the order of the old file's records (then the
    new records); ``shader`` names the shader in each change (default: the old source name)."""
    shader = shader or old.source
    out: list[Change] = []

    def add(record: str, name: str, found: Iterator[_Found]) -> None:
        out.extend(Change(shader, record, name, m, b, w) for m, b, w in found)

    if old.source != new.source:
        add("shader", "", iter([("", False, f"source renamed {old.source} -> {new.source}")]))
    for t in old.targets:
        if t not in new.targets:
            add("shader", "", iter([("", True, f"target {t.name} no longer built")]))
    for t in new.targets:
        if t not in old.targets:
            add("shader", "", iter([("", False, f"target {t.name} added")]))

    taken = _taken(old)
    _pair(out, shader, "resource", old.resources, new.resources, _resource, taken)
    _pair(out, shader, "push", old.push_blocks, new.push_blocks, _push, taken)
    _pair(out, shader, "spec", old.spec_constants, new.spec_constants, _spec, taken)
    _pair(out, shader, "entry", old.entry_points, new.entry_points, _entry, taken)
    return out


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_R = TypeVar("_R", bound=_Named)


def _pair(
    out: list[Change],
    shader: str,
    record: str,
    olds: Sequence[_R],
    news: Sequence[_R],
    compare: Callable[[_R, _R], Iterator[_Found]],
    taken: dict[tuple[str, int, int], str],
) -> None:
    """Records matched by name: removed ones break, kept ones are compared, new ones follow."""
    new_by = {x.name: x for x in news}
    old_names = {x.name for x in olds}
    for x in olds:
        y = new_by.get(x.name)
        found = iter([("", True, "removed")]) if y is None else compare(x, y)
        out.extend(Change(shader, record, x.name, m, b, w) for m, b, w in found)
    for y in news:
        if y.name not in old_names:
            out.extend(Change(shader, record, y.name, m, b, w) for m, b, w in _added(y, taken))


def _added(new: object, taken: dict[tuple[str, int, int], str]) -> Iterator[_Found]:
    """A new resource or push block is compatible in slots no old one held; a new spec constant
    has its default; a new entry point is code the old host never calls."""
    for s in getattr(new, "slots", ()):
        if isinstance(s, Slot) and (s.target.name, s.set, s.binding) in taken:
            held = taken[s.target.name, s.set, s.binding]
            yield "", True, f"added in {s.target.name} {_slot_text(s)}, which {held} held"
            return
    yield "", False, "added"
