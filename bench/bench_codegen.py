"""Benchmark of the source generator and the bindings runtime; prints figures and ratios.

1. generating bindings for 1000 reflection files (goal: at most 1 s in total), with the time
   spent reading, rendering and writing;
2. filling 1,000,000 structured-buffer elements through a generated struct, against a
   hand-written numpy structured dtype (goal: ratio at most 1.2) and a ``struct.pack`` loop;
3. importing a generated module (first import, which compiles it, and a cached one).

Run: python bench/bench_codegen.py [--files N] [--elements N] [--tmp DIR]
Writing is atomic (fsutil: a temporary per file, renamed over; not fsynced, since generated
modules can be made again), so the writing figure is mostly the file system's, and on a disk
other jobs write to it varies most; ``--tmp /dev/shm`` shows the same run on tmpfs.
"""

from __future__ import annotations

import argparse
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import best, best_cpu, interleaved

from oneshader.bindings import from_reflection
from oneshader.codegen import generate, plan
from oneshader.fsutil import write_many_if_changed
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import (
    EntryPoint,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    SpecConstant,
    SpecSlot,
    Stage,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
)


def _vec(n: int, kind: ScalarKind = ScalarKind.Float) -> TypeLayout:
    return TypeLayout(TypeKind.Vector, kind, rows=n, size=4 * n, align=16 if n > 2 else 4 * n)


def _scalar(kind: ScalarKind = ScalarKind.Float) -> TypeLayout:
    return TypeLayout(TypeKind.Scalar, kind, size=4, align=4)


PARTICLE = TypeLayout(
    TypeKind.Struct,
    name="Particle",
    size=48,
    align=16,
    members=(
        StructMember("Position", 0, _vec(4)),
        StructMember("Velocity", 16, _vec(4)),
        StructMember("Life", 32, _scalar()),
        StructMember("Bounces", 36, _scalar(ScalarKind.UInt)),
        StructMember("Unused", 40, _vec(2)),
    ),
)
PARAMS = TypeLayout(
    TypeKind.Struct,
    name="Params",
    size=96,
    align=16,
    members=(
        StructMember(
            "Transform",
            0,
            TypeLayout(
                TypeKind.Matrix, ScalarKind.Float, rows=4, cols=4, size=64, align=16, mstride=16
            ),
        ),
        StructMember("Gravity", 64, _vec(4)),
        StructMember("DeltaTime", 80, _scalar()),
        StructMember("Count", 84, _scalar(ScalarKind.UInt)),
    ),
)


def _slots(binding: int) -> tuple[Slot, ...]:
    return (
        Slot(Target.SpirV, 0, binding),
        Slot(Target.Msl, 0, binding),
        Slot(Target.Wgsl, 0, binding),
    )


def model(i: int) -> ShaderReflection:
    """A typical compute shader (two structured buffers, a cbuffer, a spec constant), varied."""
    return ShaderReflection(
        source=f"shaders/kernel{i}.hlsl",
        targets=(Target.SpirV, Target.Msl, Target.Wgsl),
        resources=(
            Resource(
                "Params",
                ResourceKind.ConstantBuffer,
                ResourceTypeKind.ConstantBuffer,
                stages=(Stage.Compute,),
                slots=_slots(0),
                layout=PARAMS,
            ),
            Resource(
                "Input",
                ResourceKind.ShaderResource,
                ResourceTypeKind.StructuredBuffer,
                stages=(Stage.Compute,),
                slots=_slots(1),
                layout=PARTICLE,
            ),
            Resource(
                "Output",
                ResourceKind.UnorderedAccess,
                ResourceTypeKind.RWStructuredBuffer,
                stages=(Stage.Compute,),
                slots=_slots(2),
                layout=PARTICLE,
            ),
        ),
        spec_constants=(
            SpecConstant(
                "Drag",
                0,
                ScalarKind.Float,
                default=0x3F000000,
                slots=tuple(
                    SpecSlot(t, 0, "Drag") for t in (Target.SpirV, Target.Msl, Target.Wgsl)
                ),
            ),
        ),
        entry_points=(
            EntryPoint(
                f"Step{i}",
                Stage.Compute,
                workgroup=(64, 1, 1),
                uses=("Params", "Input", "Output"),
                specuse=("Drag",),
            ),
        ),
    )


