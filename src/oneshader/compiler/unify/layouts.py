"""One layout for all targets: each target's layout of a buffer compared member by member, a
positioned OS2001 where they disagree (docs/compiler.md "One layout for all targets"), SPIR-V's
``[[vk::offset]]`` applied, and what WGSL cannot hold in a buffer."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import replace

from oneshader.compiler.emitted.common import FLOATS, GLOBALS, round_up
from oneshader.compiler.slang.facts import ParamFacts
from oneshader.compiler.slang.padding import unpadded
from oneshader.compiler.source.dxc_syntax import ANONYMOUS_STRUCT
from oneshader.compiler.source.scanner import Declaration
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.compiler.unify.metal_arrays import MetalArrays, relaid_offset
from oneshader.compiler.unify.portability import compare
from oneshader.diagnostics import Code, Collector, Diagnostic
from oneshader.reflection.model import MatrixPacking, ScalarKind, Target, TypeKind, TypeLayout


def one_layout(
    src: SourceSet,
    decl: Declaration,
    per: dict[Target, ParamFacts],
    problems: Collector,
    block: bool = False,
    msl_vectors: dict[str, list[MetalVector]] | None = None,
    msl_arrays: MetalArrays | None = None,
) -> TypeLayout | None:
    """:func:`_one_layout`, an anonymous struct's name (``source.dxc_syntax``) left out."""
    layout = _one_layout(src, decl, per, problems, block, msl_vectors, msl_arrays)
    return _unnamed(layout) if layout is not None else None


def _unnamed(t: TypeLayout) -> TypeLayout:
    """``t`` with the name a rewrite gave an anonymous struct made "" (it has none); ``t``
    itself where it holds none (most layouts: no copy of the tree)."""
    if t.kind is TypeKind.Array and t.element is not None:
        element = _unnamed(t.element)
        return t if element is t.element else replace(t, element=element)
    if t.kind is not TypeKind.Struct:
        return t
    name = "" if t.name.startswith(ANONYMOUS_STRUCT) else t.name
    types = [_unnamed(m.type) for m in t.members]
    if name == t.name and all(new is m.type for new, m in zip(types, t.members, strict=True)):
        return t
    members = tuple(replace(m, type=new) for new, m in zip(types, t.members, strict=True))
    return replace(t, name=name, members=members)


