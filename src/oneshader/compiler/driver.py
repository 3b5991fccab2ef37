"""compile_file: one HLSL file to every requested target, and the one reflection true for all.

The steps: scan the source (and its includes) for what Slang does not report as written; compile
each target in its own Slang request (Slang reflects the first target of a request only); read
each target's facts; merge them into one :class:`ShaderReflection`, failing with a positioned
error wherever the targets disagree or a target cannot express a declaration; patch the WGSL
where Slang leaves it incomplete (push-constant bindings, texture/sampler pairs, vertex input
locations); finally check the reflection against the emitted code. docs/compiler.md has the rules.
"""

from __future__ import annotations

import re
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from oneshader.compiler import _slang as S
from oneshader.compiler import codepatch, rewrite
from oneshader.compiler.api import CompileOptions, CompileResult, OutputFile
from oneshader.compiler.bindings import Placement, place
from oneshader.compiler.diag import parse as parse_diagnostics
from oneshader.compiler.emitted.common import GLOBALS, SLANG_GLOBALS, emitted_name
from oneshader.compiler.emitted.spirv import IMAGE_FORMATS
from oneshader.compiler.facts import EntryFacts, ParamFacts, TargetFacts, VarFacts, read_facts
from oneshader.compiler.portability import compare
from oneshader.compiler.source import (
    Attribute,
    Declaration,
    SourceFile,
    StructDef,
    find_includes,
    scan,
    strip_comments,
)
from oneshader.compiler.spirv_patch import rebind, relocate, set_image_formats
from oneshader.diagnostics import Diagnostic, Severity, UserError, source_excerpt
from oneshader.reflection.model import (
    BuiltIn,
    DeviceFeatures,
    EntryPoint,
    Interpolation,
    PushBlock,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    SpecConstant,
    SpecSlot,
    Stage,
    StageVariable,
    Target,
    TypeKind,
    TypeLayout,
    VertexFormat,
)

TARGET_NAMES = {Target.SpirV: "SPIR-V", Target.Msl: "Metal", Target.Wgsl: "WGSL"}
_SLANG_TARGET = {Target.SpirV: "spirv", Target.Msl: "metal", Target.Wgsl: "wgsl"}
_SUFFIX = {Target.SpirV: ".spv", Target.Msl: ".metal", Target.Wgsl: ".wgsl"}

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
_SLANG_STAGE_ID = {
    Stage.Vertex: S.STAGE_VERTEX,
    Stage.Pixel: S.STAGE_FRAGMENT,
    Stage.Compute: S.STAGE_COMPUTE,
}
_STAGE_OF_SLANG = {
    S.STAGE_VERTEX: Stage.Vertex,
    S.STAGE_FRAGMENT: Stage.Pixel,
    S.STAGE_COMPUTE: Stage.Compute,
}

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

_RTYPES: dict[str, tuple[ResourceTypeKind, ResourceKind]] = {
    "cbuffer": (ResourceTypeKind.ConstantBuffer, ResourceKind.ConstantBuffer),
    "ConstantBuffer": (ResourceTypeKind.ConstantBuffer, ResourceKind.ConstantBuffer),
    "tbuffer": (ResourceTypeKind.TextureBuffer, ResourceKind.ShaderResource),
    "TextureBuffer": (ResourceTypeKind.TextureBuffer, ResourceKind.ShaderResource),
    "SamplerState": (ResourceTypeKind.SamplerState, ResourceKind.Sampler),
    "SamplerComparisonState": (ResourceTypeKind.SamplerComparisonState, ResourceKind.Sampler),
}
for _t in ResourceTypeKind:
    if _t.name not in _RTYPES:
        _kind = ResourceKind.UnorderedAccess
        if _t.name.startswith(("Texture", "Buffer", "StructuredBuffer", "ByteAddressBuffer")):
            _kind = ResourceKind.ShaderResource
        _RTYPES[_t.name] = (_t, _kind)

_INFERRED_FORMATS = {
    (scalar, n): f"{prefix}{suffix}"
    for scalar, suffix in (
        (ScalarKind.Float, "32f"),
        (ScalarKind.Float16, "16f"),
        (ScalarKind.Int, "32i"),
        (ScalarKind.UInt, "32ui"),
    )
    for n, prefix in ((1, "r"), (2, "rg"), (4, "rgba"))
}

_TEXTURES = frozenset(
    t for t in ResourceTypeKind if "Texture" in t.name and t.name != "TextureBuffer"
)
_BLOCK_TYPES = frozenset({ResourceTypeKind.ConstantBuffer, ResourceTypeKind.TextureBuffer})
_SAMPLERS = frozenset({ResourceTypeKind.SamplerState, ResourceTypeKind.SamplerComparisonState})
_COUNTED = frozenset(
    {ResourceTypeKind.AppendStructuredBuffer, ResourceTypeKind.ConsumeStructuredBuffer}
)

_BUILTINS = {
    "SV_POSITION": BuiltIn.Position,
    "SV_VERTEXID": BuiltIn.VertexId,
    "SV_INSTANCEID": BuiltIn.InstanceId,
    "SV_ISFRONTFACE": BuiltIn.FrontFacing,
    "SV_SAMPLEINDEX": BuiltIn.SampleIndex,
    "SV_COVERAGE": BuiltIn.SampleMask,
    "SV_DEPTH": BuiltIn.Depth,
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
}

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
_SCALAR_BYTES = {
    ScalarKind.Float16: 2,
    ScalarKind.Int16: 2,
    ScalarKind.UInt16: 2,
    ScalarKind.Int64: 8,
    ScalarKind.UInt64: 8,
    ScalarKind.Float64: 8,
}

# Tokens a target cannot express, with what to say; checked on the source before compiling.
_TOKEN_LIMITS: list[tuple[Target, re.Pattern[str], str]] = [
    (
        Target.Wgsl,
        re.compile(r"\b(u?int64_t[1-4]?|uint64_t[1-4]?|int64_t[1-4]?)\b"),
        "WGSL: no 64-bit integers ({token}); use uint2 pairs or build without the wgsl target",
    ),
    (
        Target.Wgsl,
        re.compile(r"\b(double[1-4]?(?:x[1-4])?|float64_t[1-4]?)\b"),
        "WGSL: no 64-bit floats ({token}); use float or build without the wgsl target",
    ),
    (
        Target.Wgsl,
        re.compile(r"\b(u?int16_t[1-4]?)\b"),
        "WGSL: no 16-bit integers ({token}); use int/uint or build without the wgsl target",
    ),
    (
        Target.Wgsl,
        re.compile(r"\b(centroid)\b"),
        "WGSL: Slang emits '{token}' interpolation as the default for WGSL; remove it or build "
        "without the wgsl target",
    ),
    (
        Target.Wgsl,
        re.compile(
            r"\b(sample)\b(?=\s+(?:float|half|int|uint|min1\d|bool|vector|matrix|nointerpolation|"
            r"noperspective|linear|centroid)\w*)"
        ),
        "WGSL: Slang drops '{token}' interpolation for WGSL; remove it or build without the "
        "wgsl target",
    ),
    (
        Target.Msl,
        re.compile(r"\b(centroid)\b"),
        "Metal: Slang emits '{token}' interpolation as center_perspective for Metal; remove it or "
        "build without the msl target",
    ),
    (
        Target.Msl,
        re.compile(r"\b(double[1-4]?(?:x[1-4])?|float64_t[1-4]?)\b"),
        "Metal: no 64-bit floats ({token}); use float or build without the msl target",
    ),
]


