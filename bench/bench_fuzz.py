"""Fuzzing the reflection reader and the generator behind it, with figures.

``python bench/bench_fuzz.py [N] [SEED]`` (default 100000 inputs) mutates real reflection files
(the golden sprite and those of the test corpus, compiled first) with the mutations of the fuzz
test (tests/reflection/test_reflection_fuzz.py) and feeds each to the reader; every accepted file
goes to the generator (``render_module``), whose module must compile. It prints how many inputs
were rejected and accepted, every unexpected exception (anything but ReflectionFormatError from
the reader, LayoutError from the generator), the slowest input of each step against the median
(a hang would show there; each input also has a deadline), and the peak memory of the process
against its memory before the first input.
"""

from __future__ import annotations

import random
import resource
import signal
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "reflection"))

from test_reflection_fuzz import mutate  # noqa: E402

from oneshader.codegen.render import render_module  # noqa: E402
from oneshader.reflection import ReflectionFormatError  # noqa: E402
from oneshader.reflection.format import ReflectionFormat  # noqa: E402
from oneshader.reflection.validate import LayoutError  # noqa: E402

DEADLINE_SECONDS = 5


class Hang(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


def seeds() -> list[bytes]:
    """The golden file and the reflections of the corpus shaders (compiled here)."""
    from oneshader.compiler import CompileOptions, compile_file

    found = [(ROOT / "tests" / "reflection" / "golden" / "sprite.reflection").read_bytes()]
    for path in sorted((ROOT / "tests" / "corpus").glob("*.hlsl")):
        result = compile_file(str(path), CompileOptions(source_name=path.name))
        if result.reflection is not None:
            found.append(ReflectionFormat.write(result.reflection))
    return found


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 20261203)
    bases = seeds()
    before = peak_mib()
    signal.signal(signal.SIGALRM, _alarm)
    outcome: Counter[str] = Counter()
    unexpected: list[str] = []
    read_times: list[float] = []
    gen_times: list[float] = []
    slowest = (0.0, b"")
    t_all = time.perf_counter()
    for n in range(total):
        data = rng.choice(bases)
        for _ in range(rng.randrange(1, 4)):
            data = mutate(data, rng) or data
        signal.alarm(DEADLINE_SECONDS)
        try:
            t0 = time.perf_counter()
            try:
                model = ReflectionFormat.read(data, file=f"input{n}")
            except ReflectionFormatError as err:
                if err.line < 1 or err.column < 1:
                    unexpected.append(f"input {n}: error without a position: {err}")
                outcome["rejected"] += 1
                continue
            finally:
                spent = time.perf_counter() - t0
                read_times.append(spent)
                slowest = max(slowest, (spent, data))
            outcome["accepted"] += 1
            if ReflectionFormat.read(ReflectionFormat.write(model)) != model:
                unexpected.append(f"input {n}: accepted, but does not round-trip")
            t0 = time.perf_counter()
            try:
                code = render_module(model, "fuzzed")
                compile(code, "fuzzed.py", "exec")
                outcome["generated"] += 1
            except LayoutError:
                outcome["layout refused"] += 1
            gen_times.append(time.perf_counter() - t0)
        except Hang:
            unexpected.append(f"input {n}: no answer within {DEADLINE_SECONDS} s")
        except Exception as err:  # what the fuzzing looks for
            unexpected.append(f"input {n}: {type(err).__name__}: {err}"[:300])
        finally:
            signal.alarm(0)
    seconds = time.perf_counter() - t_all
    print(f"inputs: {total} from {len(bases)} seed files in {seconds:.1f} s")
    for key in ("rejected", "accepted", "generated", "layout refused"):
        print(f"  {key:<15} {outcome[key]}")
    print(f"unexpected exceptions or hangs: {len(unexpected)}")
    for line in unexpected[:20]:
        print("  " + line)
    for name, times in (("reader", read_times), ("generator", gen_times)):
        if times:
            median, worst = statistics.median(times), max(times)
            print(
                f"{name}: median {median * 1e3:.3f} ms, slowest {worst * 1e3:.1f} ms "
                f"({worst / median:.0f}x the median)"
            )
    print(f"slowest reader input: {len(slowest[1])} bytes")
    print(f"peak memory: {peak_mib():.0f} MiB (before the first input: {before:.0f} MiB)")


if __name__ == "__main__":
    main()