def _one_layout(
    src: SourceSet,
    decl: Declaration,
    per: dict[Target, ParamFacts],
    problems: Collector,
    block: bool = False,
    msl_vectors: dict[str, list[MetalVector]] | None = None,
    msl_arrays: MetalArrays | None = None,
) -> TypeLayout | None:
    """The layout every target agrees on (SPIR-V's leaves), or an error at the member (added to
    ``problems``).

    A ``block`` (constant buffer, push block) may differ in its own size, which is tail
    padding only once every offset agrees; it gets the largest, a buffer that big being valid
    on every target (Metal's ``cbuffer A { float a; }`` is 4 bytes, std140's 16). Where Metal
    differs only by its 16-byte 3-vectors, the members that must be ``packed_float3`` (and
    the like) to agree are recorded in ``msl_vectors`` under the declaration's name, and the
    arrays a Metal constant buffer declares of 4-vectors to agree in ``msl_arrays``."""
    spirv_layout = per[Target.SpirV].layout if Target.SpirV in per else None
    if spirv_layout is not None:
        named_block = decl.base in ("cbuffer", "tbuffer")  # vk::offset names it by the block
        fixed = vk_offsets(src, spirv_layout, decl.name if named_block else spirv_layout.name)
        per = {**per, Target.SpirV: replace(per[Target.SpirV], layout=fixed)}
    per = _metal_widened(decl, per, block, msl_arrays)
    per = _metal_packed(decl, per, block, msl_vectors)
    metal = per[Target.Msl].layout if Target.Msl in per else None
    if metal is not None:  # (its padding members, kept for the two steps above)
        per = {**per, Target.Msl: replace(per[Target.Msl], layout=unpadded(metal))}
    ordered = [per[t] for t in Target if t in per]
    base = ordered[0].layout
    if base is None:
        return None
    if base.kind is TypeKind.Struct and decl.base in ("cbuffer", "tbuffer"):
        base = replace(base, name=decl.name)
    non_float = matrix_errors(src, decl, base)
    if non_float:
        problems.extend(non_float)
        return base
    first = next(t for t in Target if t in per)
    for t in Target:
        if t not in per or t is first:
            continue
        other = per[t].layout
        if other is None:
            continue
        diff = compare(base, other, decl.name, sized=not block)
        if diff is None:
            continue
        if t is Target.Msl and msl_arrays is not None and not msl_arrays.declares(decl.name):
            continue  # no Metal code reads it: the host's bytes (the reflection's) do
        file, line, col = member_position(src, decl, diff.struct, diff.member)
        problems.add(
            src.error(
                file,
                line,
                col,
                f"{diff.path}: not portable: {diff.what} is {diff.a} on {first.name} but "
                f"{diff.b} on {t.name}; {diff.hint}",
                Code.NOT_PORTABLE,
            )
        )
        return base
    bool_vectors = (TypeKind.Vector, ScalarKind.Bool)
    if Target.Wgsl in per:
        uniform = block and decl.base not in ("tbuffer", "TextureBuffer")
        problems.extend(wgsl_buffer_errors(src, decl, base, uniform))
    spirv = per[Target.SpirV].layout if Target.SpirV in per else None
    if not block and spirv is not None and (spirv.kind, spirv.scalar) == bool_vectors:
        # (a bool vector inside a struct element is stored as uints, which is valid)
        problems.add(
            src.at_decl(
                decl,
                f"SPIR-V: '{decl.name}' holds bool vectors ({decl.type_text}): Slang's "
                "SPIR-V stores them as bools in a storage buffer, which Vulkan forbids; "
                "use uint vectors (0 or 1), or a struct that holds the bool vector",
                Code.NOT_ON_TARGET,
            )
        )
    wgsl = per[Target.Wgsl].layout if Target.Wgsl in per else None
    scalar_kinds = (TypeKind.Scalar, TypeKind.Vector)
    # (a bool member of a struct is stored as a uint: the wgsl-bools rewrite)
    if (
        not block
        and wgsl is not None
        and (wgsl.kind, wgsl.scalar) in ((k, ScalarKind.Bool) for k in scalar_kinds)
    ):
        problems.add(
            src.at_decl(
                decl,
                f"WGSL: '{decl.name}' holds bools ({decl.type_text}): WGSL has no "
                "host-shareable bool, and Slang's WGSL declares the buffer of them, which "
                "naga refuses; use uint (0 or 1), or a struct that holds the bool",
                Code.NOT_ON_TARGET,
            )
        )
    if block and base.kind is TypeKind.Struct:
        sizes = [p.layout.size for p in per.values() if p.layout is not None]
        base = replace(base, size=max(sizes, default=base.size))
    return base


MemberPath = tuple[str, ...]
# A vector member of a Metal struct to declare packed (True: packed_float3, 4-aligned) or
# aligned (False: float4 where Slang wrote packed_float4), so that Metal has the HLSL layout.
MetalVector = tuple[MemberPath, bool]


def _metal_widened(
    decl: Declaration, per: dict[Target, ParamFacts], block: bool, arrays: MetalArrays | None
) -> dict[Target, ParamFacts]:
    """``per`` with the arrays of a Metal constant buffer that std140 strides by 16 declared
    of 4-vectors (``unify.metal_arrays``)."""
    metal = per[Target.Msl].layout if Target.Msl in per else None
    other = next((t for t in Target if t in per and t is not Target.Msl), None)
    reference = per[other].layout if other is not None else None
    if arrays is None or metal is None or reference is None or not block:
        return per
    if decl.base in ("tbuffer", "TextureBuffer"):
        return per
    relaid = arrays.relayout(decl.name, reference, metal)
    if relaid is metal:
        return per
    return {**per, Target.Msl: replace(per[Target.Msl], layout=relaid)}


