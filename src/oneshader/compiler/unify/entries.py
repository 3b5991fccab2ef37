"""The reflection's entry points: stage, stage variables (semantics, built-ins, interpolation),
DXC's locations, the packed vertex layout, and what each entry point uses (resources, push
blocks, spec constants) and needs (device features), read from the emitted code."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace

from oneshader.compiler.emitted.common import (
    LENGTHS,
    EmittedEntry,
    counter_name,
    demangle,
    emitted_name,
    emitted_pattern,
    emitted_regex,
    resource_name,
)
from oneshader.compiler.emitted.msl import unattributed_inputs_read
from oneshader.compiler.emitted.wgsl import parse_wgsl, reached_identifiers
from oneshader.compiler.slang.facts import EntryFacts, VarFacts
from oneshader.compiler.slang.request import CompiledTarget
from oneshader.compiler.source import rewrite
from oneshader.compiler.source.precheck import returned_outputs
from oneshader.compiler.source.scanner import Field, StructDef
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Code, Collector, Diagnostic, Severity
from oneshader.reflection.linking import interpolation, stage_mismatches
from oneshader.reflection.model import (
    BuiltIn,
    DeviceFeatures,
    EntryPoint,
    Interpolation,
    PushBlock,
    Resource,
    ScalarKind,
    SpecConstant,
    Stage,
    StageVariable,
    Target,
    VertexFormat,
)
from oneshader.reflection.spelling import describe_variable

_BUILTINS = {
    "SV_POSITION": BuiltIn.Position,
    "SV_VERTEXID": BuiltIn.VertexId,
    "SV_INSTANCEID": BuiltIn.InstanceId,
    "SV_ISFRONTFACE": BuiltIn.FrontFacing,
    "SV_SAMPLEINDEX": BuiltIn.SampleIndex,
    "SV_COVERAGE": BuiltIn.SampleMask,
    "SV_DEPTH": BuiltIn.Depth,
    # conservative depth: the same output, with a promise the code's execution mode states
    "SV_DEPTHGREATEREQUAL": BuiltIn.Depth,
    "SV_DEPTHLESSEQUAL": BuiltIn.Depth,
    "SV_PRIMITIVEID": BuiltIn.PrimitiveId,
    "SV_CLIPDISTANCE": BuiltIn.ClipDistance,
    "SV_CULLDISTANCE": BuiltIn.CullDistance,
    "SV_DISPATCHTHREADID": BuiltIn.DispatchThreadId,
    "SV_GROUPID": BuiltIn.GroupId,
    "SV_GROUPTHREADID": BuiltIn.GroupThreadId,
    "SV_GROUPINDEX": BuiltIn.GroupIndex,
    "SV_POINTSIZE": BuiltIn.PointSize,
    "SV_STARTVERTEXLOCATION": BuiltIn.BaseVertex,
    "SV_STARTINSTANCELOCATION": BuiltIn.BaseInstance,
    "SV_DRAWINDEX": BuiltIn.DrawIndex,
}

_DISTANCES = {
    name.upper(): name for name in rewrite.DISTANCE_MARKERS
}  # SV_CLIPDISTANCE: its spelling
MAX_CLIP_DISTANCES = 8  # WebGPU's clip_distances holds at most 8


_INTERP = {
    "nointerpolation": Interpolation.Flat,
    "noperspective": Interpolation.NoPerspective,
    "centroid": Interpolation.Centroid,
    "sample": Interpolation.Sample,
    "linear": Interpolation.Linear,
}

_VERTEX_FORMATS: dict[tuple[ScalarKind, int], VertexFormat] = {
    (ScalarKind.Float, 1): VertexFormat.Float32,
    (ScalarKind.Float, 2): VertexFormat.Float32x2,
    (ScalarKind.Float, 3): VertexFormat.Float32x3,
    (ScalarKind.Float, 4): VertexFormat.Float32x4,
    (ScalarKind.UInt, 1): VertexFormat.Uint32,
    (ScalarKind.UInt, 2): VertexFormat.Uint32x2,
    (ScalarKind.UInt, 3): VertexFormat.Uint32x3,
    (ScalarKind.UInt, 4): VertexFormat.Uint32x4,
    (ScalarKind.Int, 1): VertexFormat.Sint32,
    (ScalarKind.Int, 2): VertexFormat.Sint32x2,
    (ScalarKind.Int, 3): VertexFormat.Sint32x3,
    (ScalarKind.Int, 4): VertexFormat.Sint32x4,
    (ScalarKind.Float16, 1): VertexFormat.Float16,
    (ScalarKind.Float16, 2): VertexFormat.Float16x2,
    (ScalarKind.Float16, 4): VertexFormat.Float16x4,
    (ScalarKind.UInt16, 1): VertexFormat.Uint16,
    (ScalarKind.UInt16, 2): VertexFormat.Uint16x2,
    (ScalarKind.UInt16, 4): VertexFormat.Uint16x4,
    (ScalarKind.Int16, 1): VertexFormat.Sint16,
    (ScalarKind.Int16, 2): VertexFormat.Sint16x2,
    (ScalarKind.Int16, 4): VertexFormat.Sint16x4,
}


def check_entries(src: SourceSet, primary: CompiledTarget, problems: Collector) -> None:
    """There is at least one entry point (that those the options name are defined is
    ``source.precheck``'s OS1005, and Slang's own error behind it)."""
    if not primary.facts.entries:
        message = (
            'no entry points: mark functions with [shader("vertex"|"pixel"|"compute")] '
            "or give them in the options"
        )
        problems.add(Diagnostic(src.name, 0, 0, Severity.ERROR, message, Code.NO_ENTRY_POINTS))


def check_vertex_positions(
    src: SourceSet, compiled: list[CompiledTarget], problems: Collector
) -> None:
    """WGSL's vertex stage feeds the rasterizer only (WebGPU has no tessellation or geometry
    stage), so a vertex shader must write the position; one that writes none (it feeds such a
    stage) would be WGSL that naga rejects. An error at the entry point's name, added to
    ``problems``."""
    wgsl = next((t for t in compiled if t.target is Target.Wgsl), None)
    if wgsl is None:
        return
    # Read from the outputs' semantics, not the WGSL: where none is SV_Position, Slang's WGSL
    # makes the first output the position (a float, which naga refuses).
    for e in wgsl.facts.entries:
        if e.stage is not Stage.Vertex or any(
            v.semantic.upper() == "SV_POSITION" for v in e.outputs
        ):
            continue
        where = src.function_file(e.name)
        fn = src.function(e.name)
        problems.add(
            src.error_in(
                where,
                fn.line if fn else 0,
                fn.column if fn else 0,
                f"WGSL: vertex entry point '{e.name}' writes no SV_Position: WebGPU has no "
                "tessellation or geometry stage for it to feed, and its rasterizer needs the "
                "position; write one, or build without the wgsl target",
                Code.VERTEX_WITHOUT_POSITION,
            )
        )


def check_distances(src: SourceSet, compiled: list[CompiledTarget], problems: Collector) -> None:
    """Clip and cull distances SPIR-V and Metal cannot express as Slang writes them (WGSL's are
    ``check_wgsl_interfaces``'), each an error at its declaration (once, where stages share
    it), added to ``problems``."""
    seen: set[tuple[str, int, int]] = set()
    for t in compiled:
        if t.target is Target.Wgsl:
            continue
        for e in t.facts.entries:
            for v, message in _distance_limits(src, t, e):
                where = _declared_at(src, e, v)
                if where not in seen:
                    seen.add(where)
                    problems.add(src.error(*where, message, Code.NOT_ON_TARGET))


def _distance_limits(
    src: SourceSet, t: CompiledTarget, e: EntryFacts
) -> list[tuple[VarFacts, str]]:
    """SPIR-V: distances under several semantic indices on one side of an entry point (Slang
    declares one built-in per index, which Vulkan refuses: spirv-val's
    VUID-StandaloneSpirv-OpEntryPoint-09659; DXC packs them into one array). Metal: Slang gives
    a clip distance ``[[clip_distance]]`` only as one float output (``patch.msl``), and a pixel
    input none, which is left out unless the function reads it."""
    out = []
    for side in (e.inputs, e.outputs):
        for upper, spelled in _DISTANCES.items():
            found = [v for v in side if v.semantic.upper() == upper]
            later = [v for v in found if v.semantic_index != found[0].semantic_index]
            if t.target is Target.SpirV and later:
                first, v = found[0], later[0]
                out.append(
                    (
                        v,
                        f"SPIR-V: '{v.name}' : {spelled}{v.semantic_index} and '{first.name}' "
                        f": {spelled}{first.semantic_index}: Slang declares one built-in per "
                        "semantic index, which Vulkan refuses "
                        "(VUID-StandaloneSpirv-OpEntryPoint-09659); declare them as one array "
                        f"(float d[N] : {spelled}0), or build without the spirv target",
                    )
                )
    if t.target is not Target.Msl:
        return out
    distances = any(v.semantic.upper() in _DISTANCES for v in e.inputs)
    # (the code is read only where an input is a distance: most entry points have none)
    pixel = distances and e.stage is Stage.Pixel
    read = unattributed_inputs_read(t.code, e.name) if pixel else set()
    for v in e.inputs:
        if v.semantic.upper() in _DISTANCES and v.name in read:
            what = f"'{v.name}' : {_DISTANCES[v.semantic.upper()]}{v.semantic_index}"
            out.append(
                (
                    v,
                    f"Metal: {what}: a fragment function cannot read clip or cull "
                    "distances; pass the value from the vertex stage as an ordinary varying "
                    "too, or build without the msl target",
                )
            )
    written = [v for v in e.outputs if v.semantic.upper() in _DISTANCES]
    for n, v in enumerate(written):
        what = f"'{v.name}' : {_DISTANCES[v.semantic.upper()]}{v.semantic_index}"
        declared = _declaration(src, e, v)[1]
        if v.semantic.upper() == "SV_CULLDISTANCE":
            why = "Metal has no cull distances; write clip distances instead"
        elif declared is None or declared.array is not None or n > 0:
            why = (
                "oneshader gives Metal's [[clip_distance]] to one float output only (Slang "
                "writes none); write one float : SV_ClipDistance0"
            )
        else:
            continue
        out.append((v, f"Metal: {what}: {why}, or build without the msl target"))
    return out


def _with_lengths(used: set[str], resources: list[Resource]) -> set[str]:
    """Metal's companion of buffer lengths (no SPIR-V or WGSL declares it) is used by the entry
    points that use a buffer whose length it holds (Metal passes every resource to every entry
    point, so its code cannot tell)."""
    lengths = next((r for r in resources if r.name == LENGTHS), None)
    if lengths is None or lengths.layout is None:
        return used
    if any(m.name in used for m in lengths.layout.members):
        return used | {LENGTHS}
    return used


def check_wgsl_interfaces(
    src: SourceSet, compiled: list[CompiledTarget], problems: Collector
) -> None:
    """Stage interfaces Slang writes as WGSL that is not WGSL: an ``out``/``inout`` parameter
    of a vertex or pixel entry point (a pointer parameter, or a built-in written through a
    cast; SPIR-V and Metal build them, the reflection lists them with the outputs), and a
    pixel input WGSL has in the vertex stage only (``SV_InstanceID``): an error at each,
    naming it, added to ``problems``."""
    wgsl = next((t for t in compiled if t.target is Target.Wgsl), None)
    if wgsl is None:
        return
    for e in wgsl.facts.entries:
        fn = src.function(e.name)
        if fn is None or e.stage not in (Stage.Vertex, Stage.Pixel):
            continue
        where = src.function_file(e.name)
        if e.stage is Stage.Pixel:
            problems.extend(_vertex_only_inputs(src, e))
        # a struct shared by entry points is reported once
        problems.extend([d for d in _distances(src, e, wgsl.code) if d not in problems.diagnostics])
        if returned_outputs(src, fn) is not None:
            continue  # returned by a wrapper (rewrite.entry_outputs_as_results)
        for f in fn.fields:
            direction = next((m for m in f.modifiers if m in ("out", "inout")), None)
            if direction is None:
                continue
            semantic = f" : {f.semantic}" if f.semantic else ""
            problems.add(
                src.error_in(
                    where,
                    f.line,
                    f.column,
                    f"WGSL: '{direction}' parameter '{f.name}'{semantic} of entry point "
                    f"'{e.name}': Slang writes no valid WGSL for an entry point's {direction} "
                    "parameters; return the outputs (a struct of them) instead, or build "
                    "without the wgsl target",
                    Code.NOT_ON_TARGET,
                )
            )


def _vertex_only_inputs(src: SourceSet, e: EntryFacts) -> list[Diagnostic]:
    """Pixel inputs WGSL has only in the vertex stage (Slang declares them as the vertex
    built-ins, which naga refuses in a fragment entry point), at each declaration."""
    return [
        src.error(
            *_declared_at(src, e, v),
            f"WGSL: pixel input '{v.name}' : {_VERTEX_ONLY[v.semantic.upper()][0]}: WGSL has "
            f"{_VERTEX_ONLY[v.semantic.upper()][1]} in the vertex stage only; pass it from the "
            "vertex stage as a nointerpolation varying, or build without the wgsl target",
            Code.NOT_ON_TARGET,
        )
        for v in e.inputs
        if v.semantic.upper() in _VERTEX_ONLY
    ]


def _distances(src: SourceSet, e: EntryFacts, code: bytes) -> list[Diagnostic]:
    """Clip and cull distances WGSL cannot express, at each declaration: a cull distance
    written (WebGPU has none), more than 8 clip distances, a distance a pixel shader reads
    (WGSL's fragment stage has no input for them; one it does not read is left out of the
    WGSL) or a vertex input declared with one."""
    ins = [v for v in e.inputs if v.semantic.upper() in _DISTANCES]
    outs = [v for v in e.outputs if v.semantic.upper() in _DISTANCES]
    if not ins and not outs:
        return []
    errors = []

    def error(v: VarFacts, why: str) -> None:
        message = (
            f"WGSL: '{v.name}' : {v.semantic}{v.semantic_index}: {why}; or build without the "
            "wgsl target"
        )
        errors.append(src.error(*_declared_at(src, e, v), message, Code.NOT_ON_TARGET))

    read = _read_inputs(code, e.name) if e.stage is Stage.Pixel and ins else set()
    for v in ins:
        if e.stage is not Stage.Pixel:
            error(
                v,
                "WGSL has clip distances as a vertex output only; pass the value as an "
                "ordinary varying",
            )
        elif v.name in read:
            error(
                v,
                "WGSL's fragment stage cannot read clip or cull distances; pass the value "
                "from the vertex stage as an ordinary varying too",
            )
    floats = 0
    for v in sorted(outs, key=lambda v: v.semantic_index):
        if v.semantic.upper() == "SV_CULLDISTANCE":
            error(
                v,
                "WebGPU has no cull distances; write clip distances instead (a primitive is "
                "clipped where one is negative), or cull in the shader",
            )
            continue
        floats += v.components * v.span
        if floats > MAX_CLIP_DISTANCES:
            error(
                v,
                f"WebGPU has at most {MAX_CLIP_DISTANCES} clip distances, and this one "
                f"takes the count to {floats}",
            )
    return errors


def _read_inputs(code: bytes, entry: str) -> set[str]:
    """The source names of the stage inputs (direct parameters, members of a struct parameter)
    that WGSL entry point ``entry`` reads: Slang's WGSL names them in the code it reaches."""
    parsed = parse_wgsl(code.decode())
    fn = parsed.functions.get(entry)
    if fn is None:
        return set()
    reached = reached_identifiers(code, [entry])[entry]
    names = [m.name for p in fn.params for m in parsed.structs.get(p.type.name, [])]
    names += [p.name for p in fn.params]
    return {demangle(n) for n in names if n in reached}


