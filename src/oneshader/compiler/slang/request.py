"""Slang's requests: one for the targets given the same source text, each target's facts read
from its own reflection (else one per target, and one per padding round); the arguments, the
source text handed to Slang (every file rewritten, docs/compiler.md "Source rewrites"), and what
comes back: each target's code and facts, or its positioned errors."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence, Sized
from dataclasses import dataclass, field, replace
from pathlib import Path

from oneshader.compiler.api import TARGET_NAMES, CompileOptions
from oneshader.compiler.emitted.wgsl_names import unreserved_wgsl
from oneshader.compiler.slang import capi as S
from oneshader.compiler.slang.facts import SLANG_STAGE_ID, TargetFacts, read_facts, with_bools
from oneshader.compiler.slang.messages import explain, unavailable_at_uses
from oneshader.compiler.slang.messages import parse as parse_diagnostics
from oneshader.compiler.slang.not_wgsl import wgsl_refusal
from oneshader.compiler.slang.padding import (
    Padding,
    offset_padding,
    without_packoffsets,
    without_padding,
)
from oneshader.compiler.source import rewrite
from oneshader.compiler.source.dxc_syntax import dxc_declarations
from oneshader.compiler.source.precheck import (
    entry_stages,
    one_line_matrices,
    returned_outputs,
    spirv_texture_buffers,
    wgsl_interlocked,
)
from oneshader.compiler.source.scanner import Declaration, line_col, strip_comments
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.compiler.source.varyings import instance_id_semantics, pixel_point_sizes
from oneshader.diagnostics import Code, Diagnostic, Severity, source_excerpt
from oneshader.reflection.model import ResourceTypeKind, Stage, Target

_SLANG_TARGET = {Target.SpirV: "spirv", Target.Msl: "metal", Target.Wgsl: "wgsl"}


# DXC's minimum-precision types are 32-bit unless -enable-16bit-types, and the 16-bit types
# they stand for with it (which also defines __HLSL_ENABLE_16_BIT); so they are here.
def _min_precision_args(sixteen: bool) -> list[str]:
    bases = (
        ("half", "half", "int16_t", "int16_t", "uint16_t")
        if sixteen
        else ("float", "float", "int", "int", "uint")
    )
    names = ("min16float", "min10float", "min16int", "min12int", "min16uint")
    args = [
        arg
        for name, base in zip(names, bases, strict=True)
        for n in ("", "1", "2", "3", "4", *(f"{r}x{c}" for r in "1234" for c in "1234"))
        for arg in ("-D", f"{name}{n}={base}{n}")
    ]
    return [*args, "-D", "__HLSL_ENABLE_16_BIT=1"] if sixteen else args


_MIN_PRECISION_ARGS = {sixteen: _min_precision_args(sixteen) for sixteen in (False, True)}


# What to write instead of a construct a target lacks (Slang's E36107, at the use).
_EVERYWHERE_BUT_SPIRV = {
    "printf": "debug printf exists on SPIR-V (Vulkan's debug printf) only; remove the call",
    "CheckAccessFullyMapped": (
        "sparse residency feedback exists on SPIR-V only; sample without the status argument"
    ),
    "Load": (
        "if it passes a status argument (sparse residency feedback, which exists on SPIR-V "
        "only), call Load without it"
    ),
}
# What no target has (Slang's name of the construct, as its note gives it).
_NOWHERE = {
    "matrix.init": (
        "it constructs a matrix with one row or one column (float3x1(...)), which Slang cannot "
        "emit for any target; use a vector"
    ),
}
UNAVAILABLE_HINTS: dict[Target, dict[str, str]] = {
    Target.SpirV: {**_NOWHERE},
    Target.Wgsl: {
        **_NOWHERE,
        **_EVERYWHERE_BUT_SPIRV,
        "Sample": (
            "WGSL samples without a minimum-LOD clamp (Sample's 4th argument in HLSL, not a "
            "bias) or a status; drop them, or for a bias write SampleBias(s, uv, bias, offset)"
        ),
        "__ShapeBuffer": (
            "WGSL has no typed buffers (texel buffers): a Buffer<T> of 32-bit scalars or 2- or "
            "4-vectors is a storage array there, but not this one (a 3-vector's array stride "
            "is 16 in WGSL, its texels 12 bytes apart; its GetDimensions has no storage-array "
            "form); declare a StructuredBuffer<T> (RWStructuredBuffer<T>) of the element type"
        ),
        "NonUniformResourceIndex": (
            "WGSL has no arrays of textures or samplers to index (binding_array is a "
            "native-only extension); use a texture array (Texture2DArray) and a layer index"
        ),
        "TraceRayInline": (
            "WebGPU has no ray tracing (no ray queries, no acceleration structures); build "
            "this shader for spirv and msl only"
        ),
    },
    Target.Msl: {
        **_NOWHERE,
        **_EVERYWHERE_BUT_SPIRV,
        "GetDimensions": (
            "a Metal shader cannot ask a buffer for its length: oneshader gives a global "
            "buffer's GetDimensions the length the host writes into the $BufferLengths constant "
            "buffer, which a function parameter cannot name; call it on the global buffer"
        ),
        "NonUniformResourceIndex": (
            "Slang emits Metal resource arrays without argument indices; use a texture array "
            "(Texture2DArray) and a layer index"
        ),
    },
}


@dataclass
class CompiledTarget:
    target: Target
    facts: TargetFacts
    code: bytes
    warnings: list[Diagnostic] = field(default_factory=list)


def slang_args(target: Target, o: CompileOptions) -> list[str]:
    return _target_args(target) + _common_args(o)


def _target_args(target: Target) -> list[str]:
    """A ``-target`` and the options that are that target's (they follow it)."""
    args = ["-target", _SLANG_TARGET[target]]
    if target is Target.SpirV:
        args += ["-profile", "spirv_1_5", "-emit-spirv-directly", "-fvk-use-entrypoint-name"]
    return args


