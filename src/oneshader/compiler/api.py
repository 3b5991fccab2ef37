"""What the compiler takes and gives: plain data, importable without loading Slang.

The build task and the tests program against these types; ``oneshader.compiler.compile_file``
(in-process) and ``oneshader.compiler.process.worker.CompilerWorker`` (crash-contained) produce
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from oneshader.diagnostics import Diagnostic
from oneshader.reflection.model import ShaderReflection, Stage, Target

TARGET_NAMES = {Target.SpirV: "SPIR-V", Target.Msl: "Metal", Target.Wgsl: "WGSL"}
"""How every message names each target (the one home of these display names)."""
# The prefix of the padding members that stand for [[vk::offset]] in WGSL and Metal code
# (compiler.slang.padding): in the code, never in the reflection.
PADDING = "oneshader_pad"


@dataclass(frozen=True)
class EntryPointSpec:
    """An entry point given by the caller, for sources without ``[shader("...")]`` attributes."""

    name: str
    stage: Stage


STAGE_ALIASES = {
    "vertex": Stage.Vertex,
    "vs": Stage.Vertex,
    "vert": Stage.Vertex,
    "pixel": Stage.Pixel,
    "ps": Stage.Pixel,
    "fragment": Stage.Pixel,
    "fs": Stage.Pixel,
    "frag": Stage.Pixel,
    "compute": Stage.Compute,
    "cs": Stage.Compute,
    "comp": Stage.Compute,
}


def stage_from_name(name: str) -> Stage:
    """HLSL's stage names and the common aliases (vs/ps/fs/cs, fragment) to a :class:`Stage`."""
    try:
        return STAGE_ALIASES[name.strip().lower()]
    except KeyError:
        known = ", ".join(sorted(STAGE_ALIASES))
        raise ValueError(f"unknown shader stage '{name}' (expected one of: {known})") from None


@dataclass(frozen=True)
class RegisterShift:
    """DXC's ``-fvk-<cls>-shift N SPACE``: register class ``cls`` (b, t, s, u) in ``space`` moves
    by ``shift`` bindings; ``space`` None means every space."""

    register_class: str
    shift: int
    space: int | None = None


@dataclass(frozen=True)
class BindRegister:
    """DXC's ``-fvk-bind-register xN SPACE BINDING SET``."""

    register: str
    space: int
    binding: int
    set: int


@dataclass(frozen=True)
class CompileOptions:
    """Everything that affects a compile; equal options give equal outputs.

    ``source_name`` is what the reflection records as its source (a project-relative path with
    forward slashes); diagnostics name files the same way.
    """

    targets: tuple[Target, ...] = (Target.SpirV, Target.Msl, Target.Wgsl)
    source_name: str = ""
    include_dirs: tuple[str, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    entry_points: tuple[EntryPointSpec, ...] = ()
    shifts: tuple[RegisterShift, ...] = ()
    bind_registers: tuple[BindRegister, ...] = ()
    # DXC's -Zpr: a matrix declared without row_major/column_major is row-major (code ported
    # from Direct3D often assumes it); HLSL's default, column-major, otherwise.
    row_major: bool = False


@dataclass(frozen=True)
class OutputFile:
    """One emitted file, named by the source's stem and :attr:`suffix` (one file per target)."""

    target: Target
    data: bytes

    @property
    def suffix(self) -> str:
        return self.target.suffix


@dataclass(frozen=True)
class CompileResult:
    """``reflection`` is None exactly when an error diagnostic is present."""

    diagnostics: tuple[Diagnostic, ...] = ()
    reflection: ShaderReflection | None = None
    outputs: tuple[OutputFile, ...] = ()
    dependencies: tuple[str, ...] = field(default=())  # files read, transitively (absolute paths)
    crashed: bool = False

    @property
    def ok(self) -> bool:
        return self.reflection is not None and not any(d.is_error for d in self.diagnostics)