_VERTEX_ONLY = {
    "SV_INSTANCEID": ("SV_InstanceID", "instance_index"),
    "SV_VERTEXID": ("SV_VertexID", "vertex_index"),
}


def entry_points(src: SourceSet, primary: CompiledTarget, problems: Collector) -> list[EntryPoint]:
    """Every entry point of the primary target: its stage, stage variables and their locations,
    the vertex layout (what it uses is :func:`with_usage`'s, read from the code these
    locations are written into); an entry point in error is left out, its errors added to
    ``problems``."""
    vk_location: dict[tuple[str, bool, str], int] = {}
    out = []
    for e in primary.facts.entries:
        stage = e.stage
        if stage is None:
            message = f"entry point '{e.name}': unsupported stage"
            problems.add(
                Diagnostic(src.name, 0, 0, Severity.ERROR, message, Code.UNSUPPORTED_STAGE)
            )
            continue
        twins = _name_clashes(src, e, e.inputs, True) + _name_clashes(src, e, e.outputs, False)
        if twins:
            problems.extend(twins)
            continue
        inputs = _locate(
            e,
            [_stage_var(src, e, v, stage, True, vk_location) for v in e.inputs],
            True,
            False,
            vk_location,
        )
        outputs_ = _locate(
            e,
            [_stage_var(src, e, v, stage, False, vk_location) for v in e.outputs],
            False,
            stage is Stage.Pixel,
            vk_location,
        )
        clashes = _location_clashes(src, e, inputs, True)
        clashes += _location_clashes(src, e, outputs_, False)
        if clashes:
            problems.extend(clashes)
            continue
        inputs, outputs_ = _per_location(e.inputs, inputs), _per_location(e.outputs, outputs_)
        stride = 0
        formats = _requested_formats(src, e, stage, problems)
        if formats is None:
            continue
        if stage is Stage.Vertex:
            try:
                inputs, stride = _pack_vertex(inputs, formats)
            except _NoVertexFormat as bad:
                problems.add(_no_vertex_format(src, e, bad.variable))
                continue
        out.append(
            EntryPoint(
                name=e.name,
                stage=stage,
                workgroup=e.workgroup,
                stride=stride,
                inputs=tuple(inputs),
                outputs=tuple(outputs_),
            )
        )
    return out