def _common_args(o: CompileOptions) -> list[str]:
    args = [
        "-matrix-layout-row-major" if o.row_major else "-matrix-layout-column-major",
        "-enable-machine-readable-diagnostics",
        "-no-mangle",
        "-line-directive-mode",
        "none",
    ]
    for d in o.include_dirs:
        args += ["-I", d]
    args += _MIN_PRECISION_ARGS[o.enable_16bit_types]
    for name, value in o.defines:
        args += ["-D", f"{name}={value}" if value else name]
    return args


def _request_args(src: SourceSet, o: CompileOptions, targets: Sequence[Target]) -> list[str]:
    """The arguments of a request for ``targets`` (in that order: the request's target
    indices)."""
    per_target = [arg for t in targets for arg in _target_args(t) + _capabilities(src, t)]
    return per_target + _common_args(o)


def _declared_in(src: SourceSet, decls: dict[str, Declaration], path: Path) -> set[str]:
    return {n for n, d in decls.items() if src.resolved(d.file) == path}


@dataclass(frozen=True)
class _Rewrites:
    """What of the rewriting depends on the target. Targets with equal rewrites get the same
    text, which is then made once (Metal's and WGSL's mostly are)."""

    append_as_rw: bool  # append/consume buffers as RW buffers with a counter (not SPIR-V)
    drop_point_sizes: bool  # WGSL has no PointSize
    distances_as_varyings: bool  # WGSL: clip/cull distances through the patch, not Slang
    subpass_as_vectors: bool  # SPIR-V's subpass inputs
    blank_linear: bool  # HLSL's 'linear' and packoffset blanked (not SPIR-V)
    drop_status: bool  # sparse-residency status arguments (not SPIR-V)
    drop_printf: bool  # debug printf (not SPIR-V)
    bools_as_uints: bool  # WGSL: bools in buffers
    sample_positions: bool  # GetSamplePosition from the standard positions (Slang crashes)
    load_offsets: bool  # texture loads' offsets added to the location (not SPIR-V)
    helpers: tuple[str, ...]
    sixteen_bit_literals: bool  # asfloat16(1.0) as DXC reads it (rewrite.SIXTEEN_BIT_LITERALS)
    not_inputs: tuple[tuple[Path, int, int], ...]  # PointSize in a pixel input (DXC drops it)
    instance_varyings: tuple[tuple[Path, int, int], ...]  # SV_InstanceID between the stages
    measured: tuple[str, ...]  # buffers whose length Metal reads from the companion
    stored: tuple[str, ...]  # byte-address buffers whose Store values pass a helper (bools)
    byte_atomics: tuple[str, ...]  # WGSL: byte-address buffers of atomic words (Interlocked*)
    typed_buffers: tuple[str, ...]  # WGSL: Buffer<T> as a storage array (no texel buffers)
    pads: tuple[Padding, ...]
    outputs_returned: tuple[tuple[str, str, bool], ...]  # out params returned: entry, hidden
    # name, direct (precheck.returned_outputs)

    @staticmethod
    def of(
        src: SourceSet, target: Target, pads: Collection[Padding], stages: Mapping[str, Stage]
    ) -> _Rewrites:
        dropped = pixel_point_sizes(src, stages)
        return _Rewrites(
            append_as_rw=bool(src.append_consume()) and target is not Target.SpirV,
            drop_point_sizes=bool(src.unit_point_sizes()) and target is Target.Wgsl,
            distances_as_varyings=target is Target.Wgsl and src.has_distances(),
            subpass_as_vectors=bool(src.subpass_inputs()) and target is Target.SpirV,
            blank_linear=target is not Target.SpirV,
            drop_status=target is not Target.SpirV and _in_any_file(src, rewrite.status_arguments),
            drop_printf=target is not Target.SpirV and bool(_printf_calls(src)),
            bools_as_uints=target is Target.Wgsl and bool(src.buffer_bools()),
            sample_positions=_in_any_file(src, rewrite.sample_position_queries),
            load_offsets=target is not Target.SpirV and _has_load_offsets(src),
            helpers=tuple(n for n in _helpers_called(src) if target in rewrite.HELPERS[n][0]),
            sixteen_bit_literals=_in_any_file(src, rewrite.SIXTEEN_BIT_CASTS.findall),
            not_inputs=tuple((p.path, *p.span) for p in dropped if p.left_out),
            instance_varyings=tuple(instance_id_semantics(src, stages)),
            measured=tuple(src.measured_buffers()) if target is Target.Msl else (),
            stored=_byte_stored(src),
            byte_atomics=_byte_atomics(src) if target is Target.Wgsl else (),
            typed_buffers=_storage_typed_buffers(src) if target is Target.Wgsl else (),
            pads=tuple(pads),
            outputs_returned=_outputs_returned(src, target, stages),
        )


