"""oneshader on real HLSL trees beside plain Slang: what builds, what fails and why, what is bad.

    python bench/corpus.py PATH [--config bench/corpora/NAME.toml] [--targets spirv,msl,wgsl]
                           [-j N] [--match GLOB ...] [--examples N] [--no-plain] [--validate-plain]
                           [--cost [REPS]] [--pairs N] [--outputs DIR] [--digests FILE]
                           [--shared-check]

Every HLSL shader under PATH (walked as users keep a tree, hidden folders skipped) is built through
oneshader's compile workers (crash-isolated, a cold private zygote, as ``oneshader build`` runs
them), once per target and once for all requested targets. Printed: shaders built per target and
for all targets; the failures grouped by their first error code (count and one example, file:line:
col and message); the invalid modules (spirv-val ``--target-env vulkan1.2`` on every ``.spv``,
naga through wgpu-py on every ``.wgsl``); the build time; and how many of the same files plain
Slang requests compile per target (oneshader's ctypes binding, one request per file and target, in
crash-isolated processes: ``plain_slang.py``; ``--validate-plain``: only those whose SPIR-V and
WGSL the same validators accept), and per target the shaders plain Slang compiled that oneshader
did not build, each with oneshader's first error. ``--cost`` adds the cost of a cold ``oneshader
build -j 1`` process against a cold process of plain Slang requests for the same files (those
built for every target) and targets, the two taking turns, best of REPS (default 3) and, turn
by turn, each build over the plain process run next to it (the order alternating), with the
median of those ratios; and in the same turns cold builds at ``-j CPUS``: the parallel speed-up
on this tree. ``--pairs N`` adds N turns of the ``-j 1`` build and its plain-Slang process alone
(the order alternating on): on a machine whose speed drifts ~10% over minutes, the median of many
short pairs is the figure that holds, where one best against another moves with the drift.

What is a shader, and its entry points (the rest of the tree is left alone):
- a DXC test: its first ``// RUN: %dxc -T ps_6_0 -E main ...`` line gives stage and entry, and
  the options oneshader has (``-D``, ``-fvk-{b,t,s,u}-shift``, ``-fvk-bind-register``/``-vkbr``,
  ``-Zpr``);
  the other flags are listed as ignored; a test whose every RUN line is ``not %dxc`` is skipped;
- a stage in the name: ``x.vert.hlsl`` or ``x.vert`` (HLSL unless it has a ``#version`` line:
  GLSL is not counted), entry ``main``;
- a ``.hlsl`` file with ``[shader("...")]`` attributes (the compiler finds the entry points);
- stages oneshader does not build (geometry, tessellation, ray tracing, mesh) are skipped and
  counted, and so are ``.hlsl`` files that say nothing of their entry points (includes).

An engine's own conventions come from a configuration file (``--config``, data, not code:
bench/corpora/*.toml): the files (globs below PATH), the stage by file-name glob or a default,
the entry point (or the first of several names the file defines, ``{stem}`` for the file's
stem), defines, DXC's register shifts, include folders, ``enable-16bit-types``, variants (each
file built once per variant, its defines and options added) and ``[[group]]`` tables that
override the top-level keys for their own files; ``conventions = true`` keeps the rules above
for the files the config selects.
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench_build import build_env, run_build, speed_up
from timing import fresh_folder

from oneshader.buildtask.config import parse_targets
from oneshader.buildtask.scheduler import WorkerPool
from oneshader.buildtask.sources import ShaderJob
from oneshader.compiler.api import (
    BindRegister,
    CompileOptions,
    CompileResult,
    EntryPointSpec,
    RegisterShift,
    stage_from_name,
)
from oneshader.reflection.model import Stage, Target

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from module_validation import lacking_feature, module_errors  # noqa: E402

# stage words of file names (x.vert, x.vert.hlsl) and DXC profiles (vs_6_0) oneshader builds
_NAME_STAGES = {"vert": Stage.Vertex, "frag": Stage.Pixel, "comp": Stage.Compute}
_PROFILE_STAGES = {"vs": Stage.Vertex, "ps": Stage.Pixel, "cs": Stage.Compute}
# ... and those it does not, with the reason a skip gives
_GEOMETRY = "geometry stage (oneshader builds vertex, pixel, compute)"
_TESSELLATION = "tessellation stage (oneshader builds vertex, pixel, compute)"
_RAY_TRACING = "ray tracing stage (oneshader builds vertex, pixel, compute)"
_MESH = "mesh/task stage (oneshader builds vertex, pixel, compute)"
_UNSUPPORTED = {
    **dict.fromkeys(["geom", "gs", "geometry"], _GEOMETRY),
    **dict.fromkeys(["tesc", "tese", "hs", "ds", "hull", "domain"], _TESSELLATION),
    **dict.fromkeys(
        [
            "rgen",
            "rchit",
            "rmiss",
            "rahit",
            "rint",
            "rcall",
            "raygeneration",
            "closesthit",
            "miss",
            "anyhit",
            "intersection",
            "callable",
        ],
        _RAY_TRACING,
    ),
    **dict.fromkeys(["mesh", "task", "ms", "as", "amplification"], _MESH),
}
_SHADER_SUFFIXES = {".hlsl", *(f".{w}" for w in [*_NAME_STAGES, *_UNSUPPORTED] if len(w) == 4)}

_RUN = re.compile(r"^\s*//\s*RUN:\s*(not\s+)?%dxc\b(.*)$", re.M)
_ATTRIBUTE = re.compile(r'\[\s*shader\s*\(\s*"(\w+)"\s*\)\s*\]')
_GLSL = re.compile(r"^\s*#\s*version\b", re.M)
# DXC flags that change nothing a build shows (code generation mode, optimisation, a dump)
_HARMLESS = {"-spirv", "-fcgl", "-O0", "-O1", "-O2", "-O3", "-Vd", "-Zi", "-fspv-reflect"}
_FLAG_ARGUMENTS = {
    "-HV": 1,
    "-auto-binding-space": 1,
    "-fvk-bind-globals": 2,
    "-fvk-bind-sampler-heap": 2,
    "-fvk-bind-resource-heap": 2,
    "-fspv-target-env": 1,
}


@dataclass(frozen=True)
class Shader:
    """One file to build: its name below PATH and the options its corpus gives it."""

    path: Path
    name: str
    entries: tuple[EntryPointSpec, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    shifts: tuple[RegisterShift, ...] = ()
    binds: tuple[BindRegister, ...] = ()
    ignored_flags: tuple[str, ...] = ()
    row_major: bool = False  # DXC's -Zpr
    include_dirs: tuple[str, ...] = ()
    enable_16bit_types: bool = False  # DXC's -enable-16bit-types

    def options(self, targets: tuple[Target, ...]) -> CompileOptions:
        # a field this version of oneshader lacks is left out (to measure an older main)
        extra = (
            {"enable_16bit_types": True}
            if self.enable_16bit_types and "enable_16bit_types" in _OPTION_FIELDS
            else {}
        )
        return CompileOptions(
            targets=targets,
            source_name=self.name,
            include_dirs=self.include_dirs,
            defines=self.defines,
            entry_points=self.entries,
            shifts=self.shifts,
            bind_registers=self.binds,
            row_major=self.row_major,
            **extra,
        )


_OPTION_FIELDS = frozenset(CompileOptions.__dataclass_fields__)


@dataclass
class Corpus:
    shaders: list[Shader] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (name, why)
    not_hlsl: int = 0


def _dxc_shader(path: Path, name: str, runs: list[tuple[bool, str]]) -> Shader | str:
    """The shader a DXC test's first positive RUN line describes, or why it is skipped."""
    line = next((args for negative, args in runs if not negative), None)
    if line is None:
        return "a DXC negative test (DXC must reject it)"
    line = line.split("|")[0].replace("%s", " ")
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    profile, entry = "", "main"
    defines: list[tuple[str, str]] = []
    shifts: list[RegisterShift] = []
    binds: list[BindRegister] = []
    ignored: list[str] = []
    row_major = half = False
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-T" and i + 1 < len(words):
            profile, i = words[i + 1], i + 2
        elif w == "-E" and i + 1 < len(words):
            entry, i = words[i + 1], i + 2
        elif w.startswith("-D"):
            value = w[2:] or (words[i + 1] if i + 1 < len(words) else "")
            i += 1 if w[2:] else 2
            n, _, v = value.partition("=")
            defines.append((n, v))
        elif (m := re.fullmatch(r"-fvk-([btsu])-shift", w)) and i + 2 < len(words):
            space = words[i + 2]
            shifts.append(
                RegisterShift(m.group(1), int(words[i + 1]), None if space == "all" else int(space))
            )
            i += 3
        elif w == "-Zpr":
            row_major, i = True, i + 1
        elif w == "-enable-16bit-types":
            half, i = True, i + 1
        elif w in ("-fvk-bind-register", "-vkbr") and i + 4 < len(words):
            r, s, b, t = words[i + 1 : i + 5]
            binds.append(BindRegister(r, int(s), int(b), int(t)))
            i += 5
        else:
            if w.startswith("-") and w not in _HARMLESS:
                ignored.append(w)
            i += 1 + _FLAG_ARGUMENTS.get(w, 0)
    kind = profile.split("_")[0]
    if kind in _UNSUPPORTED:
        return _UNSUPPORTED[kind]
    if kind == "lib":
        entries: tuple[EntryPointSpec, ...] = ()
    elif kind in _PROFILE_STAGES:
        entries = (EntryPointSpec(entry, _PROFILE_STAGES[kind]),)
    else:
        return f"DXC profile '{profile}' (no stage oneshader builds)"
    return Shader(
        path,
        name,
        entries,
        tuple(defines),
        tuple(shifts),
        tuple(binds),
        tuple(ignored),
        row_major,
        enable_16bit_types=half,
    )


