"""How much of a compile of a huge source is oneshader's own source reading, against Slang's.

``python bench/bench_scanner.py [MAIN_MB INCLUDE_MB]`` (default 10 and 50) generates, in a
temporary folder, a shader of MAIN_MB megabytes (many small functions with comments, the shape
that costs a scanner the most per byte) and one of a few lines that includes a file of
INCLUDE_MB megabytes (a big constant table), and prints for each the time of oneshader's front
end (reading and scanning every file, the prechecks, the source handed to Slang) and of the whole
compile (SPIR-V), and the front end's share. Slang's time should dominate: the share small.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.quirks.refusals import refused
from oneshader.compiler.slang.request import slang_source
from oneshader.compiler.source.precheck import check_request, precheck
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Collector
from oneshader.reflection.model import Target

OPTIONS = CompileOptions(source_name="big.hlsl", targets=(Target.SpirV,))
ENTRY = '[shader("compute")][numthreads(1,1,1)] void main() { Out[0] = f1(2.0) + T[3]; }\n'


def many_functions(megabytes: float) -> str:
    parts = ["RWStructuredBuffer<float> Out;\nstatic const float T[4] = { 0, 1, 2, 3 };\n"]
    size, i = 0, 0
    while size < megabytes * 1e6:
        part = f"float f{i}(float x) {{ // comment {i}\n    return x * {i}.0 + /* c */ 1.0;\n}}\n"
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts) + ENTRY


def big_table(megabytes: float) -> str:
    count = int(megabytes * 1e6 / 11)
    numbers = ",\n".join(f"{i % 1000}, {i % 7}" for i in range(count // 2))
    return f"static const uint T[{(count // 2) * 2}] = {{\n{numbers}\n}};\n"


def measure(main: Path) -> tuple[float, float]:
    t0 = time.perf_counter()
    src = SourceSet(str(main), OPTIONS.source_name, ())
    src.read()
    problems = Collector()
    check_request(src, OPTIONS, problems)
    precheck(src, OPTIONS, problems, refused(src, OPTIONS.targets, False))
    problems.check()
    slang_source(src, Target.SpirV)
    front = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = compile_file(str(main), OPTIONS)
    whole = time.perf_counter() - t0
    if not result.ok:
        raise SystemExit("\n".join(d.format() for d in result.diagnostics))
    return front, whole


def main() -> None:
    main_mb, include_mb = (float(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (10, 50)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "big.hlsl").write_text(many_functions(main_mb))
        (folder / "table.hlsli").write_text(big_table(include_mb))
        (folder / "small.hlsl").write_text(
            '#include "table.hlsli"\nRWStructuredBuffer<float> Out;\n'
            "float f1(float x) { return x; }\n" + ENTRY
        )
        print(f"{'case':<34} {'front end':>10} {'compile':>10} {'share':>7}")
        for name, label in (
            ("big.hlsl", f"{main_mb:g} MB of functions"),
            ("small.hlsl", f"a {include_mb:g} MB include (a table)"),
        ):
            front, whole = measure(folder / name)
            print(f"{label:<34} {front:>9.2f}s {whole:>9.2f}s {front / whole:>6.0%}")


if __name__ == "__main__":
    main()
