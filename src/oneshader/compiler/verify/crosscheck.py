"""Proof that a reflection is what each target's emitted code really uses.

:func:`verify` reads every output file with the reader of its target (``emitted.spirv``,
``emitted.wgsl``, ``emitted.msl``; standard library only) and compares slots, buffer layouts,
push-block placement, specialization constants, stage variables, built-ins, workgroup sizes and
SPIR-V capabilities with the reflection. Each disagreement is one message naming the target, the
record/member path and both numbers. Things the code does not show (an unused resource Slang
dropped, Metal's workgroup size) cannot disagree and are listed by :func:`check` as unchecked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from oneshader.compiler.api import PADDING, TARGET_NAMES, OutputFile
from oneshader.compiler.emitted.common import (
    FLOATS,
    LENGTHS,
    EmittedCodeError,
    EmittedEntry,
    EmittedModule,
    EmittedResource,
    EmittedVariable,
    counter_name,
    demangle,
    emitted_name,
    resource_name,
    round_up,
    slang_scrubbed,
)
from oneshader.compiler.emitted.msl import msl_semantic, read_msl, read_msl_shared
from oneshader.compiler.emitted.spirv import (
    features_of,
    module_features,
    read_spirv,
    read_spirv_shared,
)
from oneshader.compiler.emitted.wgsl import read_wgsl, read_wgsl_shared
from oneshader.diagnostics import Code, Collector, Diagnostic, Severity
from oneshader.reflection.model import (
    BLOCK_TYPES,
    BUFFER_TYPES,
    MEASURED_TYPES,
    SAMPLER_TYPES,
    STRUCTURED_TYPES,
    Access,
    BuiltIn,
    DeviceFeatures,
    EntryPoint,
    Interpolation,
    MatrixPacking,
    PushBlock,
    Resource,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    SpecConstant,
    Stage,
    StageVariable,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
)

__all__ = ["CheckReport", "check", "read_output", "verify"]

# A storage texture's access as WGSL spells it (SPIR-V's decorations are read into these words).
_ACCESS_WORDS = {Access.ReadWrite: "read_write", Access.ReadOnly: "read", Access.WriteOnly: "write"}

_UNIFORM_BLOCKS = frozenset({ResourceTypeKind.ConstantBuffer})


def _expected_space(target: Target, rtype: ResourceTypeKind) -> frozenset[str]:
    if rtype is ResourceTypeKind.TextureBuffer:  # a block on SPIR-V, a texture on Metal
        if target is Target.Wgsl:
            return frozenset({"storage"})  # read-only storage, as the bindings bind it
        return frozenset({"Uniform", "StorageBuffer", "buffer", "texture"})
    if target is Target.Wgsl and rtype in (ResourceTypeKind.Buffer, ResourceTypeKind.RWBuffer):
        return frozenset({"storage"})  # WGSL has no texel buffers: a storage array of T
    if target is Target.SpirV:
        if rtype in _UNIFORM_BLOCKS:
            return frozenset({"Uniform"})
        if rtype in BUFFER_TYPES:
            return frozenset({"StorageBuffer", "Uniform"})
        return frozenset({"UniformConstant"})
    if target is Target.Wgsl:
        if rtype in _UNIFORM_BLOCKS:
            return frozenset({"uniform"})
        if rtype in BUFFER_TYPES:
            return frozenset({"storage"})
        return frozenset({"handle"})
    if rtype in BUFFER_TYPES or rtype is ResourceTypeKind.RaytracingAccelerationStructure:
        return frozenset({"buffer"})
    if rtype in SAMPLER_TYPES:
        return frozenset({"sampler"})
    return frozenset({"texture"})


@dataclass
class CheckReport:
    """``mismatches`` are disagreements; ``unchecked`` what the emitted code did not show."""

    mismatches: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    checked: int = 0


_READERS: dict[Target, Callable[[bytes, str], EmittedModule]] = {
    Target.SpirV: read_spirv,
    Target.Wgsl: read_wgsl,
    Target.Msl: read_msl,
}


def read_output(output: OutputFile) -> EmittedModule:
    """The emitted module of one output file, read by its target's reader."""
    return _READERS[output.target](output.data, output.suffix)


# The same readers, sharing what the compiler's steps read of the same bytes (the last code
# often is what the entry points were derived from): the check only changes its own copies.
_SHARED_READERS: dict[Target, Callable[[bytes], EmittedModule]] = {
    Target.SpirV: read_spirv_shared,
    Target.Wgsl: read_wgsl_shared,
    Target.Msl: read_msl_shared,
}


def verify(reflection: ShaderReflection, outputs: Sequence[OutputFile]) -> list[str]:
    """One message per disagreement between ``reflection`` and the emitted ``outputs``."""
    return check(reflection, outputs).mismatches