def classify(path: Path, name: str, text: str) -> Shader | str | None:
    """The shader ``path`` holds, why it is skipped, or None when it is not HLSL (GLSL)."""
    runs = [(bool(m.group(1)), m.group(2)) for m in _RUN.finditer(text)]
    if runs:
        attributes = {a.lower() for a in _ATTRIBUTE.findall(text)}
        dxc = _dxc_shader(path, name, runs)
        if isinstance(dxc, Shader) and not dxc.entries:  # lib_6_x: its attributes say
            bad = sorted(a for a in attributes if a in _UNSUPPORTED)
            if bad:
                return _UNSUPPORTED[bad[0]]
            if not attributes:
                return "no entry point ([shader] attribute, stage in the name, RUN line)"
        return dxc
    words = path.name.lower().split(".")
    stage_word = words[-2] if path.suffix == ".hlsl" and len(words) > 2 else words[-1]
    if path.suffix != ".hlsl" and _GLSL.search(text):
        return None
    if stage_word in _UNSUPPORTED:
        return _UNSUPPORTED[stage_word]
    if stage_word in _NAME_STAGES:
        return Shader(path, name, (EntryPointSpec("main", _NAME_STAGES[stage_word]),))
    attributes = {a.lower() for a in _ATTRIBUTE.findall(text)}
    bad = sorted(a for a in attributes if a in _UNSUPPORTED)
    if bad:
        return _UNSUPPORTED[bad[0]]
    if attributes:
        try:
            for a in attributes:
                stage_from_name(a)
        except ValueError:
            return f"[shader] stage not built by oneshader: {sorted(attributes)}"
        return Shader(path, name)
    return "no entry point ([shader] attribute, stage in the name, RUN line)"