def _outputs_returned(
    src: SourceSet, target: Target, stages: Mapping[str, Stage]
) -> tuple[tuple[str, str, bool], ...]:
    """The entry points whose ``out``/``inout`` parameters a wrapper returns, each with a name
    of the same length that no file uses (for the function the wrapper calls: columns stay).
    WGSL entry points take no pointers; Slang's Metal crashes on them beside a vertex
    result (SIGSEGV) and stops with an internal error in a pixel entry point."""
    words: set[str] = set()
    out = []
    for name, stage in stages.items():
        fn = src.function(name)
        if fn is None or not any(m in ("out", "inout") for f in fn.fields for m in f.modifiers):
            continue
        void = fn.returns.split()[-1:] in ([], ["void"])
        wgsl = target is Target.Wgsl and stage in (Stage.Vertex, Stage.Pixel)
        vertex_result = stage is Stage.Vertex and not void
        metal = target is Target.Msl and (stage is Stage.Pixel or vertex_result)
        form = returned_outputs(src, fn)
        if not (wgsl or metal) or form is None:
            continue
        words = words or src.derived(
            "identifiers", lambda: {w for t in src.texts.values() for w in re.findall(r"\w+", t)}
        )
        hidden = next(
            (h for i in range(len(name)) if (h := "_" * (i + 1) + name[i + 1 :]) not in words),
            None,
        )
        if hidden is not None:
            out.append((name, hidden, form == "direct"))
            words = words | {hidden}
    return tuple(out)


def _printf_calls(src: SourceSet) -> list[tuple[Path, int, int]]:
    """Every debug-printf statement: (file, start, end)."""
    calls: list[tuple[Path, int, int]] = src.derived(
        "printf",
        lambda: [(p, i, j) for p, t in src.texts.items() for i, j in rewrite.printf_calls(t)],
    )
    return calls


def _in_any_file(src: SourceSet, finder: Callable[[str], Sized]) -> bool:
    """Whether ``finder`` finds anything in a file of ``src`` (once a read)."""
    found: bool = src.derived(("in any file", finder), lambda: any(map(finder, src.texts.values())))
    return found


