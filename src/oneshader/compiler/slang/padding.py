"""``[[vk::offset(n)]]`` on WGSL and Metal, which have no such attribute (Slang ignores it
there): the member is given explicit padding members before it instead, so that every target
has SPIR-V's layout and the host writes the same bytes (docs/compiler.md "One layout for all
targets"). The padding is found from a compile's facts and the target compiled again with it.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace
from pathlib import Path

from oneshader.compiler.api import PADDING, TARGET_NAMES
from oneshader.compiler.slang.facts import TargetFacts
from oneshader.compiler.source.query import Stream
from oneshader.compiler.source.scanner import Attribute, Declaration, Field
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Code, Diagnostic
from oneshader.reflection.model import Target, TypeKind, TypeLayout


@dataclass(frozen=True)
class Padding:
    """``size`` bytes of padding members written into ``file`` before the member declared at
    ``line`` (in front of its attributes, at ``column``)."""

    file: Path
    line: int
    column: int
    size: int

    def declarations(self) -> str:
        return "".join(
            f"uint {PADDING}{self.line}_{self.column}_{k}; " for k in range(self.size // 4)
        )


@dataclass
class _OffsetRound:
    """:func:`offset_padding`'s walk and what it finds (a method, not a closure calling itself:
    that cycle would keep the source set for the cycle collector)."""

    src: SourceSet
    target: Target
    more: dict[tuple[Path, int, int], Padding]
    grown: set[tuple[Path, int, int]] = field(default_factory=set)
    errors: list[Diagnostic] = field(default_factory=list)

    def walk(self, layout: TypeLayout, owner: str) -> None:
        """Pads the first misplaced member of each struct inside ``layout`` (its own structs
        first, in order), or records why no padding can place it."""
        if layout.kind is TypeKind.Array and layout.element is not None:
            self.walk(layout.element, layout.element.name)
            return
        if layout.kind is not TypeKind.Struct:
            return
        sdef = self.src.struct(owner) if owner else None
        placed = False
        for m in layout.members:
            if m.type.kind in (TypeKind.Struct, TypeKind.Array):
                self.walk(m.type, m.type.name)
            f = sdef.field(m.name) if sdef is not None else None
            file = self.src.struct_file(owner)
            asked = _asked_offset(self.src, file, f) if f is not None and file is not None else None
            if placed or f is None or file is None or asked is None:
                continue
            want, spelled, attr = asked
            if want == m.offset:
                continue
            placed = True
            align = max(m.type.align, 4)
            name = TARGET_NAMES[self.target]
            why = ""
            if want < m.offset:
                why = (
                    f"the members before it end at {m.offset} on {name}, "
                    "so no padding can place it lower"
                )
            elif want % align:
                why = f"{want} is not a multiple of its alignment ({align}) on {name}"
            if why:
                self.errors.append(
                    self.src.error_in(
                        file,
                        attr.line,
                        attr.column,
                        f"{name}: {spelled} on '{m.name}' cannot be "
                        f"expressed: {why}; give it an offset at or after {m.offset} that is a "
                        f"multiple of {align}, or build for spirv only",
                        Code.VK_OFFSET,
                    )
                )
                continue
            start = statement_start(self.src, file, f) or _before_attributes(self.src, file, attr)
            grow(self.more, self.grown, file, f, start, want - m.offset)


def offset_padding(
    src: SourceSet, facts: TargetFacts, target: Target, pads: dict[tuple[Path, int, int], Padding]
) -> tuple[dict[tuple[Path, int, int], Padding], list[Diagnostic]]:
    """WGSL and Metal have no ``[[vk::offset(n)]]`` (Slang ignores it there), so a member that
    SPIR-V places at n is given explicit padding before it instead: the same offset, the same
    bytes from the host, one layout for every target. ``facts`` come from a compile with
    ``pads``; the result is the padding still to add (the first misplaced member of each struct,
    by the bytes it lacks; the members after it follow as they do in SPIR-V), or the positioned
    errors for an offset no padding can give: below where the member lands anyway, or not a
    multiple of its alignment on this target."""
    if not _asks_offsets(src):
        return dict(pads), []
    decls = src.declarations()
    found = _OffsetRound(src, target, dict(pads))
    for p in facts.params:
        if p.layout is None:
            continue
        found.walk(p.layout, block_owner(decls.get(p.name), p.layout))
    return found.more, found.errors


def block_owner(decl: Declaration | None, layout: TypeLayout) -> str:
    """The struct whose declaration holds a buffer's members: a cbuffer's or tbuffer's own
    name, else its struct's."""
    named_block = decl is not None and decl.base in ("cbuffer", "tbuffer")
    return decl.name if named_block and decl is not None else layout.name