def with_usage(
    entries: list[EntryPoint],
    outputs: dict[Target, bytes],
    usage_outputs: dict[Target, bytes],
    resources: list[Resource],
    pushes: list[PushBlock],
    specs: list[SpecConstant],
) -> list[EntryPoint]:
    """The entry points with what each uses (resources, push blocks, spec constants) and needs
    (device features), read from the emitted ``outputs`` (and, for a Metal-only build,
    ``usage_outputs``: a SPIR-V or WGSL compile that is not written out). ``outputs`` is the
    final code, its locations written (``patch.apply.patch_locations``: they change nothing a
    module touches), which the cross-check reads too: each module is read once."""
    usage = _usage({**outputs, **usage_outputs}, [r.name for r in resources])
    features = _features(outputs)
    resource_names = [r.name for r in resources]
    push_names = [p.name for p in pushes]
    spec_names = [s.name for s in specs]
    spec_reads = _spec_reader(outputs, [e.name for e in entries] if specs else [])
    out = []
    for e in entries:
        used, _ = usage.get(e.name, (None, DeviceFeatures(0)))
        if used is None:
            used = set(resource_names) | set(push_names)
        # WGSL and MSL spell a field of a global struct of resources x_field (emitted_name)
        used |= {n for n in resource_names if emitted_name(n) in used}
        # a buffer whose counter alone is used (X.IncrementCounter()) is used: the host binds
        # the companion X_counter with it (SPIR-V's X.counter is read as X already)
        used |= {r.name for r in resources if r.counters and counter_name(r.name) in used}
        used = _with_lengths(used, resources)
        out.append(
            replace(
                e,
                features=features,
                uses=tuple(n for n in resource_names if n in used),
                pushuse=tuple(n for n in push_names if n in used),
                specuse=tuple(n for n in spec_names if spec_reads(e.name, n)),
            )
        )
    return out