def _offset_textures(src: SourceSet) -> dict[str, str]:
    found: dict[str, str] = src.derived(
        "offset textures", lambda: rewrite.offset_textures(src.texts.values())
    )
    return found


def _has_load_offsets(src: SourceSet) -> bool:
    def any_offsets() -> bool:
        textures = _offset_textures(src)  # status arguments dropped first (_rewritten)
        return any(
            rewrite.load_offsets(rewrite.without_status_arguments(t), textures)
            for t in src.texts.values()
        )

    found: bool = src.derived("load offsets", any_offsets)
    return found


def _helpers_called(src: SourceSet) -> list[str]:
    """The helper functions (``rewrite.HELPERS``) the source calls without defining them."""

    def called() -> list[str]:
        texts = [strip_comments(t) for t in src.texts.values()]
        return [
            name
            for name in rewrite.HELPERS
            if src.function(name) is None
            and any(rewrite.helper_calls(name).search(t) for t in texts)
        ]

    result: list[str] = src.derived("helpers called", called)
    return result


def _byte_stored(src: SourceSet) -> tuple[str, ...]:
    """The RW byte-address buffers whose ``Store`` the code calls (``rewrite.with_byte_stores``)."""

    def stored() -> tuple[str, ...]:
        names = list(src.declared_as({ResourceTypeKind.RWByteAddressBuffer}))
        texts = src.texts.values()
        return tuple(n for n in names if any(rewrite.byte_stores(t, [n]) for t in texts))

    result: tuple[str, ...] = src.derived("byte stores", stored)
    return result


def _storage_typed_buffers(src: SourceSet) -> tuple[str, ...]:
    """The typed buffers WGSL holds as storage arrays (``rewrite.typed_buffers_as_structured``):
    all but those whose ``GetDimensions`` a file calls."""
    names = src.declared_as({ResourceTypeKind.Buffer, ResourceTypeKind.RWBuffer})
    texts = [strip_comments(t) for t in src.texts.values()]
    return tuple(
        n
        for n in names
        if not any(re.search(rf"\b{re.escape(n)}\s*\.\s*GetDimensions\b", t) for t in texts)
    )


def _byte_atomics(src: SourceSet) -> tuple[str, ...]:
    """The RW byte-address buffers WGSL can hold as ``array<atomic<u32>>`` (``rewrite.
    byte_atomics``): an ``Interlocked*`` on them, and every use in any file a one-word
    ``Load``, ``Store`` or ``Interlocked*`` but ``InterlockedMin``/``Max`` (signed or not by the
    value's type). Any other use (``Load2``, ``Load<T>``, ``GetDimensions``, the buffer passed
    to a function) leaves it a plain buffer, where Slang refuses the atomic (OS1015)."""

    def atomic() -> tuple[str, ...]:
        out = []
        for name in src.declared_as({ResourceTypeKind.RWByteAddressBuffer}):
            uses = [
                (m, method)
                for t in src.texts.values()
                for m, method in rewrite.byte_buffer_uses(strip_comments(t), name)
                if not re.search(r"RWByteAddressBuffer\s*$", strip_comments(t)[: m.start()])
            ]
            methods = {method for _, method in uses}
            if None not in methods and any(m and m.startswith("Interlocked") for m in methods):
                out.append(name)
        return tuple(out)

    result: tuple[str, ...] = src.derived("byte atomics", atomic)
    return result