def stage_from_name(name: str) -> Stage:
    """HLSL's stage names and the common aliases (vs/ps/fs/cs, fragment) to a :class:`Stage`."""
    try:
        return STAGE_ALIASES[name.strip().lower()]
    except KeyError:
        known = ", ".join(sorted(STAGE_ALIASES))
        raise ValueError(f"unknown shader stage '{name}' (expected one of: {known})") from None


class _Failed(Exception):
    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        super().__init__(diagnostics)
        self.diagnostics = tuple(diagnostics)


@dataclass
class _Target:
    target: Target
    facts: TargetFacts
    code: bytes
    warnings: list[Diagnostic] = field(default_factory=list)


class _Compilation:
    def __init__(self, path: str, options: CompileOptions) -> None:
        self.options = options
        self.path = Path(path).resolve()
        self.name = options.source_name or Path(path).as_posix()
        self.texts: dict[Path, str] = {}
        self.sources: dict[Path, SourceFile] = {}
        self.dependencies: list[str] = []
        self.msl_index: dict[str, tuple[str, int]] = {}  # name -> (buffer|texture|sampler, n)
        self.placement = Placement({}, {}, [])
        self.usage_outputs: dict[Target, bytes] = {}
        self.vk_location: dict[tuple[str, str], int] = {}

    # -- names and positions -------------------------------------------------------------------

    def display(self, slang_path: str) -> str:
        if not slang_path:
            return self.name
        p = Path(slang_path)
        try:
            resolved = p.resolve()
        except OSError:
            return p.name
        if resolved == self.path:
            return self.name
        try:
            rel = resolved.relative_to(self.path.parent)
        except ValueError:
            for d in self.options.include_dirs:
                try:
                    return resolved.relative_to(Path(d).resolve()).as_posix()
                except ValueError:
                    continue
            return resolved.name
        base = Path(self.name).parent
        return (base / rel).as_posix() if base.as_posix() != "." else rel.as_posix()

    def text_of(self, slang_path: str) -> str | None:
        try:
            return self.texts.get(Path(slang_path).resolve())
        except OSError:
            return None

    def error(self, file: str, line: int, col: int, message: str, code: str = "") -> Diagnostic:
        text = None
        for p, t in self.texts.items():
            if self.display(str(p)) == file:
                text = t
        excerpt = source_excerpt(text, line, col) if text and line else ""
        return Diagnostic(file, line, col, Severity.ERROR, message, code, excerpt)

    def at_decl(self, decl: Declaration, message: str, code: str = "") -> Diagnostic:
        return self.error(self.display(decl.file), decl.line, decl.column, message, code)

    # -- source --------------------------------------------------------------------------------

    def read_sources(self) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise _Failed(
                [Diagnostic(self.name, 0, 0, Severity.ERROR, f"cannot read: {err}")]
            ) from None
        todo = [(self.path, text)]
        while todo:
            p, t = todo.pop(0)
            if p in self.texts:
                continue
            self.texts[p] = t
            self.sources[p] = scan(str(p), t)
            self.dependencies.append(str(p))
            for inc in find_includes(p, t, self.options.include_dirs):
                if inc not in self.texts:
                    try:
                        todo.append((inc, inc.read_text(encoding="utf-8")))
                    except (OSError, UnicodeDecodeError):
                        continue

    def declarations(self) -> dict[str, Declaration]:
        out: dict[str, Declaration] = {}
        for src in self.sources.values():
            for d in src.declarations:
                out.setdefault(d.name, d)
        return out

    def struct(self, name: str) -> StructDef | None:
        for src in self.sources.values():
            if name in src.structs:
                return src.structs[name]
        return None

    def function(self, name: str) -> StructDef | None:
        for src in self.sources.values():
            if name in src.functions:
                return src.functions[name]
        return None

    def precheck(self) -> None:
        """Errors a target would give without a position (or crash on), found in the source."""
        errors: list[Diagnostic] = []
        for e in self.options.entry_points:
            if self.function(e.name) is None:
                defined = ", ".join(sorted(n for s in self.sources.values() for n in s.functions))
                errors.append(
                    Diagnostic(
                        self.name,
                        0,
                        0,
                        Severity.ERROR,
                        f"entry point '{e.name}' not found: the file defines no function of that "
                        f"name (it defines: {defined or 'none'})",
                        "OS1005",
                    )
                )
        if errors:
            raise _Failed(errors)
        decls = self.declarations()
        targets = self.options.targets
        for d in decls.values():
            rtype = _RTYPES.get(d.base, (None, None))[0]
            if rtype is ResourceTypeKind.TextureBuffer and Target.SpirV in targets:
                errors.append(
                    self.at_decl(
                        d,
                        f"SPIR-V: Slang cannot emit a tbuffer/TextureBuffer ('{d.name}') for "
                        "SPIR-V; "
                        "use a cbuffer or a StructuredBuffer, or build without the spirv target",
                        "OS1001",
                    )
                )
            if rtype in _COUNTED:
                for t in (Target.Msl, Target.Wgsl):
                    if t in targets:
                        errors.append(
                            self.at_decl(
                                d,
                                f"{TARGET_NAMES[t]} cannot express {rtype.name} ('{d.name}'): it "
                                "has no hidden counter buffers; use a RWStructuredBuffer with an "
                                "explicit counter in a RWByteAddressBuffer, "
                                "or build for spirv only",
                                "OS1002",
                            )
                        )
        counted = self.counted_rw()
        for where, call in self.counter_uses():
            text = self.texts[where]
            line = text.count("\n", 0, call.start()) + 1
            col = call.start() - (text.rfind("\n", 0, call.start()) + 1) + 1
            for t in (Target.Msl, Target.Wgsl):
                if t in targets and call.group(1) in counted:
                    errors.append(
                        self.error(
                            self.display(str(where)),
                            line,
                            col,
                            f"{TARGET_NAMES[t]} cannot express the hidden counter of "
                            f"'{call.group(1)}' ({call.group(2)}Counter): use an explicit counter "
                            "in a "
                            "RWByteAddressBuffer, or build for spirv only",
                            "OS1002",
                        )
                    )
        for src in self.sources.values():
            for sdef in (*src.structs.values(), *src.functions.values()):
                for f in sdef.fields:
                    errors.extend(self.attribute_errors(src, f.attributes, f.name))
        for p, text in self.texts.items():
            src = self.sources[p]
            clean = strip_comments(text)
            for target, pattern, message in _TOKEN_LIMITS:
                if target not in targets:
                    continue
                m = pattern.search(clean)
                if m is None:
                    continue
                line = clean.count("\n", 0, m.start()) + 1
                col = m.start() - (clean.rfind("\n", 0, m.start()) + 1) + 1
                errors.append(
                    self.error(
                        self.display(src.path),
                        line,
                        col,
                        message.format(token=m.group(1)),
                        "OS1003",
                    )
                )
        if errors:
            raise _Failed(errors)

    def attribute_errors(
        self, src: SourceFile, attributes: tuple[Attribute, ...], name: str
    ) -> list[Diagnostic]:
        """DXC attributes on struct members that a requested target cannot honour."""
        out: list[Diagnostic] = []
        file = self.display(src.path)
        targets = [t for t in Target if t in self.options.targets]
        for a in attributes:
            if a.name == "vk::offset":
                for t in targets:
                    if t is Target.SpirV:
                        continue  # Slang's SPIR-V honours it; the reflection is corrected
                    out.append(
                        self.error(
                            file,
                            a.line,
                            a.column,
                            f"[[vk::offset]] on '{name}': {TARGET_NAMES[t]} cannot place a "
                            "member by hand (Slang ignores the attribute there); insert padding "
                            "members instead, or build for spirv only",
                            "OS1010",
                        )
                    )
            elif a.name == "vk::builtin":
                builtin = a.args[0] if a.args else ""
                known = builtin in rewrite.VK_BUILTINS
                for t in targets:
                    if known and t is not Target.Wgsl:
                        continue
                    if t is Target.Wgsl and builtin == "PointSize":
                        why = "has no point size (WGSL draws 1-pixel points)"
                    elif t is Target.Wgsl and known:
                        why = "has no draw-parameter built-ins"
                    else:
                        why = (
                            "cannot express this built-in (oneshader knows "
                            + ", ".join(rewrite.VK_BUILTINS)
                            + ")"
                        )
                    out.append(
                        self.error(
                            file,
                            a.line,
                            a.column,
                            f"[[vk::builtin(\"{builtin}\")]] on '{name}': {TARGET_NAMES[t]} "
                            f"{why}; remove it or build without the {t.value} target",
                            "OS1011",
                        )
                    )
        return out

    # -- compiling -----------------------------------------------------------------------------

    def args(self, target: Target) -> list[str]:
        o = self.options
        args = [
            "-target",
            _SLANG_TARGET[target],
            "-matrix-layout-column-major",
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

    def include_order(self) -> list[Path]:
        """Every file read, each after the files it includes (as the preprocessor meets their
        text when the includes come first), the main file last."""
        order: list[Path] = []

        def visit(p: Path) -> None:
            if p in order or p not in self.texts:
                return
            order.append(p)  # placeholder against include cycles, moved below
            for inc in find_includes(p, self.texts[p], self.options.include_dirs):
                visit(inc)
            order.remove(p)
            order.append(p)

        visit(self.path)
        return order

    def counter_uses(self) -> list[tuple[Path, re.Match[str]]]:
        """Every ``X.IncrementCounter()``/``DecrementCounter()`` of every file, in include order."""
        return [(p, m) for p in self.include_order() for m in rewrite.counter_calls(self.texts[p])]

    def counted_rw(self) -> dict[str, Declaration]:
        """RW structured buffers (declared in any file) whose counter the code uses."""
        decls = self.declarations()
        out: dict[str, Declaration] = {}
        for _, m in self.counter_uses():
            d = decls.get(m.group(1))
            if d is not None and d.base == "RWStructuredBuffer":
                out[d.name] = d
        return out

    def counters_by_first_use(self) -> list[str]:
        """RW structured buffers whose counter the code uses, in order of first use (when DXC
        creates those counters)."""
        counted = self.counted_rw()
        order: list[str] = []
        for _, call in self.counter_uses():
            if call.group(1) in counted and call.group(1) not in order:
                order.append(call.group(1))
        return order

    def rewritten(self, path: Path, target: Target, counted: dict[str, Declaration]) -> str:
        text = self.texts[path]
        if counted and target is Target.SpirV:
            here = {n for n, d in counted.items() if Path(d.file).resolve() == path}
            text = rewrite.with_counter_buffers(text, counted, here)
        text = rewrite.vk_builtins(text)
        if target is not Target.SpirV:
            # HLSL's 'linear' is the default (perspective-correct) interpolation; Slang emits it
            # as WGSL @interpolate(linear) and Metal sample_no_perspective, which are not.
            text = rewrite.blank_words(text, "linear")
        return text

    def source_for(self, target: Target) -> str:
        """The main file's text for Slang, every file rewritten (includes inlined where a rewrite
        changed them)."""
        counted = self.counted_rw()
        texts = {p: self.rewritten(p, target, counted) for p in self.texts}
        return rewrite.inline_includes(self.path, self.texts, texts, self.options.include_dirs)

    def compile_target(
        self, lib: S.Library, target: Target
    ) -> tuple[_Target | None, list[Diagnostic]]:
        entries = [(e.name, _SLANG_STAGE_ID[e.stage]) for e in self.options.entry_points]
        req = S.Request(lib, self.args(target), (str(self.path), self.source_for(target)), entries)
        try:
            result = req.compile()
            diags = parse_diagnostics(result.diagnostics, self.display, self.text_of)
            if not result.ok:
                errors = [d for d in diags if d.is_error] or [
                    Diagnostic(
                        self.name,
                        0,
                        0,
                        Severity.ERROR,
                        f"{TARGET_NAMES[target]}: compilation failed",
                    )
                ]
                return None, [self.explain(target, d) for d in errors]
            facts = read_facts(lib, req.reflection())
        finally:
            req.close()
        return _Target(target, facts, result.code, [d for d in diags if not d.is_error]), []

    def explain(self, target: Target, d: Diagnostic) -> Diagnostic:
        """Slang's errors, with the target named and, where known, what to write instead."""
        message = d.message
        if d.code == "E36107":
            message += " (a feature of this entry point cannot be expressed for this target)"
        elif d.code == "E30019":
            message += (
                "; DXC truncates implicitly, Slang does not: make the conversion explicit "
                "(for example (float3)mul(m, v) or mul((float3x3)m, v.xyz))"
            )
        return replace(d, message=message)

    # -- merging -------------------------------------------------------------------------------

    def run(self) -> CompileResult:
        try:
            if not self.options.targets:
                message = "no targets requested (give one or more of spirv, msl, wgsl)"
                raise _Failed([Diagnostic(self.name, 0, 0, Severity.ERROR, message, "OS1000")])
            self.read_sources()
            self.precheck()
            lib = S.library()
            compiled: list[_Target] = []
            per_target: dict[Target, list[Diagnostic]] = {}
            for target in Target:
                if target not in self.options.targets:
                    continue
                t, errs = self.compile_target(lib, target)
                per_target[target] = errs
                if t is not None:
                    compiled.append(t)
            if any(per_target.values()):
                raise _Failed(_dedupe(_name_targets(per_target)))
            if not any(t.target in (Target.SpirV, Target.Wgsl) for t in compiled):
                # MSL passes every resource to every entry point, so it cannot say what an entry
                # point uses; a SPIR-V (else WGSL) compile that is not written out can.
                for extra in (Target.SpirV, Target.Wgsl):
                    hidden, _ = self.compile_target(lib, extra)
                    if hidden is not None:
                        self.usage_outputs = {extra: hidden.code}
                        break
            return self.merge(compiled)
        except _Failed as failed:
            return CompileResult(
                diagnostics=failed.diagnostics, dependencies=tuple(self.dependencies)
            )
        except UserError as err:
            return CompileResult(diagnostics=err.diagnostics, dependencies=tuple(self.dependencies))
        except Exception as err:  # a bug in oneshader: reported for this shader, not raised
            message = f"internal error in the compiler: {type(err).__name__}: {err}"
            diag = Diagnostic(self.name, 0, 0, Severity.ERROR, message, "OS9002")
            return CompileResult(diagnostics=(diag,), dependencies=tuple(self.dependencies))

    def merge(self, compiled: list[_Target]) -> CompileResult:
        decls = self.declarations()
        globals_decl = self.globals_declaration(compiled[0].facts, decls)
        if globals_decl is not None:
            decls[GLOBALS] = globals_decl
        primary = compiled[0]
        by_target = {t.target: t for t in compiled}
        self.check_entries(primary)
        errors: list[Diagnostic] = []
        resources: list[Resource] = []
        pushes: list[PushBlock] = []
        specs: list[SpecConstant] = []
        outputs: dict[Target, bytes] = {t.target: t.code for t in compiled}

        params = {t.target: {p.name: p for p in t.facts.params} for t in compiled}
        names = [p.name for p in primary.facts.params]
        companions = {f"{n}_counter" for n in self.counted_rw()}
        names = [n for n in names if n not in companions]
        resource_decls = [
            decls[n]
            for n in names
            if n in decls
            and params[primary.target][n].category
            not in (S.CAT_SPECIALIZATION_CONSTANT, S.CAT_PUSH_CONSTANT_BUFFER, S.CAT_UNIFORM)
            and not decls[n].attribute("vk::push_constant")
            and decls[n].base in _RTYPES
        ]
        declared = {d.name for d in resource_decls if _RTYPES.get(d.base, (None,))[0] in _COUNTED}
        self.placement = place(
            resource_decls,
            declared,
            self.counters_by_first_use(),
            self.options.shifts,
            self.options.bind_registers,
        )
        for d, message in self.placement.problems:
            errors.append(self.at_decl(d, message, "OS3002"))
        if Target.Msl in params:
            self.msl_index = _metal_indices(by_target[Target.Msl].facts, set(names))
        for name in names:
            decl = decls.get(name)
            if decl is None:
                raise _Failed(
                    [
                        Diagnostic(
                            self.name,
                            0,
                            0,
                            Severity.ERROR,
                            f"'{name}' is declared in a form oneshader cannot read from the "
                            "source (through a macro, for example); declare it directly so its "
                            "type and attributes can be reflected as written",
                            "OS1013",
                        )
                    ]
                )
            per = {t: params[t][name] for t in params if name in params[t]}
            p0 = per[primary.target]
            if p0.category == S.CAT_SPECIALIZATION_CONSTANT:
                specs.append(self.spec(decl, per, outputs))
                continue
            if p0.category == S.CAT_PUSH_CONSTANT_BUFFER or decl.attribute("vk::push_constant"):
                layout = self.one_layout(decl, per, errors, block=True)
                pushes.append(PushBlock(name, (), layout, ()))
                continue
            if p0.category == S.CAT_UNIFORM or decl.base not in _RTYPES:
                errors.append(
                    self.at_decl(
                        decl,
                        f"'{name}' is a global uniform outside any cbuffer; declare it inside a "
                        "cbuffer (or make it static const)",
                        "OS1004",
                    )
                )
                continue
            resources.append(self.resource(decl, per, errors))
        if errors:
            raise _Failed(errors)

        resources = self.check_bindings(resources, decls)
        pushes = self.place_pushes(pushes, params, resources)
        if Target.SpirV in outputs:
            outputs[Target.SpirV] = self.patch_spirv(outputs[Target.SpirV], resources)
        if Target.Wgsl in outputs:
            outputs[Target.Wgsl] = self.patch_wgsl(outputs[Target.Wgsl], resources, pushes)
        if Target.Msl in outputs:
            text = codepatch.renumber_msl(outputs[Target.Msl].decode(), self.msl_index)
            outputs[Target.Msl] = text.encode()

        entries = self.entries(primary, outputs, resources, pushes, specs)
        self.patch_locations(outputs, entries)
        stages: dict[str, set[Stage]] = {}
        for e in entries:
            for n in (*e.uses, *e.pushuse):
                stages.setdefault(n, set()).add(e.stage)
        order = list(Stage)
        resources = [
            replace(r, stages=tuple(s for s in order if s in stages.get(r.name, ())))
            for r in resources
        ]
        pushes = [
            replace(p, stages=tuple(s for s in order if s in stages.get(p.name, ())))
            for p in pushes
        ]

        reflection = ShaderReflection(
            source=self.name,
            targets=tuple(t for t in Target if t in self.options.targets),
            resources=tuple(resources),
            push_blocks=tuple(pushes),
            spec_constants=tuple(specs),
            entry_points=tuple(entries),
        )
        files = tuple(OutputFile(t, _SUFFIX[t], outputs[t]) for t in Target if t in outputs)
        warnings = _dedupe([w for t in compiled for w in t.warnings])
        mismatches = _crosscheck(reflection, files)
        if mismatches:
            diags = [
                Diagnostic(
                    self.name,
                    0,
                    0,
                    Severity.ERROR,
                    f"internal error: the reflection disagrees with the emitted code: {m}",
                    "OS9000",
                )
                for m in mismatches
            ]
            return CompileResult(
                tuple(warnings) + tuple(diags), None, files, tuple(self.dependencies)
            )
        return CompileResult(tuple(warnings), reflection, files, tuple(self.dependencies))

    def globals_declaration(
        self, facts: TargetFacts, decls: dict[str, Declaration]
    ) -> Declaration | None:
        """DXC's ``$Globals`` as if declared at its first loose uniform (where DXC creates it, so
        it takes its binding in that place of the declaration order): a cbuffer with no register,
        written as nothing (``hlsl`` "")."""
        block = next((p for p in facts.params if p.name == GLOBALS), None)
        if block is None or block.layout is None:
            return None
        first = next((decls[m.name] for m in block.layout.members if m.name in decls), None)
        if first is None:
            return None
        return Declaration(GLOBALS, "cbuffer", "", first.file, first.line, first.column)

    def check_entries(self, primary: _Target) -> None:
        found = {e.name for e in primary.facts.entries}
        missing = [e for e in self.options.entry_points if e.name not in found]
        if missing:
            raise _Failed(
                [
                    Diagnostic(
                        self.name,
                        0,
                        0,
                        Severity.ERROR,
                        f"entry point '{e.name}' not found",
                        "OS1005",
                    )
                    for e in missing
                ]
            )
        if not primary.facts.entries:
            raise _Failed(
                [
                    Diagnostic(
                        self.name,
                        0,
                        0,
                        Severity.ERROR,
                        'no entry points: mark functions with [shader("vertex"|"pixel"|"compute")] '
                        "or "
                        "give them in the options",
                        "OS1006",
                    )
                ]
            )

    def one_layout(
        self,
        decl: Declaration,
        per: dict[Target, ParamFacts],
        errors: list[Diagnostic],
        block: bool = False,
    ) -> TypeLayout | None:
        """The layout every target agrees on (SPIR-V's leaves), or an error at the member.

        A ``block`` (constant buffer, push block) may differ in its own size, which is tail
        padding only once every offset agrees; it gets the largest, a buffer that big being valid
        on every target (Metal's ``cbuffer A { float a; }`` is 4 bytes, std140's 16)."""
        ordered = [per[t] for t in Target if t in per]
        spirv_layout = per[Target.SpirV].layout if Target.SpirV in per else None
        if spirv_layout is not None:
            block = decl.base in ("cbuffer", "tbuffer")
            fixed = self.vk_offsets(spirv_layout, decl.name if block else spirv_layout.name)
            per = {**per, Target.SpirV: replace(per[Target.SpirV], layout=fixed)}
            ordered = [per[t] for t in Target if t in per]
        base = ordered[0].layout
        if base is None:
            return None
        if base.kind is TypeKind.Struct and decl.base in ("cbuffer", "tbuffer"):
            base = replace(base, name=decl.name)
        first = next(t for t in Target if t in per)
        for t in Target:
            if t not in per or t is first:
                continue
            other = per[t].layout
            if other is None:
                continue
            diff = compare(base, other, decl.name, sized=not block)
            if diff is None:
                continue
            file, line, col = self.member_position(decl, diff.struct, diff.member)
            errors.append(
                self.error(
                    file,
                    line,
                    col,
                    f"{diff.path}: not portable: {diff.what} is {diff.a} on {first.name} but "
                    f"{diff.b} on {t.name}; {diff.hint}",
                    "OS2001",
                )
            )
            return base
        if Target.Wgsl in per:
            uniform = block and decl.base not in ("tbuffer", "TextureBuffer")
            errors.extend(self.wgsl_buffer_errors(decl, base, uniform))
        if block and base.kind is TypeKind.Struct:
            sizes = [p.layout.size for p in per.values() if p.layout is not None]
            base = replace(base, size=max(sizes, default=base.size))
        return base

    def member_position(
        self, decl: Declaration, struct_name: str, member: str
    ) -> tuple[str, int, int]:
        """Where ``member`` of struct ``struct_name`` is declared (the buffer's own members when
        the struct is the cbuffer itself, a loose global's declaration for $Globals), else the
        buffer's declaration: (displayed file, line, column)."""
        line, col, file = decl.line, decl.column, decl.file
        owner = (
            decl.name
            if decl.base in ("cbuffer", "tbuffer") and struct_name in ("", decl.name)
            else struct_name
        )
        sdef = self.struct(owner) if owner else None
        loose = self.declarations().get(member) if owner == GLOBALS else None
        if loose is not None:
            file, line, col = loose.file, loose.line, loose.column
        if sdef is not None and member:
            f = sdef.field(member)
            if f is not None:
                line, col = f.line, f.column
                file = next((str(p) for p, s in self.sources.items() if owner in s.structs), file)
        return self.display(file), line, col

    def wgsl_buffer_errors(
        self, decl: Declaration, layout: TypeLayout | None, uniform: bool
    ) -> list[Diagnostic]:
        """What Slang's WGSL cannot hold in a buffer, at the member: bool (WGSL has no
        host-shareable bool; Slang emits it anyway and naga rejects the module) and, in a
        uniform buffer, arrays of half (Slang emits an invalid ``vec8<f16>`` slot)."""
        out: list[Diagnostic] = []
        seen: set[tuple[str, str]] = set()

        def walk(t: TypeLayout, path: str, owner: str, member: str, in_array: bool) -> None:
            if t.kind is TypeKind.Struct:
                for m in t.members:
                    walk(m.type, f"{path}.{m.name}", t.name or owner, m.name, in_array)
                return
            if t.kind is TypeKind.Array:
                if t.element is not None:
                    walk(t.element, path, owner, member, True)
                return
            if t.scalar is ScalarKind.Bool:
                why = "WGSL has no bool in buffers (not host-shareable); use uint (0 or 1)"
            elif uniform and in_array and t.scalar is ScalarKind.Float16:
                why = (
                    "Slang emits an array of half in a WGSL uniform buffer as an invalid "
                    "vec8<f16>; use float, or half4 members instead of an array"
                )
            else:
                return
            if (owner, member) in seen:
                return
            seen.add((owner, member))
            file, line, col = self.member_position(decl, owner, member)
            out.append(
                self.error(
                    file,
                    line,
                    col,
                    f"WGSL: {path}: {why}, or build without the wgsl target",
                    "OS1003",
                )
            )

        if layout is not None and layout.kind is not TypeKind.Scalar:
            walk(layout, decl.name, layout.name, "", False)
        elif layout is not None and layout.scalar is ScalarKind.Bool:
            walk(layout, decl.name, "", "", False)
        return out

    def vk_offsets(self, layout: TypeLayout | None, owner: str) -> TypeLayout | None:
        """SPIR-V places ``[[vk::offset(n)]]`` members at n (and the members after it follow);
        Slang's reflection does not know, so its offsets are moved here (the cross-check then
        compares them with the module's Offset decorations)."""
        if layout is None or layout.kind is not TypeKind.Struct:
            return layout
        sdef = self.struct(owner) if owner else None
        shift = 0
        members = []
        for m in layout.members:
            f = sdef.field(m.name) if sdef else None
            attr = next((a for a in f.attributes if a.name == "vk::offset"), None) if f else None
            if attr is not None and attr.args and attr.args[0].isdigit():
                shift = max(shift, int(attr.args[0]) - m.offset)
            inner = m.type
            if inner.kind is TypeKind.Struct:
                inner = self.vk_offsets(inner, inner.name) or inner
            members.append(replace(m, offset=m.offset + shift, type=inner))
        if not shift and all(a == b for a, b in zip(members, layout.members, strict=True)):
            return layout
        align = max(layout.align, 1)
        size = (layout.size + shift + align - 1) // align * align
        return replace(layout, members=tuple(members), size=size)

    def resource(
        self, decl: Declaration, per: dict[Target, ParamFacts], errors: list[Diagnostic]
    ) -> Resource:
        rtype, kind = _RTYPES.get(decl.base, (None, None))
        if rtype is None or kind is None:
            errors.append(
                self.at_decl(
                    decl,
                    f"'{decl.name}': unsupported resource type '{decl.type_text or decl.base}'",
                    "OS1007",
                )
            )
            return Resource(decl.name, ResourceKind.ShaderResource, ResourceTypeKind.Texture2D)
        layout = (
            self.one_layout(decl, per, errors, block=rtype in _BLOCK_TYPES)
            if rtype not in _TEXTURES
            else next((per[t].layout for t in Target if t in per), None)
        )
        slots: list[Slot] = []
        counters: list[Slot] = []
        for t in Target:
            p = per.get(t)
            if p is None:
                continue
            if t is Target.Msl:
                slots.append(Slot(t, 0, self.msl_index[decl.name][1]))
            else:
                dset, binding = self.placement.bindings[decl.name]
                slots.append(Slot(t, dset, binding))
                if decl.name in self.placement.counters:
                    cset, cbinding = self.placement.counters[decl.name]
                    counters.append(Slot(t, cset, cbinding))
        if decl.array is not None:
            # Slang emits resource arrays for Metal without [[buffer/texture/sampler(n)]] and
            # texture arrays for WGSL as array<texture_2d<f32>, N>, which naga rejects.
            bad = [TARGET_NAMES[Target.Msl]] if Target.Msl in per else []
            if Target.Wgsl in per and rtype in _TEXTURES | _SAMPLERS:
                bad.append(TARGET_NAMES[Target.Wgsl])
            if bad:
                errors.append(
                    self.at_decl(
                        decl,
                        f"{' and '.join(bad)}: arrays of resources ('{decl.name}') are not "
                        "emitted correctly by Slang for this target; use separate declarations "
                        "(or a texture array type), or build for spirv only",
                        "OS1008",
                    )
                )
        count = next(iter(per.values())).count
        fmt_attr = decl.attribute("vk::image_format")
        fmt = fmt_attr.args[0] if fmt_attr and fmt_attr.args else None
        if fmt is None and rtype.name.startswith("RWTexture") and layout is not None:
            # As DXC: the storage format follows the texel type (float4 -> rgba32f, uint ->
            # r32ui); Slang's WGSL does the same, its SPIR-V is patched to say it too.
            components = layout.rows if layout.kind is TypeKind.Vector else 1
            fmt = _INFERRED_FORMATS.get((layout.scalar, components))
        return Resource(
            name=decl.name,
            kind=kind,
            rtype=rtype,
            count=count,
            hlsl=decl.type_text,
            format=fmt,
            slots=tuple(slots),
            counters=tuple(counters),
            layout=layout,
        )

    def spec(
        self, decl: Declaration, per: dict[Target, ParamFacts], outputs: dict[Target, bytes]
    ) -> SpecConstant:
        p0 = next(per[t] for t in Target if t in per)
        scalar = p0.scalar or ScalarKind.Int
        attr = decl.attribute("vk::constant_id")
        cid = int(attr.args[0]) if attr and attr.args and attr.args[0].isdigit() else p0.binding
        default = (
            p0.default_bits
            if p0.default_bits is not None
            else _literal_bits(decl.initializer, scalar)
        )
        slots: list[SpecSlot] = []
        for t in Target:
            if t not in per:
                continue
            if t is Target.SpirV:
                slots.append(SpecSlot(t, cid, decl.name))
            elif t is Target.Msl:
                m = re.search(
                    rf"constant\s+\w+\s+((?:fc_)?{re.escape(decl.name)}(?:_\d+)?)\s*"
                    r"\[\[function_constant\((\d+)\)\]\]",
                    outputs[t].decode(),
                )
                slots.append(
                    SpecSlot(t, int(m.group(2)) if m else cid, m.group(1) if m else decl.name)
                )
            else:
                text = outputs[t].decode()
                m = re.search(
                    rf"@id\((\d+)\)\s*override\s+({re.escape(decl.name)}_\d+|{re.escape(decl.name)})\b",
                    text,
                )
                slots.append(
                    SpecSlot(t, int(m.group(1)) if m else cid, m.group(2) if m else decl.name)
                )
        return SpecConstant(decl.name, cid, scalar, default, tuple(slots))

    def check_bindings(
        self, resources: list[Resource], decls: dict[str, Declaration]
    ) -> list[Resource]:
        """Two resources on one slot are an error, except a texture and a sampler on one SPIR-V
        binding (Vulkan's combined image sampler, DXC's t1/s1 pattern); WGSL gives the sampler
        of such a pair the next free binding of its group (docs/compiler.md)."""
        errors: list[Diagnostic] = []
        wgsl_moves: dict[str, int] = {}
        for target in Target:
            taken: dict[tuple[str, int, int], Resource] = {}
            for r in resources:
                for s in (
                    *(x for x in r.slots if x.target is target),
                    *(x for x in r.counters if x.target is target),
                ):
                    cls = (
                        self.msl_index.get(r.name, ("buffer", 0))[0] if target is Target.Msl else ""
                    )
                    key = (cls, s.set, s.binding)
                    other = taken.get(key)
                    if other is None:
                        taken[key] = r
                        continue
                    pair = (other.rtype in _TEXTURES and r.rtype in _SAMPLERS) or (
                        other.rtype in _SAMPLERS and r.rtype in _TEXTURES
                    )
                    if pair and target is Target.SpirV:
                        continue
                    if pair and target is Target.Wgsl:
                        sampler = r if r.rtype in _SAMPLERS else other
                        wgsl_moves[sampler.name] = s.set
                        continue
                    where = (
                        f"set {s.set}, binding {s.binding}"
                        if target is not Target.Msl
                        else f"[[{cls}({s.binding})]]"
                    )
                    errors.append(
                        self.at_decl(
                            decls[r.name],
                            f"{TARGET_NAMES[target]}: '{r.name}' and '{other.name}' "
                            f"(line {decls[other.name].line}) are both bound to {where}; "
                            "give one of them another register or [[vk::binding]], or shift a "
                            "register class apart (-fvk-b-shift/-fvk-t-shift/...)",
                            "OS3001",
                        )
                    )
            if errors:
                raise _Failed(errors)
        if not wgsl_moves:
            return resources
        used: dict[int, int] = {}
        for r in resources:
            for s in (*r.slots, *r.counters):
                if s.target is Target.Wgsl:
                    used[s.set] = max(used.get(s.set, -1), s.binding)
        out = []
        for r in resources:
            if r.name in wgsl_moves:
                group = wgsl_moves[r.name]
                used[group] += 1
                r = replace(
                    r,
                    slots=tuple(
                        Slot(s.target, s.set, used[group]) if s.target is Target.Wgsl else s
                        for s in r.slots
                    ),
                )
            out.append(r)
        return out

    def place_pushes(
        self,
        pushes: list[PushBlock],
        params: dict[Target, dict[str, ParamFacts]],
        resources: list[Resource],
    ) -> list[PushBlock]:
        """Metal: the [[buffer(n)]] Slang gave; WGSL: a uniform in the group after the last one
        the resources use, at binding 0, 1, ... in declaration order."""
        if not pushes:
            return pushes
        group = 1 + max(
            (s.set for r in resources for s in r.slots if s.target is Target.Wgsl), default=-1
        )
        out = []
        for i, p in enumerate(pushes):
            slots: list[Slot] = []
            if p.name in self.msl_index:
                slots.append(Slot(Target.Msl, 0, self.msl_index[p.name][1]))
            if Target.Wgsl in params:
                slots.append(Slot(Target.Wgsl, group, i))
            out.append(replace(p, slots=tuple(slots)))
        return out

    def wgsl_depth_textures(self, text: str, resources: list[Resource]) -> str:
        """A texture sampled only with a comparison sampler becomes a WGSL depth texture (WGSL
        compares depth textures only; Slang declares ``texture_2d<f32>``). A texture compared and
        also sampled plainly cannot be expressed: an error at its declaration."""
        decls = self.declarations()
        errors = []
        for r in resources:
            if r.rtype not in _TEXTURES:
                continue
            decl = re.search(
                rf"(var\s+{re.escape(r.name)}(?:_\d+)?\s*:\s*)(texture_\w+)<f32>", text
            )
            if not decl or decl.group(2) not in codepatch.DEPTH_TEXTURES:
                continue
            emitted = re.search(r"var\s+(\w+)", decl.group(0))
            assert emitted is not None
            refs = [m.start() for m in re.finditer(rf"\b{emitted.group(1)}\b", text)]
            refs = [i for i in refs if not (decl.start() <= i < decl.end())]
            compared = [bool(codepatch.WGSL_COMPARE.search(text[max(0, i - 60) : i])) for i in refs]
            if not any(compared):
                continue
            if not all(compared):
                errors.append(
                    self.at_decl(
                        decls[r.name],
                        f"WGSL: '{r.name}' is sampled both with a comparison sampler and "
                        "without; WGSL compares depth textures only, which cannot be sampled "
                        "as colour: use two texture declarations",
                        "OS1012",
                    )
                )
                continue
            depth = codepatch.DEPTH_TEXTURES[decl.group(2)]
            text = text[: decl.start(2)] + depth + text[decl.end() :]
        if errors:
            raise _Failed(errors)
        return text

    def patch_locations(self, outputs: dict[Target, bytes], entries: list[EntryPoint]) -> None:
        """Every target's code gets the reflection's locations (see ``locate``)."""
        for e in entries:
            ins = {v.name: v.location for v in e.inputs if v.location is not None}
            outs = {v.name: v.location for v in e.outputs if v.location is not None}
            if Target.SpirV in outputs:
                outputs[Target.SpirV] = relocate(outputs[Target.SpirV], e.name, ins, outs)
            if Target.Wgsl in outputs:
                text = codepatch.relocate_wgsl(outputs[Target.Wgsl].decode(), e.name, ins, outs)
                outputs[Target.Wgsl] = text.encode()
            if Target.Msl in outputs:
                text = codepatch.relocate_msl(
                    outputs[Target.Msl].decode(), e.name, e.stage, ins, outs
                )
                outputs[Target.Msl] = text.encode()

    def patch_spirv(self, code: bytes, resources: list[Resource]) -> bytes:
        wanted: dict[str, tuple[int, int]] = {}
        for r in resources:
            for s in r.slots:
                if s.target is Target.SpirV:
                    wanted[r.name] = wanted[f"{r.name}.elements"] = (s.set, s.binding)
                    if r.name == GLOBALS:
                        wanted[SLANG_GLOBALS] = (s.set, s.binding)
            for s in r.counters:
                if s.target is Target.SpirV:
                    wanted[f"{r.name}.counter"] = wanted[f"{r.name}_counter"] = (s.set, s.binding)
        renames = {f"{n}_counter": f"{n}.counter" for n in self.counted_rw()}
        renames[SLANG_GLOBALS] = GLOBALS  # DXC's name; SPIR-V names may hold any character
        code = rebind(code, wanted, renames)
        formats = {
            r.name: IMAGE_FORMATS.index(r.format) for r in resources if r.format in IMAGE_FORMATS
        }
        return set_image_formats(code, formats)

    def patch_wgsl(
        self,
        code: bytes,
        resources: list[Resource],
        pushes: list[PushBlock],
    ) -> bytes:
        text = code.decode()
        for p in pushes:
            push_slot = next(s for s in p.slots if s.target is Target.Wgsl)
            text = re.sub(
                rf"(?m)^(\s*)var<uniform>\s+({re.escape(p.name)}(?:_\d+)?)\s*:",
                rf"\1@binding({push_slot.binding}) @group({push_slot.set}) var<uniform> \2 :",
                text,
            )
        text = self.wgsl_depth_textures(text, resources)
        for r in resources:
            slot = next((s for s in r.slots if s.target is Target.Wgsl), None)
            if slot is None:
                continue
            var = rf"(\s*var(?:<[^>]*>)?\s+{re.escape(emitted_name(r.name))}(?:_\d+)?\s*:)"
            text = re.sub(
                rf"@binding\(\d+\)\s*@group\(\d+\){var}",
                rf"@binding({slot.binding}) @group({slot.set})\1",
                text,
            )
        return text.encode()

    def entries(
        self,
        primary: _Target,
        outputs: dict[Target, bytes],
        resources: list[Resource],
        pushes: list[PushBlock],
        specs: list[SpecConstant],
    ) -> list[EntryPoint]:
        usage = _usage({**outputs, **self.usage_outputs})
        resource_names = [r.name for r in resources]
        push_names = [p.name for p in pushes]
        spec_names = [s.name for s in specs]
        out = []
        for e in primary.facts.entries:
            stage = _STAGE_OF_SLANG.get(e.stage)
            if stage is None:
                raise _Failed(
                    [
                        Diagnostic(
                            self.name,
                            0,
                            0,
                            Severity.ERROR,
                            f"entry point '{e.name}': unsupported stage",
                            "OS1009",
                        )
                    ]
                )
            used, features = usage.get(e.name, (None, DeviceFeatures(0)))
            if used is None:
                used = set(resource_names) | set(push_names)
            inputs = self.locate(e, [self.stage_var(e, v, stage, True) for v in e.inputs], False)
            outputs_ = self.locate(
                e, [self.stage_var(e, v, stage, False) for v in e.outputs], stage is Stage.Pixel
            )
            stride = 0
            if stage is Stage.Vertex:
                try:
                    inputs, stride = _pack_vertex(inputs)
                except _NoVertexFormat as bad:
                    raise _Failed([self.no_vertex_format(e, bad.variable)]) from None
            specuse = [n for n in spec_names if _mentions_spec(outputs, e.name, n)]
            out.append(
                EntryPoint(
                    name=e.name,
                    stage=stage,
                    workgroup=e.workgroup,
                    stride=stride,
                    features=features,
                    inputs=tuple(inputs),
                    outputs=tuple(outputs_),
                    uses=tuple(n for n in resource_names if n in used),
                    pushuse=tuple(n for n in push_names if n in used),
                    specuse=tuple(specuse),
                )
            )
        return out

    def no_vertex_format(self, e: EntryFacts, v: StageVariable) -> Diagnostic:
        """A vertex input WebGPU has no vertex format for, at its declaration."""
        facts = next(x for x in e.inputs if x.name == v.name)
        owner = self.struct(facts.struct_name) if facts.struct_name else self.function(e.name)
        f = owner.field(v.name) if owner else None
        file = self.name
        if f is not None and owner is not None:
            where = next(
                (
                    p
                    for p, src in self.sources.items()
                    if owner in (*src.structs.values(), *src.functions.values())
                ),
                self.path,
            )
            file = self.display(str(where))
        spelled = {
            ScalarKind.Float16: "half",
            ScalarKind.Int16: "int16_t",
            ScalarKind.UInt16: "uint16_t",
        }.get(v.scalar, v.scalar.name.lower())
        return self.error(
            file,
            f.line if f else 0,
            f.column if f else 0,
            f"vertex input '{v.name}' ({spelled}{v.components if v.components > 1 else ''}) has "
            "no WebGPU vertex format; use 2 or 4 components for 8/16-bit types (or a 32-bit type)",
            "OS1014",
        )

    def locate(
        self, e: EntryFacts, variables: list[StageVariable], targets: bool
    ) -> list[StageVariable]:
        """DXC's locations: [[vk::location(n)]] where given, SV_TargetN at N, the others in
        declaration order."""
        out = []
        n = 0
        for v in variables:
            if v.builtin is not BuiltIn.None_:
                out.append(v)
                continue
            attr = self.vk_location.get((e.name, v.name))
            if attr is not None:
                location = attr
            elif targets and v.semantic == "SV_Target":
                location = v.index
            else:
                location = n
            n += 1
            out.append(replace(v, location=location))
        return out

    def stage_var(self, e: EntryFacts, v: VarFacts, stage: Stage, is_input: bool) -> StageVariable:
        written = ""
        modifiers: tuple[str, ...] = ()
        owner = self.struct(v.struct_name) if v.struct_name else self.function(e.name)
        f = owner.field(v.name) if owner else None
        if f is not None:
            written = f.semantic
            modifiers = f.modifiers
            loc = next((a for a in f.attributes if a.name == "vk::location" and a.args), None)
            if loc is not None and loc.args[0].isdigit():
                self.vk_location[(e.name, v.name)] = int(loc.args[0])
        upper = v.semantic.upper()
        builtin = _BUILTINS.get(upper, BuiltIn.None_)
        if builtin is not BuiltIn.None_:
            semantic = builtin.value
        elif upper.startswith("SV_TARGET"):
            semantic = "SV_Target"
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


def _metal_indices(facts: TargetFacts, names: set[str]) -> dict[str, tuple[str, int]]:
    """Metal's argument indices: buffers (cbuffers, structured and byte-address buffers, push
    blocks), textures (RW too) and samplers each numbered from 0 in declaration order, whatever
    registers say (Slang would put b0, t0 and u0 all on [[buffer(0)]])."""
    counts: dict[str, int] = {}
    out: dict[str, tuple[str, int]] = {}
    for p in facts.params:
        if p.name not in names or p.category == S.CAT_SPECIALIZATION_CONSTANT:
            continue
        cls = "buffer" if p.category == S.CAT_PUSH_CONSTANT_BUFFER else _MSL_CLASS.get(p.category)
        if cls is None:
            continue
        out[p.name] = (cls, counts.get(cls, 0))
        counts[cls] = counts.get(cls, 0) + 1
    return out


_MSL_CLASS = {
    S.CAT_CONSTANT_BUFFER: "buffer",
    S.CAT_SHADER_RESOURCE: "texture",
    S.CAT_UNORDERED_ACCESS: "texture",
    S.CAT_SAMPLER_STATE: "sampler",
}


def _literal_bits(text: str, scalar: ScalarKind) -> int:
    t = text.strip().rstrip("fFhHlLuU")
    try:
        if scalar is ScalarKind.Bool:
            return 1 if t == "true" else 0
        if scalar is ScalarKind.Float:
            return int(struct.unpack("<I", struct.pack("<f", float(t)))[0])
        return int(t, 0) & 0xFFFFFFFF
    except ValueError:
        return 0


class _NoVertexFormat(Exception):
    def __init__(self, variable: StageVariable) -> None:
        super().__init__(variable.name)
        self.variable = variable


def _pack_vertex(inputs: list[StageVariable]) -> tuple[list[StageVariable], int]:
    """Vertex formats and offsets of one interleaved vertex, packed in location order."""
    located = sorted((v for v in inputs if v.location is not None), key=lambda v: v.location or 0)
    offsets: dict[str, tuple[int, VertexFormat]] = {}
    offset = 0
    for v in located:
        fmt = _VERTEX_FORMATS.get((v.scalar, v.components))
        if fmt is None:
            raise _NoVertexFormat(v)
        width = _SCALAR_BYTES.get(v.scalar, 4)
        size = width * v.components
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


def _usage(outputs: dict[Target, bytes]) -> dict[str, tuple[set[str] | None, DeviceFeatures]]:
    """Per entry point: the names it really touches and the device features it needs, read from
    the emitted code (SPIR-V preferred: its entry points list their interface)."""
    out: dict[str, tuple[set[str] | None, DeviceFeatures]] = {}
    if Target.SpirV in outputs:
        from oneshader.compiler.emitted.spirv import features_of, read_spirv

        m = read_spirv(outputs[Target.SpirV])
        features = features_of(m.capabilities)
        for name, e in m.entries.items():
            out[name] = (set(e.uses) if e.uses is not None else None, features)
        return out
    for target, module_name, func in (
        (Target.Wgsl, "wgsl", "read_wgsl"),
        (Target.Msl, "msl", "read_msl"),
    ):
        if target not in outputs:
            continue
        try:
            mod = __import__(f"oneshader.compiler.emitted.{module_name}", fromlist=[func])
            reader = getattr(mod, func)
        except (ImportError, AttributeError):
            continue
        m = reader(outputs[target])
        # WGSL says one feature, module-wide (as SPIR-V's capabilities are): shader-f16.
        features = DeviceFeatures.Float16 if "f16" in m.enables else DeviceFeatures(0)
        for name, e in m.entries.items():
            out[name] = (set(e.uses) if e.uses is not None else None, features)
        return out
    return out


def _mentions_spec(outputs: dict[Target, bytes], entry: str, name: str) -> bool:
    """Whether the entry point reads the constant: searched in the WGSL functions it reaches
    (Slang drops unread constants from whole programs, so with one entry point presence is use)."""
    pattern = re.compile(rf"\b{re.escape(name)}(_\d+)?\b")
    if Target.Wgsl in outputs:
        return bool(pattern.search(codepatch.wgsl_reachable(outputs[Target.Wgsl].decode(), entry)))
    for t in (Target.Msl, Target.SpirV):
        if t in outputs:
            return bool(pattern.search(outputs[t].decode("latin-1")))
    return False


def _dedupe(diags: Sequence[Diagnostic]) -> list[Diagnostic]:
    """Each message once; a message without a position is dropped when Slang also gave it with
    one."""
    positioned = {(d.file, d.code, d.message) for d in diags if d.line}
    seen: set[tuple[str, int, int, str]] = set()
    out = []
    for d in diags:
        key = (d.file, d.line, d.column, d.message)
        if key in seen or (not d.line and (d.file, d.code, d.message) in positioned):
            continue
        seen.add(key)
        out.append(d)
    return out


_TARGET_SPECIFIC = frozenset({"E36107", "E55202", "E99997", "E00101"})


def _name_targets(per_target: dict[Target, list[Diagnostic]]) -> list[Diagnostic]:
    """Slang's errors in target order; one that not every target gave (or that is about the
    target by nature) starts with the target's name, as oneshader's own target errors do."""
    every = [{(d.file, d.line, d.code) for d in errs} for errs in per_target.values()]
    common = set.intersection(*every) if every else set()
    out = []
    for target, errs in per_target.items():
        name = TARGET_NAMES[target]
        for d in errs:
            specific = (d.file, d.line, d.code) not in common or d.code in _TARGET_SPECIFIC
            if specific and not d.message.startswith(f"{name}:"):
                d = replace(d, message=f"{name}: {d.message}")
            out.append(d)
    return out


def _crosscheck(reflection: ShaderReflection, files: Sequence[OutputFile]) -> list[str]:
    """The verifier's cross-check of reflection against emitted code, where it is installed."""
    try:
        from oneshader.compiler.crosscheck import verify
    except ImportError:  # the verifier's module has not landed: nothing to check with yet
        return []
    return list(verify(reflection, files))


_LOCK = threading.Lock()


def compile_file(path: str, options: CompileOptions) -> CompileResult:
    """One compile at a time per process: Slang's session is not thread-safe (parallel builds
    use several ``CompilerWorker`` processes)."""
    with _LOCK:
        return _Compilation(path, options).run()