def _declaration(
    src: SourceSet, e: EntryFacts, v: VarFacts
) -> tuple[StructDef | None, Field | None]:
    """The struct (or entry point's parameter list) that declares a stage variable, and its
    member (or parameter); None where the scanner cannot find them."""
    # The wrapper's struct of out parameters (rewrite.entry_outputs_as_results) holds the
    # entry point's parameters.
    member = v.struct_name and v.struct_name != rewrite.outputs_struct(e.name)
    owner = src.struct(v.struct_name) if member else src.function(e.name)
    return owner, owner.field(v.name) if owner else None


def _declared_at(src: SourceSet, e: EntryFacts, v: VarFacts) -> tuple[str, int, int]:
    """Where a stage variable is declared: (file, line, column) of its struct member or
    parameter (the main file, line 0, when the scanner cannot find it)."""
    owner, f = _declaration(src, e, v)
    if f is None or owner is None:
        return src.name, 0, 0
    where = next(
        (
            p
            for p, scanned in src.sources.items()
            if owner in (*scanned.structs.values(), *scanned.functions.values())
        ),
        src.path,
    )
    return src.display(str(where)), f.line, f.column


def _has_attribute(src: SourceSet, e: EntryFacts, v: VarFacts, name: str) -> bool:
    _, f = _declaration(src, e, v)
    return f is not None and any(a.name == name for a in f.attributes)


