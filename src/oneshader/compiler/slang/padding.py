"""``[[vk::offset(n)]]`` on WGSL and Metal, which have no such attribute (Slang ignores it
there): the member is given explicit padding members before it instead, so that every target
has SPIR-V's layout and the host writes the same bytes (docs/compiler.md "One layout for all
targets"). The padding is found from a compile's facts and the target compiled again with it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from pathlib import Path

from oneshader.compiler.api import PADDING, TARGET_NAMES
from oneshader.compiler.slang.facts import TargetFacts
from oneshader.compiler.source.scanner import Attribute, Field, line_offsets, strip_comments
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
    decls = src.declarations()
    code = CommentFree(src)
    more = dict(pads)
    grown: set[tuple[Path, int, int]] = set()
    errors: list[Diagnostic] = []

    def walk(layout: TypeLayout, owner: str) -> None:
        if layout.kind is TypeKind.Array and layout.element is not None:
            walk(layout.element, layout.element.name)
            return
        if layout.kind is not TypeKind.Struct:
            return
        sdef = src.struct(owner) if owner else None
        placed = False
        for m in layout.members:
            if m.type.kind in (TypeKind.Struct, TypeKind.Array):
                walk(m.type, m.type.name)
            f = sdef.field(m.name) if sdef is not None else None
            file = src.struct_file(owner)
            asked = _asked_offset(code, file, f) if f is not None and file is not None else None
            if placed or f is None or file is None or asked is None:
                continue
            want, spelled, attr = asked
            if want == m.offset:
                continue
            placed = True
            align = max(m.type.align, 4)
            name = TARGET_NAMES[target]
            why = ""
            if want < m.offset:
                why = (
                    f"the members before it end at {m.offset} on {name}, "
                    "so no padding can place it lower"
                )
            elif want % align:
                why = f"{want} is not a multiple of its alignment ({align}) on {name}"
            if why:
                errors.append(
                    src.error_in(
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
            start = statement_start(code, file, f) or _before_attributes(src, file, attr)
            grow(more, grown, file, f, start, want - m.offset)

    for p in facts.params:
        if p.layout is None:
            continue
        decl = decls.get(p.name)
        named_block = decl is not None and decl.base in ("cbuffer", "tbuffer")
        walk(p.layout, decl.name if named_block and decl else p.layout.name)
    return more, errors


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


_PACKOFFSET = re.compile(
    r"(?:\s*\[[^\]]*\])*\s*:\s*packoffset\s*\(\s*c(\d+)\s*(?:\.\s*([xyzw]))?\s*\)"
)


class CommentFree:
    """Each file of a source set without its comments, and where its lines start: made once
    per file for a whole pass over a layout's members (once per member cost the square of a
    cbuffer's size)."""

    def __init__(self, src: SourceSet) -> None:
        self.src = src
        self._texts: dict[Path, tuple[str, list[int]]] = {}

    def text(self, file: Path) -> str:
        return self._get(file)[0]

    def offset(self, file: Path, line: int, column: int) -> int:
        """The offset of a 1-based line and column."""
        return self._get(file)[1][line - 1] + column - 1

    def line_col(self, file: Path, offset: int) -> tuple[int, int]:
        starts = self._get(file)[1]
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    def _get(self, file: Path) -> tuple[str, list[int]]:
        if file not in self._texts:
            text = strip_comments(self.src.texts[file])
            self._texts[file] = text, line_offsets(text)
        return self._texts[file]


def _asked_offset(code: CommentFree, file: Path, f: Field) -> tuple[int, str, Attribute] | None:
    """The offset the source asks for member ``f``: ``[[vk::offset(n)]]``, or HLSL's
    ``packoffset(cN.c)`` (16 N + 4 c), which Slang's WGSL and Metal code ignores (its
    reflection does not; so ``rewrite.without_packoffsets`` takes it out of their source, and the
    padding puts the member there). With how the source spells it, and where."""
    attr = next((a for a in f.attributes if a.name == "vk::offset"), None)
    if attr is not None and attr.args and attr.args[0].isdigit():
        return int(attr.args[0]), f"[[vk::offset({attr.args[0]})]]", attr
    text = code.text(file)
    name_at = code.offset(file, f.line, f.column)
    m = _PACKOFFSET.match(text, name_at + len(f.name))
    if m is None:
        return None
    component = "xyzw".index(m.group(2)) if m.group(2) else 0
    line, column = code.line_col(file, text.index("packoffset", m.start()))
    spelled = f"packoffset(c{m.group(1)}{'.' + m.group(2) if m.group(2) else ''})"
    return 16 * int(m.group(1)) + 4 * component, spelled, Attribute("packoffset", (), line, column)


def _before_attributes(src: SourceSet, file: Path, attr: Attribute) -> tuple[int, int]:
    """The position of the ``[[`` that opens ``attr`` (where it is one)."""
    text = src.texts[file].split("\n")[attr.line - 1]
    opening = text.rfind("[[", 0, attr.column - 1)
    return attr.line, opening + 1 if opening >= 0 else attr.column


def statement_start(code: CommentFree, file: Path, f: Field) -> tuple[int, int] | None:
    """Where the declaration of member ``f`` begins (its attributes, modifiers and type), or
    None where it declares more than one member (``float a, b;``: padding would move both)."""
    text = code.text(file)
    at = code.offset(file, f.line, f.column)
    begin = max(text.rfind(c, 0, at) for c in ";{}") + 1
    if "," in text[begin:at]:
        return None
    while begin < at and text[begin].isspace():
        begin += 1
    return code.line_col(file, begin)


def without_padding(facts: TargetFacts) -> TargetFacts:
    """``facts`` with the padding members of :func:`offset_padding` left out of every layout
    (their bytes stay: the members after them keep their offsets, the structs their sizes)."""
    params = [replace(p, layout=unpadded(p.layout)) if p.layout else p for p in facts.params]
    return replace(facts, params=params)


def unpadded(t: TypeLayout) -> TypeLayout:
    """Layout ``t`` without the padding members of :func:`offset_padding`, at any depth."""
    if t.kind is TypeKind.Array and t.element is not None:
        return replace(t, element=unpadded(t.element))
    if t.kind is not TypeKind.Struct:
        return t
    members = tuple(
        replace(m, type=unpadded(m.type)) for m in t.members if not m.name.startswith(PADDING)
    )
    return replace(t, members=members)