@dataclass(frozen=True)
class Rules:
    """One group of a corpus configuration (bench/corpora/*.toml): its top-level keys with the
    group's own over them."""

    files: tuple[str, ...] = ()
    conventions: bool = False
    entry: tuple[str, ...] = ()
    stages: tuple[tuple[str, str], ...] = ()
    default_stage: str = ""
    defines: tuple[tuple[str, str], ...] = ()
    shifts: tuple[RegisterShift, ...] = ()
    include_dirs: tuple[str, ...] = ()
    enable_16bit_types: bool = False
    row_major: bool = False
    entry_points: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, ("name:stage", ...))

    def selects(self, name: str, path: Path) -> bool:
        if self.files and not any(fnmatch.fnmatch(name, g) for g in self.files):
            return False
        return self.conventions or path.suffix.lower() == ".hlsl" or self.stage_word(path) != ""

    def stage_word(self, path: Path) -> str:
        return next((s for g, s in self.stages if fnmatch.fnmatch(path.name, g)), "")


@dataclass(frozen=True)
class Variant:
    name: str = ""
    defines: tuple[tuple[str, str], ...] = ()
    enable_16bit_types: bool = False


@dataclass
class Config:
    groups: list[Rules] = field(default_factory=lambda: [Rules(conventions=True)])
    variants: list[Variant] = field(default_factory=lambda: [Variant()])


_KEYS = {
    "files",
    "conventions",
    "entry",
    "stages",
    "default-stage",
    "defines",
    "shifts",
    "include-dirs",
    "enable-16bit-types",
    "row-major",
    "entry-points",
}


def _rules(table: dict[str, object], root: Path) -> Rules:
    unknown = set(table) - _KEYS
    if unknown:
        sys.exit(f"corpus config: unknown keys {sorted(unknown)} (known: {sorted(_KEYS)})")

    def strings(key: str) -> tuple[str, ...]:
        value = table.get(key, ())
        return (value,) if isinstance(value, str) else tuple(str(v) for v in list(value))  # type: ignore[call-overload]

    def pairs(key: str) -> tuple[tuple[str, str], ...]:
        return tuple((str(k), str(v)) for k, v in dict(table.get(key, {})).items())  # type: ignore[call-overload]

    return Rules(
        files=strings("files"),
        conventions=bool(table.get("conventions", False)),
        entry=strings("entry"),
        stages=pairs("stages"),
        default_stage=str(table.get("default-stage", "")),
        defines=pairs("defines"),
        shifts=tuple(RegisterShift(c, int(n)) for c, n in pairs("shifts")),
        include_dirs=tuple(str(root / d) for d in strings("include-dirs")),
        enable_16bit_types=bool(table.get("enable-16bit-types", False)),
        row_major=bool(table.get("row-major", False)),
        entry_points=tuple(
            (str(g), (v,) if isinstance(v, str) else tuple(v))
            for g, v in dict(table.get("entry-points", {})).items()  # type: ignore[call-overload]
        ),
    )


def load_config(path: Path, root: Path) -> Config:
    """A corpus configuration: its groups (``[[group]]`` over the top-level keys; one group of
    the top-level keys when it has none) and variants (``[[variants]]``)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    groups = data.pop("group", [{}])
    variants = [
        Variant(
            str(v.get("name", "")),
            tuple((str(k), str(x)) for k, x in v.get("defines", {}).items()),
            bool(v.get("enable-16bit-types", False)),
        )
        for v in data.pop("variants", [{}])
    ]
    rules = []
    for g in groups:
        merged = {**data, **g}
        for key in ("defines", "stages", "entry-points"):
            merged[key] = {**data.get(key, {}), **g.get(key, {})}
        rules.append(_rules(merged, root))
    return Config(rules, variants)


_DEFINED = "\\b{}\\s*\\("


def configured(path: Path, name: str, text: str, rules: Rules) -> Shader | str | None:
    """The shader ``path`` holds under ``rules`` (stage by name glob, else the default; the
    first entry name the file defines), or why it is skipped; the built-in conventions where
    the rules say so or give no stage."""
    word = rules.stage_word(path) or rules.default_stage
    given = next((v for g, v in rules.entry_points if fnmatch.fnmatch(name, g)), None)
    if given is not None:  # "name" (the stage by the rules) or "name:stage"
        try:
            entries = tuple(
                EntryPointSpec(n, stage_from_name(st or word))
                for n, _, st in (e.partition(":") for e in given)
            )
        except ValueError as err:
            return str(err)
        found = Shader(path, name)
    elif rules.conventions or not word:
        found = classify(path, name, text)
        if not isinstance(found, Shader):
            return found
        entries = found.entries
    else:
        try:
            stage = stage_from_name(word)
        except ValueError:
            return _UNSUPPORTED.get(word, f"stage '{word}' (no stage oneshader builds)")
        names = [e.replace("{stem}", path.name.split(".")[0]) for e in rules.entry or ("main",)]
        code = _COMMENT.sub(" ", text)
        # one name is the entry (it may be defined in an include); of several, the one defined
        entry = next((e for e in names if re.search(_DEFINED.format(re.escape(e)), code)), None)
        if len(names) == 1:
            entry = names[0]
        elif entry is None:
            return f"no entry point named {' or '.join(names)}"
        entries = (EntryPointSpec(entry, stage),)
        found = Shader(path, name)
    return replace(
        found,
        entries=entries,
        defines=(*rules.defines, *found.defines),
        shifts=found.shifts or rules.shifts,
        include_dirs=rules.include_dirs,
        enable_16bit_types=found.enable_16bit_types or rules.enable_16bit_types,
        row_major=found.row_major or rules.row_major,
    )


def selected_shaders(description: str, reps: int) -> tuple[argparse.Namespace, list[Shader]]:
    """The command line of a script measuring one corpus (PATH, ``--config``, ``--reps``,
    ``--match``), parsed, and the shaders it selects."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("path", type=Path)
    parser.add_argument("--config", type=Path)
    parser.add_argument("--reps", type=int, default=reps)
    parser.add_argument("--match", action="append", default=[])
    args = parser.parse_args()
    config = load_config(args.config, args.path) if args.config else None
    return args, discover(args.path, args.match, config).shaders


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def discover(root: Path, patterns: Sequence[str], config: Config | None = None) -> Corpus:
    corpus = Corpus()
    config = config or Config()
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files += [Path(dirpath) / f for f in sorted(filenames)]
    for path in files:
        if patterns and not any(fnmatch.fnmatch(path.name, p) for p in patterns):
            continue
        name = path.relative_to(root).as_posix()
        rules = next((g for g in config.groups if g.selects(name, path)), None)
        if rules is None:
            continue
        if rules.conventions and path.suffix.lower() not in _SHADER_SUFFIXES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found = configured(path, name, text, rules)
        if found is None:
            corpus.not_hlsl += 1
        elif isinstance(found, str):
            corpus.skipped.append((name, found))
        else:
            for v in config.variants:
                corpus.shaders.append(
                    replace(
                        found,
                        name=f"{name}#{v.name}" if v.name else name,
                        defines=(*found.defines, *v.defines),
                        enable_16bit_types=found.enable_16bit_types or v.enable_16bit_types,
                    )
                )
    return corpus


