"""Slang's requests: one for the targets given the same source text, each target's facts read
from its own reflection (else one per target, and one per padding round but WGSL's and Metal's
second made together where their padded text is the same); the arguments, the
source text handed to Slang (every file rewritten, docs/compiler.md "Source rewrites"), and what
comes back: each target's code and facts, or its positioned errors."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from oneshader.compiler.api import TARGET_NAMES, CompileOptions
from oneshader.compiler.emitted.wgsl import without_subgroups_enable
from oneshader.compiler.emitted.wgsl_names import unreserved_wgsl
from oneshader.compiler.quirks import rewrites
from oneshader.compiler.quirks.shared import ONE_TARGET_CODES, SHARED_CODES
from oneshader.compiler.slang import capi as S
from oneshader.compiler.slang.facts import (
    SLANG_STAGE_ID,
    TargetFacts,
    TypeMemo,
    read_facts,
    with_bools,
)
from oneshader.compiler.slang.messages import (
    SUPPRESSED,
    explain,
    names_back,
    unavailable_at_uses,
    unsupported_semantic,
)
from oneshader.compiler.slang.messages import parse as parse_diagnostics
from oneshader.compiler.slang.not_wgsl import wgsl_refusal
from oneshader.compiler.slang.padding import (
    Padding,
    offset_padding,
    predicted_padding,
    prediction_holds,
    without_padding,
)
from oneshader.compiler.source import rewrite
from oneshader.compiler.source.precheck import (
    entry_stages,
    one_line_matrices,
    spirv_texture_buffers,
    wgsl_interlocked,
)
from oneshader.compiler.source.sourcemap import Edited, edited
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Code, Diagnostic, Severity
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
    # the padding its source had (``predicted_padding``'s, in a shared first request)
    pads: dict[tuple[Path, int, int], Padding] = field(default_factory=dict)


def slang_args(target: Target, o: CompileOptions) -> list[str]:
    return _target_args(target) + _common_args(o)


def _target_args(target: Target) -> list[str]:
    """A ``-target`` and the options that are that target's (they follow it)."""
    args = ["-target", _SLANG_TARGET[target]]
    if target is Target.SpirV:
        args += ["-profile", "spirv_1_5", "-emit-spirv-directly", "-fvk-use-entrypoint-name"]
    return args


_SUPPRESSED_IDS = ",".join(sorted(code.removeprefix("E") for code in SUPPRESSED))


def _common_args(o: CompileOptions, min_precision: bool = True) -> list[str]:
    args = [
        "-matrix-layout-row-major" if o.row_major else "-matrix-layout-column-major",
        "-enable-machine-readable-diagnostics",
        "-no-mangle",
        "-line-directive-mode",
        "none",
        # the warnings oneshader answers itself, not written by Slang (nor read back and
        # dropped: most requests' whole output)
        "-warnings-disable",
        _SUPPRESSED_IDS,
    ]
    for d in o.include_dirs:
        args += ["-I", d]
    # the defines are the preprocessor's (source.preprocess): Slang is given its output
    if min_precision:
        return args + _MIN_PRECISION_ARGS[o.enable_16bit_types]
    return args + (["-D", "__HLSL_ENABLE_16_BIT=1"] if o.enable_16bit_types else [])


def _request_args(
    src: SourceSet, o: CompileOptions, targets: Sequence[Target], text: str
) -> list[str]:
    """The arguments of a request for ``targets`` (in that order: the request's target
    indices) given ``text``."""
    per_target = [arg for t in targets for arg in _target_args(t) + _capabilities(src, t)]
    return per_target + _common_args(o, _may_name_min_precision(text))


def _may_name_min_precision(text: str) -> bool:
    """Whether Slang could meet a minimum-precision type's name in ``text`` (written, pasted
    by ``##``, or in a file Slang would include): where it cannot, the 105 defines that map
    those names change nothing but cost every request Slang's parsing of 210 arguments."""
    return "min1" in text or "##" in text or "#include" in text


def slang_source(
    src: SourceSet,
    target: Target,
    pads: Collection[Padding] = (),
    stages: Mapping[str, Stage] | None = None,
) -> str:
    """The main file's text for Slang, every file rewritten (includes inlined where a rewrite
    changed them); ``pads`` are vk::offset's padding members (WGSL and Metal); ``stages`` the
    entry points (some return their ``out`` parameters from a wrapper)."""
    how = rewrites.plan(src, target, pads, stages or {})
    text: str = src.derived(("slang source", how), lambda: _slang_source(src, how))
    return text


def _rewritten(src: SourceSet, how: rewrites.Plan) -> dict[Path, str]:
    """Every file's text for Slang (once a plan)."""
    texts: dict[Path, str] = src.derived(
        ("rewritten", how), lambda: {p: rewrites.rewritten(src, p, how) for p in src.texts}
    )
    return texts