FORMAT_ATTRIBUTE = "oneshader::format"
_FORMAT_NAMES = ", ".join(f.value for f in VertexFormat if f is not VertexFormat.None_)


def _requested_formats(
    src: SourceSet, e: EntryFacts, stage: Stage, problems: Collector
) -> dict[str, VertexFormat] | None:
    """The vertex formats ``[[oneshader::format("unorm8x4")]]`` asks for, by input name
    (vertex compression: the buffer holds the format, the shader reads its 32-bit type, and
    WebGPU converts on fetch); None after adding errors for a format no input can have."""
    out: dict[str, VertexFormat] = {}
    found = []
    for v, is_input in [*((v, True) for v in e.inputs), *((v, False) for v in e.outputs)]:
        _, f = _declaration(src, e, v)
        attr = next((a for a in f.attributes if a.name == FORMAT_ATTRIBUTE), None) if f else None
        if attr is None:
            continue
        file = _declared_at(src, e, v)[0]
        wanted = attr.args[0].strip('"').lower() if attr.args else ""
        fmt = next((x for x in VertexFormat if x.value == wanted and x.value != "none"), None)
        if stage is not Stage.Vertex or not is_input:
            why = "only a vertex input is fed from a vertex buffer"
        elif fmt is None:
            why = f"unknown vertex format {wanted!r}; WebGPU's are: {_FORMAT_NAMES}"
        elif v.span > 1:
            why = "a matrix or array input takes several locations: give each its own input"
        elif v.scalar is not fmt.shader_scalar:
            reads = {ScalarKind.Float: "float", ScalarKind.UInt: "uint", ScalarKind.Int: "int"}
            why = (
                f"{fmt.value} is read as {reads[fmt.shader_scalar]}, but '{v.name}' is "
                f"{v.scalar.name.lower()}: declare it {reads[fmt.shader_scalar]}"
                f"{v.components if v.components > 1 else ''}"
            )
        else:
            out[v.name] = fmt
            continue
        found.append(
            src.error(
                file,
                attr.line,
                attr.column,
                f"[[{FORMAT_ATTRIBUTE}]] on '{v.name}' of '{e.name}': {why}",
                Code.NO_VERTEX_FORMAT,
            )
        )
    problems.extend(found)
    return None if found else out


