"""Does a compile cost in proportion to the shader's size? (issue 20: linear cost)

``python bench/bench_scaling.py [--kinds blank,comment,...] [--repeat N] [--targets ...]``
generates, in a temporary folder, shaders that grow in one way at a time (blank lines, comment
lines, included files, cbuffer members, resources, diagnostics) at 1x, 10x and 100x their
base size, compiles each in this process (``compile_file``, every target by default) and
prints, per kind, the CPU seconds per unit at each size and the ratio of the 100x time to the
10x time. Linear cost gives a ratio near 10 (less where the fixed cost of a compile still
shows at 10x); a cost that grows with the square of the size gives near 100. Beside each, plain
Slang's one request for the same file and targets (``plain_slang.py``), timed in turn with
oneshader's: its own ratio, and oneshader's time over it at 100x, show which of the two a
growth comes from. oneshader's own share ("own s") is its time outside the calls into Slang
that compile, emit code and lay out the program (``capi.Request``'s ``compile``, ``code``,
``reflection``), measured in the same compile. The goal is a ratio of at most 12 for every
kind, of oneshader's own share where plain Slang alone grows faster than that (Slang's growth
is not oneshader's to fix); the script exits 1 if one is above.

CPU seconds (this process, where Slang runs too) are the figure, the fastest of ``--repeat``
runs (the 100x size once): the machine's other processes change wall time more than CPU time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plain_slang import compile_request

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.slang import capi as S
from oneshader.reflection.model import Target

GOAL = 12.0
KERNEL = """RWStructuredBuffer<float4> Out : register(u0, space1);
[shader("compute")] [numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{{
    float4 acc = float4(0.0, 0.0, 0.0, 0.0);
{body}
    Out[id.x] = acc;
}}
"""


def _kernel(body: str = "") -> str:
    return KERNEL.format(body=body)


def blank(n: int, folder: Path) -> bool:
    (folder / "main.hlsl").write_text("\n" * n + _kernel())
    return True


def comment(n: int, folder: Path) -> bool:
    lines = "".join(f"// comment line {i}: what the code below does and why\n" for i in range(n))
    (folder / "main.hlsl").write_text(lines + _kernel())
    return True


def include(n: int, folder: Path) -> bool:
    (folder / "inc").mkdir()
    for i in range(n):
        (folder / "inc" / f"part{i}.hlsli").write_text(
            f"#pragma once\n// part {i}\n#define PART{i} {i}.0\n"
        )
    includes = "".join(f'#include "inc/part{i}.hlsli"\n' for i in range(n))
    (folder / "main.hlsl").write_text(includes + _kernel(f"    acc.x += PART{n - 1};"))
    return True


def member(n: int, folder: Path) -> bool:
    members = "".join(f"    float4 m{i};\n" for i in range(n))
    cbuffer = f"cbuffer Params : register(b0)\n{{\n{members}}};\n"
    (folder / "main.hlsl").write_text(cbuffer + _kernel(f"    acc += m0 + m{n - 1};"))
    return True


def resource(n: int, folder: Path) -> bool:
    decls = "".join(f"Texture2D<float4> T{i} : register(t{i});\n" for i in range(n))
    body = "".join(f"    acc += T{i}.Load(int3(id.xy, 0));\n" for i in range(n))
    (folder / "main.hlsl").write_text(decls + _kernel(body))
    return True


def diagnostic(n: int, folder: Path) -> bool:
    """``n`` errors (an undefined name each) in one file: every one positioned, with its
    excerpt. The compile fails, as it must."""
    body = "".join(f"    acc += missing{i};\n" for i in range(n))
    (folder / "main.hlsl").write_text(_kernel(body))
    return False


@dataclass(frozen=True)
class Kind:
    name: str
    unit: str
    base: int
    make: Callable[[int, Path], bool]  # writes main.hlsl (and its includes); builds or not


KINDS = [
    Kind("blank", "blank line", 200, blank),
    Kind("comment", "comment line", 200, comment),
    Kind("include", "include", 10, include),
    Kind("member", "cbuffer member", 50, member),
    Kind("resource", "resource", 10, resource),
    Kind("diagnostic", "diagnostic", 10, diagnostic),
]


class _InSlang:
    """The CPU seconds spent inside ``capi.Request``'s calls into Slang while it is entered."""

    METHODS = ("compile", "code", "reflection")

    def __init__(self) -> None:
        self.seconds = 0.0
        self._real: dict[str, Callable[..., Any]] = {}

    def __enter__(self) -> _InSlang:
        for name in self.METHODS:
            real = self._real[name] = getattr(S.Request, name)
            setattr(S.Request, name, self._timed(real))
        return self

    def __exit__(self, *exc: object) -> None:
        for name, real in self._real.items():
            setattr(S.Request, name, real)

    def _timed(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            c0 = time.process_time()
            try:
                return real(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - c0

        return timed


def measure(
    kind: Kind, n: int, options: CompileOptions, repeat: int
) -> tuple[float, float, float, float]:
    """The fastest CPU and wall seconds of a compile of ``kind`` at ``n`` units, the CPU
    seconds of oneshader's own share of that compile (outside Slang), and the fastest CPU
    seconds of plain Slang's one request for the same file and targets (the two taking
    turns)."""
    lib = S.library()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        builds = kind.make(n, folder)
        path = str(folder / "main.hlsl")
        plain = {"path": path, "targets": [t.value for t in options.targets]}
        cpu, wall, own, slang = [], [], [], []
        for _ in range(repeat):
            with _InSlang() as inside:
                c0, w0 = time.process_time(), time.perf_counter()
                result = compile_file(path, options)
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - w0)
            own.append(cpu[-1] - inside.seconds)
            if result.ok != builds or (not builds and len(result.diagnostics) < n):
                shown = "\n".join(d.format() for d in result.diagnostics[:5])
                raise SystemExit(f"{kind.name} x{n}: unexpected result (ok={result.ok})\n{shown}")
            c0 = time.process_time()
            compile_request(lib, plain)
            slang.append(time.process_time() - c0)
        return min(cpu), min(wall), min(own), min(slang)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(k.name for k in KINDS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--targets", default="spirv,msl,wgsl")
    parser.add_argument("--factors", default="1,10,100")
    args = parser.parse_args(argv)
    options = CompileOptions(
        source_name="main.hlsl", targets=tuple(Target(t) for t in args.targets.split(","))
    )
    factors = [int(f) for f in args.factors.split(",")]
    chosen = [k for k in KINDS if k.name in args.kinds.split(",")]
    print(f"CPU seconds of one compile (best of {args.repeat}; the largest size once),")
    print(f"targets {args.targets}; 'slang': plain Slang's one request for the same file")
    print(
        f"{'kind':<11} {'units':>7} {'cpu s':>8} {'wall s':>8} {'ms/unit':>8} {'slang s':>8}"
        f" {'own s':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:  # Slang loaded and warm before any figure
        blank(0, Path(tmp))
        compile_file(str(Path(tmp) / "main.hlsl"), options)
    worst = 0.0
    for kind in chosen:
        cpu_at: dict[int, float] = {}
        slang_at: dict[int, float] = {}
        own_at: dict[int, float] = {}
        for f in factors:
            n = kind.base * f
            repeat = 1 if f == max(factors) else args.repeat
            cpu, wall, own, slang = measure(kind, n, options, repeat)
            cpu_at[f], slang_at[f], own_at[f] = cpu, slang, own
            print(
                f"{kind.name:<11} {n:>7} {cpu:>8.3f} {wall:>8.3f} {1000 * cpu / n:>8.3f}"
                f" {slang:>8.3f} {own:>8.3f}",
                flush=True,
            )
        if 10 in cpu_at and 100 in cpu_at:
            ratio = cpu_at[100] / cpu_at[10]
            slang_ratio = slang_at[100] / slang_at[10]
            against = cpu_at[100] / slang_at[100]
            own = own_at[100] / own_at[10]
            judged = own if slang_ratio > GOAL else ratio
            worst = max(worst, judged)
            verdict = "ok" if judged <= GOAL else f"ABOVE THE GOAL ({GOAL:g})"
            print(
                f"{kind.name:<11} 100x/10x = {ratio:.1f}, oneshader's own share {own:.1f}"
                f"  {verdict}  (per {kind.unit}; plain Slang's own {slang_ratio:.1f}; at 100x"
                f" {against:.2f}x plain Slang's time)",
                flush=True,
            )
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
