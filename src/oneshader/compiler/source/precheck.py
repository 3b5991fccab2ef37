"""Errors found in the source before Slang runs: what a requested target cannot express (and
Slang would reject without a position, drop silently, or crash on), at the declaration, attribute
or token that asks for it."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from oneshader.compiler.api import TARGET_NAMES, CompileOptions, stage_from_name
from oneshader.compiler.source import rewrite
from oneshader.compiler.source.kinds import RTYPES
from oneshader.compiler.source.query import Stream, is_word, template_argument, words_of
from oneshader.compiler.source.scanner import Attribute, Field, SourceFile, StructDef
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.compiler.source.varyings import (
    PixelPointSize,
    builtin_sides,
    misplaced_builtins,
    pixel_point_sizes,
)
from oneshader.diagnostics import Code, Collector, Diagnostic, Severity
from oneshader.reflection.model import (
    SUBPASS_INPUT_TYPES,
    TEXTURE_TYPES,
    ResourceTypeKind,
    Stage,
    Target,
)


def check_targets(src: SourceSet, options: CompileOptions, problems: Collector) -> None:
    """A request for no target at all (checked before the file is read)."""
    if not options.targets:
        message = "no targets requested (give one or more of spirv, msl, wgsl)"
        problems.add(Diagnostic(src.name, 0, 0, Severity.ERROR, message, Code.NO_TARGETS))


def check_request(src: SourceSet, options: CompileOptions, problems: Collector) -> None:
    """Errors of no one target, added to ``problems``: an entry point named in the options that
    the file does not define, a counter called on a parameter or local. The driver checks them
    before any target is checked."""
    for e in options.entry_points:
        if src.function(e.name) is None:
            defined = ", ".join(sorted(n for s in src.sources.values() for n in s.functions))
            problems.add(
                Diagnostic(
                    src.name,
                    0,
                    0,
                    Severity.ERROR,
                    f"entry point '{e.name}' not found: the file defines no function of that "
                    f"name (it defines: {defined or 'none'})",
                    Code.ENTRY_POINT_NOT_FOUND,
                )
            )
    problems.extend(_long_identifiers(src))
    problems.extend(_lines_out_of_range(src))
    problems.extend(_indirect_counters(src))
    problems.extend(_uniform_parameters(src, options))
    missing = _no_entry_point(src, options)
    if missing is not None:
        problems.add(missing)


MAX_IDENTIFIER = 4096
MAX_LINE = 2**31 - 1  # Slang's line numbers are 32-bit signed


def _line_number(directive: str) -> tuple[int, str] | None:
    """Where N of a ``#line N ...`` directive (as the preprocessor hands it on) starts in it,
    and N as written; None for any other directive."""
    rest = directive[1:].lstrip(" \t")
    if not rest.startswith("line") or rest[4:5] not in (" ", "\t"):
        return None
    after = rest[4:].lstrip(" \t")
    digits = after[: len(after) - len(after.lstrip("0123456789"))]
    return (len(directive) - len(after), digits) if digits else None


def _lines_out_of_range(src: SourceSet) -> list[Diagnostic]:
    """A ``#line N`` from which the file's lines would count past :data:`MAX_LINE`, at it:
    Slang's positions there would wrap (-1, or a small number: never the user's line)."""
    found = []
    for path, text in src.texts.items():
        total = text.count("\n") + 1
        s = src.stream(path)
        for i, t in enumerate(s.tokens):
            number = _line_number(t.text) if t.kind == "raw" else None
            if number is None:
                continue
            line, col = s.position(s.start(i) + number[0])
            last = int(number[1]) + total - line - 1  # the number of the file's last line
            if last > MAX_LINE:
                message = (
                    f"#line {number[1]}: the lines after it would count past {MAX_LINE}, "
                    "beyond what positions can hold"
                )
                found.append(src.error_in(path, line, col, message, Code.LINE_OUT_OF_RANGE))
    return found


def _long_identifiers(src: SourceSet) -> list[Diagnostic]:
    """The first over-long identifier of each file, at it: Slang's SPIR-V fails on one
    (1 MB) with no message at all."""
    found = []
    for path in src.texts:
        s = src.stream(path)
        long = next(
            (i for i, t in enumerate(s.tokens) if t.kind == "id" and len(t.text) > MAX_IDENTIFIER),
            None,
        )
        if long is not None:
            word = s.tokens[long].text
            message = (
                f"an identifier of {len(word)} characters ('{word[:16]}...'): at most "
                f"{MAX_IDENTIFIER} are supported"
            )
            found.append(src.error_in(path, *s.line_col(long), message, Code.IDENTIFIER_TOO_LONG))
    return found


def _declares_numthreads(src: SourceSet) -> bool:
    """Whether any file has a ``[numthreads(`` attribute."""
    return any(
        s.is_(i - 1, "[") and s.is_(i + 1, "(")
        for s in src.streams()
        for i in s.words(("numthreads",))
    )


def _no_entry_point(src: SourceSet, options: CompileOptions) -> Diagnostic | None:
    """HLSL written for DXC marks no entry point (``float4 main(...)``: DXC's command line names
    it and its stage); Slang then finds none (its E57004, "no exported symbols"). Said here,
    with what to write; a ``[numthreads]`` function is one Slang finds (a compute shader)."""
    if options.entry_points or entry_stages(src, options) or _declares_numthreads(src):
        return None
    message = (
        'no entry point: the file marks none with [shader("...")] and none was given; name '
        "it as DXC does, 'oneshader build FILE -E main -T ps_6_0' (vs_6_0, cs_6_0), or give "
        "the file's stage by its name in pyproject.toml ([tool.oneshader.stages] "
        '"*PS.hlsl" = "pixel"; *.vsh, *.psh, *.csh, *.vert.hlsl, *.frag.hlsl, *.comp.hlsl '
        'need nothing), or write [shader("pixel")] before the function'
    )
    fn = src.function("main")
    if fn is None:
        return Diagnostic(src.name, 0, 0, Severity.ERROR, message, Code.NO_ENTRY_POINTS)
    return src.error_in(
        src.function_file("main"), fn.line, fn.column, message, Code.NO_ENTRY_POINTS
    )


def _uniform_parameters(src: SourceSet, options: CompileOptions) -> list[Diagnostic]:
    """An entry point's ``uniform`` parameter: Slang gathers them into a block of its own
    (``entryPointParams``: a push constant for SPIR-V, a buffer for WGSL and Metal), which the
    reflection does not describe (DXC puts them in ``$Globals``): an error at each, every
    target (they were internal errors, OS9000)."""
    out = []
    for name in entry_stages(src, options):
        fn = src.function(name)
        if fn is None:
            continue
        for f in fn.fields:
            if "uniform" in f.modifiers:
                out.append(
                    src.error_in(
                        src.function_file(name),
                        f.line,
                        f.column,
                        f"entry point '{name}': 'uniform' parameter '{f.name}': oneshader "
                        "does not reflect an entry point's uniform parameters (Slang gathers "
                        "them into a block of its own, DXC into $Globals); declare it as a "
                        "global instead",
                        Code.LOOSE_UNIFORM_NOT_GATHERED,
                    )
                )
    return out


# Texture types WGSL lacks (it has texture_1d and texture_storage_1d, no arrays of them).
_NO_WGSL_TEXTURE = frozenset({ResourceTypeKind.Texture1DArray, ResourceTypeKind.RWTexture1DArray})


def precheck(
    src: SourceSet,
    options: CompileOptions,
    problems: Collector,
    lacking: dict[Target, list[Diagnostic]],
    unless_dead: dict[Target, list[Diagnostic]] | None = None,
) -> frozenset[Target]:
    """Errors a target would give without a position (or crash on), found in the source and
    added to ``problems`` in target order, each target's after it ``lacking`` (the quirk
    registry's refusals: ``quirks.refusals.refused``) and, for a target refused anyway,
    ``unless_dead`` (the refusals the driver otherwise decides from Slang's code:
    ``quirks.refusals.unless_dead``); returns the targets refused. A refused target is not
    compiled; the others are, so their errors come in the same run (the driver checks
    ``problems`` once every target has compiled)."""
    per: dict[Target, list[Diagnostic]] = {t: [] for t in Target if t in options.targets}
    decls = src.declarations()
    targets = options.targets
    names = {d.name for d in decls.values()}
    for d in decls.values():
        rtype = RTYPES.get(d.base, (None, None))[0]
        spelled = d.name.replace(".", "_")  # the field's global in WGSL and MSL
        if spelled != d.name and spelled in names:
            for t in (Target.Msl, Target.Wgsl):
                if t in targets:
                    per[t].append(
                        src.at_decl(
                            d,
                            f"{TARGET_NAMES[t]}: '{d.name}', a field of a global struct of "
                            f"resources, becomes the global '{spelled}' there, which is also "
                            "the name of another declaration; rename one of them",
                            Code.STRUCT_OF_RESOURCES,
                        )
                    )
        if d.base.startswith("RasterizerOrdered") and Target.Wgsl in targets:
            per[Target.Wgsl].append(
                src.at_decl(
                    d,
                    f"WGSL: no rasterizer-ordered views ('{d.name}' is a {d.base}); use the "
                    f"RW type if the order does not matter, or build without the wgsl target",
                    Code.TYPE_NOT_EMITTED,
                )
            )
        if rtype in _NO_WGSL_TEXTURE and Target.Wgsl in targets:
            per[Target.Wgsl].append(
                src.at_decl(
                    d,
                    f"WGSL: no 1D array textures ('{d.name}' is a {d.base}; Slang would write "
                    f"a type WGSL lacks); use a {d.base.replace('1D', '2D')} of height 1, or "
                    "build without the wgsl target",
                    Code.NOT_ON_TARGET,
                )
            )
        for t in (Target.Msl, Target.Wgsl):
            if rtype in SUBPASS_INPUT_TYPES and t in targets:
                per[t].append(
                    src.at_decl(
                        d,
                        f"{TARGET_NAMES[t]}: '{d.name}' is a {d.base}, a Vulkan input "
                        f"attachment, which {TARGET_NAMES[t]} cannot express; build it for "
                        "spirv only, or read the attachment as a Texture2D with Load()",
                        Code.SUBPASS_INPUT,
                    )
                )
    for t in (Target.Msl, Target.Wgsl):
        if t in targets:
            per[t] += _counted_parameters(src, t)
    if Target.Wgsl in targets:
        per[Target.Wgsl] += _uniform_scalar_arrays_passed(src)
        per[Target.Wgsl] += _half_texel_typedefs(src, options.enable_16bit_types)
    if Target.Msl in targets:
        per[Target.Msl] += _metal_out_parameters(src, options)
    stages = entry_stages(src, options)
    pixel_only = {(p.path, p.field.line, p.field.column): p for p in pixel_point_sizes(src, stages)}
    every_target = [_pixel_point_size_error(src, p) for p in pixel_only.values() if not p.left_out]
    misplaced = misplaced_builtins(src, stages)
    every_target += [_misplaced_builtin(src, *m) for m in misplaced]
    decided = {*pixel_only, *((path, f.line, f.column) for path, f, _, _ in misplaced)}
    for path, scanned in src.sources.items():
        for sdef in (*scanned.structs.values(), *scanned.functions.values()):
            for f in sdef.fields:
                if (path, f.line, f.column) in decided:
                    continue  # left out (slang.request), or every_target's error
                for t, diag in _attribute_errors(src, scanned, f.attributes, f.name, options):
                    per[t].append(diag)
    for t, diag in _derived_stage_structs(src, options):
        per[t].append(diag)
    for t, errors in lacking.items():
        if t in per:
            per[t] += errors
    refused = frozenset(per) if every_target else frozenset(t for t, errs in per.items() if errs)
    for t, errors in (unless_dead or {}).items():
        if t in refused:
            per[t] += errors
    problems.extend(every_target)
    for t in Target:
        problems.extend(per.get(t, []))
    return refused


_UNIFORM_SCALARS = frozenset(
    {"float", "int", "uint", "bool", "half", "dword", "min16float", "min16int", "min16uint"}
)
_NUMERIC_TYPES = frozenset(
    f"{b}{n}" for b in _UNIFORM_SCALARS for n in ("", "1", "2", "3", "4", "2x2", "3x3", "4x4")
) | {"if", "while", "for", "switch", "return"}


def _uniform_scalar_arrays_passed(src: SourceSet) -> list[Diagnostic]:
    """WGSL: an element of an array of scalars in a constant buffer (``cbuffer C { float
    w[4]; }``, a struct's member there, a loose global) that is a call's whole argument
    (``sqrt(w[i])``, ``asuint(w[i])``, a user's function): Slang's WGSL back end crashes on
    it (SIGSEGV: its std140 wrapper of the array, each element a vec4, is not unwrapped for
    the call; plain Slang alike), so it is refused at the first such use. Type conversions
    (``uint(w[i])``) and arithmetic (``sqrt(w[i] * 2)``) build. Such an array of 2 or more
    copied whole into a struct's member (``t.s = w;``) is refused too: Slang's WGSL for it is
    not valid (bare ``CB.w.data_0[1].x;`` statements, an undeclared ``_S1``; plain Slang
    alike), where a local array's (``a = w;``, ``float a[3] = w;``) is."""
    names: set[str] = set()  # direct (a block's or a global's) and members (after a ".")
    members: set[str] = set()
    single: set[str] = set()  # arrays of one element (copied whole, valid)
    structs: list[str] = []
    decls = src.declarations()
    for scanned in src.sources.values():
        for sdef in scanned.structs.values():
            if sdef.kind not in ("cbuffer", "tbuffer"):
                continue
            for f in sdef.fields:
                if (
                    f.array is not None
                    and f.type_text.split()[-1:]
                    and (f.type_text.split()[-1] in _UNIFORM_SCALARS)
                ):
                    names.add(f.name)
                    single |= {f.name} if f.array == 1 else set()
                else:
                    structs.append(f.type_text.split()[-1] if f.type_text else "")
    for d in decls.values():
        loose = not {"static", "const", "groupshared"} & set(d.modifiers)
        if d.base in _UNIFORM_SCALARS and d.array is not None and loose:
            names.add(d.name)
            single |= {d.name} if d.array == 1 else set()
        if d.base.startswith("ConstantBuffer"):
            inner = d.type_text.split("<", 1)[-1].rstrip(">").strip()
            structs.append(inner)
    seen: set[str] = set()
    while structs:
        name = structs.pop()
        held = src.struct(name) if name not in seen else None
        seen.add(name)
        if held is None:
            continue
        for f in held.fields:
            last = f.type_text.split()[-1] if f.type_text else ""
            if f.array is not None and last in _UNIFORM_SCALARS:
                members.add(f.name)
                single |= {f.name} if f.array == 1 else set()
            else:
                structs.append(last)
    if not names and not members:
        return []
    for s in src.streams():
        for i in s.words(names | members):
            after_dot = s.at(i - 1).text == "."
            if (after_dot and s.at(i).text not in members) or (
                not after_dot and s.at(i).text not in names
            ):
                continue
            start = i - 2 if after_dot and s.at(i - 2).kind == "id" else i
            if not s.is_(i + 1, "["):
                copied = s.is_(i + 1, ";") and s.is_(start - 1, "=") and s.is_(start - 3, ".")
                if not copied or s.at(start - 2).kind != "id" or s.at(i).text in single:
                    continue
                message = (
                    f"WGSL: '{s.at(i).text}', a constant buffer's array of scalars, copied "
                    f"whole into a struct's member '{s.at(start - 2).text}': Slang's WGSL "
                    "for it is not valid; copy it into a local array first "
                    f"('float a[N] = {s.at(i).text};'), or element by element, or build "
                    "without the wgsl target"
                )
            else:
                end = s.closing(i + 1)
                whole = s.at(start - 1).text in ("(", ",") and s.at(end).text in (")", ",")
                callee = _enclosing_call(s, i) if whole and end > 0 else None
                if callee is None:
                    continue
                message = (
                    f"WGSL: '{s.at(i).text}[...]', an element of a constant buffer's array of "
                    f"scalars, passed to '{callee}': Slang's WGSL back end crashes on it; "
                    f"declare the array of 4-vectors ('float4 {s.at(i).text}[N]', the same "
                    "std140 layout) and read '.x', or build without the wgsl target"
                )
            line, col = s.line_col(i)
            return [src.error_in(s.path, line, col, message, Code.NOT_ON_TARGET)]
    return []


_HALF_TEXELS = frozenset(f"{b}{n}" for b in ("half", "float16_t") for n in ("", "1", "2", "3", "4"))
_MIN16_TEXELS = frozenset(f"min16float{n}" for n in ("", "1", "2", "3", "4"))


def _half_texel_typedefs(src: SourceSet, sixteen_bit: bool) -> list[Diagnostic]:
    """WGSL: a texture whose texel type is a typedef of ``half`` (FidelityFX's
    ``Texture2D<FfxFloat16x4>``, ``typedef float16_t4 FfxFloat16x4;``; ``min16float`` under
    ``-enable-16bit-types``): Slang's WGSL fails in its own module (E41400, no position in the
    shader). A texel spelled ``half4`` is the quirk record ``wgsl-half-texels``'s."""
    aliases: dict[str, str] = {}
    for s in src.streams():
        for i in s.words(("typedef",)):
            j = i + 1
            while s.at(j).kind == "id" and s.at(j + 1).kind == "id":
                j += 1
            if s.at(j).kind == "id" and s.is_(j + 1, ";") and j > i + 1:
                aliases[s.at(j).text] = s.at(j - 1).text
    halves = _HALF_TEXELS | (_MIN16_TEXELS if sixteen_bit else frozenset())
    out = []
    for d in src.declarations().values():
        rtype = RTYPES.get(d.base, (None, None))[0]
        texel = template_argument(d.type_text) if rtype in TEXTURE_TYPES else None
        if texel is None or texel not in aliases:
            continue
        resolved, seen = texel, set()
        while resolved in aliases and resolved not in seen:
            seen.add(resolved)
            resolved = aliases[resolved]
        if resolved in halves:
            out.append(
                src.at_decl(
                    d,
                    f"WGSL: '{d.name}' is a texture of 16-bit texels ({texel}, a {resolved}): "
                    "WGSL's textures hold f32, i32 or u32 (a half texture is sampled as float "
                    "on every target); declare its texels float or build without the wgsl target",
                    Code.NOT_ON_TARGET,
                )
            )
    return out


def _enclosing_call(s: Stream, i: int) -> str | None:
    """The function whose call's arguments hold token ``i`` (in the statement), when it is not
    a numeric type's conversion or a statement's keyword."""
    j = i - 1
    while j >= 0:
        t = s.at(j).text
        if t in (";", "{", "}"):
            return None
        if t in (")", "]"):
            j = s.opening(j) - 1
            if j < -1:
                return None
            continue
        if t == "(" and s.at(j - 1).kind == "id" and s.at(j - 1).text not in _NUMERIC_TYPES:
            return s.at(j - 1).text
        j -= 1
    return None


def _derived_structs(src: SourceSet) -> set[str]:
    """The structs and classes declared with a base (``struct D : [public] Base {``)."""
    out = set()
    for s in src.streams():
        for i in s.words(("struct", "class")):
            name, k = s.at(i + 1), i + 3
            if name.kind != "id" or not s.is_(i + 2, ":"):
                continue
            k += 1 if s.is_(k, "public") and s.at(k + 1).kind == "id" else 0
            if s.at(k).kind == "id" and s.is_(k + 1, "{"):
                out.add(name.text)
    return out


def _derived_stage_structs(
    src: SourceSet, options: CompileOptions
) -> list[tuple[Target, Diagnostic]]:
    """A derived struct (``struct D : Base``) as an entry point's input or output: Slang crashes
    on it for every target (OS9001, the file only; WGSL may first miss a position in the base):
    an error at the parameter (or the entry point, for its result) instead."""
    derived = _derived_structs(src)
    targets = [t for t in Target if t in options.targets]
    if not derived or not targets:
        return []
    out = []
    for name in entry_stages(src, options):
        fn = src.function(name)
        if fn is None:
            continue
        places = [(f.line, f.column, f.type_text, f"'{f.name}'") for f in fn.fields]
        places.append((fn.line, fn.column, fn.returns, "the result"))
        for line, col, type_text, what in places:
            words = set(words_of(type_text)) & derived
            if not words:
                continue
            for t in targets:
                message = (
                    f"{TARGET_NAMES[t]}: {what} of entry point '{name}' is a derived struct "
                    f"('{min(words)}' has a base), which Slang crashes on as a stage input or "
                    "output; declare the struct without a base (its members copied in)"
                )
                out.append(
                    (
                        t,
                        src.error_in(
                            src.function_file(name), line, col, message, Code.NOT_ON_TARGET
                        ),
                    )
                )
    return out


def _misplaced_builtin(src: SourceSet, path: Path, f: Field, builtin: str, side: str) -> Diagnostic:
    """A ``[[vk::builtin]]`` where DXC refuses it (Slang's error would name the semantic
    oneshader rewrote it to, or a target)."""
    a = next(a for a in f.attributes if a.name == "vk::builtin")
    return src.error_in(
        path,
        a.line,
        a.column,
        f"[[vk::builtin(\"{builtin}\")]] on '{f.name}' in {side}: DXC takes {builtin} only "
        f"as {builtin_sides(builtin)}; remove it there",
        Code.VK_BUILTIN,
    )


def _pixel_point_size_error(src: SourceSet, p: PixelPointSize) -> Diagnostic:
    """A pixel input's PointSize that cannot be left out as DXC leaves it out: the code reads
    it, or another stage's entry point shares its struct (one source for both)."""
    builtin = f"[[vk::builtin(\"PointSize\")]] '{p.field.name}'"
    if p.vertex_entry:
        a = p.field.attributes[0]
        return src.error_in(
            p.path,
            a.line,
            a.column,
            f"{builtin} of '{p.owner}' is an input of a pixel entry point and in the signature of "
            f"'{p.vertex_entry}' too: Vulkan has no point size in the fragment stage, so DXC "
            "leaves it out of the pixel input, which oneshader does only for a struct no other "
            "entry point of the file uses; give the pixel entry point its own input struct "
            "without it",
            Code.VK_BUILTIN,
        )
    assert p.read_at is not None
    path, line, col = p.read_at
    return src.error_in(
        path,
        line,
        col,
        f"{builtin} is read by the pixel shader: Vulkan has no point size in the fragment "
        "stage (DXC makes no input of it, and its module is invalid where the code reads it); "
        "pass the size at a location (a member without vk::builtin) and read that instead",
        Code.VK_BUILTIN,
    )


def entry_stages(src: SourceSet, options: CompileOptions) -> dict[str, Stage]:
    """The entry points the build compiles: those the options name, or the [shader] ones."""
    if options.entry_points:
        return {e.name: e.stage for e in options.entry_points}
    out: dict[str, Stage] = {}
    for scanned in src.sources.values():
        for a in scanned.entries:
            try:
                out.setdefault(a.name, stage_from_name(a.stage))
            except ValueError:
                continue  # a stage oneshader does not build: OS1009 names it
    return out


def _metal_out_parameters(src: SourceSet, options: CompileOptions) -> list[Diagnostic]:
    """``out`` parameters that Slang's Metal crashes on (beside a vertex result) or stops on (a
    pixel entry point, an internal error naming no line) and that no wrapper returns
    (``returned_outputs``): at the first struct one."""
    out = []
    for name, stage in entry_stages(src, options).items():
        fn = src.function(name)
        if fn is None or stage is Stage.Compute or returned_outputs(src, fn) is not None:
            continue
        void = fn.returns.split()[-1:] in ([], ["void"])
        if stage is Stage.Vertex and void:
            continue  # Slang's Metal builds these
        first = next(
            f
            for f in fn.fields
            if {"out", "inout"} & set(f.modifiers) and src.struct(f.type_text.split()[-1])
        )
        out.append(
            src.error_in(
                src.function_file(name),
                first.line,
                first.column,
                f"Metal: '{first.name}' is a struct out parameter of entry point '{name}' beside "
                "other outputs, which Slang cannot emit for Metal; return a struct that holds "
                "every output instead, or build without the msl target",
                Code.OUT_PARAMETERS,
            )
        )
    return out


def returned_outputs(src: SourceSet, fn: StructDef) -> str | None:
    """How a wrapper returns an entry point's ``out``/``inout`` parameters
    (``rewrite.entry_outputs_as_results``): "members" of a struct of them, "direct" (its one
    parameter, a struct, returned as it is), or None: a struct parameter beside other outputs
    (Slang loses a pixel input's built-ins of a struct it also finds inside another)."""
    outs = [f for f in fn.fields if {"out", "inout"} & set(f.modifiers)]
    structs = [f for f in outs if src.struct(f.type_text.split()[-1]) is not None]
    if not structs:
        return "members"
    void = fn.returns.split()[-1:] in ([], ["void"])
    if len(outs) == 1 and void and outs[0].array is None:
        return "direct"
    return "members" if flattened_outputs(src, fn) is not None else None


_FLAT_MODIFIERS = frozenset(
    {"nointerpolation", "linear", "centroid", "noperspective", "sample", "precise"}
)


def flattened_outputs(
    src: SourceSet, fn: StructDef
) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] | None:
    """The struct ``out``/``inout`` parameters of an entry point beside other outputs as the
    wrapper returns them, member by member (``rewrite.entry_outputs_as_results``): per such
    parameter, its name, its members' declarations (modifiers, type, name, semantic) and
    names. None where they cannot be: a member that is a struct or has no semantic (or an
    attribute), an array of structs or one with a semantic of its own, or two outputs of one
    name (the reflection names a stage variable by its member name)."""
    outs = [f for f in fn.fields if {"out", "inout"} & set(f.modifiers)]
    names = [f.name for f in outs if src.struct(f.type_text.split()[-1]) is None]
    if fn.returns.split()[-1:] not in ([], ["void"]):
        names.append("result")
    flat = []
    for f in outs:
        sdef = src.struct(f.type_text.split()[-1])
        if sdef is None:
            continue
        if f.array is not None or f.semantic or not sdef.fields:
            return None
        decls, members = [], []
        for m in sdef.fields:
            if src.struct(m.type_text.split()[-1]) is not None or not m.semantic or m.attributes:
                return None
            if not set(m.modifiers) <= _FLAT_MODIFIERS:
                return None
            count = "" if m.array is None else f"[{m.array}]"
            mods = " ".join(m.modifiers)
            decls.append(f"{mods} {m.type_text} {m.name}{count} : {m.semantic};".strip())
            members.append(m.name)
        names += members
        flat.append((f.name, tuple(decls), tuple(members)))
    if len(set(names)) != len(names):
        return None
    return tuple(flat)


def _attribute_errors(
    src: SourceSet,
    file_: SourceFile,
    attributes: tuple[Attribute, ...],
    name: str,
    options: CompileOptions,
) -> list[tuple[Target, Diagnostic]]:
    """DXC attributes on struct members that a requested target cannot honour."""
    out: list[tuple[Target, Diagnostic]] = []
    file = src.display(file_.path)
    targets = [t for t in Target if t in options.targets]
    for a in attributes:
        if a.name == "vk::builtin":
            builtin = a.args[0] if a.args else ""
            known = builtin in rewrite.VK_BUILTINS
            for t in targets:
                draw_index = builtin == "DrawIndex" and t is not Target.SpirV
                if known and t is not Target.Wgsl and not draw_index:
                    continue
                if t is Target.Wgsl and builtin == "PointSize":
                    if name in src.unit_point_sizes():
                        continue  # 1.0, what WGSL draws: dropped with a warning (slang.request)
                    why = (
                        "has no point size (WGSL draws 1-pixel points; a member only ever set "
                        "to 1.0 would be dropped)"
                    )
                elif known and (t is Target.Wgsl or draw_index):
                    why = (
                        "has no draw-index built-in"
                        if draw_index
                        else "has no draw-parameter built-ins"
                    )
                else:  # (SPIR-V has it: the gap is the reflection's, on every target)
                    out.append(
                        (
                            t,
                            src.error(
                                file,
                                a.line,
                                a.column,
                                f"[[vk::builtin(\"{builtin}\")]] on '{name}': "
                                f"{TARGET_NAMES[t]}: the reflection format has no record for "
                                "this built-in (oneshader knows "
                                + ", ".join(rewrite.VK_BUILTINS)
                                + "); remove it, or use its HLSL system-value semantic where "
                                "HLSL has one",
                                Code.VK_BUILTIN,
                            ),
                        )
                    )
                    continue
                out.append(
                    (
                        t,
                        src.error(
                            file,
                            a.line,
                            a.column,
                            f"[[vk::builtin(\"{builtin}\")]] on '{name}': {TARGET_NAMES[t]} "
                            f"{why}; remove it or build without the {t.value} target",
                            Code.VK_BUILTIN,
                        ),
                    )
                )
    return out


# HLSL's Interlocked* function -> the method of Slang's Atomic<T> that does the same.
_ATOMIC_METHODS = {
    "InterlockedAdd": "add",
    "InterlockedAnd": "and",
    "InterlockedOr": "or",
    "InterlockedXor": "xor",
    "InterlockedMin": "min",
    "InterlockedMax": "max",
    "InterlockedExchange": "exchange",
    "InterlockedCompareExchange": "compareExchange",
    "InterlockedCompareStore": "compareExchange",
}


def _indirect_counters(src: SourceSet) -> list[Diagnostic]:
    """``IncrementCounter``/``DecrementCounter`` on a parameter or local (a buffer passed to a
    function): the counter is rewritten as a companion buffer of a global declaration, which
    cannot follow a buffer through a variable (Slang alone rejects every counter: E36107)."""
    decls = src.declarations()
    out = []
    for call in src.counter_uses():
        d = decls.get(call.obj or "")
        if d is not None and d.base == "RWStructuredBuffer":
            continue
        out.append(
            src.at_token(
                call.path,
                call.token,
                f"{call.name} on '{call.obj}', which is not a global "
                "RWStructuredBuffer: a counter is only available through the buffer's global "
                "declaration (a companion counter is made for it); call it on the global "
                "buffer (an element of a global array is fine) instead of a parameter or local",
                Code.APPEND_CONSUME_AS_PARAMETER,
            )
        )
    return out


def _counted_parameters(src: SourceSet, target: Target) -> list[Diagnostic]:
    """An append/consume buffer type written anywhere but a global declaration (a function
    parameter, say): on WGSL and Metal such buffers are rewritten as RW buffers with a companion
    counter (rewrite.py), which only a global declaration gets; Slang would report a type
    mismatch at the call instead."""
    globals_at = {(src.resolved(d.file), d.line) for d in src.append_consume().values()}
    out = []
    for p in src.texts:
        s = src.stream(p)
        for i in s.words(("AppendStructuredBuffer", "ConsumeStructuredBuffer")):
            line, col = s.line_col(i)
            if (p, line) in globals_at:
                continue
            out.append(
                src.error_in(
                    p,
                    line,
                    col,
                    f"{TARGET_NAMES[target]}: an {s.tokens[i].text} can only be used "
                    "through its global declaration here (its counter becomes a companion "
                    "buffer of that declaration); use the global buffer in the function instead "
                    "of passing it, or build for spirv only",
                    Code.APPEND_CONSUME_AS_PARAMETER,
                )
            )
    return out


def spirv_texture_buffers(src: SourceSet, slang_error: str) -> list[Diagnostic]:
    """Slang cannot emit a tbuffer/TextureBuffer that the code reads for SPIR-V (an internal
    error without a position; an unused one is dropped and builds): the error at the
    declarations the message names (Slang spells '_' as 'x5F'), else at every one."""
    buffers = [
        d
        for d in src.declarations().values()
        if RTYPES.get(d.base, (None, None))[0] is ResourceTypeKind.TextureBuffer
    ]
    spelled = slang_error.replace("x5F", "_")
    named = [
        d
        for d in buffers
        if _names(spelled, f"ParameterGroup_{d.name}")
        or _names(spelled, f"TextureBuffer(%{template_argument(d.type_text) or chr(0)}")
    ]
    return [
        src.at_decl(
            d,
            f"SPIR-V: Slang cannot emit a tbuffer/TextureBuffer that the code reads ('{d.name}') "
            "for SPIR-V; use a cbuffer or a StructuredBuffer, or build without the spirv target",
            Code.TYPE_NOT_EMITTED,
        )
        for d in named or buffers
    ]


def _names(message: str, word: str) -> bool:
    """Whether ``message`` holds ``word`` not followed by a word character."""
    at = message.find(word)
    while at >= 0:
        after = message[at + len(word) : at + len(word) + 1]
        if not is_word(after):
            return True
        at = message.find(word, at + 1)
    return False


# The scalar types of HLSL's matrices, and the shapes of one row or one column.
_SCALARS = (
    *("bool", "int", "uint", "dword", "half", "float", "double"),
    *(f"min{bits}{t}" for bits in (10, 12, 16) for t in ("float", "int", "uint")),
    *(f"{t}{bits}_t" for t in ("int", "uint", "float") for bits in (16, 32, 64)),
)
_ONE_LINE = ("1", "2", "3", "4")
_ONE_LINE_SHAPES = {(1, n) for n in range(1, 5)} | {(n, 1) for n in range(1, 5)}
_ONE_LINE_MATRICES = frozenset(f"{s}{r}x{c}" for s in _SCALARS for r, c in _ONE_LINE_SHAPES)


def _one_line_matrix(s: Stream, i: int) -> int:
    """The index just past a matrix type with one row or one column at ``i`` (``float1x3``,
    ``int4x1``, ``matrix<float, 1, 3>``), or -1."""
    t = s.tokens[i]
    if t.kind != "id":
        return -1
    if t.text in _ONE_LINE_MATRICES:
        return i + 1
    if t.text != "matrix" or not s.is_(i + 1, "<") or s.at(i + 2).kind != "id":
        return -1
    shape = s.at(i + 4).text, s.at(i + 6).text
    if not (s.is_(i + 3, ",") and s.is_(i + 5, ",") and s.is_(i + 7, ">")):
        return -1
    rows, cols = shape
    if rows in _ONE_LINE and cols in _ONE_LINE and (int(rows), int(cols)) in _ONE_LINE_SHAPES:
        return i + 8
    return -1


def one_line_matrices(src: SourceSet, target: Target) -> list[Diagnostic]:
    """Slang has no matrices with one row or one column on any target (DXC writes them as
    vectors): its error names no type and no position, so each such type in the source is the
    error, where it is written. Applied only when Slang gave that error."""
    out = []
    for s in src.streams():
        i = 0
        while i < len(s):
            end = _one_line_matrix(s, i)
            if end < 0:
                i += 1
                continue
            out.append(
                src.error_in(
                    s.path,
                    *s.line_col(i),
                    f"{TARGET_NAMES[target]}: '{s.span_text(i, end)}' is a matrix with one row "
                    "or one column, which Slang cannot emit for any target; declare a vector "
                    "(or an array of vectors) instead",
                    Code.TYPE_NOT_EMITTED,
                )
            )
            i = end
    return out


def wgsl_interlocked(src: SourceSet, atomic_words: Collection[str] = ()) -> list[Diagnostic]:
    """WGSL has atomics only on atomic<u32>/atomic<i32> variables, so Slang refuses every HLSL
    Interlocked* (on groupshared, structured and byte-address buffers alike) with E36107 at the
    entry point, naming nothing. This says which call and what to declare instead. Applied only
    when Slang gave that error, since Slang compiles such a call in code no entry point reaches.
    ``atomic_words``: the byte-address buffers WGSL holds as atomic words (they build)."""
    decls = src.declarations()
    out: list[Diagnostic] = []
    for call in src.interlocked_calls():
        fn, method = call.name, _ATOMIC_METHODS[call.name]
        obj = call.obj
        name = obj or call.arg
        if obj in atomic_words:
            continue
        d = decls.get(name)
        element = "int" if d is not None and "<int>" in "".join(d.type_text.split()) else "uint"
        if obj is not None and d is not None and d.base == "RWByteAddressBuffer":
            on = (
                f"a RWByteAddressBuffer ('{obj}') that is not only read and written one word at "
                "a time (WGSL's array<atomic<u32>> holds one where every use is a Load, Store or "
                "Interlocked* but InterlockedMin/Max; here there is another: Load2, Load<T>, "
                "GetDimensions, a signed or unsigned min/max, the buffer passed on)"
            )
            instead = "use only those on it, or declare RWStructuredBuffer<Atomic<uint>> and use "
            instead += f".{method}()"
        elif obj is not None:
            on = f"a {d.base} ('{obj}')" if d is not None else f"'{obj}'"
            instead = f"declare RWStructuredBuffer<Atomic<{element}>> and use .{method}()"
        elif d is not None and "groupshared" in d.modifiers:
            on = f"groupshared '{name}'"
            instead = f"declare it groupshared Atomic<{d.base}> and use .{method}()"
        elif d is not None and _integer_template(d.type_text):
            on = f"a {d.type_text} ('{name}')"
            instead = f"declare RWStructuredBuffer<Atomic<{element}>> and use .{method}()"
        else:
            on = f"'{name}'" if name else "its destination"
            instead = (
                f"declare the variable or struct member Atomic<uint> (or Atomic<int>) and use "
                f".{method}()"
            )
        out.append(
            src.at_token(
                call.path,
                call.token,
                f"WGSL: {fn} on {on} cannot be expressed (WGSL atomics are atomic<u32>/"
                f"atomic<i32> variables); {instead}, which returns the original value, or "
                "build without the wgsl target",
                Code.WGSL_INTERLOCKED,
            )
        )
    return out


def _integer_template(type_text: str) -> bool:
    """Whether a type is written ``Name<int>`` or ``Name<uint>`` (spaces inside the brackets
    only)."""
    head, bracket, rest = type_text.partition("<")
    return bool(bracket) and is_word(head) and "".join(rest.split()) in ("int>", "uint>")
