"""DXC's own SPIR-V tests as a yardstick: build each applicable test of DXC's CodeGenSPIRV folder
with oneshader (SPIR-V only) and compare the reflection with the decorations its CHECK lines
state (DescriptorSet, Binding, Offset, ArrayStride, MatrixStride, RowMajor/ColMajor).

The reflection is what is compared (the compiler's cross-check holds the emitted module to it,
and it keeps unused resources, which DXC's ``-fcgl`` tests keep too). CHECK lines name DXC's
SPIR-V ids; they are resolved to the reflection by name: ``%x`` is resource ``x``
(``%counter_var_x`` its counter), ``%type_x`` the block ``x`` (``type__Globals`` is
``$Globals``, ``type_ConstantBuffer_S`` the layout of ``ConstantBuffer<S>``), ``%S`` any struct
``S`` in a layout, ``%_arr_<element>_uint_<n>`` any array of that element type and length
(``_runtimearr_<element>``: a structured buffer's element). Where DXC keeps several layouts of
one type apart by a suffix (``S_0``), a CHECK agrees when one of the candidates has its value.

A test applies when DXC is expected to succeed, for a vertex, pixel or compute entry point,
with options oneshader has (register shifts, bind-register) or that do not change decorations.

Every module built is given to spirv-val (``--target-env vulkan1.2``).

Run: python bench/dxc_checks.py DXC/tools/clang/test/CodeGenSPIRV [-v] [--glob PATTERN ...]
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from oneshader.compiler import CompileOptions, EntryPointSpec
from oneshader.compiler.api import BindRegister, OutputFile, RegisterShift
from oneshader.compiler.emitted.common import FLOATS
from oneshader.compiler.process.worker import CompilerWorker
from oneshader.reflection.model import (
    MatrixPacking,
    Resource,
    ScalarKind,
    ShaderReflection,
    Stage,
    Target,
    TypeKind,
    TypeLayout,
)

GLOBS = ("vk.binding.*.hlsl", "vk.layout.*.hlsl", "type.*buffer*.hlsl")
STAGES = {"vs": Stage.Vertex, "ps": Stage.Pixel, "cs": Stage.Compute}
# Options that change no decoration this script compares (16-bit types: oneshader's half is
# always 16-bit, see docs/compiler.md).
HARMLESS = frozenset(
    {"-fcgl", "-spirv", "-Vd", "-O0", "-O3", "-Od", "-Zi", "-Gis", "-enable-16bit-types"}
)
HARMLESS_WITH_VALUE = frozenset({"-HV", "-fspv-target-env"})
CHECK = re.compile(r"//\s*CHECK(?:-DAG|-NEXT|-SAME)?:\s*(.*)")
DECORATE = re.compile(r"OpDecorate %(\w+) (DescriptorSet|Binding|ArrayStride) (\d+)\s*$")
MEMBER = re.compile(r"OpMemberDecorate %(\w+) (\d+) (Offset|MatrixStride) (\d+)\s*$")
MAJOR = re.compile(r"OpMemberDecorate %(\w+) (\d+) (RowMajor|ColMajor)\s*$")
ARRAY = re.compile(r"_arr_(\w+)_uint_(\d+)(?:_\d+)?$")
SCALAR_NAMES = {
    ScalarKind.Float: "float",
    ScalarKind.Float16: "half",
    ScalarKind.Float64: "double",
    ScalarKind.Int: "int",
    ScalarKind.UInt: "uint",
    ScalarKind.Int64: "long",
    ScalarKind.UInt64: "ulong",
    ScalarKind.Int16: "short",
    ScalarKind.UInt16: "ushort",
    ScalarKind.Bool: "uint",  # DXC stores bool in buffers as uint
}


@dataclass(frozen=True)
class Run:
    """What a test's RUN line asks of DXC, or why it does not apply."""

    stage: Stage | None
    entry: str
    shifts: tuple[RegisterShift, ...]
    binds: tuple[BindRegister, ...]
    not_applicable: str = ""


