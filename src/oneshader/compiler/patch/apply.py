"""The emitted code made to say what the reflection says: SPIR-V bindings, names and image
formats (``patch.spirv``), WGSL bindings, push-constant uniforms and depth textures, Metal
argument indices and packed vectors, and every target's locations (``patch.wgsl``,
``patch.msl``). Slang's own choices for these are not used (docs/compiler.md "Bindings")."""

from __future__ import annotations

import re
from typing import TypeVar

from oneshader.compiler.emitted.common import (
    GLOBALS,
    SLANG_GLOBALS,
    counter_name,
    emitted_name,
    emitted_pattern,
)
from oneshader.compiler.emitted.spirv import IMAGE_FORMATS
from oneshader.compiler.patch import msl, wgsl
from oneshader.compiler.patch.spirv import (
    rebind,
    relocate,
    set_image_formats,
    with_extended_formats,
    with_flat_integer_inputs,
    with_sample_rate_shading,
    without_format_capabilities,
    without_stray_workgroup_sizes,
)
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.compiler.unify.assemble import Assembled
from oneshader.compiler.unify.metal_arrays import widen_arrays
from oneshader.diagnostics import Code, Collector
from oneshader.reflection.model import (
    TEXTURE_TYPES,
    BuiltIn,
    EntryPoint,
    PushBlock,
    Resource,
    ResourceTypeKind,
    Slot,
    Stage,
    StageVariable,
    Target,
)

_V = TypeVar("_V")


def patch_bindings(
    src: SourceSet, outputs: dict[Target, bytes], shader: Assembled, problems: Collector
) -> tuple[dict[Target, bytes], frozenset[str]]:
    """Every target's code with the reflection's slots, and the textures the WGSL now declares
    as depth textures (a WGSL texture compared and also sampled plainly is an OS1012 error,
    added to ``problems``)."""
    out = dict(outputs)
    depth: frozenset[str] = frozenset()
    if Target.SpirV in out:
        out[Target.SpirV] = _patch_spirv(src, out[Target.SpirV], shader.resources)
    if Target.Wgsl in out:
        out[Target.Wgsl], depth = _patch_wgsl(
            src, out[Target.Wgsl], shader.resources, shader.pushes, problems
        )
    if Target.Msl in out:
        text = msl.renumber_msl(out[Target.Msl].decode(), shader.msl_index)
        text = msl.instance_varyings_msl(text)
        for name, vectors in shader.msl_vectors.items():
            text = msl.metal_vectors(text, emitted_name(name), vectors)
        for name, members in shader.msl_arrays.widened.items():
            text = widen_arrays(text, emitted_name(name), members)
        out[Target.Msl] = text.encode()
    return out, depth


def patch_locations(outputs: dict[Target, bytes], entries: list[EntryPoint]) -> dict[Target, bytes]:
    """Every target's code with the reflection's locations (``entries._locate``)."""
    outputs = dict(outputs)
    for e in entries:
        ins, outs = _first_locations(e.inputs), _first_locations(e.outputs)
        result = _bare_result(e)
        if Target.SpirV in outputs:
            outputs[Target.SpirV] = relocate(outputs[Target.SpirV], e.name, ins, outs)
        if Target.Wgsl in outputs:
            text = wgsl.relocate_wgsl(outputs[Target.Wgsl].decode(), e.name, ins, outs)
            text = wgsl.interpolate_wgsl(text, e.name, e.inputs, e.outputs)
            if result is not None:
                text = wgsl.bare_result_wgsl(text, e.name, result)
            outputs[Target.Wgsl] = text.encode()
        if Target.Msl in outputs:
            text = msl.relocate_msl(outputs[Target.Msl].decode(), e.name, e.stage, ins, outs)
            text = msl.centroid_msl(text, e.name, e.inputs)
            if result is not None:
                text = msl.bare_result_msl(text, e.name, result)
            if e.stage is Stage.Vertex and _bare_varying(e) is not None:
                text = msl.unposition_msl(text, e.name, e.outputs[0])
            clips = {
                v.name
                for v in (*e.inputs, *e.outputs)
                if v.builtin in (BuiltIn.ClipDistance, BuiltIn.CullDistance)
            }
            if clips:
                text = msl.clip_distances_msl(text, e.name, e.stage, clips)
            outputs[Target.Msl] = text.encode()
    if Target.Wgsl in outputs:
        text = wgsl.wrap_stage_interfaces(outputs[Target.Wgsl].decode(), _distances(entries))
        outputs[Target.Wgsl] = text.encode()
    return outputs