def _origin(src: SourceSet, how: rewrites.Plan) -> Callable[[str, int, int], tuple[int, int]]:
    """Where a position of the text Slang was given (every file rewritten by ``how``) is
    written: back through each file's rewrites (``sourcemap.edited``: the columns a rewrite
    moved on its line), then through the source model's map (``SourceSet.origin_of``). The
    rewrites' maps are made on the first position asked (most requests place no message)."""

    def maps() -> dict[Path, Edited]:
        texts = _rewritten(src, how)
        found = {p: edited(src.texts[p], t) for p, t in texts.items()}
        return {p: m for p, m in found.items() if m is not None}

    def origin(slang_path: str, line: int, col: int) -> tuple[int, int]:
        moved: dict[Path, Edited] = src.derived(("edit maps", how), maps)
        if moved and slang_path:
            try:
                found = moved.get(src.resolved(slang_path))
            except OSError:
                found = None
            if found is not None:
                col = found.before(line, col)
        return src.origin_of(slang_path, line, col)

    return origin


def _slang_source(src: SourceSet, how: rewrites.Plan) -> str:
    texts = _rewritten(src, how)
    main = src.slang_text(texts)
    prelude = rewrites.preludes(how)
    if prelude:  # the helpers first, then the file from its own line 1
        main = f'{" ".join(prelude)}\n#line 1 "{src.line_name(src.path)}"\n{main}'
    return main


# An intrinsic every target calls through its dispatch (``rewrite.SWITCHED``), by the
# dispatch's name: a message about the call names the intrinsic as written.
_DISPATCHED = {dispatch: name for name, (dispatch, _) in rewrite.SWITCHED.items()}


def _as_written(src: SourceSet, diags: list[Diagnostic]) -> list[Diagnostic]:
    """Slang's diagnostics in the file's terms where a block was renamed for it
    (``SourceSet.renamed_blocks``): the block's own name (the columns after it on its line come
    back through the map of the rewrites, ``_origin``); and a dispatched intrinsic's own."""
    back = {new: old for old, new in src.renamed_blocks().items()}
    if any("oneshader_target_" in d.message for d in diags):
        back.update(_DISPATCHED)
    if not back:
        return diags
    return [replace(d, message=names_back(d.message, back)) for d in diags]


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
    diagnostic but warnings of Slang's front end (``quirks.shared``: each target gets them, as
    its own request gives them) counts; else its targets are left to :func:`compile_target`'s
    own requests, which give each target its own errors and warnings."""
    stages = entry_stages(src, options)
    padded = _padded_first(src, targets, stages)
    groups: dict[str, list[Target]] = {}
    for target in targets:
        pads = padded.get(target, {})
        groups.setdefault(slang_source(src, target, pads.values(), stages), []).append(target)
    together: dict[Target, CompiledTarget] = {}
    for text, group in groups.items():
        if len(group) > 1:
            pads = padded.get(group[0], {})
            origin = _origin(src, rewrites.plan(src, group[0], pads.values(), stages))
            found = _compile_group(lib, src, options, group, text, origin)
            for compiled in found.values():
                compiled.pads = pads
            together.update(found)
    return together


def _padded_first(
    src: SourceSet, targets: Sequence[Target], stages: Mapping[str, Stage]
) -> dict[Target, Pads]:
    """WGSL's and Metal's padding for their first compile where it is known before any
    (``padding.predicted_padding``) and makes their texts one: one request for the two with
    it, and SPIR-V's without, in place of one for the three and a second round for the two
    (their back ends run twice fewer). A compile made with it counts only where
    ``padding.prediction_holds`` (:func:`compile_target`)."""
    pair = (Target.Wgsl, Target.Msl)
    predicted = predicted_padding(src)
    if not predicted or not all(t in targets for t in pair):
        return {}
    texts = {slang_source(src, t, predicted.values(), stages) for t in pair}
    return {t: predicted for t in pair} if len(texts) == 1 else {}


def _compile_group(
    lib: S.Library,
    src: SourceSet,
    options: CompileOptions,
    group: list[Target],
    text: str,
    origin: Callable[[str, int, int], tuple[int, int]],
) -> dict[Target, CompiledTarget]:
    args = _request_args(src, options, group, text)
    req = S.Request(lib, args, (str(src.path), text), _entries(options), len(group))
    try:
        result = req.compile()
        if not result.ok:
            return {}
        warnings = _as_written(
            src, parse_diagnostics(result.diagnostics, src.display, src.text_of, origin)
        )
        if not all(_shared(d, group) for d in warnings):
            return {}
        codes = [req.code(i) for i in range(len(group))]
        reflections = [req.reflection(i) for i in range(len(group))]
        if any(c is None for c in codes) or not all(reflections):
            return {}
        memo = TypeMemo()  # the request's types, read once for all its targets
        return {
            target: _compiled(
                lib, src, target, reflection, code or b"", _of(warnings, target), memo
            )
            for target, code, reflection in zip(group, codes, reflections, strict=True)
        }
    finally:
        req.close()


def _shared(d: Diagnostic, group: Sequence[Target]) -> bool:
    """Whether a shared request for ``group`` giving ``d`` may be used (``quirks.shared``)."""
    return (
        d.severity is Severity.WARNING
        and d.code in SHARED_CODES
        and ONE_TARGET_CODES.get(d.code, group[0]) in group
    )


def _of(warnings: Sequence[Diagnostic], target: Target) -> list[Diagnostic]:
    """The warnings of a shared request ``target``'s own request gives: every one of the front
    end's, and those of ``target``'s own passes."""
    return [d for d in warnings if ONE_TARGET_CODES.get(d.code, target) is target]


# What a target's padding rounds are given: the rule finding more padding (Metal's) and the
# layouts a compile's facts are read as (Metal's), or None.
Declared = Callable[[TargetFacts, bytes], TargetFacts]
Pads = dict[tuple[Path, int, int], Padding]


def _more_padding(
    src: SourceSet,
    target: Target,
    compiled: CompiledTarget,
    pads: Pads,
    also_pad: PaddingRule | None,
    as_declared: Declared | None,
) -> tuple[Pads, list[Diagnostic], bool]:
    """The padding after a compile with ``pads``: ``[[vk::offset]]``'s, else (when that one
    needs no more) ``also_pad``'s; its refusals; whether ``also_pad`` was asked."""
    seen = as_declared(compiled.facts, compiled.code) if as_declared else compiled.facts
    more, refused = offset_padding(src, seen, target, pads)
    if refused:
        return pads, refused, False
    if more == pads and also_pad is not None:
        return also_pad(seen, pads), [], True
    return more, [], False


