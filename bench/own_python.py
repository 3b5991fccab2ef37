"""oneshader's own Python a shader in the compiler, apart from Slang's compiles (issue 26: what
a cold build costs beyond Slang's least work, where it is oneshader's to cut).

    python bench/own_python.py PATH --config bench/corpora/NAME.toml [--reps N] [--match GLOB]

Compiles every shader of the corpus at PATH for all three targets in this process
(``compile_file``: no worker, no build around it), once to keep those that compile and to warm
what a worker has warm, then ``--reps`` times, and prints for each pass the process's CPU a
shader less Slang's (``spCompile``, timed around ``Request.compile``) and Slang's. Slang's
``Request.close`` counts as oneshader's here (plain Slang pays it too: ~1 ms a shader).

The machine's drift from one process to the next is larger than most changes: run the code
before and after a change in alternating processes, several pairs, and compare their medians.
"""

from __future__ import annotations

import statistics
import sys
import time

from corpus import selected_shaders
from oneshader.compiler import compile_file
from oneshader.compiler.slang import capi
from oneshader.reflection.model import Target

TARGETS = (Target.SpirV, Target.Msl, Target.Wgsl)


def main() -> None:
    args, shaders = selected_shaders(__doc__.splitlines()[0], reps=3)

    slang = [0.0]  # Slang's CPU in Request.compile this pass
    compile_request = capi.Request.compile

    def timed(self: capi.Request) -> capi.Compiled:
        t = time.process_time()
        try:
            return compile_request(self)
        finally:
            slang[0] += time.process_time() - t

    capi.Request.compile = timed  # type: ignore[method-assign]
    kept = [s for s in shaders if compile_file(str(s.path), s.options(TARGETS)).ok]
    if not kept:
        sys.exit("no shader of PATH compiles for all three targets")
    own = []
    for _ in range(args.reps):
        slang[0] = 0.0
        t0 = time.process_time()
        for s in kept:
            compile_file(str(s.path), s.options(TARGETS))
        cpu = time.process_time() - t0
        own.append((cpu - slang[0]) / len(kept) * 1e3)
        print(
            f"{len(kept)} shaders: own Python {own[-1]:.2f} ms a shader, "
            f"Slang {slang[0] / len(kept) * 1e3:.2f} ms",
            flush=True,
        )
    print(f"own Python a shader: best {min(own):.2f} ms, median {statistics.median(own):.2f} ms")


if __name__ == "__main__":
    main()