def bench_generate(folder: Path, count: int) -> None:
    refl = folder / "refl"
    refl.mkdir()
    files = []
    for i in range(count):
        path = refl / f"kernel{i}.reflection"
        path.write_bytes(ReflectionFormat.write(model(i)))
        files.append(path)
    t_read = best(lambda: [ReflectionFormat.read_file(f) for f in files], 3)
    t_plan = best(lambda: plan(files), 3)
    c_read = best_cpu(lambda: [ReflectionFormat.read_file(f) for f in files])
    c_plan = best_cpu(lambda: plan(files))
    contents = plan(files)

    def copy(dest: Path) -> None:  # the file-system floor: the same bytes, plain writes
        dest.mkdir()
        for name, data in contents.items():
            (dest / name).write_bytes(data)

    def write(dest: Path) -> None:  # generate's writing step alone, measured, not subtracted
        write_many_if_changed((dest / name, data) for name, data in contents.items())

    runs, writes, floors = [], [], []
    for r in range(3):  # interleaved, so that the three see the same disk and load
        t0 = time.perf_counter()
        generate(files, folder / f"gen{r}")
        runs.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        write(folder / f"write{r}")
        writes.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        copy(folder / f"copy{r}")
        floors.append(time.perf_counter() - t0)
    t_gen, t_write, t_floor = min(runs), min(writes), min(floors)
    t0 = time.perf_counter()
    generate(files, folder / "gen0")  # again: nothing changed, nothing written
    t_again = time.perf_counter() - t0
    size = statistics.mean(p.stat().st_size for p in (folder / "gen0").glob("kernel*.py"))
    print(f"generate {count} reflection files into a new folder: {t_gen:.3f} s "
          f"(goal <= 1 s: {'met' if t_gen <= 1.0 else 'NOT met'})")  # fmt: skip
    print(f"  reading them: {t_read:.3f} s; reading + rendering: {t_plan:.3f} s "
          f"(rendering {t_plan - t_read:.3f} s); writing: {t_write:.3f} s")  # fmt: skip
    print(f"  in CPU time: reading {c_read:.3f} s, rendering {c_plan - c_read:.3f} s "
          f"({(c_plan - c_read) / count * 1e3:.2f} ms per module)")  # fmt: skip
    print(f"  writing the same bytes with plain write_bytes: {t_floor:.3f} s "
          f"(atomic writing costs {t_write / max(t_floor, 1e-9):.1f}x that)")  # fmt: skip
    print(f"  unchanged, again: {t_again:.3f} s; mean module size {size / 1024:.1f} KiB")


def bench_fill(n: int) -> None:
    mod = from_reflection(model(0), "bench")
    rng = np.random.default_rng(1)
    pos = rng.random((n, 4), dtype=np.float32)
    vel = rng.random((n, 4), dtype=np.float32)
    life = rng.random(n, dtype=np.float32)
    bounces = np.arange(n, dtype=np.uint32)
    hand = np.dtype(
        {
            "names": ["Position", "Velocity", "Life", "Bounces"],
            "formats": [("<f4", (4,)), ("<f4", (4,)), "<f4", "<u4"],
            "offsets": [0, 16, 32, 36],
            "itemsize": 48,
        }
    )

    def generated() -> bytes:
        a = mod.Particle.array(n)
        a.Position = pos
        a.Velocity = vel
        a.Life = life
        a.Bounces = bounces
        return bytes(a.bytes_view())

    def numpy_dtype() -> bytes:
        a = np.zeros(n, hand)
        a["Position"] = pos
        a["Velocity"] = vel
        a["Life"] = life
        a["Bounces"] = bounces
        return bytes(memoryview(a.view(np.uint8)))

    packer = struct.Struct("<4f4ffI8x")
    pos_l, vel_l, life_l, b_l = pos.tolist(), vel.tolist(), life.tolist(), bounces.tolist()

    def pack_loop() -> bytes:
        return b"".join(packer.pack(*pos_l[i], *vel_l[i], life_l[i], b_l[i]) for i in range(n))

    assert generated() == numpy_dtype() == pack_loop()
    t_gen, t_np = interleaved(generated, numpy_dtype)
    t_pack = best(pack_loop, 1)
    ratio = t_gen / t_np
    print(f"fill {n:,} structured-buffer elements (48 bytes) and take their bytes:")
    verdict = "met" if ratio <= 1.2 else "NOT met"
    print(
        f"  generated struct: {t_gen * 1e3:.1f} ms; hand-written numpy dtype: {t_np * 1e3:.1f} ms"
    )
    print(f"  -> ratio {ratio:.2f} (goal <= 1.2: {verdict})")
    print(f"  struct.pack loop: {t_pack * 1e3:.0f} ms -> generated is {t_pack / t_gen:.0f}x faster")


IMPORT = """
import importlib, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter(); import numpy; t1 = time.perf_counter()
import oneshader.bindings.runtime; t2 = time.perf_counter()
importlib.import_module("gen.kernel0"); t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def bench_import(folder: Path) -> None:
    generate([folder / "refl" / "kernel0.reflection"], folder / "imp" / "gen")
    rows = []
    for _ in range(4):  # the first run compiles the module to a .pyc, the others use it
        out = subprocess.run(
            [sys.executable, "-c", IMPORT, str(folder / "imp")],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        rows.append([float(x) for x in out.stdout.split()])
    first, cached = rows[0], min(rows[1:], key=lambda r: r[2])
    print(f"import a generated module: {first[2] * 1e3:.1f} ms the first time (compiling it), "
          f"{cached[2] * 1e3:.1f} ms cached")  # fmt: skip
    print(f"  for comparison, in the same process: numpy {cached[0] * 1e3:.1f} ms, "
          f"oneshader.bindings.runtime {cached[1] * 1e3:.1f} ms")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--elements", type=int, default=1_000_000)
    ap.add_argument("--tmp", help="where to write the files (default: the system's temp folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        folder = Path(tmp)
        bench_generate(folder, args.files)
        bench_fill(args.elements)
        bench_import(folder)


if __name__ == "__main__":
    main()