def _rewritten(src: SourceSet, path: Path, how: _Rewrites) -> str:
    text = dxc_declarations(src.texts[path])  # the text the scanner read
    text = rewrite.register_letters(text, src.sources[path])
    if how.bools_as_uints:  # at the file's own positions, as the two above
        bools = [(line, col) for p, line, col in src.buffer_bools().values() if p == path]
        text = rewrite.bools_as_uints(text, bools)
    text = rewrite.blanked(text, [(a, b) for p, a, b in how.not_inputs if p == path])
    instances = [(line, col) for p, line, col in how.instance_varyings if p == path]
    if instances:
        text = rewrite.instance_ids_as_varyings(text, instances)
    for name, hidden, direct in how.outputs_returned:
        fn = src.function(name)
        if fn is not None and src.function_file(name) == path:
            text = rewrite.entry_outputs_as_results(text, fn.line, fn.column, name, hidden, direct)
    decls = src.declarations()
    renamed = [
        (decls[old].line, decls[old].column, old, new)
        for old, new in src.renamed_blocks().items()
        if src.resolved(decls[old].file) == path
    ]
    if renamed:
        text = rewrite.rename_at(text, renamed)
    counted = src.counted_rw()
    if counted:
        text = rewrite.with_counter_buffers(text, counted, _declared_in(src, counted, path))
    if how.append_as_rw:
        # SPIR-V has hidden counters; WGSL and Metal get the same companion as RW counters.
        appended = src.append_consume()
        text = rewrite.with_append_consume_as_rw(text, appended, _declared_in(src, appended, path))
    if how.drop_point_sizes:
        for name in src.unit_point_sizes():
            text = rewrite.without_point_size(text, name)
    if how.distances_as_varyings:
        text = rewrite.distances_as_varyings(text)
    text = rewrite.vk_builtins(text)
    text = rewrite.without_own_attributes(text)
    text = rewrite.without_void_casts(text)
    text = rewrite.classes_as_structs(text)
    text = rewrite.one_component_texels(text)
    text = rewrite.pack_matrix(text)
    text = rewrite.matrix_array_majorness(text)
    text = rewrite.without_space_only_registers(text)
    text = rewrite.bitfield_words(text, src.sources[path])
    text = rewrite.block_resources_as_globals(text, src.sources[path])
    if how.subpass_as_vectors:
        subpass = src.subpass_inputs()
        text = rewrite.subpass_inputs_as_vectors(text, subpass, _declared_in(src, subpass, path))
    if how.blank_linear:
        # HLSL's 'linear' is the default (perspective-correct) interpolation; Slang emits it
        # as WGSL @interpolate(linear) and Metal sample_no_perspective, which are not.
        text = rewrite.blank_words(text, "linear")
        # Slang's reflection follows packoffset there but its code does not: the padding does
        text = without_packoffsets(text)
    if how.drop_status:
        text = rewrite.without_status_arguments(text)
    if how.drop_printf:
        text = rewrite.without_printf(text)
    if how.sample_positions:
        text = rewrite.with_sample_positions(text)
    if how.load_offsets:
        text = rewrite.without_load_offsets(text, _offset_textures(src))
    if how.helpers:
        text = rewrite.with_helpers(text, how.helpers)
    if how.measured:
        text = rewrite.with_buffer_lengths(text, how.measured)
    if how.stored:
        text = rewrite.with_byte_stores(text, how.stored)
    if how.byte_atomics:
        text = rewrite.byte_atomics(text, how.byte_atomics)
    if how.typed_buffers:
        text = rewrite.typed_buffers_as_structured(text, how.typed_buffers)
    here = [(p.line, p.column, p.declarations()) for p in how.pads if p.file == path]
    return rewrite.with_inserted(text, here) if here else text


def slang_source(
    src: SourceSet,
    target: Target,
    pads: Collection[Padding] = (),
    stages: Mapping[str, Stage] | None = None,
) -> str:
    """The main file's text for Slang, every file rewritten (includes inlined where a rewrite
    changed them); ``pads`` are vk::offset's padding members (WGSL and Metal); ``stages`` the
    entry points (some return their ``out`` parameters from a wrapper)."""
    how = _Rewrites.of(src, target, pads, stages or {})
    text: str = src.derived(("slang source", how), lambda: _slang_source(src, how))
    return text


def _slang_source(src: SourceSet, how: _Rewrites) -> str:
    texts = {p: _rewritten(src, p, how) for p in src.texts}
    main = rewrite.inline_includes(src.path, src.texts, texts, src.include_dirs)
    prelude = [rewrite.HELPERS[name][1] for name in how.helpers]
    if how.sixteen_bit_literals:
        prelude.append(rewrite.SIXTEEN_BIT_LITERALS)
    if how.measured:  # Metal asks the companion for buffer lengths
        prelude.append(rewrite.buffer_lengths_prelude(how.measured))
    if how.load_offsets:
        prelude.append(rewrite.OFFSET_HELPER)
    if how.stored:
        prelude.append(rewrite.BYTE_STORE_PRELUDE)
    if how.sample_positions:
        prelude.append(rewrite.SAMPLE_POSITION_HELPER)
    if prelude:  # the helpers first, then the file from its own line 1
        main = f'{" ".join(prelude)}\n#line 1 "{src.path.as_posix()}"\n{main}'
    return main