def _metal_packed(
    decl: Declaration,
    per: dict[Target, ParamFacts],
    block: bool,
    msl_vectors: dict[str, list[MetalVector]] | None,
) -> dict[Target, ParamFacts]:
    """``per`` with Metal's layout as packed (``packed_float3``) or aligned (``float4``) vector
    members give it, where that makes it agree with the other targets' (HLSL puts a scalar in
    a float3's last 4 bytes, where Metal's float3 takes 16; std430 aligns a float4 in a
    structured buffer to 16, where Slang's Metal packs it)."""
    metal = per[Target.Msl].layout if Target.Msl in per else None
    if metal is not None and metal.kind is TypeKind.Struct and metal.size % max(metal.align, 1):
        # Slang reflects a Metal struct's size without its tail padding; C's sizeof (the
        # stride of a structured buffer's elements, what the code uses) rounds it up.
        metal = replace(metal, size=round_up(metal.size, metal.align))
        per = {**per, Target.Msl: replace(per[Target.Msl], layout=metal)}
    other = next((t for t in Target if t in per and t is not Target.Msl), None)
    reference = per[other].layout if other is not None else None
    if msl_vectors is None or metal is None or reference is None:
        return per
    if compare(reference, unpadded(metal), decl.name, sized=not block) is None:
        return per
    paths: list[MetalVector] = []
    relaid = packed_relayout(reference, metal, (), paths)
    if paths and compare(reference, unpadded(relaid), decl.name, sized=not block) is None:
        msl_vectors[decl.name] = paths
    # (where they still differ, the layout check names what the declarations cannot mend)
    return {**per, Target.Msl: replace(per[Target.Msl], layout=relaid)}


def packed_relayout(
    reference: TypeLayout, metal: TypeLayout, path: MemberPath, paths: list[MetalVector]
) -> TypeLayout:
    """Metal's layout redone by its C rules with each vector whose last bytes ``reference``
    gives to the next member (a float3's last 4, or outside the struct) made packed (aligned
    to a scalar), and each packed one that ``reference`` aligns to its size made aligned
    (Slang's Metal structured buffers hold packed_float4); the changes are added to
    ``paths``."""
    if metal.kind is TypeKind.Array and metal.element is not None and reference.element:
        element = packed_relayout(reference.element, metal.element, path, paths)
        if element == metal.element:
            return metal
        stride = round_up(element.size, max(element.align, 1))
        size = stride * metal.length if metal.length else metal.size
        align = element.align  # Metal's array<T, N> is aligned as its element (packed: less)
        return replace(metal, element=element, stride=stride, size=size, align=align)
    if not path and _packed_vector(metal, reference):  # a structured buffer's element
        paths.append((path, False))
        return replace(metal, align=_aligned_vector(3, metal.scalar))
    aligned = _packed_matrix(metal, reference)
    if aligned:
        paths.append((path, False))
        vectors = metal.size // metal.mstride
        return replace(metal, mstride=aligned, size=aligned * vectors, align=aligned)
    if metal.kind is not TypeKind.Struct or reference.kind is not TypeKind.Struct:
        return metal
    members = []
    end, align, was = 0, 1, 0
    refs = reference.members
    index = {r.name: i for i, r in enumerate(refs)}
    for m in metal.members:
        i = index.get(m.name, -1)  # by name: Metal's padding members have no reference
        ref = refs[i] if i >= 0 else None
        t = m.type
        bool_vector = t.kind is TypeKind.Vector and t.scalar is ScalarKind.Bool
        if ref is not None and not bool_vector:
            # (a bool vector is not a float3's kind: Metal's bool is a byte, SPIR-V's a word)
            t = packed_relayout(ref.type, t, (*path, m.name), paths)
            room = (refs[i + 1].offset if i + 1 < len(refs) else reference.size) - ref.offset
            scalar = t.scalar.size
            aligned = (4 if t.rows == 3 else t.rows) * scalar
            if t.kind is TypeKind.Vector and t.rows > 1 and room < aligned:
                t = replace(t, size=t.rows * scalar, align=scalar)
                paths.append(((*path, m.name), True))
            elif t.kind is TypeKind.Vector and t.align < aligned <= ref.type.align:
                t = replace(t, size=aligned, align=aligned)
                paths.append(((*path, m.name), False))
            elif wide := _packed_array(t, ref.type):
                assert t.element is not None
                el = replace(t.element, size=wide, align=wide)
                t = replace(t, element=el, stride=wide, size=wide * t.length, align=wide)
                paths.append(((*path, m.name), False))
        offset = relaid_offset(end, t, m, was)
        same = offset == m.offset and t is m.type  # (most: no replace, a frozen member)
        members.append(m if same else replace(m, offset=offset, type=t))
        end, align, was = offset + t.size, max(align, t.align), m.offset + m.type.size
    size = round_up(end, align)
    if (
        size == metal.size
        and align == metal.align
        and all(map(operator.is_, members, metal.members))
    ):
        return metal
    return replace(metal, members=tuple(members), size=size, align=align)