@dataclass(frozen=True)
class Check:
    line: int
    text: str
    name: str  # the SPIR-V id's name
    what: str  # DescriptorSet, Binding, Offset, ArrayStride, MatrixStride, Major
    index: int | None  # member index
    value: str


def parse_run(text: str) -> Run:
    runs = [m.group(1) for m in re.finditer(r"//\s*RUN:\s*(.*)", text)]
    run = next((r for r in runs if "%dxc" in r), None)
    if run is None:
        return Run(None, "", (), (), "no %dxc RUN line")
    if run.lstrip().startswith("not ") or "expected-error" in text:
        return Run(None, "", (), (), "DXC expected to fail")
    if "--check-prefix" in run or len([r for r in runs if "%dxc" in r]) > 1:
        return Run(None, "", (), (), "several RUN lines")
    words = shlex.split(run.split("|")[0].replace("%s", ""))[1:]
    stage: Stage | None = None
    entry = "main"
    shifts: list[RegisterShift] = []
    binds: list[BindRegister] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-T":
            profile = words[i + 1]
            stage = STAGES.get(profile[:2])
            if stage is None:
                return Run(None, "", (), (), f"profile {profile}")
            i += 2
        elif w == "-E":
            entry = words[i + 1]
            i += 2
        elif m := re.fullmatch(r"-fvk-([btsu])-shift", w):
            space = words[i + 2]
            shifts.append(
                RegisterShift(m.group(1), int(words[i + 1]), None if space == "all" else int(space))
            )
            i += 3
        elif w == "-fvk-bind-register":
            reg, space, binding, dset = words[i + 1 : i + 5]
            binds.append(BindRegister(reg, int(space), int(binding), int(dset)))
            i += 5
        elif w in HARMLESS or w.startswith("-fspv-target-env"):
            i += 1
        elif w in HARMLESS_WITH_VALUE:
            i += 2
        else:
            return Run(None, "", (), (), f"option {w}")
    if stage is None:
        return Run(None, "", (), (), "no profile")
    return Run(stage, entry, tuple(shifts), tuple(binds))


def parse_checks(text: str) -> list[Check]:
    out: list[Check] = []
    for n, line in enumerate(text.splitlines(), 1):
        m = CHECK.search(line)
        if m is None:
            continue
        body = m.group(1).strip()
        if d := DECORATE.search(body):
            out.append(Check(n, body, d.group(1), d.group(2), None, d.group(3)))
        elif d := MEMBER.search(body):
            out.append(Check(n, body, d.group(1), d.group(3), int(d.group(2)), d.group(4)))
        elif d := MAJOR.search(body):
            out.append(Check(n, body, d.group(1), "Major", int(d.group(2)), d.group(3)))
    return out


def dxc_type_name(t: TypeLayout) -> str:
    """DXC's name for a type in its SPIR-V ids (``v4float``, ``mat2v3double``, ``S``)."""
    if t.kind is TypeKind.Scalar:
        return SCALAR_NAMES[t.scalar]
    if t.kind is TypeKind.Vector:
        return f"v{t.rows}{SCALAR_NAMES[t.scalar]}"
    if t.kind is TypeKind.Matrix:
        return f"mat{t.rows}v{t.cols}{SCALAR_NAMES[t.scalar]}"
    if t.kind is TypeKind.Array and t.element is not None:
        inner = dxc_type_name(t.element)
        return f"_arr_{inner}_uint_{t.length}" if t.length else f"_runtimearr_{inner}"
    return t.name


def _major(matrix: TypeLayout) -> str:
    """DXC's SPIR-V majorness of an HLSL matrix: HLSL's, transposed."""
    return "ColMajor" if matrix.packing is MatrixPacking.RowMajor else "RowMajor"


