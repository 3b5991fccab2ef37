"""oneshader on real HLSL trees beside plain Slang: what builds, what fails and why, what is bad.

    python bench/corpus.py PATH [--targets spirv,msl,wgsl] [-j N] [--match GLOB ...]
                           [--examples N] [--no-plain] [--cost [REPS]] [--outputs DIR]

Every HLSL shader under PATH (walked as users keep a tree, hidden folders skipped) is built through
oneshader's compile workers (crash-isolated, a cold private zygote, as ``oneshader build`` runs
them), once per target and once for all requested targets. Printed: shaders built per target and
for all targets; the failures grouped by their first error code (count and one example, file:line:
col and message); the invalid modules (spirv-val ``--target-env vulkan1.2`` on every ``.spv``,
naga through wgpu-py on every ``.wgsl``); the build time; and how many of the same files plain
Slang requests compile per target (oneshader's ctypes binding, one request per file and target, in
crash-isolated processes: ``plain_slang.py``). ``--cost`` adds the cost of a cold ``oneshader
build -j 1`` process against a cold process of plain Slang requests for the same files (those
built for every target) and targets, the two taking turns, best of REPS (default 3).

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
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bench_build import build_env, run_build

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
from module_validation import module_errors  # noqa: E402

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

    def options(self, targets: tuple[Target, ...]) -> CompileOptions:
        return CompileOptions(
            targets=targets,
            source_name=self.name,
            defines=self.defines,
            entry_points=self.entries,
            shifts=self.shifts,
            bind_registers=self.binds,
            row_major=self.row_major,
        )


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
    row_major = False
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


def discover(root: Path, patterns: Sequence[str]) -> Corpus:
    corpus = Corpus()
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files += [Path(dirpath) / f for f in sorted(filenames)]
    for path in files:
        if path.suffix.lower() not in _SHADER_SUFFIXES:
            continue
        if patterns and not any(fnmatch.fnmatch(path.name, p) for p in patterns):
            continue
        name = path.relative_to(root).as_posix()
        found = classify(path, name, path.read_text(encoding="utf-8", errors="replace"))
        if found is None:
            corpus.not_hlsl += 1
        elif isinstance(found, str):
            corpus.skipped.append((name, found))
        else:
            corpus.shaders.append(found)
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


def first_error(result: CompileResult) -> str:
    errors = [d for d in result.diagnostics if d.is_error]
    return errors[0].format() if errors else "failed without an error (no reflection)"


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


def invalid_modules(runs: Iterable[BuildRun], jobs: int) -> tuple[Counter[str], list[str]]:
    """Every distinct .spv and .wgsl the runs emitted, validated: how many per suffix, and one
    line per invalid module."""
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
    for (name, suffix, _), error in zip(
        [*spirv, *wgsl], [*spirv_errors, *wgsl_errors], strict=True
    ):
        if error:
            detail = _error_line(error)
            bad.append(f"{name} ({suffix}): {detail[:300]}")
    return counts, sorted(set(bad))


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
    }


class _PlainServer:
    """One ``plain_slang.py --serve`` process; a crash costs the request it was serving."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None

    def ask(self, request: dict[str, object]) -> dict[str, object]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, str(HERE / "plain_slang.py"), "--serve"],
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
    shaders: Sequence[Shader], targets: tuple[Target, ...], jobs: int
) -> dict[tuple[str, Target], dict[str, object]]:
    """The answer of plain Slang for every shader and target."""
    work = [(s, t) for s in shaders for t in targets]
    answers: dict[tuple[str, Target], dict[str, object]] = {}
    lock = threading.Lock()
    servers = [_PlainServer() for _ in range(max(1, jobs))]

    def drive(slot: int) -> None:
        while True:
            with lock:
                if not work:
                    return
                shader, target = work.pop(0)
            answer = servers[slot].ask(_request(shader, target))
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


@dataclass
class Cost:
    """Best wall and CPU seconds of each side over the repetitions (``together``: plain Slang
    with one request per file for all the targets)."""

    shaders: int
    build: tuple[float, float]
    plain: tuple[float, float]
    together: tuple[float, float]