def check_outputs(
    source: str, reflection: ShaderReflection, outputs: Sequence[OutputFile], problems: Collector
) -> None:
    """:func:`verify` as the compiler's last step: each disagreement is an ``OS9000`` error of
    ``source`` added to ``problems`` (a bug in oneshader, not in the shader)."""
    for m in verify(reflection, outputs):
        message = f"internal error: the reflection disagrees with the emitted code: {m}"
        problems.add(Diagnostic(source, 0, 0, Severity.ERROR, message, Code.CROSSCHECK_MISMATCH))


def check(reflection: ShaderReflection, outputs: Sequence[OutputFile]) -> CheckReport:
    """:func:`verify`'s findings, with what could not be checked and a count of comparisons."""
    report = CheckReport()
    report.mismatches += _location_invariants(reflection)
    per_target: dict[Target, list[EmittedModule]] = {}
    for output in outputs:
        try:
            module = _SHARED_READERS[output.target](output.data)
        except (EmittedCodeError, UnicodeDecodeError) as exc:
            report.mismatches.append(
                f"{TARGET_NAMES[output.target]} ({output.suffix}): unreadable output: {exc}"
            )
            continue
        except Exception as exc:  # a reader bug must surface as a finding, not kill the compile
            report.mismatches.append(
                f"{TARGET_NAMES[output.target]} ({output.suffix}): unreadable output: "
                f"reader failed with {type(exc).__name__}: {exc}"
            )
            continue
        per_target.setdefault(output.target, []).append(module)
    # The reflection's uses are the union of what each target's code touches (SPIR-V and WGSL
    # list it): one target's code may touch fewer (Slang folded a read away, a source rewrite
    # left debug printf out), so each target's are a subset and their union is exact.
    listing = [t for t in per_target if t is not Target.Msl]
    union: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for target, modules in per_target.items():
        folded = [
            _with_flattened_structs(
                _with_companion_counters(_with_exact_names(module, reflection), reflection),
                reflection,
            )
            for module in modules
        ]
        checker = _Checker(reflection, target, folded, report, len(listing) < 2)
        checker.run()
        for key, (ours, theirs) in checker.uses_seen.items():
            seen = union.setdefault(key, (set(), set()))
            seen[0].update(ours)
            seen[1].update(theirs)
    if len(listing) > 1:
        report.mismatches += _union_of_uses(union)
    report.mismatches += _union_of_features(reflection, per_target)
    produced = {o.target for o in outputs}
    for target in reflection.targets:
        if target not in produced:
            report.mismatches.append(
                f"{TARGET_NAMES[target]}: the reflection lists the target but no output holds it"
            )
    for target in produced - set(reflection.targets):
        report.mismatches.append(
            f"{TARGET_NAMES[target]}: an output for a target the reflection does not list"
        )
    # Metal repeats every resource in every entry point's parameters: say each thing once.
    report.mismatches = list(dict.fromkeys(report.mismatches))
    report.unchecked = list(dict.fromkeys(report.unchecked))
    return report


def _union_of_uses(union: dict[tuple[str, str], tuple[set[str], set[str]]]) -> list[str]:
    """Where the targets that list an entry point's uses together touch other resources (or
    push blocks) than the reflection says: (entry, what) -> (reflection's, code's)."""
    return [
        f"entry '{entry}' {what}: reflection says {sorted(ours)}, the targets' code together "
        f"says {sorted(theirs)}"
        for (entry, what), (ours, theirs) in union.items()
        if ours != theirs
    ]


def _location_invariants(reflection: ShaderReflection) -> list[str]:
    """What locations must be in any reflection, whatever the code says: per entry point and
    direction, each location is one variable's; a colour output ``SV_TargetN`` is at location
    N (the attachment it writes). A breach is a bug even where the code agrees with it."""
    out = []
    for entry in reflection.entry_points:
        for direction, variables in (("input", entry.inputs), ("output", entry.outputs)):
            seen: dict[int, str] = {}
            for var in variables:
                if var.location is None:
                    continue
                if var.location in seen:
                    out.append(
                        f"reflection: entry '{entry.name}' {direction}s '{seen[var.location]}' "
                        f"and '{var.name}' are both at location {var.location}"
                    )
                seen.setdefault(var.location, var.name)
        if entry.stage is not Stage.Pixel:
            continue
        for var in entry.outputs:
            if var.semantic == "SV_Target" and var.location != var.index:
                out.append(
                    f"reflection: entry '{entry.name}' output '{var.name}' is "
                    f"SV_Target{var.index} but at location {var.location}"
                )
    return out


