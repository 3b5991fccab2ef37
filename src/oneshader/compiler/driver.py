"""compile_file: one HLSL file to every requested target, and the one reflection true for all.

The pipeline, one room per stage (docs/architecture.md): read the file and its includes
(``source.sourceset``); find in the source what a target cannot express (``source.precheck``);
compile the targets in Slang (one request for the targets given the same source text, each
target's facts read from it: ``slang.request``); build the resources, push blocks and spec
constants from every target's facts (``unify.assemble``, ``unify.layouts``);
write the reflection's bindings into the code (``patch.apply``); derive the entry points
(``unify.entries``), write their locations into the code, and read what each uses from the code
so finished (the cross-check reads the same modules); finally check the reflection against the
emitted code (``verify.crosscheck``).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from oneshader.compiler.api import CompileOptions, CompileResult, OutputFile
from oneshader.compiler.emitted.common import holds_scalars
from oneshader.compiler.patch.access import storage_access, with_access
from oneshader.compiler.patch.apply import patch_bindings, patch_locations
from oneshader.compiler.quirks import refusals
from oneshader.compiler.slang import library
from oneshader.compiler.slang.facts import TargetFacts
from oneshader.compiler.slang.messages import dedupe, name_targets
from oneshader.compiler.slang.request import (
    CompiledTarget,
    Declared,
    PaddingRule,
    compile_target,
    compile_together,
    pad_together,
)
from oneshader.compiler.source.precheck import check_request, check_targets, precheck
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.compiler.unify.assemble import assemble, with_stages
from oneshader.compiler.unify.docs import with_member_docs
from oneshader.compiler.unify.entries import (
    check_distances,
    check_entries,
    check_stage_link,
    check_vertex_positions,
    check_wgsl_interfaces,
    entry_points,
    with_usage,
)
from oneshader.compiler.unify.metal_padding import as_declared, reference_padding
from oneshader.compiler.unify.nesting import check_nesting
from oneshader.diagnostics import Code, Collector, Diagnostic, Severity, UserError
from oneshader.reflection.model import ScalarKind, ShaderReflection, Target, TypeKind, TypeLayout


def _compile(path: str, options: CompileOptions) -> CompileResult:
    """The pipeline; user errors at any step come back as diagnostics, never raised. This is the
    one wrapper that turns a bug into OS9002 (the worker's child relies on it)."""
    name = options.source_name or Path(path).as_posix()
    src = SourceSet(path, name, options.include_dirs, options.preprocessor_defines)
    try:
        problems = Collector()  # what every step adds its errors to
        check_targets(src, options, problems)
        problems.check()
        src.read()
        check_request(src, options, problems)
        problems.check()
        lacking = refusals.refused(src, options.targets, options.enable_16bit_types)
        unless = refusals.unless_dead(src, options.targets, options.enable_16bit_types)
        dead = {t: [d for d, _ in found] for t, found in unless.items()}
        refused = precheck(src, options, problems, lacking, dead)
        pending = {t: unless[t] for t in Target if t in unless and t not in refused}
        compiled, usage_outputs = _compile_targets(src, options, refused, problems, pending)
        problems.check()
        return _finish(src, options, compiled, usage_outputs, problems, pending)
    except UserError as err:
        return CompileResult(diagnostics=err.diagnostics, inputs=src.final_inputs())
    except MemoryError:  # the memory limit (a macro bomb): no bug, the worker's crash says so
        raise
    except Exception as err:  # a bug in oneshader: reported for this shader, not raised
        message = f"internal error in the compiler: {type(err).__name__}: {err}"
        diag = Diagnostic(src.name, 0, 0, Severity.ERROR, message, Code.INTERNAL_ERROR)
        return CompileResult(diagnostics=(diag,), inputs=src.final_inputs())


def _compile_targets(
    src: SourceSet,
    options: CompileOptions,
    refused: frozenset[Target],
    problems: Collector,
    pending: dict[Target, list[tuple[Diagnostic, frozenset[ScalarKind]]]] | None = None,
) -> tuple[list[CompiledTarget], dict[Target, bytes]]:
    """Every requested target in target order (but those ``precheck`` refused), and the code of
    a compile that is not written out where only Metal was requested (for ``uses``). When a
    target was refused or failed, Slang's errors (named by target once all are in) and the
    slot and layout errors of the targets that did compile are added to ``problems``. A
    ``pending`` refusal (``refusals.unless_dead``) stands, in place of Slang's errors, where
    Slang failed on its target or the target's code holds one of its types (the others are
    decided on the reflection by ``_finish``)."""
    lib = library()
    compiled: list[CompiledTarget] = []
    per_target: dict[Target, list[Diagnostic]] = {}
    wanted = [t for t in Target if t in options.targets and t not in refused]
    together = compile_together(lib, src, options, wanted)
    ready = _padded_together(src, options, together)
    # Metal last: its buffers are padded to lay out as SPIR-V's, else WGSL's (the same
    # std140/std430 offsets), whichever was compiled
    for target in sorted(wanted, key=lambda t: t is Target.Msl):
        spirv = next(
            (c.facts for t in (Target.SpirV, Target.Wgsl) for c in compiled if c.target is t),
            None,
        )
        also_pad, declared = (
            _metal_rules(src, spirv) if target is Target.Msl and spirv is not None else (None, None)
        )
        first = together.get(target)
        t, errs = compile_target(lib, src, options, target, also_pad, declared, first, ready)
        per_target[target] = errs
        if t is not None:
            compiled.append(t)
    for target, found in (pending or {}).items():
        made = next((c for c in compiled if c.target is target), None)
        standing = [
            d for d, kinds in found if made is None or holds_scalars(made.code, target, kinds)
        ]
        if standing:
            per_target[target] = standing
            compiled = [c for c in compiled if c.target is not target]
    compiled.sort(key=lambda c: list(Target).index(c.target))  # back in target order
    per_target = {t: per_target[t] for t in Target if t in per_target}
    slang_failed = any(per_target.values())
    if problems.failed or slang_failed:
        if slang_failed:
            problems.extend(dedupe(name_targets(per_target)))
        problems.extend(_assembly_errors(src, options, compiled))
        return compiled, {}
    if not any(t.target in (Target.SpirV, Target.Wgsl) for t in compiled):
        # MSL passes every resource to every entry point, so it cannot say what an entry
        # point uses; a SPIR-V (else WGSL) compile that is not written out can.
        for extra in (Target.SpirV, Target.Wgsl):
            hidden, _ = compile_target(lib, src, options, extra)
            if hidden is not None:
                return compiled, {extra: hidden.code}
    return compiled, {}


def _padded_together(
    src: SourceSet, options: CompileOptions, together: dict[Target, CompiledTarget]
) -> dict[tuple[Target, str], CompiledTarget]:
    """WGSL's and Metal's second padding round in one request, where both need one
    (``pad_together``): known before either's rounds only when SPIR-V's compile, which Metal's
    padding follows, was made in the shared request too (it has no rounds of its own)."""
    if not all(t in together for t in (Target.SpirV, Target.Wgsl, Target.Msl)):
        return {}
    firsts = {
        Target.Wgsl: (together[Target.Wgsl], None, None),
        Target.Msl: (together[Target.Msl], *_metal_rules(src, together[Target.SpirV].facts)),
    }
    return pad_together(library(), src, options, firsts)


def _metal_rules(src: SourceSet, spirv: TargetFacts) -> tuple[PaddingRule, Declared]:
    """Metal's padding rule and the layouts its compiles are read as, both following the
    SPIR-V (else WGSL) compile's facts ``spirv``: its members placed as SPIR-V's."""
    return (
        functools.partial(reference_padding, src, spirv),
        functools.partial(as_declared, src, spirv),
    )


def _assembly_errors(
    src: SourceSet, options: CompileOptions, compiled: list[CompiledTarget]
) -> list[Diagnostic]:
    """The slot and layout errors of the targets that did compile, when another did not, so one
    run reports both (assembling is pure Python on facts already read: cheap)."""
    if not compiled:
        return []
    problems = Collector()
    try:
        assemble(src, options, compiled, {t.target: t.code for t in compiled}, problems)
    except Exception:  # a bug here must not hide the target's own errors; the full run shows it
        return []
    return problems.diagnostics


def _finish(
    src: SourceSet,
    options: CompileOptions,
    compiled: list[CompiledTarget],
    usage_outputs: dict[Target, bytes],
    problems: Collector,
    pending: dict[Target, list[tuple[Diagnostic, frozenset[ScalarKind]]]] | None = None,
) -> CompileResult:
    """Assemble, patch, derive the entry points, verify; ``problems`` is checked after each.
    A ``pending`` refusal whose target's code did not hold its types (Slang dropped the
    construct as dead code) stands still where the reflection holds one: a resource no code
    of the target declares is still a resource of the reflection, on every target."""
    primary = compiled[0]
    check_entries(src, primary, problems)
    check_vertex_positions(src, compiled, problems)
    check_wgsl_interfaces(src, compiled, problems)
    check_distances(src, compiled, problems)
    problems.check()
    outputs = {t.target: t.code for t in compiled}
    shader = assemble(src, options, compiled, outputs, problems)
    held = {k for r in shader.resources for k in _scalars(r.layout)}
    held |= {k for b in shader.pushes for k in _scalars(b.layout)}
    held |= {s.scalar for s in shader.specs}
    for found in (pending or {}).values():
        problems.extend(d for d, kinds in found if kinds & held)
    check_nesting(src, [*shader.resources, *shader.pushes], problems)
    problems.check()
    outputs, depth = patch_bindings(src, outputs, shader, problems)
    problems.check()
    access = storage_access(outputs, shader.resources)
    outputs = with_access(outputs, access)
    entries = entry_points(src, primary, problems)
    problems.check()
    if Target.Wgsl in options.targets:
        check_stage_link(src, primary, entries, problems)
        problems.check()
    outputs = patch_locations(outputs, entries)
    entries = with_usage(
        entries, outputs, usage_outputs, shader.resources, shader.pushes, shader.specs
    )
    resources, pushes = with_member_docs(src, *with_stages(shader, entries))
    resources = [replace(r, depth=True) if r.name in depth else r for r in resources]
    resources = [replace(r, access=access[r.name]) if r.name in access else r for r in resources]
    reflection = ShaderReflection(
        source=src.name,
        targets=tuple(t for t in Target if t in options.targets),
        resources=tuple(resources),
        push_blocks=tuple(pushes),
        spec_constants=tuple(shader.specs),
        entry_points=tuple(entries),
    )
    files = tuple(OutputFile(t, outputs[t]) for t in Target if t in outputs)
    report = Collector()  # the result's: the warnings, then the cross-check's errors
    report.extend(dedupe([*(w for t in compiled for w in t.warnings), *problems.diagnostics]))
    inputs = src.final_inputs()
    _crosscheck(src.name, reflection, files, report)
    checked = None if report.failed else reflection  # no reflection the code disagrees with
    return CompileResult(tuple(report.diagnostics), checked, files, inputs)


def _scalars(layout: TypeLayout | None) -> Iterator[ScalarKind]:
    """The scalar kinds of every vector, matrix and scalar inside ``layout``."""
    if layout is None:
        return
    if layout.kind in (TypeKind.Scalar, TypeKind.Vector, TypeKind.Matrix):
        yield layout.scalar
    yield from _scalars(layout.element)
    for m in layout.members:
        yield from _scalars(m.type)


def _crosscheck(
    source: str, reflection: ShaderReflection, files: Sequence[OutputFile], problems: Collector
) -> None:
    """The verifier's cross-check of reflection against emitted code (imported here, on the
    first compile, so that importing the package stays cheap)."""
    from oneshader.compiler.verify.crosscheck import check_outputs

    check_outputs(source, reflection, files, problems)


_LOCK = threading.Lock()


def compile_file(path: str, options: CompileOptions) -> CompileResult:
    """One compile at a time per process: Slang's session is not thread-safe (parallel builds
    use several ``CompilerWorker`` processes). Never raises: a bug is an OS9002 diagnostic."""
    with _LOCK:
        return _compile(path, options)