def _distances(entries: list[EntryPoint]) -> dict[str, wgsl.Distances]:
    """Per entry point with clip or cull distances: what the WGSL wrapper does with them (the
    checks before refused what it cannot do: a cull distance written, a distance read)."""
    out = {}
    for e in entries:
        written = [v for v in e.outputs if v.builtin is BuiltIn.ClipDistance]
        dropped = {
            v.name for v in e.inputs if v.builtin in (BuiltIn.ClipDistance, BuiltIn.CullDistance)
        }
        if e.stage is Stage.Vertex and written:
            ordered = sorted(written, key=lambda v: v.index)  # DXC's order in the array
            out[e.name] = wgsl.Distances(written=tuple(v.name for v in ordered))
        elif e.stage is Stage.Pixel and dropped:
            out[e.name] = wgsl.Distances(dropped=frozenset(dropped))
    return out


def _first_locations(variables: tuple[StageVariable, ...]) -> dict[str, int]:
    """Each located variable's first location (one that takes several, an array or a
    matrix, is listed once per location: ``entries._per_location``)."""
    out: dict[str, int] = {}
    for v in variables:
        if v.location is not None:
            out.setdefault(v.name, v.location)
    return out


def _patch_spirv(src: SourceSet, code: bytes, resources: list[Resource]) -> bytes:
    wanted: dict[str, tuple[int, int]] = {}
    for r in resources:
        for s in r.slots:
            if s.target is Target.SpirV:
                wanted[r.name] = wanted[f"{r.name}.elements"] = (s.set, s.binding)
                if r.name == GLOBALS:
                    wanted[SLANG_GLOBALS] = (s.set, s.binding)
        for s in r.counters:
            if s.target is Target.SpirV:
                wanted[f"{r.name}.counter"] = wanted[counter_name(r.name)] = (s.set, s.binding)
    renames = {counter_name(n): f"{n}.counter" for n in src.counted_rw()}
    renames[SLANG_GLOBALS] = GLOBALS  # DXC's name; SPIR-V names may hold any character
    for old, new in src.renamed_blocks().items():  # the names Slang was given, back
        renames[new] = old
        for layout in ("", "_std140", "_std430"):
            renames[f"SLANG_ParameterGroup_{new}{layout}"] = f"SLANG_ParameterGroup_{old}{layout}"
    code = rebind(code, wanted, renames)
    formats = {
        r.name: IMAGE_FORMATS.index(r.format) for r in resources if r.format in IMAGE_FORMATS
    }
    code = without_format_capabilities(set_image_formats(code, formats))
    code = with_sample_rate_shading(code)
    return without_stray_workgroup_sizes(with_flat_integer_inputs(with_extended_formats(code)))


def _patch_wgsl(
    src: SourceSet,
    code: bytes,
    resources: list[Resource],
    pushes: list[PushBlock],
    problems: Collector,
) -> tuple[bytes, frozenset[str]]:
    text = code.decode()
    for p in pushes:
        push_slot = next(s for s in p.slots if s.target is Target.Wgsl)
        text = re.sub(
            rf"(?m)^(\s*)var<uniform>\s+({emitted_pattern(p.name)})\s*:",
            rf"\1@binding({push_slot.binding}) @group({push_slot.set}) var<uniform> \2 :",
            text,
        )
    text, depth = _wgsl_depth_textures(src, text, resources, problems)
    text = wgsl.unsigned_lane_indices(text)
    # Slang declares a tbuffer var<uniform>, with a storage buffer's layout (which the uniform
    # address space may refuse); it is read-only storage, as its bindings say.
    tbuffers = {
        emitted_name(r.name): True for r in resources if r.rtype is ResourceTypeKind.TextureBuffer
    }
    text = _TBUFFER_VAR.sub(
        lambda m: "var<storage, read>" + m.group(1) if _named(tbuffers, m.group(2)) else m[0],
        text,
    )
    slots: dict[str, Slot] = {}  # by emitted name; a later resource's wins, as it came later
    for r in resources:
        slot = next((s for s in r.slots if s.target is Target.Wgsl), None)
        if slot is None:
            continue
        slots.pop(emitted_name(r.name), None)
        slots[emitted_name(r.name)] = slot
        counter = next((s for s in r.counters if s.target is Target.Wgsl), None)
        if counter is not None:  # the companion X_counter of rewrite.py
            slots.pop(counter_name(r.name), None)
            slots[counter_name(r.name)] = counter
    return _rebind_wgsl(text, slots).encode(), depth


_TBUFFER_VAR = re.compile(r"var<uniform>(\s+(\w+)\s*:)")
_BOUND_VAR = re.compile(r"@binding\(\d+\)\s*@group\(\d+\)(\s*var(?:<[^>]*>)?\s+(\w+)\s*:)")
_TEXTURE_VAR = re.compile(r"(var\s+(\w+)\s*:\s*)(texture_\w+)<f32>")
_MANGLED = re.compile(r"(\w+)_\d+")


