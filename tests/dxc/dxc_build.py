"""Compiling a corpus case, once per (case, targets), and checking "may fail" outcomes."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from dxc_cases import Case

from oneshader.diagnostics import Diagnostic, UserError
from oneshader.reflection.model import Resource, ShaderReflection, Slot, Target

TARGET_WORDS = {
    Target.SpirV: ("spir-v", "spirv", "vulkan"),
    Target.Msl: ("metal", "msl"),
    Target.Wgsl: ("wgsl", "webgpu"),
}


@dataclass(frozen=True)
class Built:
    """A compile's outcome; ``code`` maps each target to its emitted files' bytes."""

    diagnostics: tuple[Diagnostic, ...]
    reflection: ShaderReflection | None
    code: dict[Target, tuple[bytes, ...]]

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]

    def resource(self, name: str) -> Resource:
        assert self.reflection is not None
        found = [r for r in self.reflection.resources if r.name == name]
        assert found, f"resource {name!r} missing from the reflection"
        return found[0]


def source_name(case: Case) -> str:
    return f"tests/dxc/shaders/{case.file}"


@functools.cache
def build(case: Case, targets: tuple[Target, ...]) -> Built:
    """Compile ``case`` for ``targets``; a UserError counts as returned diagnostics."""
    from oneshader.compiler import CompileOptions, EntryPointSpec, compile_file

    options = CompileOptions(
        targets=targets,
        source_name=source_name(case),
        defines=case.defines,
        entry_points=(EntryPointSpec("main", case.stage),),
        shifts=case.shifts,
        bind_registers=case.bind_registers,
        dxc_placement=True,  # the cases are DXC's bindings, clashes included
    )
    try:
        result = compile_file(str(case.path), options)
    except UserError as err:
        return Built(err.diagnostics, None, {})
    code: dict[Target, tuple[bytes, ...]] = {}
    for out in result.outputs:
        code[out.target] = (*code.get(out.target, ()), out.data)
    reflection = result.reflection if result.ok else None
    return Built(result.diagnostics, reflection, code)


def positioned_error_naming_target(case: Case, built: Built, target: Target) -> None:
    """The failure a ``may_fail`` target is allowed: positioned in the file, naming the target."""
    assert built.errors, "a failed build must say why"
    lines = case.path.read_text(encoding="utf-8").split("\n")
    for d in built.errors:
        assert d.file.endswith(case.file), f"error not positioned in the shader: {d.format()}"
        assert d.line > 0, f"error without a line: {d.format()}"
        assert d.column <= len(lines[d.line - 1]) + 1, f"error past its line's end: {d.format()}"
    text = " ".join(d.message.lower() for d in built.errors)
    assert any(w in text for w in TARGET_WORDS[target]), (
        f"error does not name the target {target.name}: "
        + "; ".join(d.format() for d in built.errors)
    )


def built_or_allowed_failure(case: Case, target: Target) -> Built | None:
    """The single-target build, asserted successful; None when it failed as ``may_fail`` allows."""
    built = build(case, (target,))
    if built.reflection is None and target in case.may_fail:
        positioned_error_naming_target(case, built, target)
        return None
    assert built.reflection is not None, (
        f"{case.file} does not build for {target.name}: "
        + "; ".join(d.format() for d in built.errors or built.diagnostics)
    )
    return built


def slot_of(slots: tuple[Slot, ...], target: Target) -> Slot:
    mine = [s for s in slots if s.target is target]
    assert len(mine) == 1, f"expected one {target.name} slot, got {mine}"
    return mine[0]
