"""Cost of the cross-check: time to read each target's emitted code and to verify the whole
reflection, per corpus shader, against the compile of the same shader measured in the same run.

The producer calls ``crosscheck.verify`` at the end of every compile, so its share of the compile
time is the figure that matters (goal: a few percent; under 5 ms per target for a small shader).

Run: python bench/bench_verify.py [--repeat 30]
"""

from __future__ import annotations

import argparse
import tomllib
from functools import partial
from pathlib import Path

from timing import best

from oneshader.compiler import CompileOptions, EntryPointSpec, compile_file, stage_from_name
from oneshader.compiler.verify.crosscheck import read_output, verify
from oneshader.reflection.model import Target

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
_TARGETS = {"spirv": Target.SpirV, "msl": Target.Msl, "wgsl": Target.Wgsl}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    manifest = tomllib.loads((CORPUS / "manifest.toml").read_text(encoding="utf-8"))
    print(f"{'shader':28} {'compile ms':>10} {'verify ms':>9} {'ratio':>6}  read ms per target")
    total_compile = total_verify = 0.0
    worst_per_target = 0.0
    for entry in manifest["shader"]:
        options = CompileOptions(
            targets=tuple(_TARGETS[t] for t in entry["targets"]),
            source_name=entry["file"],
            include_dirs=(str(CORPUS),),
            entry_points=tuple(
                EntryPointSpec(n, stage_from_name(s))
                for n, s in (e.split(":") for e in entry.get("entries", []))
            ),
        )
        path = str(CORPUS / entry["file"])
        result = compile_file(path, options)  # warm: the first compile loads Slang
        if not result.ok or result.reflection is None:
            print(f"{entry['file']:28} does not compile; skipped")
            continue
        reflection, outputs = result.reflection, result.outputs
        compile_s = best(partial(compile_file, path, options), max(3, args.repeat // 10))
        verify_s = best(partial(verify, reflection, outputs), args.repeat)
        reads = []
        for out in outputs:
            read_s = best(partial(read_output, out), args.repeat)
            reads.append(f"{out.target.value} {read_s * 1e3:.2f}")
        per_target = verify_s / len(outputs)
        worst_per_target = max(worst_per_target, per_target)
        total_compile += compile_s
        total_verify += verify_s
        print(
            f"{entry['file']:28} {compile_s * 1e3:10.1f} {verify_s * 1e3:9.2f} "
            f"{verify_s / compile_s:6.3f}  {', '.join(reads)}"
        )
    print(
        f"corpus: verify is {total_verify / total_compile:.3f} of compile time "
        f"({total_verify * 1e3:.1f} ms of {total_compile * 1e3:.0f} ms); "
        f"worst verify per target {worst_per_target * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