def _asks_offsets(src: SourceSet) -> bool:
    """Whether a file as compiled names ``offset`` or ``packoffset``, as a member that asks for
    an offset does (:func:`_asked_offset`): where none does, the walk of every buffer's members
    finds nothing (most shaders; looked for once per read)."""
    found: bool = src.derived(
        "asks offsets",
        lambda: any(
            next(s.words(("offset", "packoffset")), None) is not None for s in src.streams()
        ),
    )
    return found


def predicted_padding(src: SourceSet) -> dict[tuple[Path, int, int], Padding]:
    """The padding the first round of :func:`offset_padding` gives, known before a compile
    where a struct's first member asks for an offset n > 0 (``[[vk::offset(n)]]``,
    ``packoffset``): a first member sits at 0 on every target, so n bytes go before it. Only
    a guess until :func:`prediction_holds` has read a compile made with it."""

    def found() -> dict[tuple[Path, int, int], Padding]:
        out: dict[tuple[Path, int, int], Padding] = {}
        for name in sorted({n for scanned in src.sources.values() for n in scanned.structs}):
            sdef, file = src.struct(name), src.struct_file(name)
            if sdef is None or file is None or not sdef.fields:
                continue
            f = sdef.fields[0]
            asked = _asked_offset(src, file, f)
            if asked is None or asked[0] <= 0:
                continue
            start = statement_start(src, file, f) or _before_attributes(src, file, asked[2])
            out[(file, f.line, f.column)] = Padding(file, start[0], start[1], asked[0])
        return out

    predicted: dict[tuple[Path, int, int], Padding] = src.derived("predicted padding", found)
    return predicted


def prediction_holds(
    src: SourceSet, facts: TargetFacts, target: Target, pads: dict[tuple[Path, int, int], Padding]
) -> bool:
    """Whether ``pads`` (:func:`predicted_padding`), with which the compile of ``facts`` was
    made, is exactly what the first round of :func:`offset_padding` would have given from a
    compile without padding: each padded struct is reached from a buffer, its first member now
    where it asks, the offset a multiple of its alignment; no struct holding a padded one (at
    any depth: the padding moves its layout) asks for an offset; and no struct asks for more
    (the others' layouts are the same with or without the padding, so they would have asked
    in that round too)."""
    decls = src.declarations()
    layouts: dict[str, TypeLayout] = {}
    parents: dict[str, set[str]] = {}

    for p in facts.params:
        if p.layout is None:
            continue
        _struct_graph(p.layout, block_owner(decls.get(p.name), p.layout), None, layouts, parents)
    owners = {
        (file, sdef.fields[0].line, sdef.fields[0].column): name
        for name in {n for scanned in src.sources.values() for n in scanned.structs}
        if (sdef := src.struct(name)) is not None
        and sdef.fields
        and (file := src.struct_file(name)) is not None
    }
    padded: set[str] = set()
    for key, pad in pads.items():
        owner = owners.get(key)
        layout = layouts.get(owner) if owner is not None else None
        sdef = src.struct(owner) if owner is not None else None
        if owner is None or layout is None or sdef is None:
            return False
        member = next((m for m in layout.members if m.name == sdef.fields[0].name), None)
        if member is None or member.offset != pad.size or pad.size % max(member.type.align, 4):
            return False
        padded.add(owner)
    moved, todo = set(padded), list(padded)
    while todo:
        for parent in parents.get(todo.pop(), ()):
            if parent not in moved:
                moved.add(parent)
                todo.append(parent)
    for owner in moved - padded:
        sdef, file = src.struct(owner), src.struct_file(owner)
        if sdef is None or file is None:
            return False
        if any(_asked_offset(src, file, f) is not None for f in sdef.fields):
            return False
    more, refused = offset_padding(src, facts, target, pads)
    return not refused and more == pads


def _struct_graph(
    layout: TypeLayout,
    owner: str,
    parent: str | None,
    layouts: dict[str, TypeLayout],
    parents: dict[str, set[str]],
) -> None:
    """Each struct inside ``layout`` (``owner``'s) into ``layouts`` by name, with the structs
    that hold it into ``parents`` (:func:`prediction_holds`' walk: a function, not a closure
    calling itself, whose cycle would wait for the cycle collector)."""
    if layout.kind is TypeKind.Array and layout.element is not None:
        _struct_graph(layout.element, layout.element.name, parent, layouts, parents)
        return
    if layout.kind is not TypeKind.Struct:
        return
    layouts.setdefault(owner, layout)
    if parent is not None:
        parents.setdefault(owner, set()).add(parent)
    for m in layout.members:
        if m.type.kind in (TypeKind.Struct, TypeKind.Array):
            _struct_graph(m.type, m.type.name, owner, layouts, parents)


