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
    # DXC's -enable-16bit-types: the minimum-precision types are the 16-bit types they stand
    # for (min16float/min10float half, min16int/min12int int16_t, min16uint uint16_t) and
    # __HLSL_ENABLE_16_BIT is defined; 32-bit otherwise, as DXC has them without it.
    enable_16bit_types: bool = False
    # DXC's placement exactly: registers of every class from binding 0, so b0, t0 and u0 share
    # binding 0 (OS3001). Off (the default), a space whose classes collide lays them out one
    # after another, b, t, s, u (docs/dxc-compatibility.md); any shift or bind-register given
    # places as DXC does either way.
    dxc_placement: bool = False

    @property
    def preprocessor_defines(self) -> tuple[tuple[str, str], ...]:
        """The macros the preprocessor starts with: ``defines``, and DXC's
        ``__HLSL_ENABLE_16_BIT`` under ``enable_16bit_types`` (what ``#if`` reads of the
        options; nothing else of a compile sees the defines)."""
        return self.defines + ((("__HLSL_ENABLE_16_BIT", "1"),) if self.enable_16bit_types else ())


@dataclass(frozen=True)
class CompileLimits:
    """What one shader's compile may take: wall-clock ``seconds`` and the address space of its
    worker process in ``memory_mib`` (a 1 KB macro bomb asks Slang for gigabytes); None for no
    limit. A compile over either fails that shader alone."""

    seconds: float | None = 60.0
    memory_mib: int | None = 2048

    @property
    def memory_bytes(self) -> int | None:
        return None if self.memory_mib is None else self.memory_mib << 20


@dataclass(frozen=True)
class OutputFile:
    """One emitted file, named by the source's stem and :attr:`suffix` (one file per target)."""

    target: Target
    data: bytes

    @property
    def suffix(self) -> str:
        return self.target.suffix


@dataclass(frozen=True)
class InputFile:
    """A file a compile read (the main file first, then its includes), as it was read: the
    status of the open file and the digest of the very bytes compiled, so that a build records
    what its outputs come from, not what the file holds before or after. ``sha256`` is "" when
    the file changed while the compiler used it (what was compiled is then unknown).
    ``read_ns`` is the wall clock at the read: an mtime that close to it may not have moved yet
    for an edit made just after. A file included through a link is named by the link
    (``named``) and by what it led to (``path``, ``identity``), so that a build sees the link
    retargeted."""

    path: str  # absolute, links resolved: the file read
    mtime_ns: int
    size: int
    sha256: str
    read_ns: int = field(compare=False)  # a clock reading: two reads of one file compare equal
    named: str = ""  # absolute, as the compile named it (links kept); "" when that is ``path``
    identity: str = ""  # "device:inode" of the file read ("" when unknown)


@dataclass(frozen=True)
class CompileResult:
    """``reflection`` is None exactly when an error diagnostic is present."""

    diagnostics: tuple[Diagnostic, ...] = ()
    reflection: ShaderReflection | None = None
    outputs: tuple[OutputFile, ...] = ()
    inputs: tuple[InputFile, ...] = field(default=())  # files read, transitively
    crashed: bool = False
    # The reflection as its file holds it (what ``ReflectionFormat.write`` makes of it), when
    # the result crossed from a worker with it (read and checked into ``reflection`` there):
    # the build writes these bytes instead of making them again. None: made from ``reflection``.
    reflection_file: bytes | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.reflection is not None and not any(d.is_error for d in self.diagnostics)

    @property
    def dependencies(self) -> tuple[str, ...]:
        """The absolute paths of the files read, the main file first."""
        return tuple(f.path for f in self.inputs)