def walk(t: TypeLayout | None) -> list[TypeLayout]:
    """``t`` and every type inside it."""
    if t is None:
        return []
    out = [t]
    if t.element is not None:
        out += walk(t.element)
    for m in t.members:
        out += walk(m.type)
    return out


class Resolver:
    """CHECK ids to what the reflection says about them."""

    def __init__(self, reflection: ShaderReflection) -> None:
        self.resources = {r.name: r for r in reflection.resources}
        self.types = [t for r in reflection.resources for t in walk(r.layout)]
        self.types += [t for p in reflection.push_blocks for t in walk(p.layout)]
        self.pushes = [p.layout for p in reflection.push_blocks if p.layout is not None]

    def resource(self, name: str) -> Resource | None:
        """``x``, or a flattened struct of resources: ``x_field`` is ``x.field`` (DXC's id of
        the flattened variable), ``x`` its first field (the struct before legalization)."""
        if name in self.resources:
            return self.resources[name]
        if name == "_Globals":
            return self.resources.get("$Globals")
        dotted = [r for n, r in self.resources.items() if n.replace(".", "_") == name]
        fields = [r for n, r in self.resources.items() if n.startswith(f"{name}.")]
        return next(iter(dotted or fields), None)

    def slot(self, name: str, what: str) -> list[str]:
        counter = name.startswith("counter_var_")
        r = self.resource(name.removeprefix("counter_var_") if counter else name)
        if r is None:
            return []
        slots = [s for s in (r.counters if counter else r.slots) if s.target is Target.SpirV]
        return [str(s.set if what == "DescriptorSet" else s.binding) for s in slots]

    def structs(self, name: str) -> list[TypeLayout]:
        if name.startswith("type_"):
            rest = name.removeprefix("type_")
            block = self.resources.get("$Globals" if rest == "_Globals" else rest)
            if block is not None and block.layout is not None:
                return [block.layout]
            m = re.fullmatch(r"(ConstantBuffer|TextureBuffer)_(\w+?)(?:_\d+)?", rest)
            if m:
                return [r.layout for r in self._typed(m.group(1), m.group(2)) if r.layout]
            m = re.fullmatch(r"PushConstant_(\w+?)(?:_\d+)?", rest)
            if m:
                return [t for t in self.pushes if t.name == m.group(1)]
            return []
        base = re.sub(r"_\d+$", "", name)
        return [t for t in self.types if t.kind is TypeKind.Struct and t.name in (name, base)]

    def _typed(self, kind: str, struct: str) -> list[Resource]:
        return [
            r
            for r in self.resources.values()
            if r.rtype.name == kind and r.layout is not None and r.layout.name == struct
        ]

    def member_values(self, check: Check) -> list[str]:
        m = re.fullmatch(r"type_(\w*(?:Structured|ByteAddress)Buffer)(?:_\w+)?", check.name)
        if m and check.what == "Major" and check.index == 0:
            # StructuredBuffer<float2x3>: the element matrix's majorness.
            return [
                _major(r.layout)
                for r in self.resources.values()
                if r.rtype.name.endswith(m.group(1))
                and r.layout is not None
                and r.layout.kind is TypeKind.Matrix
                and check.name == f"type_{m.group(1)}_{dxc_type_name(r.layout)}"
            ]
        if m and check.what == "Offset" and check.index == 0:
            # A storage buffer's one member, its runtime array, starts at 0: known once the
            # buffer is (RW/Append/Consume structured and byte-address buffers alike).
            kinds = {r.rtype.name for r in self.resources.values()}
            return ["0"] if any(k.endswith(m.group(1)) for k in kinds) else []
        out = []
        for s in self.structs(check.name):
            if check.index is None or check.index >= len(s.members):
                continue
            m = s.members[check.index]
            t = m.type
            while t.kind is TypeKind.Array and t.element is not None:
                t = t.element
            if check.what == "Offset":
                out.append(str(m.offset))
            elif t.kind is TypeKind.Matrix and check.what == "MatrixStride":
                out.append(str(t.mstride))
            elif t.kind is TypeKind.Matrix:
                out.append(_major(t))
        return out

    def array_strides(self, name: str) -> list[str]:
        byte_address = any("ByteAddress" in r.rtype.name for r in self.resources.values())
        if name == "_runtimearr_uint" and byte_address:
            return ["4"]  # a byte-address buffer's words
        if name.startswith("_runtimearr_"):
            element = name.removeprefix("_runtimearr_")
            return [
                str(-(-r.layout.size // max(r.layout.align, 1)) * max(r.layout.align, 1))
                for r in self.resources.values()
                if "StructuredBuffer" in r.rtype.name
                and r.layout is not None
                and dxc_type_name(r.layout) == element
            ]
        m = ARRAY.fullmatch(name)
        if m is None:
            return []
        element, length = m.group(1), int(m.group(2))
        rows = [  # a row-major non-float matrix is an array of its rows in DXC, as in oneshader
            str(t.mstride)
            for t in self.types
            if t.kind is TypeKind.Matrix
            and t.scalar not in FLOATS
            and t.rows == length
            and f"v{t.cols}{SCALAR_NAMES[t.scalar]}" == element
        ]
        return rows + [
            str(t.stride)
            for t in self.types
            if t.kind is TypeKind.Array
            and t.length == length
            and t.element is not None
            and dxc_type_name(t.element) in (element, re.sub(r"_\d+$", "", element))
        ]

    def relaxed(self, checks: list[Check]) -> set[Check]:
        """Offset CHECKs that differ only through DXC's relaxed packing, which oneshader does
        not follow (docs/dxc-compatibility.md): per struct, from the first member that
        differs, when that member is a vector of fewer than 4 components that DXC places
        earlier (``float a; float3 b;``: b at 4, not 16), every later difference too."""
        out: set[Check] = set()
        by_struct: dict[str, list[Check]] = {}
        for c in checks:
            if c.what == "Offset" and c.index is not None:
                by_struct.setdefault(c.name, []).append(c)
        for name, members in by_struct.items():
            structs = self.structs(name)
            differing = [
                c
                for c in sorted(members, key=lambda c: c.index or 0)
                if (ours := self.member_values(c)) and c.value not in ours
            ]
            if not structs or not differing:
                continue
            first = differing[0]
            t = structs[0].members[first.index or 0].type
            ours_first = min(int(v) for v in self.member_values(first))
            if t.kind is TypeKind.Vector and t.rows < 4 and int(first.value) < ours_first:
                out.update(differing)
        return out

    def values(self, check: Check) -> list[str]:
        if check.what in ("DescriptorSet", "Binding"):
            return self.slot(check.name, check.what)
        if check.what == "ArrayStride":
            return self.array_strides(check.name)
        return self.member_values(check)


def spirv_val(outputs: tuple[OutputFile, ...]) -> list[str]:
    """spirv-val's complaint (``--target-env vulkan1.2``) about each SPIR-V output."""
    exe = Path(sys.executable).with_name("spirv-val")
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, o in enumerate(x for x in outputs if x.target is Target.SpirV):
            spv = Path(tmp) / f"{n}.spv"
            spv.write_bytes(o.data)
            run = subprocess.run(
                [str(exe), "--target-env", "vulkan1.2", str(spv)], capture_output=True, text=True
            )
            if run.returncode:
                out.append((run.stdout + run.stderr).strip().splitlines()[0])
    return out


def _counts(c: Counter[str], verdicts: tuple[str, ...]) -> str:
    return ", ".join(f"{v} {c[v]}" for v in verdicts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path, help="DXC's tools/clang/test/CodeGenSPIRV")
    parser.add_argument("--glob", action="append", help="file patterns (default: %(default)s)")
    parser.add_argument("-v", "--verbose", action="store_true", help="every test's outcome")
    args = parser.parse_args()
    files = sorted({p for g in (args.glob or GLOBS) for p in args.folder.glob(g)})
    outcomes: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    examples: dict[str, str] = {}
    results: Counter[str] = Counter()
    per_kind: dict[str, Counter[str]] = {}
    disagreements: list[str] = []
    unresolved: list[str] = []
    invalid: list[str] = []
    by_design: list[str] = []
    start = time.perf_counter()
    with CompilerWorker(timeout=60) as worker:
        for path in files:
            text = path.read_text(encoding="utf-8", errors="replace")
            checks = parse_checks(text)
            run = parse_run(text)
            if not checks:
                outcomes["no decoration CHECKs"] += 1
                continue
            if run.stage is None:
                outcomes[f"not applicable ({run.not_applicable.split(' ')[0]})"] += 1
                if args.verbose:
                    print(f"n/a   {path.name}: {run.not_applicable}")
                continue
            options = CompileOptions(
                targets=(Target.SpirV,),
                source_name=path.name,
                entry_points=(EntryPointSpec(run.entry, run.stage),),
                shifts=run.shifts,
                bind_registers=run.binds,
            )
            result = worker.compile(str(path), options)
            if not result.ok or result.reflection is None:
                errors = [d for d in result.diagnostics if d.is_error] or list(result.diagnostics)
                code = errors[0].code if errors else ("crash" if result.crashed else "?")
                outcomes["does not build"] += 1
                failures[code] += 1
                examples.setdefault(code, errors[0].format() if errors else path.name)
                if args.verbose:
                    print(f"FAIL  {path.name}: {errors[0].format() if errors else code}")
                continue
            outcomes["built"] += 1
            invalid += [f"{path.name}: {why}" for why in spirv_val(result.outputs)]
            resolver = Resolver(result.reflection)
            relaxed = resolver.relaxed(checks)
            bad = 0
            for check in checks:
                ours = resolver.values(check)
                kind = per_kind.setdefault(check.what, Counter())
                where = f"{path.name}:{check.line}: {check.text}"
                theirs = f"(oneshader: {'/'.join(sorted(set(ours)))})"
                if not ours:
                    verdict = "unresolved"
                    unresolved.append(where)
                elif check.value in ours:
                    verdict = "agree"
                elif check in relaxed:
                    verdict = "relaxed"
                    by_design.append(f"{where}  {theirs}")
                else:
                    verdict = "disagree"
                    bad += 1
                    disagreements.append(f"{where}  {theirs}")
                results[verdict] += 1
                kind[verdict] += 1
            if args.verbose:
                print(f"{'ok' if not bad else 'DIFF':5} {path.name}: {len(checks)} checks")
    elapsed = time.perf_counter() - start
    print(f"{len(files)} DXC tests ({', '.join(args.glob or GLOBS)}) in {elapsed:.1f} s")
    for name, n in outcomes.most_common():
        print(f"  {name}: {n}")
    for code, n in failures.most_common():
        print(f"    {code} x{n}, e.g. {examples[code][:160]}")
    print(f"  modules spirv-val rejects: {len(invalid)}")
    for line in invalid:
        print(f"    {line[:200]}")
    total = sum(results.values())
    verdicts = ("agree", "disagree", "relaxed", "unresolved")
    print(f"decoration CHECKs of built tests: {total}: " + _counts(results, verdicts))
    for what, c in sorted(per_kind.items()):
        print(f"  {what}: " + _counts(c, verdicts))
    if by_design:
        print("relaxed (DXC's relaxed vector packing, not followed by design):")
        for line in by_design:
            print(f"  {line}")
    if disagreements:
        print("disagreements:")
        for line in disagreements:
            print(f"  {line}")
    if args.verbose and unresolved:
        print("unresolved (no such id in the reflection):")
        for line in unresolved:
            print(f"  {line}")


if __name__ == "__main__":
    main()