def _as_written(src: SourceSet, diags: list[Diagnostic]) -> list[Diagnostic]:
    """Slang's diagnostics in the file's terms where a block was renamed for it
    (``SourceSet.renamed_blocks``): the block's own name, and the columns after it on its line."""
    renamed = src.renamed_blocks()
    if not renamed:
        return diags
    decls = src.declarations()
    moved = {
        (src.display(decls[old].file), decls[old].line): (decls[old].column, len(new) - len(old))
        for old, new in renamed.items()
    }
    names = re.compile(r"\b(" + "|".join(re.escape(n) for n in renamed.values()) + r")\b")
    back = {new: old for old, new in renamed.items()}
    out = []
    for d in diags:
        d = replace(d, message=names.sub(lambda m: back[m.group(1)], d.message))
        at, shift = moved.get((d.file, d.line), (0, 0))
        if shift and d.column > at:
            column = max(d.column - shift, at)
            text = src.displayed_text(d.file)
            excerpt = source_excerpt(text, d.line, column) if text else d.excerpt
            d = replace(d, column=column, excerpt=excerpt)
        out.append(d)
    return out


# More padding to add after a compile (the facts it gave, the padding it had).
PaddingRule = Callable[
    [TargetFacts, dict[tuple[Path, int, int], Padding]], dict[tuple[Path, int, int], Padding]
]


def compile_together(
    lib: S.Library, src: SourceSet, options: CompileOptions, targets: Sequence[Target]
) -> dict[Target, CompiledTarget]:
    """The first compile of the targets whose Slang source is the same text, made in one
    request: Slang parses, checks and lowers the source once for all of them (a third less
    of Slang's time for three targets), and its code and reflection for each target are those
    of a request of its own. Only a request that compiles every target of it without a
    diagnostic counts; else its targets are left to :func:`compile_target`'s own requests,
    which give each target its own errors and warnings."""
    groups: dict[str, list[Target]] = {}
    stages = entry_stages(src, options)
    for target in targets:
        groups.setdefault(slang_source(src, target, (), stages), []).append(target)
    together: dict[Target, CompiledTarget] = {}
    for text, group in groups.items():
        if len(group) > 1:
            together.update(_compile_group(lib, src, options, group, text))
    return together


def _compile_group(
    lib: S.Library, src: SourceSet, options: CompileOptions, group: list[Target], text: str
) -> dict[Target, CompiledTarget]:
    args = _request_args(src, options, group)
    req = S.Request(lib, args, (str(src.path), text), _entries(options), len(group))
    try:
        result = req.compile()
        if not result.ok or parse_diagnostics(result.diagnostics, src.display, src.text_of):
            return {}
        codes = [req.code(i) for i in range(len(group))]
        reflections = [req.reflection(i) for i in range(len(group))]
        if any(c is None for c in codes) or not all(reflections):
            return {}
        return {
            target: _compiled(lib, src, target, reflection, code or b"", [])
            for target, code, reflection in zip(group, codes, reflections, strict=True)
        }
    finally:
        req.close()