def cost(shaders: Sequence[Shader], targets: tuple[Target, ...], reps: int) -> Cost:
    """Cold ``oneshader build -j 1`` processes and cold plain-Slang processes, taking turns, on
    the ``shaders`` plain Slang builds too (both sides doing the same work)."""
    simple = [s for s in shaders if not (s.defines or s.shifts or s.binds or s.row_major)]
    with tempfile.TemporaryDirectory(prefix="oneshader-corpus-") as tmp:
        root = Path(tmp)
        failed = _plain_batch(root, simple, targets, strict=False)
        simple = [s for s in simple if str(s.path) not in failed]
        _project(root, simple, targets)
        run_build(root, "-j", "1")  # fills the bytecode cache
        _plain_batch(root, simple, targets)
        builds, plains, together = [], [], []
        for _ in range(reps):
            shutil.rmtree(root / "out")
            builds.append(_measured(lambda: run_build(root, "-j", "1")))
            plains.append(_measured(lambda: _plain_batch(root, simple, targets)))
            together.append(_measured(lambda: _plain_batch(root, simple, targets, together=True)))
    return Cost(len(simple), _best(builds), _best(plains), _best(together))


def _best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(w for w, _ in runs), min(c for _, c in runs)


# --- the report -------------------------------------------------------------------------------


def outputs_digest(run: BuildRun) -> str:
    """One digest of every output and reflection, to show a change left the outputs alone."""
    from oneshader.reflection.format import ReflectionFormat

    h = hashlib.sha256()
    for name, result in sorted(run.results.items()):
        if result.ok:
            h.update(name.encode() + b"\0")
            for out in result.outputs:
                h.update(out.suffix.encode() + b"\0" + out.data)
            assert result.reflection is not None
            h.update(ReflectionFormat.write(result.reflection))
    return h.hexdigest()[:16]


def report(args: argparse.Namespace) -> None:
    root: Path = args.path.resolve()
    targets = parse_targets(args.targets)
    assert targets is not None
    corpus = discover(root, args.match)
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
    crashed = [n for n, r in everything.results.items() if r.crashed]
    if crashed:
        print(f"  compiler crashed on: {', '.join(sorted(crashed))}")

    if not args.no_plain:
        answers = plain_slang(shaders, targets, args.jobs)
        print("\nplain Slang requests (same files, same targets; one request per file and target):")
        for t in targets:
            ok = sum(bool(answers[(s.name, t)]["ok"]) for s in shaders)
            print(f"  {t.value:<5} compiled {ok:4} of {total}")
        all_ok = sum(all(answers[(s.name, t)]["ok"] for t in targets) for s in shaders)
        print(f"  {names:<5} compiled {all_ok:4} of {total}")
        slang_crashes = sorted({n for (n, _), a in answers.items() if a.get("crashed")})
        if slang_crashes:
            print(f"  Slang crashed on: {', '.join(slang_crashes)}")
        behind = [
            s.name
            for s in shaders
            if all(answers[(s.name, t)]["ok"] for t in targets)
            and not everything.results[s.name].ok
        ]
        print(f"  compiled by plain Slang for {names} but not built by oneshader: {len(behind)}")
        for name in sorted(behind):
            print(f"      {name}")

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

    counts, bad = invalid_modules([*single, everything], args.jobs)
    print(
        f"\ninvalid modules: {len(bad)} (validated {counts['.spv']} distinct SPIR-V with spirv-val "
        f"--target-env vulkan1.2, {counts['.wgsl']} distinct WGSL with naga)"
    )
    for line in bad:
        print(f"  {line}")

    if args.outputs:
        for name, result in everything.results.items():
            for out in result.outputs if result.ok else ():
                dest = args.outputs / (name + out.suffix)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(out.data)

    if args.cost:
        c = cost([s for s in shaders if everything.results[s.name].ok], targets, args.cost)
        (bw, bc), (pw, pc), (tw, tc) = c.build, c.plain, c.together
        print(
            f"\ncost: a cold `oneshader build -j 1` against a cold process of plain Slang requests"
            f"\n  {c.shaders} shaders built for {names}, best of {args.cost} runs each, in turns"
            f"\n  wall  oneshader {bw:7.2f} s   plain Slang {pw:7.2f} s   ratio {bw / pw:5.2f}x"
            f"\n  CPU   oneshader {bc:7.2f} s   plain Slang {pc:7.2f} s   ratio {bc / pc:5.2f}x"
            f"\n  plain Slang with one request per file for all its targets (as oneshader makes"
            f"\n  them where the targets' sources agree): wall {tw:.2f} s, CPU {tc:.2f} s;"
            f"\n  oneshader against it {bw / tw:.2f}x / {bc / tc:.2f}x"
        )


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
        "--cost",
        type=int,
        nargs="?",
        const=3,
        default=0,
        metavar="REPS",
        help="measure a cold -j 1 build against plain Slang (best of REPS)",
    )
    parser.add_argument("--outputs", type=Path, help="write the outputs of the full build here")
    args = parser.parse_args()
    if not args.path.is_dir():
        parser.error(f"not a folder: {args.path}")
    report(args)


if __name__ == "__main__":
    main()