def pad_together(
    lib: S.Library,
    src: SourceSet,
    options: CompileOptions,
    firsts: Mapping[Target, tuple[CompiledTarget, PaddingRule | None, Declared | None]],
) -> dict[tuple[Target, str], CompiledTarget]:
    """The second round of the targets given (WGSL and Metal, each with its first compile and
    its rules) made in one request, when each needs one and their padded source is the same
    text; as :func:`compile_together`, only a request without a diagnostic but the front
    end's warnings counts. Keyed by target and text, for :func:`compile_target` to take."""
    stages = entry_stages(src, options)
    texts: dict[Target, str] = {}
    pads: dict[Target, Pads] = {}
    for target, (first, also_pad, as_declared) in firsts.items():
        if first.pads:  # made with its padding already (_padded_first)
            return {}
        more, refused, _ = _more_padding(src, target, first, {}, also_pad, as_declared)
        if refused or not more:
            return {}
        texts[target], pads[target] = slang_source(src, target, more.values(), stages), more
    group = list(texts)
    if len(group) < 2 or len(set(texts.values())) != 1:
        return {}
    text = texts[group[0]]
    origin = _origin(src, rewrites.plan(src, group[0], pads[group[0]].values(), stages))
    found = _compile_group(lib, src, options, group, text, origin)
    return {(target, text): compiled for target, compiled in found.items()}


def compile_target(
    lib: S.Library,
    src: SourceSet,
    options: CompileOptions,
    target: Target,
    also_pad: PaddingRule | None = None,
    as_declared: Declared | None = None,
    first: CompiledTarget | None = None,
    ready: Mapping[tuple[Target, str], CompiledTarget] | None = None,
) -> tuple[CompiledTarget | None, list[Diagnostic]]:
    """The target's code and facts, or its errors. WGSL and Metal are compiled again while
    ``[[vk::offset]]`` members need padding to sit where SPIR-V puts them (a compile per
    round; a struct's later members follow, so one round is the rule), and while
    ``also_pad`` finds more (Metal's members placed as SPIR-V's); both on the layouts
    ``as_declared`` gives a compile's facts, where the emitted code is declared otherwise
    (Metal's widened arrays, packed and aligned vectors). ``first``: the first round's
    compile, made already (:func:`compile_together`; WGSL's and Metal's may have been made
    with the padding known before a compile, ``first.pads``: it stands for the first two
    rounds where ``padding.prediction_holds``, else the rounds start again from none);
    ``ready``: compiles of later rounds made already, by target and source text
    (:func:`pad_together`)."""
    pads: Pads = dict(first.pads) if first is not None else {}
    offset_only: Pads | None = None  # before also_pad's
    compiled: CompiledTarget | None
    errors: list[Diagnostic]
    # a first compile made with the predicted padding stands for the first two rounds
    done = 1 if pads else 0  # rounds made
    while done < _PADDING_ROUNDS:
        done += 1
        made = _made(src, options, target, pads, ready) if first is None else first
        if made is not None:
            compiled, errors, first = made, [], None
        else:
            compiled, errors = _compile_once(lib, src, options, target, pads.values())
        if compiled is None or target is Target.SpirV:
            return compiled, errors
        if compiled.pads:
            seen = as_declared(compiled.facts, compiled.code) if as_declared else compiled.facts
            if not prediction_holds(src, seen, target, pads):
                pads, done = {}, 0  # the usual rounds, from none
                continue
        more, refused, asked = _more_padding(src, target, compiled, pads, also_pad, as_declared)
        if refused:
            return None, refused
        if asked and offset_only is None:
            offset_only = dict(pads)
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
        # Slang's warnings about the conversions rewrite.bool_edits made are not the user's
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
                    *src.stream(path).position(start),
                    f"{TARGET_NAMES[target]}: this printf is left out: debug printf exists on "
                    "SPIR-V (Vulkan's debug printf) only",
                    Code.NOT_ON_TARGET,
                ),
                severity=Severity.WARNING,
            )
            for path, start, _ in rewrites.printf_calls(src)
        ]
    return compiled, errors