def _aligned_vector(rows: int, scalar: ScalarKind) -> int:
    """The size and alignment of an aligned Metal (and std430) vector: a 3-vector takes 4."""
    return (4 if rows == 3 else rows) * scalar.size


def _packable(scalar: ScalarKind) -> bool:
    """Scalars of which Slang's Metal stores packed vectors (``packed_float3``,
    ``packed_half3``) that have aligned counterparts."""
    return scalar.size in (2, 4) and scalar is not ScalarKind.Bool


def _packed_matrix(t: TypeLayout, ref: TypeLayout) -> int:
    """The size of the aligned vector in which a matrix stored as packed vectors (Slang's Metal
    structured buffers: a ``float3x2``'s columns, a ``row_major float2x3``'s rows, 12 bytes
    apart and 4-aligned; ``half`` ones 6 apart) has ``ref``'s (std430's) vector stride and
    alignment, where it does; else 0."""
    if t.kind is not TypeKind.Matrix or ref.kind is not TypeKind.Matrix or not t.mstride:
        return 0
    if not _packable(t.scalar) or t.size % t.mstride or t.mstride % t.scalar.size:
        return 0
    n = t.mstride // t.scalar.size
    aligned = _aligned_vector(n, t.scalar)
    if t.align >= aligned or n < 2 or ref.mstride != aligned or ref.align < aligned:
        return 0
    return aligned


def _packed_vector(t: TypeLayout, ref: TypeLayout) -> bool:
    """A packed 3-vector (12 bytes apart, 6 for ``half3``) that ``ref`` aligns to 4 scalars
    (std430's stride of a structured buffer of ``float3``): declared aligned."""
    if t.kind is not TypeKind.Vector or t.rows != 3 or not _packable(t.scalar):
        return False
    aligned = _aligned_vector(3, t.scalar)
    return t.align < aligned and ref.align == aligned


def _packed_array(t: TypeLayout, ref: TypeLayout) -> int:
    """The aligned element size where ``t`` is an array of packed 3-vectors (Slang's Metal
    structured buffers: ``float3`` 12 bytes apart) that ``ref`` strides by 4 scalars (std430:
    16): its elements are declared aligned. Else 0."""
    el = t.element
    if t.kind is not TypeKind.Array or el is None or el.kind is not TypeKind.Vector:
        return 0
    if el.rows != 3 or not _packable(el.scalar) or t.length <= 0:
        return 0
    aligned = _aligned_vector(3, el.scalar)
    return aligned if t.stride == 3 * el.scalar.size and ref.stride == aligned else 0


def member_position(
    src: SourceSet, decl: Declaration, struct_name: str, member: str
) -> tuple[str, int, int]:
    """Where ``member`` of struct ``struct_name`` is declared (the buffer's own members when
    the struct is the cbuffer itself, a loose global's declaration for $Globals), else the
    buffer's declaration: (displayed file, line, column)."""
    line, col, file = decl.line, decl.column, decl.file
    owner = (
        decl.name
        if decl.base in ("cbuffer", "tbuffer") and struct_name in ("", decl.name)
        else struct_name
    )
    sdef = src.struct(owner) if owner else None
    loose = src.declarations().get(member) if owner == GLOBALS else None
    if loose is not None:
        file, line, col = loose.file, loose.line, loose.column
    if sdef is not None and member:
        f = sdef.field(member)
        if f is not None:
            line, col = f.line, f.column
            file = str(src.struct_file(owner) or file)
    return src.display(file), line, col


def _leaves(layout: TypeLayout, root: str) -> list[tuple[str, str, str, TypeLayout, bool]]:
    """Every non-struct, non-array type inside ``layout``: (path, owning struct, member name,
    type, inside an array)."""
    out: list[tuple[str, str, str, TypeLayout, bool]] = []
    _add_leaves(out, layout, root, layout.name, "", False)
    return out


def _add_leaves(
    out: list[tuple[str, str, str, TypeLayout, bool]],
    t: TypeLayout,
    path: str,
    owner: str,
    member: str,
    in_array: bool,
) -> None:
    """:func:`_leaves`' walk (a function, not a closure calling itself: that cycle would wait
    for the cycle collector)."""
    if t.kind is TypeKind.Struct:
        for m in t.members:
            _add_leaves(out, m.type, f"{path}.{m.name}", t.name or owner, m.name, in_array)
    elif t.kind is TypeKind.Array:
        if t.element is not None:
            _add_leaves(out, t.element, path, owner, member, True)
    else:
        out.append((path, owner, member, t, in_array))