# --- oneshader --------------------------------------------------------------------------------


@dataclass
class BuildRun:
    targets: tuple[Target, ...]
    results: dict[str, CompileResult]
    seconds: float

    @property
    def built(self) -> list[str]:
        return [n for n, r in self.results.items() if r.ok]


def build(shaders: Sequence[Shader], targets: tuple[Target, ...], jobs: int) -> BuildRun:
    """Every shader on ``jobs`` compile workers forked from a cold private zygote."""
    todo = [ShaderJob(s.path, s.name, s.name, s.options(targets), "") for s in shaders]
    results: dict[str, CompileResult] = {}

    def done(job: ShaderJob, result: CompileResult, seconds: float) -> None:
        results[job.source_name] = result

    t0 = time.perf_counter()
    with WorkerPool(jobs) as pool:
        pool.run(todo, lambda job: None, done, lambda: None)
    return BuildRun(targets, results, time.perf_counter() - t0)


def _internal_error(result: CompileResult) -> str:
    """The first internal error (OS9000-OS9002: a bug of oneshader's, or Slang's crash)."""
    internal = [d for d in result.diagnostics if d.code in ("OS9000", "OS9001", "OS9002")]
    return internal[0].format().splitlines()[0] if internal else ""


def first_error(result: CompileResult) -> str:
    errors = [d for d in result.diagnostics if d.is_error]
    return errors[0].format() if errors else "failed without an error (no reflection)"


def _first_line(result: CompileResult) -> str:
    return first_error(result).splitlines()[0][:200]


def failure_groups(run: BuildRun) -> list[tuple[str, list[tuple[str, str]]]]:
    """(code, [(shader, first error line)]) by the shaders' first error code, largest first."""
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for name, result in sorted(run.results.items()):
        if result.ok:
            continue
        errors = [d for d in result.diagnostics if d.is_error]
        code = errors[0].code if errors and errors[0].code else "(no code)"
        groups[code].append((name, first_error(result)))
    return sorted(groups.items(), key=lambda g: (-len(g[1]), g[0]))


def invalid_modules(
    runs: Iterable[BuildRun], jobs: int
) -> tuple[Counter[str], list[str], Counter[str]]:
    """Every distinct .spv and .wgsl the runs emitted, validated: how many per suffix, one line
    per invalid module, and by WebGPU feature the WGSL modules naga refused only for want of
    that feature on this machine's adapter (not validated here)."""
    modules: dict[str, tuple[str, str, bytes]] = {}
    for run in runs:
        for name, result in run.results.items():
            if not result.ok:
                continue
            for out in result.outputs:
                if out.suffix in (".spv", ".wgsl"):
                    digest = hashlib.sha256(out.data).hexdigest()
                    modules.setdefault(digest, (name, out.suffix, out.data))
    counts = Counter(suffix for _, suffix, _ in modules.values())
    spirv = [m for m in modules.values() if m[1] == ".spv"]
    wgsl = [m for m in modules.values() if m[1] == ".wgsl"]
    with ThreadPoolExecutor(max(1, jobs)) as ex:  # spirv-val runs as a process per module
        spirv_errors = list(ex.map(lambda m: module_errors(m[1], m[2]), spirv))
    wgsl_errors = [module_errors(s, data, name + s) for name, s, data in wgsl]  # one device
    bad = []
    unvalidated: Counter[str] = Counter()
    for (name, suffix, _), error in zip(
        [*spirv, *wgsl], [*spirv_errors, *wgsl_errors], strict=True
    ):
        if error and suffix == ".wgsl" and (feature := lacking_feature(error)):
            unvalidated[feature] += 1
        elif error:
            detail = _error_line(error)
            bad.append(f"{name} ({suffix}): {detail[:300]}")
    return counts, sorted(set(bad)), unvalidated


