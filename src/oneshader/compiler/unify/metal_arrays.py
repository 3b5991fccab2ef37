"""Arrays of scalars and 2-vectors in a Metal constant buffer, given std140's 16-byte stride
(and the columns of a column-major matrix whose columns are 2 long, ``float2x3``, alike):
``float t[4]`` is 4 bytes apart in Slang's Metal and 16 apart in std140 (SPIR-V, WGSL). Metal
declares the member an array of 4-vectors instead (``array<float4, int(4)> t``: stride 16), and
every read of an element takes its first components (``CB->t[i].x``); a constant buffer is
never written. Done only where every use of the member in the code is an element read (a
whole-array copy would need another type), else the layouts stay different (OS2001)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from oneshader.compiler.emitted.common import emitted_name, emitted_pattern, round_up
from oneshader.compiler.source.scanner import closing
from oneshader.reflection.model import ScalarKind, StructMember, TypeKind, TypeLayout

_SWIZZLE = {1: ".x", 2: ".xy"}


def relaid_offset(end: int, t: TypeLayout, m: StructMember, was: int) -> int:
    """Where member ``m``, now of type ``t``, lands by C's rules after ``end``, keeping the
    explicit padding the code has before it (the bytes between where the member before it
    ended, ``was``, and where ``m`` was, beyond alignment: see ``unify.metal_padding``)."""
    padding = max(m.offset - round_up(was, max(m.type.align, 1)), 0)
    return round_up(end + padding, max(t.align, 1))


@dataclass
class MetalArrays:
    """Slang's MSL (to see how a member is used), and the members widened so far: resource
    name -> member names (the constant buffer's own members)."""

    code: str
    widened: dict[str, list[str]] = field(default_factory=dict)

    def declares(self, resource: str) -> bool:
        """Whether Slang's MSL names ``resource`` at all: one that no Metal entry point uses is
        left out (Metal passes every resource it declares to every entry point), so its
        layout there is nobody's."""
        return (
            not self.code
            or re.search(rf"\b{emitted_pattern(emitted_name(resource))}\b", self.code) is not None
        )

    def relayout(self, resource: str, reference: TypeLayout, metal: TypeLayout) -> TypeLayout:
        """``metal`` (a constant buffer's struct) with each array member that ``reference``
        strides by 16 and Metal by its element's size made an array of 4-vectors, laid out
        again by C's rules; the members are recorded under ``resource``."""
        if metal.kind is not TypeKind.Struct or reference.kind is not TypeKind.Struct:
            return metal
        refs = {m.name: m for m in reference.members}
        members = []
        end, align, names, was = 0, max(metal.align, 1), [], 0
        for m in metal.members:
            t = m.type
            r = refs.get(m.name)
            if r is not None and self._widens(resource, r.type, t, m.name):
                assert t.element is not None
                el = t.element
                wide = replace(el, kind=TypeKind.Vector, rows=4, size=4 * el.scalar.size)
                wide = replace(wide, align=wide.size)
                t = replace(t, element=wide, stride=16, size=16 * t.length, align=16)
                names.append(m.name)
            elif r is not None and self._widens_matrix(resource, r.type, t, m.name):
                t = replace(t, mstride=16, size=16 * (t.size // t.mstride), align=16)
                names.append(m.name)
            elif r is not None and self._widens_matrices(resource, r.type, t, m.name):
                assert t.element is not None
                el = t.element
                el = replace(el, mstride=16, size=16 * (el.size // el.mstride), align=16)
                t = replace(t, element=el, stride=el.size, size=el.size * t.length, align=16)
                names.append(m.name)
            offset = relaid_offset(end, t, m, was)
            members.append(replace(m, offset=offset, type=t))
            end, align, was = offset + t.size, max(align, t.align), m.offset + m.type.size
        if not names:
            return metal
        self.widened[resource] = names
        return replace(metal, members=tuple(members), size=round_up(end, align), align=align)

    def _widens(self, resource: str, ref: TypeLayout, t: TypeLayout, member: str) -> bool:
        el = t.element
        if t.kind is not TypeKind.Array or el is None or not t.length or ref.stride != 16:
            return False
        if el.kind not in (TypeKind.Scalar, TypeKind.Vector) or el.scalar is ScalarKind.Bool:
            return False
        rows = el.rows if el.kind is TypeKind.Vector else 1
        if rows not in _SWIZZLE or el.scalar.size != 4 or t.stride != el.size:
            return False
        found = _declared(self.code, emitted_name(resource), member)
        if found is None or not re.fullmatch(emitted_pattern(member), found.group(2)):
            return False  # (not declared an array itself: a wrapper's)
        arrow = _swizzle_like(found.group(2))
        if arrow and not _by_pointer_only(self.code, emitted_name(resource)):
            return False  # a copy's ``.a`` could not be told from a swizzle
        return _only_element_reads(self.code, found.group(2), arrow, copies=True)

    def _widens_matrix(self, resource: str, ref: TypeLayout, t: TypeLayout, member: str) -> bool:
        """A column-major matrix whose stored vectors std140 puts 16 apart, Metal 8 (a
        ``float2x3``'s three float2 columns), held in Slang's ``_MatrixStorage_`` wrapper."""
        if t.kind is not TypeKind.Matrix or ref.mstride != 16 or not 0 < t.mstride < 16:
            return False
        if t.scalar.size != 4 or t.scalar is ScalarKind.Bool or t.size % t.mstride:
            return False
        found = _declared(self.code, emitted_name(resource), member)
        return found is not None and _only_element_reads(self.code, found.group(2))

    def _widens_matrices(self, resource: str, ref: TypeLayout, t: TypeLayout, member: str) -> bool:
        """An array of such matrices (``float2x3 m[2]``: 48 bytes apart in std140, 24 on
        Metal), held in Slang's ``_Array_`` struct of their wrappers."""
        el, r = t.element, ref.element
        if t.kind is not TypeKind.Array or el is None or r is None or not t.length:
            return False
        if not self._widens_matrix(resource, r, el, member):
            return False
        return ref.stride == 16 * (el.size // el.mstride)


def _declared(code: str, resource: str, member: str) -> re.Match[str] | None:
    """``array<float, int(4)> t;`` (or ``t_0``, as Slang names a struct's members) in the struct
    of Metal argument ``resource``, if that is how the member is declared and no other struct
    of the code has a member of its emitted name; group 1 the element type, 2 the name."""
    param = re.search(rf"(\w+)\s+constant\s*\*\s*{emitted_pattern(resource)}\s*\[\[", code)
    if param is None:
        return None
    body = re.search(rf"struct\s+{re.escape(param.group(1))}\s*\{{(.*?)\}};", code, re.DOTALL)
    if body is None:
        return None
    array = r"array<\s*(\w+)\s*,\s*int\(\d+\)\s*>\s+"
    found = re.search(rf"{array}({emitted_pattern(member)})\s*;", body.group(1))
    wrapper = re.search(rf"(_MatrixStorage_\w+)\s+{emitted_pattern(member)}\s*;", body.group(1))
    listed = re.search(rf"(_Array_\w+)\s+{emitted_pattern(member)}\s*;", body.group(1))
    if found is None and wrapper is None and listed is not None:
        # an array of matrices: Slang's ``_Array_`` struct of an array of their wrappers, each
        # named nowhere else (so widening the wrapper's vectors changes no other layout)
        outer = re.search(
            rf"struct\s+{listed.group(1)}\s*\{{\s*array<\s*(_MatrixStorage_\w+)\s*,"
            r"\s*int\(\d+\)\s*>\s+\w+\s*;\s*\};",
            code,
        )
        if outer is None:
            return None
        if any(len(re.findall(rf"\b{n}\b", code)) != 2 for n in (listed[1], outer[1])):
            return None
        inner = re.search(rf"struct\s+{outer.group(1)}\s*\{{\s*{array}(\w+)\s*;\s*\}};", code)
        if inner is None:
            return None
        found = inner
    if found is None and wrapper is not None:
        # the matrix's vectors, in a wrapper no other member uses (it is widened for all)
        inner = re.search(rf"struct\s+{wrapper.group(1)}\s*\{{\s*{array}(\w+)\s*;\s*\}};", code)
        if inner is None or len(re.findall(rf"\b{wrapper.group(1)}\s+\w+\s*;", code)) != 1:
            return None
        found = inner
    if found is None:
        return None
    declared = rf"(?:\s|(?<!-)>){re.escape(found.group(2))}\s*;"  # (not a copy's ``->t;``)
    if len(re.findall(declared, code)) != 1:
        return None  # another struct's member of the same name: its uses would be ambiguous
    return found


def _swizzle_like(member: str) -> bool:
    """A member named as a swizzle (``a``, ``xy``): ``.a`` in the code may be either."""
    return re.fullmatch(r"[xyzw]{1,4}|[rgba]{1,4}", member) is not None


def _by_pointer_only(code: str, resource: str) -> bool:
    """Whether the struct of Metal argument ``resource`` is named only where it is defined
    and as a ``constant*``: no copy of the block exists, so its members are reached by ``->``
    alone, and a ``.a`` is a swizzle."""
    param = re.search(rf"(\w+)\s+constant\s*\*\s*{emitted_pattern(resource)}\s*\[\[", code)
    if param is None:
        return False
    name = re.escape(param.group(1))
    named = len(re.findall(rf"\b{name}\b", code))
    defined = len(re.findall(rf"\bstruct\s+{name}\b", code))
    pointed = len(re.findall(rf"\b{name}\s+constant\s*\*", code))
    return defined == 1 and named == defined + pointed


def _uses(code: str, member: str, arrow: bool = False) -> list[re.Match[str]]:
    """The accesses of ``member`` (``arrow``: through a pointer only, ``->a``, where ``.a``
    is a swizzle)."""
    access = "->" if arrow else r"(?:->|\.)"
    return list(re.finditer(rf"{access}\s*{re.escape(member)}\b", code))


def _only_element_reads(code: str, member: str, arrow: bool = False, copies: bool = False) -> bool:
    """Every use of ``member`` is indexed (``->t[i]``) and not written (no assignment), or
    (``copies``) the whole right side of an assignment statement (``_copy``)."""
    for m in _uses(code, member, arrow):
        if not re.match(r"\s*\[", code[m.end() :]):
            if copies and _copy(code, m) is not None:
                continue
            return False
        close = closing(code, code.index("[", m.end())) - 1  # at the "]" (-2: not closed)
        if close < 0 or re.match(
            r"\s*(?:\.\s*\w+\s*)?(?:[-+*/%&|^]|<<|>>)?=(?!=)", code[close + 1 :]
        ):
            return False
    return True


_COPY = r"(?P<indent>[ \t]*)(?P<lhs>[\w.&()\->\[\]]+)\s*=\s*(?P<rhs>[\w.&()\->\[\]]+)\s*;[ \t]*"


def _copy(code: str, use: re.Match[str]) -> re.Match[str] | None:
    """The statement ``lhs = base->t;`` (the line the use ``->t`` of ``_uses`` ends, the whole
    array copied into an lvalue, as Slang writes ``t.s = W;``), or None."""
    start = code.rfind("\n", 0, use.start()) + 1
    end = code.find("\n", use.end())
    end = len(code) if end < 0 else end
    found = re.fullmatch(_COPY, code[start:end])
    if found is None or start + found.end("rhs") != use.end():
        return None
    return found


def _copies_by_element(code: str, member: str, length: int, arrow: bool) -> str:
    """``code`` with each whole copy of ``member`` (``_copy``) made one element read per
    element (``lhs[int(i)] = base->t[int(i)];``, as Slang writes an array's copy itself), for
    the element reads' rewrite to take its components."""
    for m in reversed(_uses(code, member, arrow)):
        if re.match(r"\s*\[", code[m.end() :]):
            continue
        found = _copy(code, m)
        if found is None:
            continue
        start = code.rfind("\n", 0, m.start()) + 1
        lines = "\n".join(
            f"{found['indent']}{found['lhs']}[int({i})] = {found['rhs']}[int({i})];"
            for i in range(length)
        )
        code = code[:start] + lines + code[start + found.end() :]
    return code


def widen_arrays(code: str, resource: str, members: list[str]) -> str:
    """The MSL with each member of ``members`` (see :class:`MetalArrays`) declared an array of
    4-vectors and each element read taking the element's components from it."""
    for member in members:
        decl = _declared(code, resource, member)
        if decl is None:
            continue
        element, emitted = decl.group(1), decl.group(2)
        rows = int(element[-1]) if element[-1].isdigit() else 1
        swizzle = _SWIZZLE[rows]
        wide = re.sub(r"\d$", "", element) + "4"
        code = re.sub(
            rf"array<\s*{re.escape(element)}\s*,(\s*int\(\d+\)\s*>\s+{re.escape(emitted)}\s*;)",
            rf"array<{wide},\1",
            code,
            count=1,
        )
        arrow = _swizzle_like(emitted)  # (``_widens`` saw no copy of the block)
        length = re.search(rf"int\((\d+)\)\s*>\s+{re.escape(emitted)}\s*;", code)
        if length is not None:
            code = _copies_by_element(code, emitted, int(length.group(1)), arrow)
        out, last = [], 0
        for m in _uses(code, emitted, arrow):
            close = closing(code, code.index("[", m.end())) - 1
            indexed = re.match(r"\s*\[", code[close + 1 :])  # a component: read as it is
            out.append(code[last : close + 1] + ("" if indexed else swizzle))
            last = close + 1
        out.append(code[last:])
        code = "".join(out)
    return code
