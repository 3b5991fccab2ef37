"""One Slang request per target (Slang reflects the first target of a request only): the
arguments, the source text handed to Slang (every file rewritten, docs/compiler.md "Source
rewrites"), and what comes back: the target's code and facts, or its positioned errors."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from oneshader.compiler.api import TARGET_NAMES, CompileOptions
from oneshader.compiler.front import rewrite
from oneshader.compiler.front.precheck import spirv_texture_buffers, wgsl_interlocked
from oneshader.compiler.front.scanner import Declaration
from oneshader.compiler.front.sourceset import SourceSet
from oneshader.compiler.slang import capi as S
from oneshader.compiler.slang.facts import SLANG_STAGE_ID, TargetFacts, read_facts
from oneshader.compiler.slang.messages import explain
from oneshader.compiler.slang.messages import parse as parse_diagnostics
from oneshader.compiler.slang.reserved import wgsl_without_reserved_words
from oneshader.diagnostics import Code, Diagnostic, Severity, source_excerpt
from oneshader.reflection.model import Stage, Target

_SLANG_TARGET = {Target.SpirV: "spirv", Target.Msl: "metal", Target.Wgsl: "wgsl"}

# DXC's minimum-precision types are 32-bit unless -enable-16bit-types; so they are here.
_MIN_PRECISION = [
    (f"{name}{n}", f"{base}{n}")
    for name, base in (
        ("min16float", "float"),
        ("min10float", "float"),
        ("min16int", "int"),
        ("min12int", "int"),
        ("min16uint", "uint"),
    )
    for n in ("", "1", "2", "3", "4", "1x1", "2x2", "3x3", "4x4")
]


@dataclass
class CompiledTarget:
    target: Target
    facts: TargetFacts
    code: bytes
    warnings: list[Diagnostic] = field(default_factory=list)


def slang_args(target: Target, o: CompileOptions) -> list[str]:
    args = [
        "-target",
        _SLANG_TARGET[target],
        "-matrix-layout-row-major" if o.row_major else "-matrix-layout-column-major",
        "-enable-machine-readable-diagnostics",
        "-no-mangle",
        "-line-directive-mode",
        "none",
    ]
    if target is Target.SpirV:
        args += ["-profile", "spirv_1_5", "-emit-spirv-directly", "-fvk-use-entrypoint-name"]
    for d in o.include_dirs:
        args += ["-I", d]
    for name, value in _MIN_PRECISION:
        args += ["-D", f"{name}={value}"]
    for name, value in o.defines:
        args += ["-D", f"{name}={value}" if value else name]
    return args


def _declared_in(decls: dict[str, Declaration], path: Path) -> set[str]:
    return {n for n, d in decls.items() if Path(d.file).resolve() == path}


def _rewritten(
    src: SourceSet,
    path: Path,
    target: Target,
    counted: dict[str, Declaration],
    appended: dict[str, Declaration],
) -> str:
    text = src.texts[path]
    decls = src.declarations()
    renamed = [
        (decls[old].line, decls[old].column, old, new)
        for old, new in src.renamed_blocks().items()
        if Path(decls[old].file).resolve() == path
    ]
    if renamed:
        text = rewrite.rename_at(text, renamed)
    if counted:
        text = rewrite.with_counter_buffers(text, counted, _declared_in(counted, path))
    if appended and target is not Target.SpirV:
        # SPIR-V has hidden counters; WGSL and Metal get the same companion as RW counters.
        text = rewrite.with_append_consume_as_rw(text, appended, _declared_in(appended, path))
    text = rewrite.vk_builtins(text)
    text = rewrite.pack_matrix(text)
    text = rewrite.matrix_array_majorness(text)
    text = rewrite.without_space_only_registers(text)
    text = rewrite.bitfield_words(text, src.sources[path])
    text = rewrite.block_resources_as_globals(text, src.sources[path])
    subpass = src.subpass_inputs()
    if subpass and target is Target.SpirV:
        text = rewrite.subpass_inputs_as_vectors(text, subpass, _declared_in(subpass, path))
    if target is not Target.SpirV:
        # HLSL's 'linear' is the default (perspective-correct) interpolation; Slang emits it
        # as WGSL @interpolate(linear) and Metal sample_no_perspective, which are not.
        text = rewrite.blank_words(text, "linear")
    return text


def slang_source(src: SourceSet, target: Target) -> str:
    """The main file's text for Slang, every file rewritten (includes inlined where a rewrite
    changed them)."""
    counted = src.counted_rw()
    appended = src.append_consume()
    texts = {p: _rewritten(src, p, target, counted, appended) for p in src.texts}
    return rewrite.inline_includes(src.path, src.texts, texts, src.include_dirs)


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


def compile_target(
    lib: S.Library, src: SourceSet, options: CompileOptions, target: Target
) -> tuple[CompiledTarget | None, list[Diagnostic]]:
    entries = [(e.name, SLANG_STAGE_ID[e.stage]) for e in options.entry_points]
    args = slang_args(target, options)
    req = S.Request(lib, args, (str(src.path), slang_source(src, target)), entries)
    try:
        result = req.compile()
        diags = _as_written(src, parse_diagnostics(result.diagnostics, src.display, src.text_of))
        if not result.ok:
            errors = [d for d in diags if d.is_error] or [
                Diagnostic(
                    src.name,
                    0,
                    0,
                    Severity.ERROR,
                    f"{TARGET_NAMES[target]}: compilation failed",
                )
            ]
            if target is Target.Wgsl and any(d.code == "E36107" for d in errors):
                # Slang names no feature; where the feature is an Interlocked* call, say which.
                interlocked = wgsl_interlocked(src)
                if interlocked:
                    errors = [d for d in errors if d.code != "E36107"] + interlocked
            if target is Target.SpirV and "= TextureBuffer(" in result.diagnostics:
                errors = spirv_texture_buffers(src, result.diagnostics) or errors
            return None, [explain(d, src.displayed_text(d.file)) for d in errors]
        facts = read_facts(lib, req.reflection())
        if target is Target.Wgsl and (unplaced := _wgsl_vertices_without_position(src, facts)):
            return None, unplaced
        original = {new: old for old, new in src.renamed_blocks().items()}
        for p in facts.params:
            p.name = original.get(p.name, p.name)
    finally:
        req.close()
    code = result.code
    if target is Target.Wgsl:
        code = wgsl_without_reserved_words(code.decode()).encode()
    return CompiledTarget(target, facts, code, [d for d in diags if not d.is_error]), []


def _wgsl_vertices_without_position(src: SourceSet, facts: TargetFacts) -> list[Diagnostic]:
    """A vertex shader without an ``SV_Position`` output, at its definition: WebGPU requires
    the position output (naga rejects the module Slang emits; Vulkan does not need one)."""
    out = []
    for e in facts.entries:
        placed = any(v.semantic.upper() == "SV_POSITION" for v in e.outputs)
        if e.stage is not Stage.Vertex or placed:
            continue
        fn = src.function(e.name)
        out.append(
            src.error(
                src.name,
                fn.line if fn else 0,
                fn.column if fn else 0,
                f"WGSL: the vertex shader '{e.name}' has no SV_Position output, which WebGPU "
                "requires; add one, or build without the wgsl target",
                Code.NO_VERTEX_POSITION,
            )
        )
    return out
