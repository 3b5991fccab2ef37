"""The reflection's resources, push blocks and spec constants, built from every target's facts
and the source's declarations: the binding policy applied per target (SPIR-V and WGSL by
``bindings.place``, Metal's argument indices), one layout per buffer, clashes refused."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from oneshader.compiler.api import TARGET_NAMES, CompileOptions
from oneshader.compiler.emitted.common import (
    GLOBALS,
    LENGTHS,
    SLANG_LENGTHS,
    counter_name,
    emitted_pattern,
    emitted_regex,
    literal_bits,
)
from oneshader.compiler.emitted.spirv import read_spirv_shared
from oneshader.compiler.slang.facts import Category, ParamFacts, TargetFacts
from oneshader.compiler.slang.request import CompiledTarget
from oneshader.compiler.source.kinds import RTYPES
from oneshader.compiler.source.scanner import Declaration
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.compiler.unify.layouts import MetalVector, one_layout
from oneshader.compiler.unify.metal_arrays import MetalArrays
from oneshader.compiler.unify.placement import Placement, place
from oneshader.diagnostics import Code, Collector, Diagnostic, Severity
from oneshader.reflection.model import (
    BLOCK_TYPES,
    SAMPLER_TYPES,
    SUBPASS_INPUT_TYPES,
    TEXTURE_TYPES,
    EntryPoint,
    PushBlock,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    Slot,
    SpecConstant,
    SpecSlot,
    Stage,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
)

_INFERRED_FORMATS = {
    (scalar, n): f"{prefix}{suffix}"
    for scalar, suffix in (
        (ScalarKind.Float, "32f"),
        (ScalarKind.Float16, "16f"),
        (ScalarKind.Int, "32i"),
        (ScalarKind.UInt, "32ui"),
    )
    for n, prefix in ((1, "r"), (2, "rg"), (4, "rgba"))
}


@dataclass
class Assembled:
    """What the later steps need: the parameters in the reflection's order, and Metal's argument
    indices (name -> (buffer|texture|sampler, n)) for renumbering the MSL."""

    resources: list[Resource]
    pushes: list[PushBlock]
    specs: list[SpecConstant]
    msl_index: dict[str, tuple[str, int]]
    msl_vectors: dict[str, list[MetalVector]]
    msl_arrays: MetalArrays


def assemble(
    src: SourceSet,
    options: CompileOptions,
    compiled: list[CompiledTarget],
    outputs: dict[Target, bytes],
    problems: Collector,
) -> Assembled:
    """Every parameter of the primary (first) target, in its order, as the reflection records it;
    user errors are added to ``problems`` (what is returned then is partial: the caller checks
    ``problems`` first)."""
    decls = _declarations(src, compiled[0].facts)
    primary = compiled[0]
    by_target = {t.target: t for t in compiled}
    resources: list[Resource] = []
    pushes: list[PushBlock] = []
    specs: list[SpecConstant] = []
    msl_vectors: dict[str, list[MetalVector]] = {}
    msl_arrays = MetalArrays(outputs[Target.Msl].decode() if Target.Msl in outputs else "")
    emitted_formats = _spirv_image_formats(outputs)

    params = {t.target: {p.name: p for p in t.facts.params} for t in compiled}
    names = [p.name for p in primary.facts.params]
    appended = src.append_consume()
    companions = {counter_name(n) for n in (*src.counted_rw(), *appended)}
    names = [n for n in names if n not in companions and n != SLANG_LENGTHS]
    resource_decls = [
        decls[n]
        for n in names
        if n in decls
        and params[primary.target][n].category
        not in (Category.SPEC_CONSTANT, Category.PUSH_CONSTANT, Category.UNIFORM)
        and not decls[n].attribute("vk::push_constant")
        and decls[n].base in RTYPES
    ]
    resource_decls.sort(key=src.declaration_order())
    declared = {d.name for d in resource_decls if d.name in appended}
    placement = place(
        src,
        resource_decls,
        declared,
        src.counters_by_first_use(),
        options.shifts,
        options.bind_registers,
        problems,
        dxc_placement=options.dxc_placement,
        read=None if options.dxc_placement else _read_by_entries(src, outputs),
    )
    msl_index: dict[str, tuple[str, int]] = {}
    if Target.Msl in params:
        msl_index = _metal_indices(by_target[Target.Msl].facts, set(names))
        in_order = [d.name for d in resource_decls if d.name in declared]
        _index_metal_counters(msl_index, [*in_order, *src.counters_by_first_use()])
        _index_metal_lengths(msl_index, by_target[Target.Msl].facts)
    for name in names:
        decl = decls.get(name)
        if decl is None:
            problems.add(
                Diagnostic(
                    src.name,
                    0,
                    0,
                    Severity.ERROR,
                    f"'{name}' is declared in a form oneshader cannot read from the source "
                    "(through a macro, for example); declare it directly so its type and "
                    "attributes can be reflected as written",
                    Code.UNREADABLE_DECLARATION,
                )
            )
            continue
        per = {t: params[t][name] for t in params if name in params[t]}
        p0 = per[primary.target]
        if p0.category is Category.SPEC_CONSTANT:
            specs.append(_spec(decl, per, outputs))
            continue
        if p0.category is Category.PUSH_CONSTANT or decl.attribute("vk::push_constant"):
            layout = one_layout(src, decl, per, problems, True, msl_vectors, msl_arrays)
            pushes.append(PushBlock(name, (), layout, ()))
            continue
        if src.holds_resources(decl.base) and not src.resource_struct(decl.base):
            problems.add(
                src.at_decl(
                    decl,
                    f"'{name}' is a {decl.base} that holds resources in a nested struct or "
                    "beside data, which oneshader does not build (a global struct of nothing "
                    "but resources is); declare its resources as separate globals",
                    Code.STRUCT_OF_RESOURCES,
                )
            )
            continue
        if decl.array is not None and src.resource_struct(decl.base):
            problems.add(
                src.at_decl(
                    decl,
                    f"'{name}' is an array of structs of resources, which oneshader does not "
                    f"build; declare one struct per element, or each resource as an array",
                    Code.STRUCT_OF_RESOURCES,
                )
            )
            continue
        unknown_resource = p0.category in _RESOURCE_CATEGORIES  # OS1007 in _resource
        if unknown_resource and decl.base not in RTYPES and not _in_code(name, outputs):
            continue  # declared, never used: Slang leaves it out of every target's code
        if p0.category is Category.UNIFORM or (decl.base not in RTYPES and not unknown_resource):
            problems.add(
                src.at_decl(
                    decl,
                    f"'{name}' is a global uniform outside any cbuffer; declare it inside a "
                    "cbuffer (or make it static const)",
                    Code.LOOSE_UNIFORM_NOT_GATHERED,
                )
            )
            continue
        resources.append(
            _resource(
                src,
                decl,
                per,
                problems,
                placement,
                msl_index,
                msl_vectors,
                msl_arrays,
                emitted_formats.get(name),
            )
        )
    if problems.failed:
        return Assembled(resources, pushes, specs, msl_index, msl_vectors, msl_arrays)
    resources = _drop_unused_on_taken_slots(src, resources, decls, outputs, problems)
    resources = _check_bindings(src, resources, decls, msl_index, problems)
    pushes = _place_pushes(pushes, params, resources, msl_index)
    if LENGTHS in msl_index:
        resources.append(_lengths_resource(src.measured_buffers(), msl_index[LENGTHS][1]))
    return Assembled(resources, pushes, specs, msl_index, msl_vectors, msl_arrays)


def _spirv_image_formats(outputs: dict[Target, bytes]) -> dict[str, str]:
    """The image formats Slang's SPIR-V gives variables itself (not ``unknown``): the
    reflection says what the code says where Slang decided (``unorm``/``snorm`` texels)."""
    if Target.SpirV not in outputs:
        return {}
    resources = read_spirv_shared(outputs[Target.SpirV]).resources
    return {
        name: found[0].format
        for name, found in resources.items()
        if found and found[0].format not in (None, "unknown")
    }


def _read_by_entries(src: SourceSet, outputs: dict[Target, bytes]) -> set[str] | None:
    found = _used_names(src, outputs)
    return None if found is None else found[1]


def _in_code(name: str, outputs: dict[Target, bytes]) -> bool:
    """Whether any target's code names ``name`` (as declared, or with Slang's ``_<n>``)."""
    word = re.compile(rf"\b{emitted_pattern(name)}\b".encode())
    return any(word.search(code) for code in outputs.values())


# Slang's categories of a resource (one oneshader has no kind for is OS1007, not OS1004)
_RESOURCE_CATEGORIES = frozenset(
    {Category.SHADER_RESOURCE, Category.UNORDERED_ACCESS, Category.SAMPLER, Category.OTHER}
)


def _declarations(src: SourceSet, facts: TargetFacts) -> dict[str, Declaration]:
    """The source's declarations by name, with DXC's ``$Globals`` where the shader has loose
    uniforms."""
    decls = src.declarations()
    globals_decl = _globals_declaration(facts, decls)
    if globals_decl is not None:
        decls[GLOBALS] = globals_decl
    return decls


def _globals_declaration(facts: TargetFacts, decls: dict[str, Declaration]) -> Declaration | None:
    """DXC's ``$Globals`` as if declared at its first loose uniform (where DXC creates it, so
    it takes its binding in that place of the declaration order): a cbuffer with no register,
    written as nothing (``hlsl`` "")."""
    block = next((p for p in facts.params if p.name == GLOBALS), None)
    if block is None or block.layout is None:
        return None
    first = next((decls[m.name] for m in block.layout.members if m.name in decls), None)
    if first is None:
        return None
    return Declaration(GLOBALS, "cbuffer", "", first.file, first.line, first.column)


def _resource(
    src: SourceSet,
    decl: Declaration,
    per: dict[Target, ParamFacts],
    problems: Collector,
    placement: Placement,
    msl_index: dict[str, tuple[str, int]],
    msl_vectors: dict[str, list[MetalVector]],
    msl_arrays: MetalArrays,
    emitted_format: str | None = None,
) -> Resource:
    """``emitted_format``: the storage-image format Slang wrote into the SPIR-V itself."""
    rtype, kind = RTYPES.get(decl.base, (None, None))
    if rtype is None or kind is None:
        problems.add(
            src.at_decl(
                decl,
                f"'{decl.name}': unsupported resource type '{decl.type_text or decl.base}'",
                Code.UNKNOWN_RESOURCE_TYPE,
            )
        )
        return Resource(decl.name, ResourceKind.ShaderResource, ResourceTypeKind.Texture2D)
    layout = (
        one_layout(src, decl, per, problems, rtype in BLOCK_TYPES, msl_vectors, msl_arrays)
        if rtype not in TEXTURE_TYPES | SUBPASS_INPUT_TYPES
        else next((per[t].layout for t in Target if t in per), None)
    )
    attachment = None
    if rtype in SUBPASS_INPUT_TYPES:
        index = decl.attribute("vk::input_attachment_index")
        if index is None or not index.args or not index.args[0].isdigit():
            problems.add(
                src.at_decl(
                    decl,
                    f"'{decl.name}': a {decl.base} needs [[vk::input_attachment_index(i)]], "
                    "the input attachment of the subpass it reads",
                    Code.SUBPASS_INPUT,
                )
            )
        else:
            attachment = int(index.args[0])
        layout = _declared_texel(decl, layout)
    slots: list[Slot] = []
    counters: list[Slot] = []
    for t in Target:
        p = per.get(t)
        if p is None:
            continue
        if t is Target.Msl:
            slots.append(Slot(t, 0, msl_index[decl.name][1]))
            if decl.name in placement.counters:  # (a user's own X_counter is no counter)
                counters.append(Slot(t, 0, msl_index[counter_name(decl.name)][1]))
        else:
            dset, binding = placement.bindings[decl.name]
            slots.append(Slot(t, dset, binding))
            if decl.name in placement.counters:
                cset, cbinding = placement.counters[decl.name]
                counters.append(Slot(t, cset, cbinding))
    if decl.dimensions > 1 and Target.SpirV in per:
        problems.add(
            src.at_decl(
                decl,
                f"SPIR-V: '{decl.name}' is an array of arrays of resources, which Vulkan cannot "
                f"bind (only one-dimensional arrays); declare it {decl.name}[{decl.array}] and "
                "index it [i * M + j], or build without the spirv target",
                Code.RESOURCE_ARRAY,
            )
        )
    count = next(iter(per.values())).count
    if decl.array is not None:
        # Metal takes sized arrays of textures and samplers as arguments (array<texture2d<T>,
        # N> [[texture(n)]], N indices from n; patch/msl.py gives Slang's the index), arrays of
        # buffers only in argument buffers. WGSL has no arrays of resources (binding_array is
        # a native-only extension; Slang's array<texture_2d<f32>, N> is not WGSL, and its
        # var<uniform> X : array<T, N> is one buffer, not N).
        why = []
        if Target.Msl in per and (rtype not in TEXTURE_TYPES | SAMPLER_TYPES or not count):
            why.append(
                "Metal takes arrays of buffers only in argument buffers, which Slang does not emit"
                if count
                else "Metal needs a size for an array of textures or samplers"
            )
        if Target.Wgsl in per:
            why.append(
                "WGSL has no arrays of resources (binding_array is a native-only extension; "
                "Slang writes an array of constant buffers as one buffer holding an array)"
            )
        if why:
            problems.add(
                src.at_decl(
                    decl,
                    f"arrays of resources ('{decl.name}'): {'; '.join(why)}; use separate "
                    "declarations (or a texture array type such as Texture2DArray), or build "
                    "for spirv only",
                    Code.RESOURCE_ARRAY,
                )
            )
    fmt_attr = decl.attribute("vk::image_format")
    fmt = fmt_attr.args[0] if fmt_attr and fmt_attr.args else None
    if fmt_attr is not None and fmt == "unknown" and Target.Wgsl in per:
        problems.add(
            src.error_in(
                decl.file,
                fmt_attr.line,
                fmt_attr.column,
                f"WGSL: [[vk::image_format(\"unknown\")]] on '{decl.name}': a WGSL storage texture "
                "always has a texel format (Slang writes the one its texel type gives); drop "
                "the attribute or name a format, or build without the wgsl target",
                Code.NOT_ON_TARGET,
            )
        )
    if fmt is None and emitted_format is not None:
        fmt = emitted_format  # Slang's own choice (RWTexture2D<unorm float>: r8): the code's
    if fmt is None and rtype.name.startswith("RWTexture") and layout is not None:
        # As DXC: the storage format follows the texel type (float4 -> rgba32f, uint ->
        # r32ui); Slang's WGSL does the same, its SPIR-V is patched to say it too.
        components = layout.rows if layout.kind is TypeKind.Vector else 1
        fmt = _INFERRED_FORMATS.get((layout.scalar, components))
    return Resource(
        name=decl.name,
        kind=kind,
        rtype=rtype,
        count=count,
        hlsl=decl.type_text,
        format=fmt,
        attachment=attachment,
        slots=tuple(slots),
        counters=tuple(counters),
        layout=layout,
    )


def _declared_texel(decl: Declaration, layout: TypeLayout | None) -> TypeLayout | None:
    """A subpass input's texel type as declared (``SubpassInput<float>``: a float), where the
    source handed to Slang reads four components (``rewrite.subpass_edits``)."""
    m = re.search(r"<\s*[A-Za-z_]+?(?:16_t|32_t)?([123]?)\s*>", decl.type_text)
    if m is None or layout is None or layout.kind is not TypeKind.Vector:
        return layout
    n = int(m.group(1) or 1)
    if n == 1:
        return TypeLayout(TypeKind.Scalar, layout.scalar, size=4, align=4)
    return TypeLayout(TypeKind.Vector, layout.scalar, rows=n, size=4 * n, align=8 if n == 2 else 16)


# A spec constant's declaration in Metal and in WGSL (the code's name, which the constant's
# own is matched against: a pattern compiled per name cost more than the search).
_MSL_SPEC = re.compile(r"constant\s+\w+\s+(\w+)\s*\[\[function_constant\((\d+)\)\]\]")
_WGSL_SPEC = re.compile(r"@id\((\d+)\)\s*override\s+(\w+)")


def _spec(
    decl: Declaration, per: dict[Target, ParamFacts], outputs: dict[Target, bytes]
) -> SpecConstant:
    """A slot per target whose code declares the constant (Slang drops one no entry point
    reads from every target's code): the reflection says only what the code has."""
    p0 = next(per[t] for t in Target if t in per)
    scalar = p0.scalar or ScalarKind.Int
    attr = decl.attribute("vk::constant_id")
    cid = int(attr.args[0]) if attr and attr.args and attr.args[0].isdigit() else p0.binding
    default = (
        p0.default_bits if p0.default_bits is not None else _literal_bits(decl.initializer, scalar)
    )
    slots: list[SpecSlot] = []
    for t in Target:
        if t not in per:
            continue
        if t is Target.SpirV:
            declared = read_spirv_shared(outputs[t]).spec_constants.values()
            if any(e.index == cid for e in declared):
                slots.append(SpecSlot(t, cid, decl.name))
            continue
        named = emitted_regex(decl.name)
        if t is Target.Msl:
            found = next(
                (
                    (m.group(1), int(m.group(2)))
                    for m in _MSL_SPEC.finditer(outputs[t].decode())
                    if named.fullmatch(m.group(1).removeprefix("fc_"))
                    or named.fullmatch(m.group(1))
                ),
                None,
            )
        else:
            found = next(
                (
                    (m.group(2), int(m.group(1)))
                    for m in _WGSL_SPEC.finditer(outputs[t].decode())
                    if named.fullmatch(m.group(2))
                ),
                None,
            )
        if found is not None:
            slots.append(SpecSlot(t, found[1], found[0]))
    return SpecConstant(decl.name, cid, scalar, default, tuple(slots))


def _used_names(src: SourceSet, outputs: dict[Target, bytes]) -> tuple[Target, set[str]] | None:
    """The target whose slots judge a clash and the resources some entry point of its code
    reads; None where the code cannot say (Metal passes every resource to every entry point)."""
    if Target.SpirV in outputs:
        target, entries = Target.SpirV, read_spirv_shared(outputs[Target.SpirV]).entries.values()
    elif Target.Wgsl in outputs:  # the same slots (the sampler of a pair moves later)
        from oneshader.compiler.emitted.wgsl import read_wgsl_shared

        target, entries = Target.Wgsl, read_wgsl_shared(outputs[Target.Wgsl]).entries.values()
    else:
        return None
    if any(e.uses is None for e in entries):
        return None
    back = {new: old for old, new in src.renamed_blocks().items()}
    return target, {back.get(n, n) for e in entries for n in e.uses or ()}


def _drop_unused_on_taken_slots(
    src: SourceSet,
    resources: list[Resource],
    decls: dict[str, Declaration],
    outputs: dict[Target, bytes],
    problems: Collector,
) -> list[Resource]:
    """A resource no entry point reads, on the set and binding of another, is left out of
    the reflection with a warning (DXC warns and its optimiser drops it; Slang drops it from
    the code): real code declares textures it no longer samples on a binding that a later
    ``[[vk::binding]]`` took. Read by any entry point, the pair stays ``OS3001``."""
    found_uses = _used_names(src, outputs)
    if found_uses is None:
        return resources
    target, used = found_uses
    dropped: list[tuple[Resource, Resource]] = []
    gone: set[str] = set()
    while True:  # a texture and its sampler both unused on a buffer's slot go one by one
        kept = [r for r in resources if r.name not in gone]
        found = _unused_on_taken_slot(kept, used, target)
        if found is None:
            break
        dropped.append(found)
        gone.add(found[0].name)
    problems.extend(
        replace(
            src.at_decl(
                decls[u.name],
                f"'{u.name}' shares its set and binding with '{o.name}' (line "
                f"{decls[o.name].line}) and no entry point reads it: left out of the "
                "reflection (as DXC's optimiser drops it); give it another register or "
                "[[vk::binding]] to keep it",
                Code.UNUSED_ON_TAKEN_SLOT,
            ),
            severity=Severity.WARNING,
        )
        for u, o in dropped
        if o.name not in gone
    )
    return [r for r in resources if r.name not in gone]


def _unused_on_taken_slot(
    resources: list[Resource], used: set[str], target: Target
) -> tuple[Resource, Resource] | None:
    """The first (unused resource, the resource on its slot of ``target``) that is not DXC's
    texture/sampler pair, where one of the two is read by no entry point."""
    taken: dict[tuple[int, int], Resource] = {}
    for r in resources:
        for s in (x for x in (*r.slots, *r.counters) if x.target is target):
            other = taken.setdefault((s.set, s.binding), r)
            pair = (other.rtype in TEXTURE_TYPES and r.rtype in SAMPLER_TYPES) or (
                other.rtype in SAMPLER_TYPES and r.rtype in TEXTURE_TYPES
            )
            if other is r or pair:  # DXC's t1/s1 pair: one combined image sampler
                continue
            for unused, kept in ((r, other), (other, r)):
                if unused.name not in used and "." not in unused.name:
                    return unused, kept
    return None


def _check_bindings(
    src: SourceSet,
    resources: list[Resource],
    decls: dict[str, Declaration],
    msl_index: dict[str, tuple[str, int]],
    problems: Collector,
) -> list[Resource]:
    """Two resources on one slot are an error (those of the first target that has any, added to
    ``problems``), except a texture and a sampler on one SPIR-V
    binding (Vulkan's combined image sampler, DXC's t1/s1 pattern); WGSL gives the sampler
    of such a pair the next free binding of its group (docs/compiler.md)."""
    wgsl_moves: dict[str, int] = {}
    for target in Target:
        taken: dict[tuple[str, int, int], Resource] = {}
        for r in resources:
            for s in (
                *(x for x in r.slots if x.target is target),
                *(x for x in r.counters if x.target is target),
            ):
                cls = msl_index.get(r.name, ("buffer", 0))[0] if target is Target.Msl else ""
                key = (cls, s.set, s.binding)
                other = taken.get(key)
                if other is None:
                    taken[key] = r
                    continue
                pair = (other.rtype in TEXTURE_TYPES and r.rtype in SAMPLER_TYPES) or (
                    other.rtype in SAMPLER_TYPES and r.rtype in TEXTURE_TYPES
                )
                if pair and target is Target.SpirV:
                    continue
                if pair and target is Target.Wgsl:
                    sampler = r if r.rtype in SAMPLER_TYPES else other
                    wgsl_moves[sampler.name] = s.set
                    continue
                where = (
                    f"set {s.set}, binding {s.binding}"
                    if target is not Target.Msl
                    else f"[[{cls}({s.binding})]]"
                )
                problems.add(
                    src.at_decl(
                        decls[r.name],
                        f"{TARGET_NAMES[target]}: '{r.name}' and '{other.name}' "
                        f"(line {decls[other.name].line}) are both bound to {where}; "
                        "give one of them another register or [[vk::binding]], or shift a "
                        "register class apart (-fvk-b-shift/-fvk-t-shift/... on the command "
                        "line, b-shift/t-shift/... in [tool.oneshader] of pyproject.toml)",
                        Code.SLOT_CLASH,
                    )
                )
        if problems.failed:
            return resources
    if not wgsl_moves:
        return resources
    used: dict[int, int] = {}
    for r in resources:
        for s in (*r.slots, *r.counters):
            if s.target is Target.Wgsl:
                used[s.set] = max(used.get(s.set, -1), s.binding)
    out = []
    for r in resources:
        if r.name in wgsl_moves:
            group = wgsl_moves[r.name]
            used[group] += 1
            r = replace(
                r,
                slots=tuple(
                    Slot(s.target, s.set, used[group]) if s.target is Target.Wgsl else s
                    for s in r.slots
                ),
            )
        out.append(r)
    return out


def _place_pushes(
    pushes: list[PushBlock],
    params: dict[Target, dict[str, ParamFacts]],
    resources: list[Resource],
    msl_index: dict[str, tuple[str, int]],
) -> list[PushBlock]:
    """Metal: the [[buffer(n)]] Slang gave; WGSL: a uniform in the group after the last one
    the resources use, at binding 0, 1, ... in declaration order."""
    if not pushes:
        return pushes
    group = 1 + max(
        (s.set for r in resources for s in r.slots if s.target is Target.Wgsl), default=-1
    )
    out = []
    for i, p in enumerate(pushes):
        slots: list[Slot] = []
        if p.name in msl_index:
            slots.append(Slot(Target.Msl, 0, msl_index[p.name][1]))
        if Target.Wgsl in params:
            slots.append(Slot(Target.Wgsl, group, i))
        out.append(replace(p, slots=tuple(slots)))
    return out


def _metal_indices(facts: TargetFacts, names: set[str]) -> dict[str, tuple[str, int]]:
    """Metal's argument indices: buffers (cbuffers, structured and byte-address buffers, push
    blocks), textures (RW too) and samplers each numbered from 0 in declaration order, whatever
    registers say (Slang would put b0, t0 and u0 all on [[buffer(0)]])."""
    counts: dict[str, int] = {}
    out: dict[str, tuple[str, int]] = {}
    for p in facts.params:
        if p.name not in names or p.category is Category.SPEC_CONSTANT:
            continue
        cls = "buffer" if p.category is Category.PUSH_CONSTANT else _MSL_CLASS.get(p.category)
        if cls is None:
            continue
        out[p.name] = (cls, counts.get(cls, 0))
        counts[cls] = counts.get(cls, 0) + max(p.count, 1)  # an array takes one per element
    return out


def _index_metal_counters(msl_index: dict[str, tuple[str, int]], counted: list[str]) -> None:
    """Metal's counter companions (``X_counter``, rewrite.py) take the buffer indices after
    every other buffer, in DXC's counter creation order (append/consume buffers in declaration
    order, then RW structured buffers by first use): adding a counter moves no other index."""
    following = 1 + max((i for cls, i in msl_index.values() if cls == "buffer"), default=-1)
    for name in counted:
        msl_index[counter_name(name)] = ("buffer", following)
        following += 1


def _index_metal_lengths(msl_index: dict[str, tuple[str, int]], facts: TargetFacts) -> None:
    """Metal's companion of buffer lengths (rewrite.py) takes the buffer index after every
    other buffer, counters included: adding it moves no other index."""
    if any(p.name == SLANG_LENGTHS for p in facts.params):
        following = 1 + max((i for cls, i in msl_index.values() if cls == "buffer"), default=-1)
        msl_index[LENGTHS] = ("buffer", following)


def _lengths_resource(measured: list[str], index: int) -> Resource:
    """Metal's companion of buffer lengths: a constant buffer on Metal only, one ``uint`` per
    buffer whose ``GetDimensions`` the code calls, named as the buffer, holding its size in
    bytes (docs/reflection-format.md)."""
    uint = TypeLayout(TypeKind.Scalar, ScalarKind.UInt, size=4, align=4)
    members = tuple(StructMember(n, 4 * i, uint) for i, n in enumerate(measured))
    layout = TypeLayout(
        TypeKind.Struct, name="BufferLengths", size=4 * len(measured), align=4, members=members
    )
    return Resource(
        name=LENGTHS,
        kind=ResourceKind.ConstantBuffer,
        rtype=ResourceTypeKind.ConstantBuffer,
        slots=(Slot(Target.Msl, 0, index),),
        layout=layout,
    )


_MSL_CLASS = {
    Category.CONSTANT_BUFFER: "buffer",
    Category.SHADER_RESOURCE: "texture",
    Category.UNORDERED_ACCESS: "texture",
    Category.SAMPLER: "sampler",
}


def _literal_bits(text: str, scalar: ScalarKind) -> int:
    """A default written in the source (where Slang's reflection gives none); 0 if unreadable.
    A bool is ``true`` or else 0, as Slang reads it."""
    t = text.strip()
    if scalar is ScalarKind.Bool:
        return int(t == "true")
    suffixes = "fFhHlLuU"
    return literal_bits(t, scalar is ScalarKind.Float, suffixes, suffixes) or 0


def with_stages(
    shader: Assembled, entries: list[EntryPoint]
) -> tuple[list[Resource], list[PushBlock]]:
    """Resources and push blocks with the stages of the entry points that use them."""
    stages: dict[str, set[Stage]] = {}
    for e in entries:
        for n in (*e.uses, *e.pushuse):
            stages.setdefault(n, set()).add(e.stage)
    order = list(Stage)
    resources = [
        replace(r, stages=tuple(s for s in order if s in stages.get(r.name, ())))
        for r in shader.resources
    ]
    pushes = [
        replace(p, stages=tuple(s for s in order if s in stages.get(p.name, ())))
        for p in shader.pushes
    ]
    return resources, pushes
