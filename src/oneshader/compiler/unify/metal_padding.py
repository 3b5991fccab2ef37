"""Metal's buffers laid out as SPIR-V's where explicit padding members can do it: Slang lays
out a Metal constant or structured buffer by C's rules, and std140/std430 put some members
higher (docs/compiler.md "One layout for all targets"). The padding is found from a Metal
compile's facts and SPIR-V's, and Metal compiled again with it (``slang.request``'s rounds,
the mechanism of ``[[vk::offset]]``'s padding)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from oneshader.compiler.slang.facts import TargetFacts
from oneshader.compiler.slang.padding import Padding, block_owner, grow, statement_start
from oneshader.compiler.source.scanner import StructDef
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.compiler.unify.layouts import packed_relayout, vk_offsets
from oneshader.compiler.unify.metal_arrays import MetalArrays
from oneshader.reflection.model import ScalarKind, TypeKind, TypeLayout


@dataclass
class _Placer:
    """:func:`reference_padding`'s walk (methods, not closures calling each other: such a cycle
    would keep the source set for the cycle collector)."""

    src: SourceSet
    more: dict[tuple[Path, int, int], Padding]
    grown: set[tuple[Path, int, int]] = field(default_factory=set)

    def walk(self, metal: TypeLayout, ref: TypeLayout, owner: str, whole: bool = False) -> bool:
        """Pads the first misplaced member of each struct inside ``metal``, and the end of a
        struct whose whole size counts (``whole``: an array's element, a structured buffer's);
        True if any."""
        if metal.kind is TypeKind.Array and metal.element is not None and ref.element is not None:
            return self.walk(metal.element, ref.element, metal.element.name, True)
        if metal.kind is not TypeKind.Struct or ref.kind is not TypeKind.Struct or not ref.members:
            return False  # (an empty struct has nothing to place)
        sdef = self.src.struct(owner) if owner else None
        refs = {m.name: m for m in ref.members}
        for m in metal.members:
            r = refs.get(m.name)
            if r is None:
                continue
            if self.walk(m.type, r.type, m.type.name):
                return True  # it grows: the members after it move, seen in the next round
            if (r.type.stride, r.type.mstride) != (m.type.stride, m.type.mstride):
                return False  # no padding mends a stride; the members after it move with it
            f = sdef.field(m.name) if sdef is not None else None
            if f is None or r.offset <= m.offset:
                continue
            lack = r.offset - m.offset
            if lack % 4 or r.offset % max(m.type.align, 1) or _bool_vector(m.type):
                return False  # the layout check names it (OS2001)
            file = self.src.struct_file(owner)
            start = statement_start(self.src, file, f) if file is not None else None
            if file is None or start is None:
                return False
            grow(self.more, self.grown, file, f, start, lack)
            return True
        return whole and sdef is not None and self.tail(metal, ref, owner, sdef)

    def tail(self, metal: TypeLayout, ref: TypeLayout, owner: str, sdef: StructDef) -> bool:
        """Words after the last member of a struct that Metal makes smaller than SPIR-V: a
        packed ``float3`` aligns it to 4, where std430 aligns it to 16 (``struct { float3 p;
        float m; float3 v; float a; float r; uint i; }``: 40 bytes on Metal, 48 in std430),
        so an array of it, or a structured buffer of it, would have another stride."""
        end = max((m.offset + m.type.size for m in metal.members), default=0)
        lack = ref.size - end
        file = self.src.struct_file(owner)
        if lack <= 0 or lack % 4 or metal.size >= ref.size or file is None or not sdef.fields:
            return False
        last = sdef.fields[-1]
        s = self.src.stream(file)
        i = s.index(s.offset_of(last.line, last.column))
        while i < len(s) and not s.is_(i, ";"):
            i += 1
        if i + 1 >= len(s):
            return False
        line, column = s.line_col(i + 1)  # before the struct's closing brace
        key = (file, line, column)
        if key in self.grown:
            return False
        self.grown.add(key)
        before = self.more.get(key)
        self.more[key] = Padding(file, line, column, lack + (before.size if before else 0))
        return True


def reference_padding(
    src: SourceSet,
    reference: TargetFacts,
    facts: TargetFacts,
    pads: dict[tuple[Path, int, int], Padding],
) -> dict[tuple[Path, int, int], Padding]:
    """Metal lays out a constant or structured buffer by C's rules, where SPIR-V (std140,
    std430) puts some members higher: a struct after a scalar at 16 (std140 rounds a struct's
    alignment to 16), a ``bool3`` or ``float2x3`` at 16. Each such member is given explicit
    padding before it in the Metal source, so that it sits where ``reference`` (SPIR-V's
    facts) puts it: one layout, the same bytes from the host. Only the first misplaced member
    of a struct per round (the members after it follow); only where the bytes it lacks are
    whole words and SPIR-V's offset suits the member's Metal alignment. What padding cannot
    place stays for the layout check (OS2001)."""
    decls = src.declarations()
    placer = _Placer(src, dict(pads))
    refs = {p.name: p for p in reference.params}
    for p in facts.params:
        r = refs.get(p.name)
        if p.layout is None or r is None or r.layout is None:
            continue
        decl = decls.get(p.name)
        owner = block_owner(decl, p.layout)
        element = decl is not None and decl.base.endswith("StructuredBuffer")
        placer.walk(p.layout, vk_offsets(src, r.layout, owner) or r.layout, owner, element)
    return placer.more


def as_declared(
    src: SourceSet, reference: TargetFacts, facts: TargetFacts, code: bytes
) -> TargetFacts:
    """Metal's facts with each buffer laid out as ``unify.layouts`` declares it in the code
    (arrays of a constant buffer widened to 4-vectors, vectors and matrices packed or aligned):
    their strides and alignments move the members after them, so the padding that places a
    member (``[[vk::offset]]``, ``packoffset``, SPIR-V's offsets) is found on this layout."""
    decls = src.declarations()
    arrays = MetalArrays(code.decode())
    refs = {p.name: p for p in reference.params}
    params = []
    for p in facts.params:
        r = refs.get(p.name)
        if p.layout is None or r is None or r.layout is None:
            params.append(p)
            continue
        decl = decls.get(p.name)
        owner = block_owner(decl, p.layout)
        ref_layout = vk_offsets(src, r.layout, owner) or r.layout
        layout = p.layout
        if decl is None or decl.base not in ("tbuffer", "TextureBuffer"):
            layout = arrays.relayout(decl.name if decl else p.name, ref_layout, layout)
        params.append(replace(p, layout=packed_relayout(ref_layout, layout, (), [])))
    return replace(facts, params=params)


def _bool_vector(t: TypeLayout) -> bool:
    """A vector of bool: Metal's bool is a byte, SPIR-V's a word, so no padding in front of it
    gives its components the same bytes."""
    return t.kind is TypeKind.Vector and t.rows > 1 and t.scalar is ScalarKind.Bool