def _with_companion_counters(module: EmittedModule, reflection: ShaderReflection) -> EmittedModule:
    """WGSL and MSL hold a counter as the companion buffer ``X_counter`` (rewrite.py); read it
    as ``X``'s counter, as SPIR-V's ``X.counter`` is, where the reflection gives X a counter on
    this target (a user's own ``X_counter`` stays a resource of its own). A copy where it
    changes anything: the module read is shared."""
    if module.target is Target.SpirV:
        return module
    owners = {
        counter_name(r.name): r.name
        for r in reflection.resources
        if any(s.target is module.target for s in r.counters)
    }
    return _renamed(module, owners, "counter")


def _with_flattened_structs(module: EmittedModule, reflection: ShaderReflection) -> EmittedModule:
    """WGSL and MSL declare the field ``x.field`` of a global struct of resources as the global
    ``x_field``: read it under the reflection's name (precheck refuses a shader where that
    spelling is also another declaration's name, so the reading is unambiguous). A copy where
    it changes anything: the module read is shared."""
    if module.target is Target.SpirV:
        return module
    fields = {emitted_name(r.name): r.name for r in reflection.resources if "." in r.name}
    return _renamed(module, fields, None)


def _with_exact_names(module: EmittedModule, reflection: ShaderReflection) -> EmittedModule:
    """A resource whose own name ends in ``_<n>`` (FidelityFX's ``rw_img_mip_5``), which Slang
    keeps in WGSL and MSL and the readers take for Slang's suffix of ``rw_img_mip``: read under
    the name it is emitted with wherever the reflection has that name, in the entry points'
    uses too. A copy where it changes anything: the module read is shared."""
    if module.target is Target.SpirV:
        return module
    known = {r.name for r in reflection.resources} | {p.name for p in reflection.push_blocks}
    exact = {
        em.emitted
        for name, found in module.resources.items()
        for em in found
        if em.emitted in known and em.emitted != name
    }
    if not exact:
        return module
    resources: dict[str, list[EmittedResource]] = {}
    for name, found in module.resources.items():
        for em in found:
            key = em.emitted if em.emitted in exact else name
            resources.setdefault(key, []).append(replace(em, name=key))
    entries = dict(module.entries)
    for key, entry in entries.items():
        if entry.uses is not None and entry.spelled & exact:
            uses = {i if i in exact else resource_name(i) for i in entry.spelled}
            uses |= entry.uses - {resource_name(i) for i in entry.spelled}
            entries[key] = replace(entry, uses=frozenset(uses))
    return replace(module, resources=resources, entries=entries)


def _renamed(module: EmittedModule, names: dict[str, str], role: str | None) -> EmittedModule:
    """``module`` with the resources named as the keys of ``names`` read under their values
    (and ``role``, if given), in the entry points' uses too; a copy where anything changes,
    since the module read is shared with the compiler's steps."""
    if not names.keys() & module.resources.keys():
        return module
    resources = {name: list(found) for name, found in module.resources.items()}
    module = replace(module, resources=resources, entries=dict(module.entries))
    for spelled, name in names.items():
        found = module.resources.pop(spelled, None)
        if found is None:
            continue
        for em in found:
            module.add_resource(replace(em, name=name, role=role if role is not None else em.role))
        for key, entry in module.entries.items():
            if entry.uses is not None and spelled in entry.uses:
                module.entries[key] = replace(entry, uses=(entry.uses - {spelled}) | {name})
    return module