def _no_vertex_format(src: SourceSet, e: EntryFacts, v: StageVariable) -> Diagnostic:
    """A vertex input WebGPU has no vertex format for, at its declaration."""
    facts = next(x for x in e.inputs if x.name == v.name)
    spelled = {
        ScalarKind.Float16: "half",
        ScalarKind.Int16: "int16_t",
        ScalarKind.UInt16: "uint16_t",
    }.get(v.scalar, v.scalar.name.lower())
    return src.error(
        *_declared_at(src, e, facts),
        f"vertex input '{v.name}' ({spelled}{v.components if v.components > 1 else ''}) has "
        "no WebGPU vertex format; use 2 or 4 components for 8/16-bit types (or a 32-bit type)",
        Code.NO_VERTEX_FORMAT,
    )


def check_stage_link(
    src: SourceSet, primary: CompiledTarget, entries: list[EntryPoint], problems: Collector
) -> None:
    """In a file with one vertex entry point, every pixel entry point must read what it writes
    (the same location, type and interpolation): WebGPU refuses the pair in
    ``create_render_pipeline``, far from the cause, so the build reports it at the pixel
    input's declaration (OS1016). Files with several vertex entry points are left to the
    bindings' ``check_link``, which checks the pair a program really uses."""
    vertex = [e for e in entries if e.stage is Stage.Vertex]
    if len(vertex) != 1:
        return
    vs = vertex[0]
    facts = {e.name: e for e in primary.facts.entries}
    for ps in (e for e in entries if e.stage is Stage.Pixel):
        for m in stage_mismatches(vs, ps):
            v, out = m.input, m.output
            what = f"pixel input '{v.name}' ({v.semantic}{v.index or ''}, location {v.location})"
            read = describe_variable(v.scalar, v.components)
            if out is None:
                message = f"{what} of {ps.name} is not written by {vs.name}"
            elif not m.types_agree:
                message = (
                    f"{what} of {ps.name} is {read}, but {vs.name} writes "
                    f"{describe_variable(out.scalar, out.components)} '{out.name}' "
                    f"({out.semantic}{out.index or ''}) there"
                )
            else:
                message = (
                    f"{what} of {ps.name} is interpolated {interpolation(v).name}, but "
                    f"{vs.name}'s '{out.name}' is {interpolation(out).name}"
                )
            e = facts[ps.name]
            declared = next(x for x in e.inputs if x.name == v.name)
            problems.add(
                src.error(
                    *_declared_at(src, e, declared),
                    message + "; WebGPU wants the same type and interpolation on both sides",
                    Code.STAGE_LINK,
                )
            )


def _per_location(facts: list[VarFacts], variables: list[StageVariable]) -> list[StageVariable]:
    """A stage variable that takes several locations (an array, a matrix: one per column) as
    one variable per location, each with the vector it holds there (``float4x4 m : M`` is four
    float4 at four locations, all named ``m``): what a host's vertex layout lists, and what
    WGSL, which passes only scalars and vectors, declares."""
    spans = {f.name: f.span for f in facts}
    out = []
    for v in variables:
        if v.location is None or spans.get(v.name, 1) == 1:
            out.append(v)
            continue
        step = 1 if v.semantic == "SV_Target" else 0  # the attachments of ``float4 c[N]``
        out += [
            replace(v, location=v.location + k, index=v.index + step * k)
            for k in range(spans[v.name])
        ]
    return out


def _name_clashes(
    src: SourceSet, e: EntryFacts, facts: list[VarFacts], is_input: bool
) -> list[Diagnostic]:
    """Two stage variables of one direction with one name (members of nested structs, ``j.a``
    and ``l.a``, or one struct passed twice), one of them located: the reflection, the
    relocation of every target's code and a host's vertex layout name a stage variable by its
    member name, so two of one name cannot be told apart (Slang itself gives both one location
    where the struct carries a semantic). An error at the second's declaration."""
    direction = "input" if is_input else "output"
    errors = []
    seen: dict[str, VarFacts] = {}
    told: set[str] = set()
    for v in facts:
        first = seen.setdefault(v.name, v)
        if first is v or (first.location is None and v.location is None) or v.name in told:
            continue
        told.add(v.name)
        owners = " and ".join(
            dict.fromkeys(f"'{f.struct_name}'" for f in (first, v) if f.struct_name)
        )
        errors.append(
            src.error(
                *_declared_at(src, e, v),
                f"entry '{e.name}': two {direction}s named '{v.name}'"
                + (f" (of {owners})" if owners else "")
                + f": a stage {direction} is named by its member name in the reflection and "
                f"in every target's code, so each {direction} of an entry point needs its own "
                "name; rename one",
                Code.LOCATION_CLASH,
            )
        )
    return errors