def grow(
    more: dict[tuple[Path, int, int], Padding],
    grown: set[tuple[Path, int, int]],
    file: Path,
    f: Field,
    at: tuple[int, int],
    size: int,
) -> None:
    """``size`` bytes more of padding in ``more`` before member ``f`` (written at ``at``); once
    per round (``grown``): a struct met again in another buffer is padded once."""
    key = (file, f.line, f.column)
    if key in grown:
        return
    grown.add(key)
    before = more.get(key)
    more[key] = Padding(file, at[0], at[1], size + (before.size if before else 0))


def _member(s: Stream, f: Field) -> int:
    """The index of member ``f``'s name in its file's stream."""
    return s.index(s.offset_of(f.line, f.column))


def _packoffset(s: Stream, i: int) -> tuple[int, str, str] | None:
    """After the name at ``i`` (past its array sizes): ``: packoffset(cN)`` or ``(cN.c)``,
    as (the index of ``packoffset``, N, c or "")."""
    i += 1
    while s.is_(i, "["):
        i = s.closing(i)
        if i < 0:
            return None
    register, k = s.at(i + 3), i + 4
    component = ""
    if s.is_(k, ".") and s.at(k + 1).text in ("x", "y", "z", "w"):
        component, k = s.at(k + 1).text, k + 2
    if not (s.is_(i, ":") and s.is_(i + 1, "packoffset") and s.is_(i + 2, "(") and s.is_(k, ")")):
        return None
    number = register.text[1:]
    if register.kind != "id" or register.text[:1] != "c" or not number.isdigit():
        return None
    return i + 1, number, component


def _asked_offset(src: SourceSet, file: Path, f: Field) -> tuple[int, str, Attribute] | None:
    """The offset the source asks for member ``f``: ``[[vk::offset(n)]]``, or HLSL's
    ``packoffset(cN.c)`` (16 N + 4 c), which Slang's WGSL and Metal code ignores (its
    reflection does not; so ``rewrite.packoffset_edits`` takes it out of their source, and the
    padding puts the member there). With how the source spells it, and where."""
    attr = next((a for a in f.attributes if a.name == "vk::offset"), None)
    if attr is not None and attr.args and attr.args[0].isdigit():
        return int(attr.args[0]), f"[[vk::offset({attr.args[0]})]]", attr
    s = src.stream(file)
    found = _packoffset(s, _member(s, f))
    if found is None:
        return None
    at, register, component = found
    line, column = s.line_col(at)
    spelled = f"packoffset(c{register}{'.' + component if component else ''})"
    offset = 16 * int(register) + 4 * ("xyzw".index(component) if component else 0)
    return offset, spelled, Attribute("packoffset", (), line, column)


def _before_attributes(src: SourceSet, file: Path, attr: Attribute) -> tuple[int, int]:
    """The position of the ``[[`` that opens ``attr`` (where it is one, on its line)."""
    s = src.stream(file)
    i = s.index(s.offset_of(attr.line, attr.column))
    for k in range(i - 2, -1, -1):
        line, column = s.line_col(k)
        if line != attr.line:
            break
        if s.is_(k, "[") and s.is_(k + 1, "[") and s.start(k + 1) == s.start(k) + 1:
            return line, column
    return attr.line, attr.column


def statement_start(src: SourceSet, file: Path, f: Field) -> tuple[int, int] | None:
    """Where the declaration of member ``f`` begins (its attributes, modifiers and type), or
    None where it declares more than one member (``float a, b;``: padding would move both)."""
    s = src.stream(file)
    at = _member(s, f)
    begin = at
    while begin > 0 and s.tokens[begin - 1].text not in (";", "{", "}"):
        begin -= 1
    if any(s.tokens[k].text == "," for k in range(begin, at)):
        return None
    return s.line_col(begin)


def without_padding(facts: TargetFacts) -> TargetFacts:
    """``facts`` with the padding members of :func:`offset_padding` left out of every layout
    (their bytes stay: the members after them keep their offsets, the structs their sizes)."""
    params = [replace(p, layout=unpadded(p.layout)) if p.layout else p for p in facts.params]
    return replace(facts, params=params)


def unpadded(t: TypeLayout) -> TypeLayout:
    """Layout ``t`` without the padding members of :func:`offset_padding`, at any depth (``t``
    itself where it holds none: layouts are frozen, and most hold no padding)."""
    if t.kind is TypeKind.Array and t.element is not None:
        element = unpadded(t.element)
        return t if element is t.element else replace(t, element=element)
    if t.kind is not TypeKind.Struct:
        return t
    members = tuple(
        m if (inner := unpadded(m.type)) is m.type else replace(m, type=inner)
        for m in t.members
        if not m.name.startswith(PADDING)
    )
    if len(members) == len(t.members) and all(map(operator.is_, members, t.members)):
        return t
    return replace(t, members=members)