def compile_target(
    lib: S.Library,
    src: SourceSet,
    options: CompileOptions,
    target: Target,
    also_pad: PaddingRule | None = None,
    as_declared: Callable[[TargetFacts, bytes], TargetFacts] | None = None,
    first: CompiledTarget | None = None,
) -> tuple[CompiledTarget | None, list[Diagnostic]]:
    """The target's code and facts, or its errors. WGSL and Metal are compiled again while
    ``[[vk::offset]]`` members need padding to sit where SPIR-V puts them (a compile per
    round; a struct's later members follow, so one round is the rule), and while
    ``also_pad`` finds more (Metal's members placed as SPIR-V's); both on the layouts
    ``as_declared`` gives a compile's facts, where the emitted code is declared otherwise
    (Metal's widened arrays, packed and aligned vectors). ``first``: the first round's
    compile, made already (:func:`compile_together`)."""
    pads: dict[tuple[Path, int, int], Padding] = {}
    offset_only: dict[tuple[Path, int, int], Padding] | None = None  # before also_pad's
    compiled: CompiledTarget | None
    errors: list[Diagnostic]
    for _ in range(_PADDING_ROUNDS):
        if first is not None:
            compiled, errors, first = first, [], None
        else:
            compiled, errors = _compile_once(lib, src, options, target, pads.values())
        if compiled is None or target is Target.SpirV:
            return compiled, errors
        seen = as_declared(compiled.facts, compiled.code) if as_declared else compiled.facts
        more, refused = offset_padding(src, seen, target, pads)
        if refused:
            return None, refused
        if more == pads and also_pad is not None:
            if offset_only is None:
                offset_only = dict(pads)
            more = also_pad(seen, pads)
        if more == pads:
            break
        pads = more
    else:
        if offset_only is None:
            raise AssertionError(f"vk::offset padding did not settle in {_PADDING_ROUNDS} rounds")
        # Metal's own padding did not settle (a member it moves moves another back): the code
        # as vk::offset alone asks, and the layout check names what differs (OS2001).
        compiled, errors = _compile_once(lib, src, options, target, offset_only.values())
        if compiled is None:
            return compiled, errors
    assert compiled is not None
    if target is not Target.Msl:
        # (Metal's stay until unify.layouts has laid its vectors out again: a padding member
        # is the only sign of bytes a member's Metal alignment would otherwise account for)
        compiled.facts = without_padding(compiled.facts)
    if target is Target.Wgsl and src.buffer_bools():
        compiled.facts = with_bools(compiled.facts, src.buffer_bools().keys())
        # Slang's warnings about the conversions bools_as_uints made are not the user's
        compiled.warnings = [
            w
            for w in compiled.warnings
            if not (w.code == "E30081" and "'uint'" in w.message and "'bool'" in w.message)
        ]
    if target is Target.Wgsl:
        not_wgsl = wgsl_refusal(src, compiled.code, compiled.facts)
        if not_wgsl is not None:
            return None, [not_wgsl]
        compiled.warnings += _point_sizes_dropped(src)
        compiled.facts = with_distances(compiled.facts)
    if target is not Target.SpirV:
        compiled.warnings += [
            replace(
                src.error_in(
                    path,
                    *line_col(src.texts[path], start),
                    f"{TARGET_NAMES[target]}: this printf is left out: debug printf exists on "
                    "SPIR-V (Vulkan's debug printf) only",
                    Code.NOT_ON_TARGET,
                ),
                severity=Severity.WARNING,
            )
            for path, start, _ in _printf_calls(src)
        ]
    return compiled, errors


def with_distances(facts: TargetFacts) -> TargetFacts:
    """The facts of a WGSL compile with the clip and cull distances that went to Slang as
    marked varyings (``rewrite.distances_as_varyings``) named as the system values they are:
    built-ins, without a location."""
    back = {marker: name for name, marker in rewrite.DISTANCE_MARKERS.items()}
    for e in facts.entries:
        for v in (*e.inputs, *e.outputs):
            if v.semantic.upper() in back:
                v.semantic, v.location = back[v.semantic.upper()], None
    return facts


_SEMANTIC = re.compile(r"system value semantic '(\w+)' is not supported")


def _at_semantic(src: SourceSet, d: Diagnostic) -> Diagnostic:
    """Slang's "system value semantic not supported" (E55202) sometimes comes without a
    position: it is given the first place the source writes that semantic."""
    m = _SEMANTIC.search(d.message)
    if d.line or m is None:
        return d
    pattern = re.compile(rf":\s*({re.escape(m.group(1))})\b", re.IGNORECASE)
    first = next(src.matches(pattern), None)
    if first is None:
        return d
    path, found = first
    line, col = line_col(strip_comments(src.texts[path]), found.start(1))
    return src.error_in(path, line, col, d.message, d.code)


def _point_sizes_dropped(src: SourceSet) -> list[Diagnostic]:
    """A warning at each PointSize member left out of the WGSL (it only ever holds 1.0)."""
    dropped = src.unit_point_sizes()
    out = []
    for scanned in src.sources.values():
        for sdef in scanned.structs.values():
            for f in sdef.fields:
                if f.name in dropped and f.attributes:
                    a = f.attributes[0]
                    d = src.error_in(
                        scanned.path,
                        a.line,
                        a.column,
                        f"WGSL: [[vk::builtin(\"PointSize\")]] '{f.name}' is left out: the shader "
                        "only sets it to 1.0, and WGSL draws every point 1 pixel wide",
                        Code.VK_BUILTIN,
                    )
                    out.append(replace(d, severity=Severity.WARNING))
    return out