def _location_clashes(
    src: SourceSet, e: EntryFacts, variables: list[StageVariable], is_input: bool
) -> list[Diagnostic]:
    """Two stage variables of one direction at one location (DXC refuses that too), and a
    colour output whose ``[[vk::location]]`` is not its ``SV_Target`` index: errors at the
    second variable's declaration."""
    facts = {f.name: f for f in (e.inputs if is_input else e.outputs)}
    direction = "input" if is_input else "output"
    errors = []
    taken: dict[int, StageVariable] = {}
    for v in variables:
        if v.location is None:
            continue
        occupied = range(v.location, v.location + facts[v.name].span)
        first = next((taken[n] for n in occupied if n in taken), None)
        if v.semantic == "SV_Target" and not is_input and v.location != v.index:
            errors.append(
                src.error(
                    *_declared_at(src, e, facts[v.name]),
                    f"entry '{e.name}': output '{v.name}' is SV_Target{v.index} but "
                    f"[[vk::location({v.location})]]: a colour output's location is its "
                    f"SV_Target index (the attachment it writes); write SV_Target{v.location} "
                    "or drop the attribute"
                    + (
                        " (dual-source blending, [[vk::index]], is not supported)"
                        if _has_attribute(src, e, facts[v.name], "vk::index")
                        else ""
                    ),
                    Code.LOCATION_CLASH,
                )
            )
        elif first is not None:
            shared = min(n for n in occupied if n in taken and taken[n] is first)
            errors.append(
                src.error(
                    *_declared_at(src, e, facts[v.name]),
                    f"entry '{e.name}': {direction} '{v.name}' and {direction} '{first.name}' "
                    f"are both at location {shared}; give each {direction} its own "
                    "[[vk::location(n)]] (or none of them)",
                    Code.LOCATION_CLASH,
                )
            )
        for n in occupied:
            taken.setdefault(n, v)
    return errors


def _locate(
    e: EntryFacts,
    variables: list[StageVariable],
    is_input: bool,
    targets: bool,
    vk_location: dict[tuple[str, bool, str], int],
) -> list[StageVariable]:
    """DXC's locations: [[vk::location(n)]] where given (on a variable of this direction:
    an input and an output may share a name), SV_TargetN at N, the others in declaration
    order, each after the locations of the one before (an array or matrix takes several)."""
    spans = {f.name: f.span for f in (e.inputs if is_input else e.outputs)}
    out = []
    n = 0
    for v in variables:
        if v.builtin is not BuiltIn.None_:
            out.append(v)
            continue
        attr = vk_location.get((e.name, is_input, v.name))
        if attr is not None:
            location = attr
        elif targets and v.semantic == "SV_Target":
            location = v.index
        else:
            location = n
        n += spans.get(v.name, 1)
        out.append(v if v.location == location else replace(v, location=location))
    return out


def _stage_var(
    src: SourceSet,
    e: EntryFacts,
    v: VarFacts,
    stage: Stage,
    is_input: bool,
    vk_location: dict[tuple[str, bool, str], int],
) -> StageVariable:
    written = ""
    modifiers: tuple[str, ...] = ()
    _, f = _declaration(src, e, v)
    if f is not None:
        written = f.semantic
        modifiers = f.modifiers
        loc = next((a for a in f.attributes if a.name == "vk::location" and a.args), None)
        if loc is not None and loc.args[0].isdigit():
            vk_location[(e.name, is_input, v.name)] = int(loc.args[0])
    upper = v.semantic.upper()
    builtin = _BUILTINS.get(upper, BuiltIn.None_)
    if builtin is not BuiltIn.None_:
        semantic = builtin.value
    elif upper.startswith("SV_TARGET"):
        semantic = "SV_Target"
    elif upper == rewrite.INSTANCE_MARKER:  # SV_InstanceID between the stages: a varying
        semantic = "SV_InstanceID"
    else:
        semantic = re.sub(r"\d+$", "", written) if written else v.semantic
    interp = Interpolation.Default
    if (stage is Stage.Vertex and not is_input) or (stage is Stage.Pixel and is_input):
        for mod in modifiers:
            if mod in _INTERP:
                interp = _INTERP[mod]
                break
    return StageVariable(
        name=v.name,
        semantic=semantic,
        index=v.semantic_index,
        location=v.location if builtin is BuiltIn.None_ else None,
        builtin=builtin,
        scalar=v.scalar,
        components=v.components,
        interp=interp,
    )


class _NoVertexFormat(Exception):
    def __init__(self, variable: StageVariable) -> None:
        super().__init__(variable.name)
        self.variable = variable