class _Checker:
    def __init__(
        self,
        reflection: ShaderReflection,
        target: Target,
        modules: list[EmittedModule],
        report: CheckReport,
        exact_uses: bool = True,
    ) -> None:
        self.r = reflection
        self.target = target
        self.modules = modules
        self.report = report
        self.exact_uses = exact_uses
        self.prefix = TARGET_NAMES[target]
        # (entry point, "uses" or "pushuse") -> (the reflection's names this target can
        # bind, the names its code touches)
        self.uses_seen: dict[tuple[str, str], tuple[set[str], set[str]]] = {}

    # -- reporting ---------------------------------------------------------------------------

    def bad(self, module: EmittedModule, what: str) -> None:
        self.report.mismatches.append(f"{self.prefix} ({module.source}): {what}")

    def differ(self, module: EmittedModule, what: str, ours: object, theirs: object) -> bool:
        self.report.checked += 1
        if ours == theirs:
            return False
        self.bad(module, f"{what}: reflection says {ours}, emitted code says {theirs}")
        return True

    def unchecked(self, what: str) -> None:
        self.report.unchecked.append(f"{self.prefix}: {what}")

    # -- the checks --------------------------------------------------------------------------

    def run(self) -> None:
        push_names = {p.name for p in self.r.push_blocks}
        known = {r.name for r in self.r.resources} | push_names
        for res in self.r.resources:
            self.resource(res)
        for block in self.r.push_blocks:
            self.push(block)
        for spec in self.r.spec_constants:
            self.spec(spec)
        for module in self.modules:
            for name, found in module.resources.items():
                if name not in known:
                    first = found[0]
                    self.bad(
                        module,
                        f"code declares resource '{first.emitted}' "
                        f"({_where(first)}) that the reflection lacks",
                    )
            self.extra_specs(module)
            self.collisions(module)
            for emitted_entry in module.entries.values():
                if not any(_is_entry(e.name, emitted_entry.name) for e in self.r.entry_points):
                    self.bad(
                        module,
                        f"code has entry point '{emitted_entry.name}' that the reflection lacks",
                    )
        for entry in self.r.entry_points:
            self.entry(entry, push_names)
        if self.target is Target.SpirV:
            self.features()

    def collisions(self, module: EmittedModule) -> None:
        """Two resources on one slot: each reflection slot may agree with the code, yet be wrong."""
        taken: dict[tuple[str, str, int | None, int | None], list[EmittedResource]] = {}
        for found in module.resources.values():
            for em in found:
                if em.binding is None or em.space == "PushConstant":
                    continue
                cls = em.space if self.target is Target.Msl else ""
                taken.setdefault((em.scope, cls, em.set, em.binding), []).append(em)
        for group in taken.values():
            names = list(dict.fromkeys(em.name for em in group))
            if len(names) < 2:
                continue
            kinds = sorted(em.type_text for em in group)
            if self.target is Target.SpirV and kinds == ["OpTypeImage", "OpTypeSampler"]:
                continue  # a texture and a sampler read as one combined image sampler: legal
            em = group[-1]
            scope = f" in entry '{em.scope}'" if em.scope else ""
            self.bad(module, f"resources {_names(names)} share {_where(em)}{scope}")

    def _slot(self, slots: tuple[Slot, ...]) -> Slot | None:
        return next((s for s in slots if s.target is self.target), None)

    def lengths(self, res: Resource) -> None:
        """Metal's companion of buffer lengths: on Metal only, one ``uint`` per buffer, each
        named as a buffer of the reflection (the layout and slot are checked as any block's)."""
        self.report.checked += 1
        others = [s.target.name for s in res.slots if s.target is not Target.Msl]
        if others or res.counters:
            self.bad(self.modules[0], f"resource '{LENGTHS}' has slots on {others}: Metal only")
        buffers = {r.name for r in self.r.resources if r.rtype in MEASURED_TYPES}
        for m in res.layout.members if res.layout is not None else ():
            if m.name not in buffers or m.type.scalar is not ScalarKind.UInt:
                self.bad(
                    self.modules[0],
                    f"resource '{LENGTHS}' member '{m.name}' is not a uint named for a buffer",
                )

    def resource(self, res: Resource) -> None:
        if res.name == LENGTHS:
            self.lengths(res)
        slot = self._slot(res.slots)
        counter = self._slot(res.counters)
        seen = False
        for module in self.modules:
            for em in module.resources.get(res.name, ()):
                seen = True
                path = f"resource '{res.name}'"
                if em.role == "counter":
                    if counter is None:
                        self.bad(
                            module,
                            f"{path}: code declares a counter buffer at "
                            f"{_where(em)} that the reflection lacks",
                        )
                    else:
                        self.slot(module, f"{path} counter", counter, em)
                    continue
                if em.space not in _expected_space(self.target, res.rtype):
                    self.bad(
                        module,
                        f"{path}: a {res.rtype.name} but the code declares it in '{em.space}'",
                    )
                self.slot(module, path, slot, em)
                if em.count != res.count:
                    self.differ(module, f"{path} count", res.count, em.count)
                if res.attachment is not None or em.attachment is not None:
                    self.differ(
                        module, f"{path} input attachment index", res.attachment, em.attachment
                    )
                if res.format is not None and em.format is not None:
                    self.differ(module, f"{path} image format", res.format, em.format)
                if em.access and res.rtype.name.startswith("RWTexture"):
                    # the reflection's access is a storage texture's; a typed buffer's (an
                    # image in SPIR-V, which Slang may itself mark NonReadable) is ReadWrite
                    wanted = _ACCESS_WORDS[res.access]
                    if em.access != wanted:
                        self.differ(module, f"{path} storage access", wanted, em.access)
                if self.target is Target.Wgsl and em.space == "handle":
                    declared = em.type_text.startswith("texture_depth")
                    if declared != res.depth:
                        self.differ(module, f"{path} depth texture", res.depth, declared)
                self.buffer_layout(module, res.name, res.rtype, res.layout, em)
        if not seen:
            self.unchecked(f"resource '{res.name}' is not in the emitted code")

    def slot(
        self, module: EmittedModule, path: str, slot: Slot | None, em: EmittedResource
    ) -> None:
        """The code's binding of ``em`` against the reflection's slot for this target (a
        binding the reflection has no slot for is a mismatch too)."""
        if slot is None:
            self.bad(
                module,
                f"{path}: the reflection has no {self.prefix} slot, the code "
                f"binds it at {_where(em)}",
            )
            return
        if self.target is Target.Msl:
            self.differ(module, f"{path} [[{em.space}(n)]] index", slot.binding, em.binding)
            return
        word = "group" if self.target is Target.Wgsl else "set"
        if em.binding is None or em.set is None:
            self.bad(
                module,
                f"{path}: reflection says {word} {slot.set} binding {slot.binding}, "
                f"the emitted code gives it no {word}/binding",
            )
            return
        self.differ(
            module,
            f"{path} {word}/binding",
            f"{word} {slot.set} binding {slot.binding}",
            f"{word} {em.set} binding {em.binding}",
        )

    def buffer_layout(
        self,
        module: EmittedModule,
        name: str,
        rtype: ResourceTypeKind | None,
        layout: TypeLayout | None,
        em: EmittedResource,
    ) -> None:
        if layout is None or em.layout is None:
            return
        if rtype in STRUCTURED_TYPES and em.stride is not None:
            stride = round_up(layout.size, layout.align)
            self.differ(module, f"{name}[] element stride", stride, em.stride)
        if rtype is None or rtype in BLOCK_TYPES:
            self.layout(module, name, layout, em.layout, role="block")
        elif rtype in STRUCTURED_TYPES:
            self.layout(module, name, layout, em.layout)

    def layout(
        self,
        module: EmittedModule,
        path: str,
        ours: TypeLayout,
        theirs: TypeLayout,
        role: str = "element",
    ) -> None:
        """``role``: "element" (a structured buffer's element or a leaf: every size exact),
        "block" (a constant buffer's or push block's struct: the code's size may be smaller, the
        reflection records the largest over targets), "nested" (a struct inside another or in an
        array: its size shows only through offsets and strides, compared on their own)."""
        if ours.kind is TypeKind.Matrix and theirs.kind is TypeKind.Array:
            ours = _rows_of(ours)  # a non-float matrix, emitted as its rows
        if ours.kind is not theirs.kind:
            self.differ(module, f"{path} kind", ours.kind.name, theirs.kind.name)
            return
        scalar_like = ours.kind in (TypeKind.Scalar, TypeKind.Vector, TypeKind.Matrix)
        if scalar_like and not _same_scalar(ours.scalar, theirs.scalar):
            self.differ(module, f"{path} scalar", ours.scalar.name, theirs.scalar.name)
        if ours.kind is TypeKind.Vector:
            self.differ(module, f"{path} components", ours.rows, theirs.rows)
        elif ours.kind is TypeKind.Matrix:
            self.differ(
                module, f"{path} shape", f"{ours.rows}x{ours.cols}", f"{theirs.rows}x{theirs.cols}"
            )
            self.differ(module, f"{path} packing", ours.packing.name, theirs.packing.name)
            self.differ(module, f"{path} matrix stride", ours.mstride, theirs.mstride)
            self.differ(module, f"{path} size", ours.size, theirs.size)
        elif ours.kind is TypeKind.Array:
            self.differ(module, f"{path} array length", ours.length, theirs.length)
            self.differ(module, f"{path} array stride", ours.stride, theirs.stride)
            if ours.element is not None and theirs.element is not None:
                if _widened(ours, theirs.element):
                    return  # an element held in a 4-vector of its stride, its first components
                self.layout(module, f"{path}[]", ours.element, theirs.element, "nested")
        elif ours.kind is TypeKind.Struct:
            if role == "element":
                self.differ(module, f"{path} struct size", ours.size, theirs.size)
            elif role == "block":
                self.report.checked += 1
            if role == "block" and theirs.size > ours.size:
                self.bad(
                    module,
                    f"{path} struct size: reflection says {ours.size}, emitted code says "
                    f"{theirs.size} (a buffer of the reflected size would be too small)",
                )
            by_name: dict[str, list[StructMember]] = {}
            for m in theirs.members:
                by_name.setdefault(m.name, []).append(m)
            for member in ours.members:
                other = _take_member(by_name, member.name)
                if other is None and member.type.size == 0:
                    continue  # an empty struct: no bytes; Slang drops the member (WGSL and Metal
                    # have no empty structs)
                if other is None:
                    self.bad(
                        module, f"{path}.{member.name}: member missing from the emitted struct"
                    )
                    continue
                self.differ(module, f"{path}.{member.name} offset", member.offset, other.offset)
                self.layout(module, f"{path}.{member.name}", member.type, other.type, "nested")
            for extra in (name for name, left in by_name.items() for _ in left):
                if extra.startswith(PADDING):
                    continue  # vk::offset's padding (compiler.slang.padding)
                self.bad(module, f"{path}.{extra}: emitted struct member the reflection lacks")

    def push(self, block: PushBlock) -> None:
        slot = self._slot(block.slots)
        seen = False
        for module in self.modules:
            for em in module.resources.get(block.name, ()):
                seen = True
                path = f"push block '{block.name}'"
                if self.target is Target.SpirV:
                    if em.space != "PushConstant":
                        self.bad(module, f"{path}: not a push constant in the code ({em.space})")
                    if slot is not None:
                        self.bad(
                            module,
                            f"{path}: the reflection gives it a SPIR-V slot "
                            f"(set {slot.set} binding {slot.binding}); SPIR-V has none",
                        )
                else:
                    self.slot(module, path, slot, em)
                self.buffer_layout(module, block.name, None, block.layout, em)
        if not seen:
            self.unchecked(f"push block '{block.name}' is not in the emitted code")

    def spec(self, spec: SpecConstant) -> None:
        slot = next((s for s in spec.slots if s.target is self.target), None)
        seen = False
        for module in self.modules:
            em = None
            if slot is not None:
                em = module.spec_constants.get(slot.name)
            if em is None:
                em = next((e for e in module.spec_constants.values() if e.name == spec.name), None)
            if em is None:
                continue
            seen = True
            path = f"spec constant '{spec.name}'"
            if slot is None:
                self.bad(
                    module,
                    f"{path}: the reflection has no {self.prefix} slot, the code "
                    f"gives it index {em.index}",
                )
                continue
            if em.name != spec.name:
                self.bad(
                    module,
                    f"{path}: the reflection's {self.prefix} slot names '{slot.name}' "
                    f"(index {slot.index}), which is the code's constant '{em.name}'",
                )
                continue
            self.differ(module, f"{path} index", slot.index, em.index)
            self.differ(module, f"{path} emitted name", slot.name, em.emitted)
            if em.default is not None:
                self.differ(
                    module,
                    f"{path} default bits",
                    f"0x{spec.default:08x}",
                    f"0x{em.default & 0xFFFFFFFF:08x}",
                )
        if not seen:
            self.unchecked(f"spec constant '{spec.name}' is not in the emitted code")

    def extra_specs(self, module: EmittedModule) -> None:
        names = {spec.name for spec in self.r.spec_constants}
        slot_names = {
            s.name for spec in self.r.spec_constants for s in spec.slots if s.target is self.target
        }
        for key, em in module.spec_constants.items():
            if key not in slot_names and em.name not in names:
                self.bad(
                    module,
                    f"code declares spec constant '{em.emitted}' (index {em.index}) "
                    "that the reflection lacks",
                )

    def entry(self, entry: EntryPoint, push_names: set[str]) -> None:
        found = []
        for m in self.modules:
            em = m.entries.get(entry.name) or next(
                (e for n, e in m.entries.items() if _is_entry(entry.name, n)), None
            )
            if em is not None:
                found.append((m, em))
        if not found:
            self.report.mismatches.append(
                f"{self.prefix}: entry point '{entry.name}' is missing from the emitted code"
            )
            return
        for module, em in found:
            path = f"entry '{entry.name}'"
            self.differ(module, f"{path} stage", entry.stage.value, em.stage)
            if em.workgroup is not None:
                self.differ(module, f"{path} workgroup size", entry.workgroup, em.workgroup)
            elif entry.stage.value == "compute":
                self.unchecked(f"{path} workgroup size is not in the emitted code")
            self.stage_vars(module, f"{path} input", entry.inputs, em.inputs, em)
            self.stage_vars(module, f"{path} output", entry.outputs, em.outputs, em)
            self.distinct_locations(module, f"{path} input", em.inputs)
            self.distinct_locations(module, f"{path} output", em.outputs)
            if em.uses is not None:
                here = {r.name for r in self.r.resources if self._slot(r.slots) is not None}
                for what, ours, theirs in (
                    ("uses", {n for n in entry.uses if n in here}, em.uses - push_names),
                    ("pushuse", set(entry.pushuse), em.uses & push_names),
                ):
                    seen = self.uses_seen.setdefault((entry.name, what), (set(), set()))
                    seen[0].update(ours)
                    seen[1].update(theirs)
                    if not self.exact_uses:
                        theirs = theirs | ours if theirs <= ours else theirs
                    self.differ(module, f"{path} {what}", sorted(ours), sorted(theirs))
            if em.spec_uses is not None:
                by_slot = {
                    s.name: spec.name
                    for spec in self.r.spec_constants
                    for s in spec.slots
                    if s.target is self.target
                }
                read = sorted(by_slot.get(n, demangle(n)) for n in em.spec_uses)
                self.differ(module, f"{path} specuse", sorted(entry.specuse), read)
            self.wgsl_features(module, entry)

    def stage_vars(
        self,
        module: EmittedModule,
        path: str,
        ours: tuple[StageVariable, ...],
        theirs: tuple[EmittedVariable, ...],
        em: EmittedEntry,
    ) -> None:
        located = [v for v in ours if v.builtin is BuiltIn.None_]
        leaves = [_leaf(v.name) for v in located]  # (once, not once per emitted variable)
        for var in theirs:
            label = var.emitted or var.name or var.semantic or "?"
            if var.builtin is not None:
                allowed = {var.builtin} | _STANDS_IN.get(var.builtin, set())
                if not any(v.builtin in allowed for v in ours):
                    self.bad(
                        module,
                        f"{path}: code uses built-in {var.target_builtin} "
                        f"({var.builtin.value}) that the reflection lacks",
                    )
                continue
            if var.semantic and var.location is None:
                match = [v for v in located if msl_semantic(v) == var.semantic]
                if not match:
                    self.bad(
                        module,
                        f"{path}: code has varying [[user({var.semantic})]] "
                        f"({label}) that the reflection lacks",
                    )
                    continue
                self.interp(module, f"{path} '{match[0].name}'", match[0], var)
                continue
            if var.location is None:
                continue
            by_name = [
                v for v, leaf in zip(located, leaves, strict=True) if var.name and leaf == var.name
            ]
            if len(by_name) == 1:
                self.differ(
                    module,
                    f"{path} '{by_name[0].name}' location",
                    by_name[0].location,
                    var.location,
                )
                self.interp(module, f"{path} '{by_name[0].name}'", by_name[0], var)
                continue
            by_loc = [v for v in located if v.location == var.location]
            if not by_loc:
                self.bad(
                    module,
                    f"{path}: code has location {var.location} ({label}) that the reflection lacks",
                )
            else:
                self.interp(module, f"{path} '{by_loc[0].name}'", by_loc[0], var)

    def distinct_locations(
        self, module: EmittedModule, path: str, theirs: tuple[EmittedVariable, ...]
    ) -> None:
        """No two stage variables of one direction at one location in the code (spirv-val's
        VUID-StandaloneSpirv-OpEntryPoint-08722, naga's "multiple bindings at location"),
        whatever the reflection says."""
        self.report.checked += 1
        seen: dict[int, str] = {}
        for var in theirs:
            if var.location is None:
                continue
            label = var.emitted or var.name
            occupied = range(var.location, var.location + var.span)
            shared = next((n for n in occupied if n in seen), None)
            if shared is not None:
                self.bad(
                    module,
                    f"{path}s '{seen[shared]}' and '{label}' are both at location {shared}",
                )
            for n in occupied:
                seen.setdefault(n, label)

    def interp(
        self, module: EmittedModule, path: str, ours: StageVariable, theirs: EmittedVariable
    ) -> None:
        if module.target is Target.Msl and " output " in f"{path} ":
            return  # Metal qualifies interpolation on the fragment's inputs only
        if not theirs.interp and ours.interp in (Interpolation.Default, Interpolation.Linear):
            return  # (most: neither side qualifies it)
        want = {ours.interp} - _PLAIN
        got = set(theirs.interp)
        integer = ours.scalar not in (ScalarKind.Float, ScalarKind.Float16, ScalarKind.Float64)
        if integer:
            want.discard(Interpolation.Flat)
            got.discard(Interpolation.Flat)
        if (want and not want <= got) or (not want and got):
            self.differ(
                module,
                f"{path} interpolation",
                ",".join(sorted(i.name for i in want)) or "Default",
                ",".join(sorted(i.name for i in got)) or "Default",
            )

    def wgsl_features(self, module: EmittedModule, entry: EntryPoint) -> None:
        """f16 in WGSL needs ``enable f16``, which the device must grant as shader-f16; a
        vertex entry's clip distances need ``enable clip_distances`` and the built-in, which
        the device must grant as clip-distances (the bindings derive both from the
        reflection)."""
        if module.target is not Target.Wgsl:
            return
        self.wgsl_clip_distances(module, entry)
        enabled = "f16" in module.enables
        needs = DeviceFeatures.Float16 in entry.features
        if enabled and not needs and len(module.entries) == 1:
            self.bad(
                module,
                f"entry '{entry.name}': the module enables f16 but the reflection's "
                "features lack Float16",
            )
        # Float16 without `enable f16`: another target's code needs it (Slang's SPIR-V
        # converts f32tof16 through half); the union of the targets' needs is checked whole

    def wgsl_clip_distances(self, module: EmittedModule, entry: EntryPoint) -> None:
        em = module.entries.get(entry.name)
        if em is None or entry.stage is not Stage.Vertex:
            return
        ours = any(v.builtin is BuiltIn.ClipDistance for v in entry.outputs)
        theirs = any(v.builtin is BuiltIn.ClipDistance for v in em.outputs)
        enabled = "clip_distances" in module.enables
        if ours and not (theirs and enabled):
            self.bad(
                module,
                f"entry '{entry.name}': the reflection's outputs hold SV_ClipDistance but the "
                "module does not write clip_distances (or does not enable them)",
            )
        if enabled and not any(
            v.builtin is BuiltIn.ClipDistance for e in self.r.entry_points for v in e.outputs
        ):
            self.bad(module, "the module enables clip_distances but no entry writes them")

    def features(self) -> None:
        """This module's needs are among the reflection's (which are the union of every
        target's: :func:`_union_of_features`)."""
        for module in self.modules:
            need = features_of(module.capabilities)
            have = DeviceFeatures(0)
            for entry in self.r.entry_points:
                have |= entry.features
            if need & ~have:
                self.differ(
                    module,
                    "features (from OpCapability)",
                    _flags(have),
                    _flags(need),
                )