_PADDING_ROUNDS = 8


def _capabilities(src: SourceSet, target: Target) -> list[str]:
    """Ray queries and debug printf on SPIR-V: asked for, so that Slang does not warn (E41012)
    that it added the capability to SPIR-V 1.5's profile, as it does for any shader tracing
    rays inline or printing."""
    if target is not Target.SpirV:
        return []
    asked = []
    if src.declared_as({ResourceTypeKind.RaytracingAccelerationStructure}):
        asked += ["-capability", "spvRayQueryKHR"]
    if _printf_calls(src):
        asked += ["-capability", "SPV_KHR_non_semantic_info"]
    return asked


def _compile_once(
    lib: S.Library,
    src: SourceSet,
    options: CompileOptions,
    target: Target,
    pads: Collection[Padding],
) -> tuple[CompiledTarget | None, list[Diagnostic]]:
    args = _request_args(src, options, [target])
    text = slang_source(src, target, pads, entry_stages(src, options))
    req = S.Request(lib, args, (str(src.path), text), _entries(options))
    try:
        result = req.compile()
        diags = _as_written(src, parse_diagnostics(result.diagnostics, src.display, src.text_of))
        if not result.ok:
            user_files = {src.display(str(p)) for p in src.texts}
            errors = unavailable_at_uses(diags, user_files, UNAVAILABLE_HINTS[target]) or [
                Diagnostic(
                    src.name,
                    0,
                    0,
                    Severity.ERROR,
                    f"{TARGET_NAMES[target]}: compilation failed",
                )
            ]
            if target is Target.Wgsl and any(d.code == "E36107" for d in errors):
                # Slang notes the first Interlocked* call it meets; name each, and what to
                # declare instead.
                interlocked = wgsl_interlocked(src, _byte_atomics(src))
                if interlocked:
                    errors = [
                        d
                        for d in errors
                        if d.code != "E36107" or ("'Interlocked" not in d.message and d.line)
                    ] + interlocked
            errors = [_at_semantic(src, d) for d in errors]
            if target is Target.SpirV and "= TextureBuffer(" in result.diagnostics:
                errors = spirv_texture_buffers(src, result.diagnostics) or errors
            if "matrices with 1 column or row" in result.diagnostics:
                errors = one_line_matrices(src, target) or errors
            return None, [explain(d, src.displayed_text(d.file)) for d in errors]
        warnings = [d for d in diags if not d.is_error]
        return _compiled(lib, src, target, req.reflection(), result.code, warnings), []
    finally:
        req.close()


_SUBGROUPS_ENABLE = re.compile(rb"^enable\s+subgroups\s*;[ \t]*\n?", re.MULTILINE)


def _without_subgroups_enable(code: bytes) -> bytes:
    """Slang's WGSL without ``enable subgroups;``: the naga wgpu-py ships refuses the
    directive ("not yet supported") but takes the subgroup built-ins and operations on a device
    granted the 'subgroup' feature (the entry points' features say Subgroups)."""
    return _SUBGROUPS_ENABLE.sub(b"", code)


def _entries(options: CompileOptions) -> list[tuple[str, int]]:
    return [(e.name, SLANG_STAGE_ID[e.stage]) for e in options.entry_points]


def _compiled(
    lib: S.Library,
    src: SourceSet,
    target: Target,
    reflection: int,
    code: bytes,
    warnings: list[Diagnostic],
) -> CompiledTarget:
    """A target's compile, read while its request is alive: the facts (blocks renamed for
    Slang under their own names again) and the code (WGSL's reserved words renamed)."""
    facts = read_facts(lib, reflection)
    original = {new: old for old, new in src.renamed_blocks().items()}
    for p in facts.params:
        p.name = original.get(p.name, p.name)
    if target is Target.Wgsl:
        code = _without_subgroups_enable(unreserved_wgsl(code))
    return CompiledTarget(target, facts, code, warnings)