def _pack_vertex(
    inputs: list[StageVariable], formats: Mapping[str, VertexFormat]
) -> tuple[list[StageVariable], int]:
    """Vertex formats and offsets of one interleaved vertex, packed in location order: the
    format the source asks for (``formats``, by input name), else the shader type's own."""
    located = sorted((v for v in inputs if v.location is not None), key=lambda v: v.location or 0)
    offsets: dict[str, tuple[int, VertexFormat]] = {}
    offset = 0
    for v in located:
        fmt = formats.get(v.name) or _VERTEX_FORMATS.get((v.scalar, v.components))
        if fmt is None:
            raise _NoVertexFormat(v)
        size = fmt.size
        align = min(4, size)
        offset = (offset + align - 1) // align * align
        offsets[v.name + ":" + str(v.location)] = (offset, fmt)
        offset += size
    stride = (offset + 3) // 4 * 4
    out = []
    for v in inputs:
        key = v.name + ":" + str(v.location)
        if key in offsets:
            off, fmt = offsets[key]
            v = replace(v, offset=off, format=fmt)
        out.append(v)
    return out, stride


def _features(outputs: dict[Target, bytes]) -> DeviceFeatures:
    """The device features the written targets' code needs, each target's read from its own
    code and their union (module-wide, as SPIR-V's capabilities and WGSL's enables are):
    Slang's SPIR-V converts ``f32tof16`` through half (Float16, Int16) where its WGSL packs
    without it, and a compile that is not written out (a Metal-only build's) needs nothing."""
    from oneshader.compiler.emitted.spirv import module_features, read_spirv_shared
    from oneshader.compiler.emitted.wgsl import read_wgsl_shared

    readers = {Target.SpirV: read_spirv_shared, Target.Wgsl: read_wgsl_shared}
    out = DeviceFeatures(0)
    for target, code in outputs.items():
        if target in readers:
            out |= module_features(readers[target](code))
    return out


def _exact_uses(e: EmittedEntry, names: Collection[str]) -> set[str]:
    """What a WGSL entry point touches, a global Slang emitted under a resource's own name
    (``rw_img_mip_5``, FidelityFX's) read as that resource, not as Slang's suffix of another
    (``rw_img_mip``)."""
    assert e.uses is not None
    own = {emitted_name(n) for n in names}
    exact = {i for i in e.spelled if i in own}
    if not exact:
        return set(e.uses)
    return exact | {resource_name(i) for i in e.spelled if i not in own}


def _usage(
    outputs: dict[Target, bytes], names: Collection[str] = ()
) -> dict[str, tuple[set[str] | None, DeviceFeatures]]:
    """Per entry point: the names it really touches and the device features it needs, read from
    the emitted code (SPIR-V preferred: its entry points list their interface). The names are
    what any target's code touches (SPIR-V's and WGSL's together): Slang may fold a read away
    in one target's code and not in another's (``k * 0``), and the host binds for each."""
    out: dict[str, tuple[set[str] | None, DeviceFeatures]] = {}
    if Target.SpirV in outputs:
        from oneshader.compiler.emitted.spirv import features_of, read_spirv_shared

        m = read_spirv_shared(outputs[Target.SpirV])
        features = features_of(m.capabilities)
        for name, e in m.entries.items():
            out[name] = (set(e.uses) if e.uses is not None else None, features)
        if Target.Wgsl in outputs:
            from oneshader.compiler.emitted.wgsl import read_wgsl_shared

            for name, e in read_wgsl_shared(outputs[Target.Wgsl]).entries.items():
                spirv_uses, features = out.get(name, (set(), features))
                if spirv_uses is not None and e.uses is not None:
                    out[name] = (spirv_uses | _exact_uses(e, names), features)
        return out
    for target, module_name, func in (
        (Target.Wgsl, "wgsl", "read_wgsl_shared"),
        (Target.Msl, "msl", "read_msl_shared"),
    ):
        if target not in outputs:
            continue
        try:
            mod = __import__(f"oneshader.compiler.emitted.{module_name}", fromlist=[func])
            reader = getattr(mod, func)
        except (ImportError, AttributeError):
            continue
        m = reader(outputs[target])
        from oneshader.compiler.emitted.spirv import wgsl_features

        # WGSL says its features module-wide (as SPIR-V's capabilities are)
        features = wgsl_features(m.enables)
        for name, e in m.entries.items():
            out[name] = (_exact_uses(e, names) if e.uses is not None else None, features)
        return out
    return out


def _spec_reader(outputs: dict[Target, bytes], entries: list[str]) -> Callable[[str, str], bool]:
    """Whether an entry point reads a spec constant: searched in the WGSL functions it reaches
    (Slang drops unread constants from whole programs, so with one entry point presence is use)."""
    if Target.Wgsl in outputs and entries:
        reached = reached_identifiers(outputs[Target.Wgsl], entries)

        def in_wgsl(entry: str, name: str) -> bool:
            pattern = emitted_regex(name)
            return any(pattern.fullmatch(ident) for ident in reached.get(entry, ()))

        return in_wgsl
    text = next(
        (outputs[t].decode("latin-1") for t in (Target.Msl, Target.SpirV) if t in outputs), ""
    )

    def in_text(entry: str, name: str) -> bool:
        return bool(re.search(rf"\b{emitted_pattern(name)}\b", text))

    return in_text