def _names(emitted: str) -> tuple[str, ...]:
    """The names an emitted WGSL variable may stand for: itself, or without Slang's ``_<n>``
    (what :func:`emitted_pattern` matches, the other way round)."""
    m = _MANGLED.fullmatch(emitted)
    return (emitted, m.group(1)) if m else (emitted,)


def _named(table: dict[str, _V], emitted: str) -> _V | None:
    """The entry of ``table`` for an emitted name: its own first (``rw_img_mip_5`` is a
    resource's own name where the table has it, not Slang's suffix of ``rw_img_mip``), else
    (in insertion order: the last one wins) what it may stand for."""
    if emitted in table:
        return table[emitted]
    found = [name for name in _names(emitted) if name in table]
    if not found:
        return None
    order = list(table) if len(found) > 1 else found
    return table[max(found, key=order.index)]


def _rebind_wgsl(text: str, slots: dict[str, Slot]) -> str:
    """Each WGSL variable named in ``slots`` (or Slang's ``name_<n>``) given its slot as binding
    and group: one pass over the code (a pass per resource cost the square of their number)."""

    def rebind(m: re.Match[str]) -> str:
        slot = _named(slots, m.group(2))
        if slot is None:
            return m.group(0)
        return f"@binding({slot.binding}) @group({slot.set}){m.group(1)}"

    return _BOUND_VAR.sub(rebind, text)


def _wgsl_depth_textures(
    src: SourceSet, text: str, resources: list[Resource], problems: Collector
) -> tuple[str, frozenset[str]]:
    """A texture sampled only with a comparison sampler becomes a WGSL depth texture (WGSL
    compares depth textures only; Slang declares ``texture_2d<f32>``), and so does each
    function parameter it is passed to that is itself only compared or passed on
    (``wgsl.texture_flow``). A texture compared and also sampled plainly cannot be expressed:
    an error at its declaration."""
    decls = src.declarations()
    declared: dict[str, list[re.Match[str]]] = {}  # by the names each may stand for
    for m in _TEXTURE_VAR.finditer(text):
        for name in _names(m.group(2)):
            declared.setdefault(name, []).append(m)
    chosen: list[tuple[Resource, re.Match[str]]] = []
    taken: set[int] = set()  # declarations already given to a resource
    for r in resources:
        if r.rtype not in TEXTURE_TYPES:
            continue
        free = (m for m in declared.get(emitted_name(r.name), ()) if m.start() not in taken)
        decl = next(free, None)
        if decl is None or decl.group(3) not in wgsl.DEPTH_TEXTURES:
            continue
        taken.add(decl.start())
        chosen.append((r, decl))
    if not chosen:
        return text, frozenset()
    flow = wgsl.texture_flow(text, [d.group(2) for _, d in chosen])
    edits: list[tuple[int, int, str]] = []
    depth_names: set[str] = set()
    for r, decl in chosen:
        name = decl.group(2)
        if name not in flow.compared:
            continue
        if name not in flow.depth:
            problems.add(
                src.at_decl(
                    decls[r.name],
                    f"WGSL: '{r.name}' is sampled both with a comparison sampler and "
                    "without (or passed where another texture is sampled); WGSL compares "
                    "depth textures only, which cannot be sampled as colour: use two "
                    "texture declarations",
                    Code.COMPARED_AND_SAMPLED,
                )
            )
            continue
        edits.append((decl.start(3), decl.end(), wgsl.DEPTH_TEXTURES[decl.group(3)]))
        depth_names.add(r.name)
    for param, (start, end) in flow.params.items():
        if param in flow.depth:
            kind = text[start:end].removesuffix("<f32>")
            edits.append((start, end, wgsl.DEPTH_TEXTURES[kind]))
    out, last = [], 0
    for start, end, depth in sorted(edits):
        out += [text[last:start], depth]
        last = end
    out.append(text[last:])
    return "".join(out), frozenset(depth_names)


_WORD = re.compile(r"\w+")


def _bare_result(e: EntryPoint) -> StageVariable | None:
    """The output of a pixel entry point that returns a bare value (``float4 main() :
    SV_Target1``, ``float main() : SV_Depth``): Slang's WGSL and Metal give it location 0
    whatever its semantic (``wgsl.bare_result_wgsl``, ``msl.bare_result_msl``)."""
    if e.stage is Stage.Pixel and len(e.outputs) == 1 and e.outputs[0].name == "result":
        return e.outputs[0]
    return None


def _bare_varying(e: EntryPoint) -> StageVariable | None:
    """The one output of a vertex entry point that writes no position but a single varying
    (then Slang's Metal may have made it the position, ``msl.unposition_msl``)."""
    if len(e.outputs) == 1 and e.outputs[0].builtin is BuiltIn.None_:
        return e.outputs[0]
    return None
