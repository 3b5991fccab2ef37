"""Compile the shared corpus through oneshader and through direct Slang calls, in one run.

The baseline is what any tool must do at least: per target one Slang request with the same
arguments and source, spCompile, the code blob and the reflection handle. oneshader adds the
source scan, the reflection walk, the merge, the code patches and the cross-check. Prints the
time per shader per target (baseline), the whole-file times and the overhead ratio (goal <= 1.10).

Then a compiler worker's start-up: the time from starting a ``CompilerWorker`` (and its zygote)
to its first result, against a warm compile of the same shader in the same worker (the
baseline), the children's CPU time, the start of a further worker forked from the same warm
zygote, and where a fresh process spends it (imports, Slang session, first compile).

    python bench/bench_compiler.py [--repeat N] [--startup-only]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from oneshader.compiler import CompileOptions, EntryPointSpec, compile_file, stage_from_name
from oneshader.compiler.slang import capi as _slang
from oneshader.compiler.slang.request import SLANG_STAGE_ID, slang_args, slang_source
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.reflection.model import Target

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
TARGETS = {"spirv": Target.SpirV, "msl": Target.Msl, "wgsl": Target.Wgsl}


def _options(entry: dict[str, object]) -> CompileOptions:
    entries = []
    for item in entry.get("entries", []):  # type: ignore[attr-defined]
        name, stage = str(item).split(":")
        entries.append(EntryPointSpec(name, stage_from_name(stage)))
    return CompileOptions(
        targets=tuple(TARGETS[str(t)] for t in entry["targets"]),  # type: ignore[attr-defined]
        source_name=str(entry["file"]),
        entry_points=tuple(entries),
    )


def _direct(lib: _slang.Library, path: Path, options: CompileOptions) -> dict[Target, float]:
    """Slang alone, with the arguments and source oneshader gives it."""
    plan = SourceSet(str(path), options.source_name, options.include_dirs)
    plan.read()
    times = {}
    for target in options.targets:
        start = time.perf_counter()
        entries = [(e.name, SLANG_STAGE_ID[e.stage]) for e in options.entry_points]
        req = _slang.Request(
            lib, slang_args(target, options), (str(plan.path), slang_source(plan, target)), entries
        )
        result = req.compile()
        assert result.ok, result.diagnostics
        req.reflection()
        req.close()
        times[target] = time.perf_counter() - start
    return times


_STAGES = """
import time
t0 = time.perf_counter()
import oneshader.compiler.process.worker
t1 = time.perf_counter()
import oneshader.compiler.driver, oneshader.compiler.verify.crosscheck
from oneshader.compiler import CompileOptions
from oneshader.compiler.slang import capi as _slang
t2 = time.perf_counter()
_slang.library().session
t3 = time.perf_counter()
from oneshader.compiler.driver import compile_file
ends = [t3]
for _ in range(2):
    assert compile_file({path!r}, CompileOptions(source_name="s.hlsl")).ok
    ends.append(time.perf_counter())
print(t1 - t0, t2 - t1, t3 - t2, ends[1] - ends[0], ends[2] - ends[1])
"""


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def startup(repeat: int) -> None:
    """A worker's start-up against a warm compile in the same worker, measured in this run."""
    from oneshader.compiler.process.worker import CompilerWorker
    from oneshader.compiler.process.zygote import Zygote

    path = str(CORPUS / "compute_layout.hlsl")
    options = CompileOptions(source_name="compute_layout.hlsl")
    first, warm, forked, cpu = [], [], [], []
    for _ in range(repeat):
        cpu0 = _child_cpu()
        start = time.perf_counter()
        with Zygote() as zygote:
            with CompilerWorker(zygote=zygote) as worker:
                assert worker.compile(path, options).ok
                first.append(time.perf_counter() - start)
                start = time.perf_counter()
                assert worker.compile(path, options).ok
                warm.append(time.perf_counter() - start)
            start = time.perf_counter()
            with CompilerWorker(zygote=zygote) as worker:  # the next worker of a pool
                assert worker.compile(path, options).ok
                forked.append(time.perf_counter() - start)
        cpu.append(_child_cpu() - cpu0)  # counted once the zygote has been reaped
    f, w, k = statistics.median(first), statistics.median(warm), statistics.median(forked)
    print(
        f"\nworker: start + first compile {f * 1000:.0f} ms, warm compile {w * 1000:.0f} ms, "
        f"start-up {(f - w) * 1000:.0f} ms ({f / w:.1f}x a warm compile); CPU of the zygote "
        f"and both workers, all three compiles {statistics.median(cpu) * 1000:.0f} ms; a "
        f"further worker of the same zygote (fork + first compile) {k * 1000:.0f} ms, "
        f"{(k - w) * 1000:.0f} ms over a warm compile (medians of {repeat})"
    )
    stages = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", _STAGES.format(path=path)],
            capture_output=True,
            text=True,
            check=True,
        )
        stages.append([float(x) for x in out.stdout.split()])
    names = (
        "package + worker import",
        "driver + verifier imports",
        "Slang session",
        "first compile",
        "second compile",
    )
    cells = [
        f"{n} {statistics.median(s[i] for s in stages) * 1000:.0f} ms" for i, n in enumerate(names)
    ]
    print("a fresh process, one step after the other: " + ", ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--startup-only", action="store_true")
    args = parser.parse_args()
    if args.startup_only:
        startup(args.repeat)
        return
    manifest = tomllib.loads((CORPUS / "manifest.toml").read_text())
    lib = _slang.library()
    lib.session  # noqa: B018 - session creation is paid once, outside both measurements
    rows = []
    total_direct = total_oneshader = 0.0
    for entry in manifest["shader"]:
        path = CORPUS / entry["file"]
        options = _options(entry)
        assert compile_file(str(path), options).ok  # warm caches for both
        direct_runs: list[dict[Target, float]] = []
        oneshader_runs: list[float] = []
        for _ in range(args.repeat):
            direct_runs.append(_direct(lib, path, options))
            start = time.perf_counter()
            result = compile_file(str(path), options)
            oneshader_runs.append(time.perf_counter() - start)
            assert result.ok
        per_target = {t: statistics.median(r[t] for r in direct_runs) for t in options.targets}
        direct = statistics.median(sum(r.values()) for r in direct_runs)
        ours = statistics.median(oneshader_runs)
        total_direct += direct
        total_oneshader += ours
        rows.append((entry["file"], per_target, direct, ours))
    header = ("shader", "spirv ms", "msl ms", "wgsl ms", "slang ms", "oneshader ms", "ratio")
    print("{:28} {:>9} {:>8} {:>8} {:>9} {:>13} {:>6}".format(*header))
    for name, per_target, direct, ours in rows:
        cells = [
            f"{per_target[t] * 1000:.1f}" if t in per_target else "-" for t in TARGETS.values()
        ]
        print(
            f"{name:28} {cells[0]:>9} {cells[1]:>8} {cells[2]:>8} {direct * 1000:9.1f} "
            f"{ours * 1000:13.1f} {ours / direct:6.2f}"
        )
    ratio = total_oneshader / total_direct
    print(
        f"\ntotal: slang {total_direct * 1000:.0f} ms, oneshader {total_oneshader * 1000:.0f} ms, "
        f"overhead ratio {ratio:.3f} (goal <= 1.10)"
    )
    startup(args.repeat)


if __name__ == "__main__":
    main()