def _error_line(error: str) -> str:
    """The line of a validator's output that says what is wrong (wgpu wraps naga's message)."""
    boilerplate = ("Validation Error", "Caused by:", "In wgpuDeviceCreateShaderModule")
    lines = [ln.strip() for ln in error.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(boilerplate)] or lines
    if lines and lines[0].startswith("error:"):  # spirv-val: the first error says it
        return lines[0]
    prose = [ln.lstrip("= ") for ln in lines if not any(c in ln for c in "┌│^")]  # no excerpt
    return " ".join(dict.fromkeys(prose))


# --- plain Slang ------------------------------------------------------------------------------


def _request(shader: Shader, target: Target) -> dict[str, object]:
    return {
        "path": str(shader.path),
        "target": target.value,
        "entries": [[e.name, e.stage.value] for e in shader.entries],
        "defines": [list(d) for d in shader.defines],
        "shifts": [[s.register_class, s.shift, s.space] for s in shader.shifts],
        "row_major": shader.row_major,
        "include_dirs": list(shader.include_dirs),
        "enable_16bit_types": shader.enable_16bit_types,
    }


class _PlainServer:
    """One ``plain_slang.py --serve`` process (or another script's: ``shared_check.py``); a
    crash costs the request it was serving."""

    def __init__(self, script: str = "plain_slang.py") -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.script = script

    def ask(self, request: dict[str, object]) -> dict[str, object]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, str(HERE / self.script), "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError:
            line = ""
        if not line:
            code = self.proc.wait()
            self.proc = None
            return {"ok": False, "error": f"Slang crashed (exit status {code})", "crashed": True}
        answer: dict[str, object] = json.loads(line)
        return answer

    def close(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait()


def plain_slang(
    shaders: Sequence[Shader], targets: tuple[Target, ...], jobs: int, validate: bool = False
) -> dict[tuple[str, Target], dict[str, object]]:
    """The answer of plain Slang for every shader and target; ``validate``: a module the
    validators oneshader's modules face reject (spirv-val, naga: ``invalid_modules``) counts as
    not compiled, its answer ``{"ok": False, "invalid": True, "error": the validator's line}``
    (Metal's code is not validated: no validator here reads it)."""
    work: list[tuple[tuple[Shader, Target | None], dict[str, object]]]
    work = [
        ((s, t), _request(s, t) | ({"code": True} if validate else {}))
        for s in shaders
        for t in targets
    ]
    answers: dict[tuple[str, Target], dict[str, object]]
    answers = _served(work, jobs, "plain_slang.py")  # type: ignore[assignment]
    if validate:
        _validated(answers, jobs)
    return answers


_SUFFIX = {Target.SpirV: ".spv", Target.Wgsl: ".wgsl"}


def _validated(answers: dict[tuple[str, Target], dict[str, object]], jobs: int) -> None:
    """Plain Slang's modules validated as ``invalid_modules`` validates oneshader's: an invalid
    one's answer becomes a failure naming the validator's complaint."""
    modules = [
        (key, _SUFFIX[key[1]], base64.b64decode(str(a.pop("code"))))
        for key, a in answers.items()
        if "code" in a and key[1] in _SUFFIX
    ]
    for a in answers.values():
        a.pop("code", None)
    spirv = [m for m in modules if m[1] == ".spv"]
    wgsl = [m for m in modules if m[1] == ".wgsl"]
    with ThreadPoolExecutor(max(1, jobs)) as ex:  # spirv-val runs as a process per module
        errors = list(ex.map(lambda m: module_errors(m[1], m[2]), spirv))
    errors += [module_errors(s, data, key[0] + s) for key, s, data in wgsl]  # one device
    for (key, suffix, _), error in zip([*spirv, *wgsl], errors, strict=True):
        if error:
            tool = "spirv-val" if suffix == ".spv" else "naga"
            answers[key] = {"ok": False, "invalid": True, "error": f"{tool}: {_error_line(error)}"}


def shared_check(
    shaders: Sequence[Shader], targets: tuple[Target, ...], jobs: int
) -> dict[str, dict[str, object]]:
    """Per shader, ``shared_check.py``'s answer: the targets a shared request compiled and
    what differs from one request per target."""
    work: list[tuple[tuple[Shader, Target | None], dict[str, object]]] = [
        (
            (s, None),
            _request(s, targets[0]) | {"targets": [t.value for t in targets], "name": s.name},
        )
        for s in shaders
    ]
    answers = _served(work, jobs, "shared_check.py")
    return {name: a for (name, _), a in answers.items()}


def _served(
    work: list[tuple[tuple[Shader, Target | None], dict[str, object]]], jobs: int, script: str
) -> dict[tuple[str, Target | None], dict[str, object]]:
    """Every request of ``work`` answered by ``jobs`` crash-isolated ``script --serve``."""
    answers: dict[tuple[str, Target | None], dict[str, object]] = {}
    lock = threading.Lock()
    servers = [_PlainServer(script) for _ in range(max(1, jobs))]

    def drive(slot: int) -> None:
        while True:
            with lock:
                if not work:
                    return
                (shader, target), request = work.pop(0)
            answer = servers[slot].ask(request)
            with lock:
                answers[(shader.name, target)] = answer

    threads = [threading.Thread(target=drive, args=(i,)) for i in range(len(servers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in servers:
        s.close()
    return answers


# --- the cost of a cold build against plain Slang -------------------------------------------


def _project(root: Path, shaders: Sequence[Shader], targets: tuple[Target, ...]) -> None:
    """A project of copies of ``shaders`` (``.hlsl`` appended where the name lacks it, since
    ``oneshader build`` walks ``.hlsl`` files) and of the tree's include files, with the
    entry points in ``[tool.oneshader.entry-points]``."""
    lines = [
        "[tool.oneshader]",
        'sources = ["shaders"]',
        'out = "out"',
        f"targets = {json.dumps([t.value for t in targets])}",
        "",
        "[tool.oneshader.entry-points]",
    ]
    for s in shaders:
        rel = s.name if s.name.endswith(".hlsl") else s.name + ".hlsl"
        copy = root / "shaders" / rel
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(s.path, copy)
        if s.entries:
            specs = ", ".join(
                f'{{ name = "{e.name}", stage = "{e.stage.value}" }}' for e in s.entries
            )
            lines.append(f'"shaders/{rel}" = [{specs}]')
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n")


def _plain_batch(
    root: Path,
    shaders: Sequence[Shader],
    targets: tuple[Target, ...],
    strict: bool = True,
    together: bool = False,
) -> set[str]:
    """One cold process making the plain requests (``plain_slang.py --batch``): one per file
    and target, or (``together``) one per file for all ``targets``; the paths of the shaders
    it failed (``strict``: none may fail)."""
    requests = root / "requests.json"
    if together:
        batch = [_request(s, targets[0]) | {"targets": [t.value for t in targets]} for s in shaders]
    else:
        batch = [_request(s, t) for s in shaders for t in targets]
    requests.write_text(json.dumps(batch))
    run = subprocess.run(
        [sys.executable, str(HERE / "plain_slang.py"), "--batch", str(requests)],
        capture_output=True,
        text=True,
        env=build_env(root, server=False),
    )
    if run.returncode != 0 or (strict and json.loads(run.stdout)["failed"]):
        sys.exit(f"plain Slang failed on the cost set:\n{run.stdout}\n{run.stderr}")
    return set(json.loads(run.stdout)["failed"])


def _measured(run: Callable[[], object]) -> tuple[float, float]:
    """Wall seconds of ``run`` and CPU seconds of the processes it ran (and their children:
    the build's zygote and workers), which another load on the machine disturbs less."""

    def children_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    c0, t0 = children_cpu(), time.perf_counter()
    run()
    return time.perf_counter() - t0, children_cpu() - c0


Run = tuple[float, float]  # wall and CPU seconds of one measured run


@dataclass
class Cost:
    """Every measured run of each side, in the order run (``together``: plain Slang with one
    request per file for all the targets; ``parallel``: the build at ``-j jobs``, each run
    taken in turn with the ``-j 1`` build of the same index)."""

    shaders: int
    builds: list[Run]
    plains: list[Run]
    together: list[Run]
    parallel: list[Run]
    jobs: int

    def in_turns(self) -> list[float]:
        """The cold builds' wall seconds as run: ``-j 1`` and ``-j jobs`` taking turns (the
        turns that had a ``-j jobs`` build: not the pairs that follow them)."""
        builds = self.builds[: len(self.parallel)]
        return [w for pair in zip(builds, self.parallel, strict=True) for w, _ in pair]

    def paired(self) -> tuple[list[float], list[float]]:
        """Each turn's ``-j 1`` build over the plain-Slang process run next to it (wall, CPU):
        the machine's drift over minutes (plain Slang's own time moved 12% from one run to
        the next) moves both sides of a pair alike, so the ratios spread less than the runs."""
        pairs = list(zip(self.builds, self.together, strict=True))
        return [b[0] / t[0] for b, t in pairs], [b[1] / t[1] for b, t in pairs]


def cost(
    shaders: Sequence[Shader], targets: tuple[Target, ...], reps: int, jobs: int, pairs: int = 0
) -> Cost:
    """Cold ``oneshader build -j 1`` processes and cold plain-Slang processes, taking turns, on
    the ``shaders`` plain Slang builds too (both sides doing the same work); and cold builds
    at ``-j jobs`` in the same turns (the parallel speed-up on a real tree), ``reps`` turns;
    then ``pairs`` turns of the ``-j 1`` build and its plain-Slang process alone. Each build
    writes into a new output folder (``timing.fresh_folder``)."""
    simple = [s for s in shaders if not (s.defines or s.shifts or s.binds or s.row_major)]
    with tempfile.TemporaryDirectory(prefix="oneshader-corpus-") as tmp:
        root = Path(tmp)
        failed = _plain_batch(root, simple, targets, strict=False)
        simple = [s for s in simple if str(s.path) not in failed]
        _project(root, simple, targets)
        run_build(root, "-j", "1")  # fills the bytecode cache
        _plain_batch(root, simple, targets)
        c = Cost(len(simple), [], [], [], [], jobs)

        def build(runs: list[Run], jobs: int) -> None:
            args = ("-o", fresh_folder(root), "-j", str(jobs))
            runs.append(_measured(lambda: run_build(root, *args)))

        def together() -> None:
            c.together.append(_measured(lambda: _plain_batch(root, simple, targets, together=True)))

        for turn in range(reps + pairs):
            # the -j 1 build and its baseline side by side, first one then the other leading
            for step in (together, lambda: build(c.builds, 1))[:: 1 if turn % 2 else -1]:
                step()
            if turn < reps:
                build(c.parallel, jobs)
                c.plains.append(_measured(lambda: _plain_batch(root, simple, targets)))
    return c


def _spread(ratios: list[float]) -> str:
    """Ratios as run, and their median (with the quartiles, from four ratios on)."""
    shown = ", ".join(f"{r:.2f}x" for r in ratios)
    if len(ratios) < 4:
        return f"{shown} (median {statistics.median(ratios):.2f}x)"
    low, mid, high = statistics.quantiles(ratios, n=4)
    return f"{shown} (median {mid:.2f}x, quartiles {low:.2f}x-{high:.2f}x)"


def _best(runs: list[Run]) -> Run:
    return min(w for w, _ in runs), min(c for _, c in runs)


# --- the report -------------------------------------------------------------------------------


def outputs_digest(run: BuildRun) -> str:
    """One digest of every output and reflection, to show a change left the outputs alone."""
    h = hashlib.sha256()
    for name, digest in sorted(shader_digests(run).items()):
        h.update(name.encode() + b"\0" + digest.encode())
    return h.hexdigest()[:16]


def shader_digests(run: BuildRun) -> dict[str, str]:
    """Per shader built, a digest of its outputs and reflection (``--digests``: which outputs
    a change touched)."""
    from oneshader.reflection.format import ReflectionFormat

    out = {}
    for name, result in sorted(run.results.items()):
        if result.ok:
            h = hashlib.sha256()
            for o in result.outputs:
                h.update(o.suffix.encode() + b"\0" + o.data)
            assert result.reflection is not None
            h.update(ReflectionFormat.write(result.reflection))
            out[name] = h.hexdigest()[:16]
    return out


def report(args: argparse.Namespace) -> None:
    root: Path = args.path.resolve()
    targets = parse_targets(args.targets)
    assert targets is not None
    config = load_config(args.config, root) if args.config else None
    corpus = discover(root, args.match, config)
    shaders = corpus.shaders
    total = len(shaders)
    print(f"corpus {root.name}: {total} shaders to build, {len(corpus.skipped)} skipped", end="")
    print(f", {corpus.not_hlsl} GLSL files left out" if corpus.not_hlsl else "")
    for why, n in Counter(why for _, why in corpus.skipped).most_common():
        print(f"  skipped {n:4}: {why}")
    flags = Counter(f for s in shaders for f in set(s.ignored_flags))
    if flags:
        print(
            "  built without these DXC flags (oneshader has no such option): "
            + ", ".join(f"{f} ({n})" for f, n in flags.most_common())
        )

    single = [build(shaders, (t,), args.jobs) for t in targets] if len(targets) > 1 else []
    everything = build(shaders, targets, args.jobs)
    runs = dict(zip(targets, single, strict=True)) if single else {targets[0]: everything}
    print(f"\noneshader ({args.jobs} workers, cold):")
    for t, r in runs.items():
        print(f"  {t.value:<5} built {len(r.built):4} of {total}   in {r.seconds:6.2f} s")
    names = "+".join(t.value for t in targets)
    print(
        f"  {names:<5} built {len(everything.built):4} of {total}   in {everything.seconds:6.2f} s"
        f"   (outputs digest {outputs_digest(everything)})"
    )
    if single:
        alone = [s.name for s in shaders if all(r.results[s.name].ok for r in single)]
        lost = sorted(n for n in alone if not everything.results[n].ok)
        print(f"  built on every target one target at a time: {len(alone)}", end="")
        print(f"; of those not built for {names}: {len(lost)}")
        for name in lost:
            print(f"      {name}: {first_error(everything.results[name]).splitlines()[0][:200]}")
    crashed = [n for n, r in everything.results.items() if r.crashed]
    if crashed:
        print(f"  compiler crashed on: {', '.join(sorted(crashed))}")
    internal = sorted(
        {
            (n, f"{key}: {first_internal}")
            for key, r in [*((t.value, x) for t, x in runs.items()), (names, everything)]
            for n, res in r.results.items()
            if (first_internal := _internal_error(res))
        }
    )
    print(f"  internal errors (OS9000-OS9002) in any build: {len(internal)}")
    for name, line in internal:
        print(f"      {name}: {line[:240]}")
    if args.digests:
        digests = {
            key: shader_digests(r)
            for key, r in [*((t.value, x) for t, x in runs.items()), (names, everything)]
        }
        args.digests.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")

    if args.shared_check and len(targets) > 1:
        checked = shared_check(shaders, targets, args.jobs)
        shared = sum(bool(a.get("shared")) for a in checked.values())
        differ = sorted(
            (n, a) for n, a in checked.items() if a.get("differences") or a.get("crashed")
        )
        print(
            f"\nshared request against one request per target: {shared} shaders compiled by a "
            f"shared request, {len(differ)} differ"
        )
        for name, a in differ:
            why = a.get("differences") or [a.get("error")]
            print(f"      {name}: {'; '.join(str(w) for w in why)[:300]}")  # type: ignore[attr-defined]

    if not args.no_plain:
        answers = plain_slang(shaders, targets, args.jobs, args.validate_plain)
        checked = (
            "; SPIR-V and WGSL validated (spirv-val, naga), an invalid module not counted;"
            " Metal's code is not validated here"
            if args.validate_plain
            else ""
        )
        print(
            "\nplain Slang requests (same files, same targets; one request per file and target"
            f"{checked}):"
        )
        for t in targets:
            ok = sum(bool(answers[(s.name, t)]["ok"]) for s in shaders)
            invalid = sum(bool(answers[(s.name, t)].get("invalid")) for s in shaders)
            print(f"  {t.value:<5} compiled {ok:4} of {total}", end="")
            print(f"   ({invalid} more compiled to invalid modules)" if invalid else "")
        all_ok = sum(all(answers[(s.name, t)]["ok"] for t in targets) for s in shaders)
        print(f"  {names:<5} compiled {all_ok:4} of {total}")
        slang_crashes = sorted({n for (n, _), a in answers.items() if a.get("crashed")})
        if slang_crashes:
            print(f"  Slang crashed on: {', '.join(slang_crashes)}")
        for t, r in runs.items():
            if r is everything:
                continue
            behind = [
                s.name for s in shaders if answers[(s.name, t)]["ok"] and not r.results[s.name].ok
            ]
            print(
                f"  compiled by plain Slang for {t.value} but not built by oneshader: {len(behind)}"
            )
            for name in sorted(behind):
                print(f"      {name}: {_first_line(r.results[name])}")
        behind = [
            s.name
            for s in shaders
            if all(answers[(s.name, t)]["ok"] for t in targets)
            and not everything.results[s.name].ok
        ]
        print(f"  compiled by plain Slang for {names} but not built by oneshader: {len(behind)}")
        for name in sorted(behind):
            print(f"      {name}: {_first_line(everything.results[name])}")

    print(f"\nfailures ({names} build), by first error code:")
    for code, members in failure_groups(everything):
        print(f"  {code:<10} {len(members):4} shaders")
        shown: set[str] = set()
        for _, line in members:
            key = line.split(": ", 2)[-1][:60]
            if key in shown:
                continue
            shown.add(key)
            print(f"      e.g. {line.splitlines()[0][:240]}")
            if len(shown) >= args.examples:
                break
    for t, r in runs.items():
        if r is everything:
            continue
        groups = ", ".join(f"{c} {len(m)}" for c, m in failure_groups(r))
        print(f"  {t.value} build: {groups or 'none'}")

    counts, bad, unvalidated = invalid_modules([*single, everything], args.jobs)
    print(
        f"\ninvalid modules: {len(bad)} (validated {counts['.spv']} distinct SPIR-V with spirv-val "
        f"--target-env vulkan1.2, {counts['.wgsl'] - unvalidated.total()} distinct WGSL with naga)"
    )
    for feature, n in sorted(unvalidated.items()):
        print(f"  not validated: {n} WGSL modules need '{feature}', which this adapter lacks")
    for line in bad:
        print(f"  {line}")

    if args.outputs:
        for name, result in everything.results.items():
            for out in result.outputs if result.ok else ():
                dest = args.outputs / (name + out.suffix)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(out.data)

    if args.cost:
        jobs = os.cpu_count() or 1
        ok = [s for s in shaders if everything.results[s.name].ok]
        c = cost(ok, targets, args.cost, jobs, args.pairs)
        (bw, bc), (pw, pc), (tw, tc) = _best(c.builds), _best(c.plains), _best(c.together)
        parallel = _best(c.parallel)
        walls, cpus = c.paired()
        print(
            f"\ncost: a cold `oneshader build -j 1` against a cold process of plain Slang requests"
            f"\n  {c.shaders} shaders built for {names}, best of {len(c.builds)} runs each (plain"
            f" Slang per target and -j {c.jobs}: {args.cost}), in turns"
            f"\n  wall  oneshader {bw:7.2f} s   plain Slang {pw:7.2f} s   ratio {bw / pw:5.2f}x"
            f"\n  CPU   oneshader {bc:7.2f} s   plain Slang {pc:7.2f} s   ratio {bc / pc:5.2f}x"
            f"\n  plain Slang with one request per file for all its targets (as oneshader makes"
            f"\n  them where the targets' sources agree): wall {tw:.2f} s, CPU {tc:.2f} s;"
            f"\n  oneshader against it {bw / tw:.2f}x / {bc / tc:.2f}x (best against best);"
            f"\n  turn by turn ({len(walls)}), each against the plain process run next to it:"
            f"\n    wall {_spread(walls)}; CPU {_spread(cpus)}"
            f"\n  the same tree cold at -j {c.jobs}: wall {parallel[0]:.2f} s, CPU "
            f"{parallel[1]:.2f} s"
        )
        print(speed_up(c.in_turns(), c.jobs, "parallel, this tree"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="a tree of HLSL shaders")
    parser.add_argument("--targets", default="spirv,msl,wgsl")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--match",
        action="append",
        default=[],
        metavar="GLOB",
        help="only files whose name matches (repeatable), e.g. 'vk.binding.*'",
    )
    parser.add_argument("--examples", type=int, default=1, help="distinct examples per group")
    parser.add_argument("--no-plain", action="store_true", help="skip the plain Slang requests")
    parser.add_argument(
        "--validate-plain",
        action="store_true",
        help="count plain Slang's modules only when spirv-val and naga accept them",
    )
    parser.add_argument(
        "--cost",
        type=int,
        nargs="?",
        const=3,
        default=0,
        metavar="REPS",
        help="measure a cold -j 1 build against plain Slang (best of REPS)",
    )
    parser.add_argument(
        "--pairs",
        type=int,
        default=0,
        metavar="N",
        help="with --cost: N more turns of the -j 1 build and its plain Slang process alone",
    )
    parser.add_argument("--outputs", type=Path, help="write the outputs of the full build here")
    parser.add_argument(
        "--config", type=Path, help="the corpus's conventions (bench/corpora/*.toml)"
    )
    parser.add_argument(
        "--digests", type=Path, help="write each build's per-shader output digests (JSON) here"
    )
    parser.add_argument(
        "--shared-check",
        action="store_true",
        help="compare, shader by shader, a shared Slang request with one request per target",
    )
    args = parser.parse_args()
    if not args.path.is_dir():
        parser.error(f"not a folder: {args.path}")
    if args.pairs and not args.cost:
        parser.error("--pairs adds turns to --cost's")
    report(args)


if __name__ == "__main__":
    main()
