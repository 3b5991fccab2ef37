"""Slang's own time in oneshader's requests against plain Slang's, request by request.

    python bench/slang_requests.py PATH --config bench/corpora/NAME.toml [--reps N]
                                   [--match GLOB ...]

For every shader of the tree that ``compile_file`` builds for all three targets (in this
process, counted by wrapping ``capi.Request``): each request oneshader made (its arguments and
the source text it handed Slang) and plain Slang's one request for all the targets
(``plain_slang.compile_request``), each compiled again ``--reps`` times in turns in one process,
``spCompile``'s least CPU time kept per request (which another load on the machine moves far
less than a sum). Printed: the shaders and requests of each side; on the shaders plain Slang
compiles, oneshader's first requests against plain's (and the same texts with plain Slang's
arguments: what oneshader's arguments cost), then its later requests (padding rounds, targets
given another text); and the shaders plain Slang's request fails (it stops early: its time is
no work of Slang's to compare).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

import plain_slang

import corpus
from oneshader.compiler import compile_file
from oneshader.compiler.slang import capi as S
from oneshader.reflection.model import Target

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)
# (arguments, (path, text), entry points, target count): what a capi.Request is made from
Made = tuple[list[str], tuple[str, str], list[tuple[str, int]], int]


def _requests(shaders: list[corpus.Shader], lib: S.Library) -> dict[str, tuple[list[Made], Made]]:
    """Each shader's requests made by oneshader and by plain Slang (the shaders oneshader
    builds for every target)."""
    made: list[Made] = []
    real = S.Request.__init__

    def record(
        self: S.Request,
        lib: S.Library,
        args: list[str],
        source: tuple[str, str],
        entries: Sequence[tuple[str, int]] = (),
        targets: int = 1,
    ) -> None:
        made.append((list(args), source, list(entries), targets))
        real(self, lib, args, source, entries, targets)

    out = {}
    S.Request.__init__ = record  # type: ignore[method-assign]
    try:
        for s in shaders:
            made.clear()
            if not compile_file(str(s.path), s.options(ALL)).ok:
                continue
            ours = list(made)
            made.clear()
            request = corpus._request(s, ALL[0]) | {"targets": [t.value for t in ALL]}
            plain_slang.compile_request(lib, request)
            out[s.name] = (ours, made[0])
    finally:
        S.Request.__init__ = real  # type: ignore[method-assign]
    return out


def _least(lib: S.Library, made: Made, best: float) -> tuple[float, bool]:
    args, source, entries, targets = made
    req = S.Request(lib, args, source, entries, targets)
    try:
        t0 = time.process_time()
        ok = req.compile().ok
        return min(best, time.process_time() - t0), ok
    finally:
        req.close()


def main() -> None:
    args, shaders = corpus.selected_shaders(__doc__.splitlines()[0], reps=5)
    lib = S.library()
    found = _requests(shaders, lib)
    kinds = ("ours", "plain", "our text, plain's arguments", "later")
    best: dict[tuple[str, str], float] = {}
    plain_ok: dict[str, bool] = {}
    for rep in range(args.reps):
        for name, (ours, plain) in found.items():
            first = ours[0]
            todo: list[tuple[str, Made]] = [
                ("ours", first),
                ("plain", plain),
                ("our text, plain's arguments", (plain[0], first[1], first[2], first[3])),
            ]
            todo += [(f"later {k}", m) for k, m in enumerate(ours[1:])]
            for kind, m in todo if rep % 2 == 0 else todo[::-1]:
                best[name, kind], ok = _least(lib, m, best.get((name, kind), float("inf")))
                if kind == "plain":
                    plain_ok[name] = ok
    both = [n for n in found if plain_ok[n]]
    failed = [n for n in found if not plain_ok[n]]

    def total(names: list[str], kind: str) -> float:
        return sum(t for (n, k), t in best.items() if n in names and k.startswith(kind))

    print(
        f"{len(found)} shaders built for every target: oneshader "
        f"{sum(len(o) for o, _ in found.values())} requests, plain Slang {len(found)}"
    )
    print(f"least spCompile CPU of {args.reps} compiles each, summed (s):")
    print(f"  on the {len(both)} shaders plain Slang compiles:")
    for kind in kinds:
        later = sum(len(found[n][0]) - 1 for n in both) if kind == "later" else len(both)
        print(f"    {kind:28s} {total(both, kind):8.3f}   ({later} requests)")
    ratios = [best[n, "ours"] / best[n, "plain"] for n in both]
    if ratios:
        print(f"    first request / plain's, per shader: median {statistics.median(ratios):.3f}")
        whole = total(both, "ours") + total(both, "later")
        print(f"    every request / plain's: {whole / total(both, 'plain'):.3f}")
    if failed:
        print(f"  on the {len(failed)} shaders plain Slang's request fails:")
        for kind in kinds:
            print(f"    {kind:28s} {total(failed, kind):8.3f}")
        print("    " + ", ".join(failed))


if __name__ == "__main__":
    main()