def _member_errors(
    src: SourceSet,
    decl: Declaration,
    layout: TypeLayout | None,
    why: Callable[[TypeLayout, bool], str | None],
    code: str,
) -> list[Diagnostic]:
    """An error at each member of ``layout`` whose leaf type ``why`` objects to (once per
    member), the message being ``path: why``."""
    out: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    for path, owner, member, t, in_array in _leaves(layout, decl.name) if layout else []:
        reason = why(t, in_array)
        if reason is None or (owner, member) in seen:
            continue
        seen.add((owner, member))
        file, line, col = member_position(src, decl, owner, member)
        out.append(src.error(file, line, col, f"{path}: {reason}", code))
    return out


def wgsl_buffer_errors(
    src: SourceSet, decl: Declaration, layout: TypeLayout | None, uniform: bool
) -> list[Diagnostic]:
    """What Slang's WGSL cannot hold in a buffer, at the member: in a uniform buffer, arrays
    of half (Slang emits an invalid ``vec8<f16>`` slot). (WGSL has no host-shareable bool
    either: bools in buffers are written uint for it, ``rewrite.bool_edits``.)"""

    def why(t: TypeLayout, in_array: bool) -> str | None:
        if uniform and in_array and t.scalar is ScalarKind.Float16:
            reason = (
                "Slang emits an array of half in a WGSL uniform buffer as an invalid "
                "vec8<f16>; use float, or half4 members instead of an array"
            )
        else:
            return None
        return f"{reason}, or build without the wgsl target"

    errors = _member_errors(src, decl, layout, why, Code.NOT_ON_TARGET)
    return [replace(e, message=f"WGSL: {e.message}") for e in errors]


def matrix_errors(src: SourceSet, decl: Declaration, layout: TypeLayout | None) -> list[Diagnostic]:
    """A column-major matrix of a non-float type in a buffer, at the member: Slang stores it by
    rows on every target while its reflection says columns, and DXC refuses it ("non-floating-
    point column-major matrices not supported")."""

    def why(t: TypeLayout, in_array: bool) -> str | None:
        if t.kind is not TypeKind.Matrix or t.scalar in FLOATS:
            return None
        if t.packing is not MatrixPacking.ColumnMajor:
            return None
        name = f"{t.scalar.name.lower()}{t.rows}x{t.cols}"
        return (
            f"a column-major {name} in a buffer: neither Slang nor DXC can lay out a "
            "non-float matrix by columns; declare it row_major, or use a float matrix"
        )

    return _member_errors(src, decl, layout, why, Code.NON_FLOAT_COLUMN_MAJOR)


def vk_offsets(src: SourceSet, layout: TypeLayout | None, owner: str) -> TypeLayout | None:
    """SPIR-V places ``[[vk::offset(n)]]`` members at n, at any depth (a struct in a struct or
    in an array too), and lays the members after one out again from its end; Slang's
    reflection does not know, so its offsets, struct sizes and array strides are moved here
    (the cross-check then compares them with the module's Offset and ArrayStride)."""
    if layout is None:
        return None
    if layout.kind is TypeKind.Array and layout.element is not None:
        element = vk_offsets(src, layout.element, layout.element.name) or layout.element
        if element == layout.element:
            return layout
        stride = layout.stride + element.size - layout.element.size
        return replace(layout, element=element, stride=stride, size=stride * layout.length)
    if layout.kind is not TypeKind.Struct:
        return layout
    sdef = src.struct(owner) if owner else None
    moved = False
    end = 0
    members = []
    for m in layout.members:
        f = sdef.field(m.name) if sdef else None
        attr = next((a for a in f.attributes if a.name == "vk::offset"), None) if f else None
        inner = vk_offsets(src, m.type, m.type.name) or m.type
        if attr is not None and attr.args and attr.args[0].isdigit():
            offset, moved = int(attr.args[0]), True
        elif moved:
            offset = -(-end // max(inner.align, 1)) * max(inner.align, 1)
        else:
            offset = m.offset
        moved = moved or inner != m.type
        same = offset == m.offset and inner is m.type  # (most: no replace, a frozen member)
        members.append(m if same else replace(m, offset=offset, type=inner))
        end = offset + inner.size
    if not moved:
        return layout
    align = max(layout.align, 1)
    return replace(layout, members=tuple(members), size=max(-(-end // align) * align, align))