def _made(
    src: SourceSet,
    options: CompileOptions,
    target: Target,
    pads: Pads,
    ready: Mapping[tuple[Target, str], CompiledTarget] | None,
) -> CompiledTarget | None:
    """The compile of ``target`` with ``pads`` in ``ready``, if it was made already."""
    if not ready or not pads:
        return None
    text = slang_source(src, target, pads.values(), entry_stages(src, options))
    return ready.get((target, text))


def with_distances(facts: TargetFacts) -> TargetFacts:
    """The facts of a WGSL compile with the clip and cull distances that went to Slang as
    marked varyings (``rewrite.distance_edits``) named as the system values they are:
    built-ins, without a location."""
    back = {marker: name for name, marker in rewrite.DISTANCE_MARKERS.items()}
    for e in facts.entries:
        for v in (*e.inputs, *e.outputs):
            if v.semantic.upper() in back:
                v.semantic, v.location = back[v.semantic.upper()], None
    return facts


def _at_semantic(src: SourceSet, d: Diagnostic) -> Diagnostic:
    """Slang's "system value semantic not supported" (E55202) sometimes comes without a
    position: it is given the first place the source writes that semantic (``: NAME``, in any
    case)."""
    semantic = unsupported_semantic(d.message)
    if d.line or semantic is None:
        return d
    wanted = semantic.upper()
    for s in src.streams():
        for i, t in enumerate(s.tokens):
            if t.kind == "id" and t.text.upper() == wanted and s.is_(i - 1, ":"):
                return src.error_in(s.path, *s.line_col(i), d.message, d.code)
    return d


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
    if rewrites.printf_calls(src):
        asked += ["-capability", "SPV_KHR_non_semantic_info"]
    return asked


def _compile_once(
    lib: S.Library,
    src: SourceSet,
    options: CompileOptions,
    target: Target,
    pads: Collection[Padding],
) -> tuple[CompiledTarget | None, list[Diagnostic]]:
    stages = entry_stages(src, options)
    text = slang_source(src, target, pads, stages)
    args = _request_args(src, options, [target], text)
    origin = _origin(src, rewrites.plan(src, target, pads, stages))
    req = S.Request(lib, args, (str(src.path), text), _entries(options))
    try:
        result = req.compile()
        diags = _as_written(
            src, parse_diagnostics(result.diagnostics, src.display, src.text_of, origin)
        )
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
                interlocked = wgsl_interlocked(src, src.byte_atomic_buffers())
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


def _entries(options: CompileOptions) -> list[tuple[str, int]]:
    return [(e.name, SLANG_STAGE_ID[e.stage]) for e in options.entry_points]


def _compiled(
    lib: S.Library,
    src: SourceSet,
    target: Target,
    reflection: int,
    code: bytes,
    warnings: list[Diagnostic],
    memo: TypeMemo | None = None,
) -> CompiledTarget:
    """A target's compile, read while its request is alive: the facts (blocks renamed for
    Slang under their own names again; ``memo``: the request's, where it has several targets)
    and the code (WGSL's reserved words renamed)."""
    facts = read_facts(lib, reflection, memo)
    original = {new: old for old, new in src.renamed_blocks().items()}
    for p in facts.params:
        p.name = original.get(p.name, p.name)
    if target is Target.Wgsl:
        code = without_subgroups_enable(unreserved_wgsl(code))
    return CompiledTarget(target, facts, code, warnings)