_PLAIN = frozenset({Interpolation.Default, Interpolation.Linear})  # no qualifier

# Built-ins a compiler declares to compute another one (Metal derives SV_GroupIndex from the
# thread position in the threadgroup).
_STANDS_IN: dict[BuiltIn, set[BuiltIn]] = {BuiltIn.GroupThreadId: {BuiltIn.GroupIndex}}


def _union_of_features(
    reflection: ShaderReflection, per_target: dict[Target, list[EmittedModule]]
) -> list[str]:
    """The reflection's features are exactly what the targets' code needs together: each
    target's module may need fewer (WGSL packs f32tof16 without half, Slang's SPIR-V does not)."""
    need = DeviceFeatures(0)
    for modules in per_target.values():
        for module in modules:
            need |= module_features(module)
    have = DeviceFeatures(0)
    for entry in reflection.entry_points:
        have |= entry.features
    if have == need:
        return []
    # named by each module that could have needed what no module needs (Metal's never do)
    return [
        f"{TARGET_NAMES[t]} ({m.source}): features: reflection says {_flags(have)}, the "
        f"targets' code needs {_flags(need)}"
        for t, modules in per_target.items()
        for m in modules
        if t is not Target.Msl or not per_target.keys() - {Target.Msl}
    ]


def _names(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _flags(value: DeviceFeatures) -> str:
    return ",".join(f.name or "" for f in DeviceFeatures if f in value) or "none"


def _where(em: EmittedResource) -> str:
    if em.space in ("buffer", "texture", "sampler"):
        return f"[[{em.space}({em.binding})]]"
    if em.binding is None:
        return f"{em.space}, no binding"
    return f"{em.space} set {em.set} binding {em.binding}"


def _is_entry(name: str, emitted: str) -> bool:
    """Metal reserves ``main``: Slang emits such an entry point as ``main_0``."""
    return emitted == name or (emitted not in ("", name) and demangle(emitted) == name == "main")


def _leaf(name: str) -> str:
    return demangle(name.rsplit(".", 1)[-1])


def _same_scalar(a: ScalarKind, b: ScalarKind) -> bool:
    if a is b:
        return True
    loose = {ScalarKind.Bool, ScalarKind.UInt, ScalarKind.Int}
    return a in loose and b in loose and ScalarKind.Bool in (a, b)


def _rows_of(matrix: TypeLayout) -> TypeLayout:
    """A row-major matrix as every target emits it when its scalar is not a float (no such
    matrix type exists there): an array of its rows, ``mstride`` apart. (A column-major one is
    refused before: ``unify.layouts.matrix_errors``.)"""
    if matrix.packing is not MatrixPacking.RowMajor or matrix.scalar in FLOATS:
        return matrix
    row = TypeLayout(TypeKind.Vector, matrix.scalar, rows=matrix.cols)
    return replace(
        matrix, kind=TypeKind.Array, length=matrix.rows, stride=matrix.mstride, element=row
    )


def _widened(ours: TypeLayout, element: TypeLayout) -> bool:
    """The code's element is a 4-vector of the scalar of the reflection's narrower scalar or
    vector element, 16 bytes apart as the reflection says (Metal's constant-buffer arrays
    given std140's stride: ``array<float4, int(4)> t`` for ``float t[4]``, read ``.x``)."""
    mine = ours.element
    if mine is None or ours.stride != 16 or element.kind is not TypeKind.Vector:
        return False
    rows = mine.rows if mine.kind is TypeKind.Vector else 1
    return (
        mine.kind in (TypeKind.Scalar, TypeKind.Vector)
        and element.rows == 4
        and rows < 4
        and _same_scalar(mine.scalar, element.scalar)
    )


def _take_member(by_name: dict[str, list[StructMember]], name: str) -> StructMember | None:
    """The emitted member that stands for the reflection's member ``name``, taken out of
    ``by_name`` (emitted name -> members, in order): the one of that name, else the first of
    Slang's scrubbed spelling of it (``__m`` and ``m__`` are ``_m_0`` and ``m_0``)."""
    for key in dict.fromkeys((name, slang_scrubbed(name))):
        if by_name.get(key):
            return by_name[key].pop(0)
    return None
