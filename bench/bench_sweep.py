"""The sweep of left-over temporaries, tried against files other programs keep under OUT.

A project is built with OUT = the project itself (``-o .``, the case that once deleted git's
pack temporaries), then files are planted the way other programs leave them: git's
``.pack.XXXXXX.tmp`` and ``.idx`` temporaries in ``.git/objects/pack``, an editor's
``.notes.123456.tmp``, a nested project's output folder with its state and its in-flight
temporaries (oneshader's own naming), temporaries named like ours but for files this build does
not write, and a deep tree of unrelated files (a home folder's worth). Then the temporaries a
killed build of this project would leave are planted too, and the project is built again
(``oneshader build``, a process). It prints how many planted files of each kind were removed
(other programs': must be 0; ours: all), and the time of the sweep against a walk of OUT's
whole tree (what the sweep did before it looked only where the build writes), measured in the
same run.

    python bench/bench_sweep.py [--others N] [--shaders N]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from timing import best

from oneshader.buildtask.outputs import OUTPUT_SUFFIXES, sweep_temporaries
from oneshader.buildtask.state import STATE_NAME, BuildState
from oneshader.fsutil import TEMPORARY_SUFFIX

# The sweep before (every name of this pattern anywhere under OUT was removed): what it would
# have taken of the planted files, for comparison.
BEFORE = re.compile(r"^\..+\.[A-Za-z0-9_]{6,}\.tmp$")

KERNEL = """RWStructuredBuffer<uint> Data;
[shader("compute")]
[numthreads(8, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID) {{ Data[id.x] = id.x * {factor}u; }}
"""


def plant(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"planted")
    return path


def others(root: Path, count: int) -> dict[str, list[Path]]:
    """Files of other programs under ``root``, by kind."""
    planted: dict[str, list[Path]] = {
        "git": [],
        "editor": [],
        "nested OUT": [],
        "look-alike": [],
        "old naming": [],
        "tree": [],
    }
    pack = root / ".git" / "objects" / "pack"
    for i in range(max(count // 20, 1)):
        planted["git"].append(plant(pack / f".pack.{i:06x}.tmp"))
        planted["git"].append(plant(pack / f".idx.{i:06x}{TEMPORARY_SUFFIX}"))
        planted["editor"].append(plant(root / "shaders" / f".notes.{i:06}.tmp"))
        nested = root / "other" / "build"
        planted["nested OUT"].append(plant(nested / f".K{i}.spv.abcd{i:04}{TEMPORARY_SUFFIX}"))
        planted["nested OUT"].append(plant(nested / f".{STATE_NAME}.ab{i:06}{TEMPORARY_SUFFIX}"))
        planted["look-alike"].append(plant(root / f".Unknown{i}.spv.abcd{i:04}{TEMPORARY_SUFFIX}"))
        planted["old naming"].append(plant(root / f".K0.spv.ab{i:06}.tmp"))
    tree = root / "home"
    for i in range(count):
        planted["tree"].append(plant(tree / f"d{i % 37}" / f"e{i % 11}" / f".f{i}.x{i:07}.tmp"))
    return planted


def ours(root: Path, shaders: int) -> list[Path]:
    """What killed builds of this project leave: a temporary per output and one of the state."""
    found = [plant(root / f".{STATE_NAME}.zz000000{TEMPORARY_SUFFIX}")]
    for i in range(shaders):
        for suffix in OUTPUT_SUFFIXES:
            found.append(plant(root / f".K{i}{suffix}.kill{i:04}{TEMPORARY_SUFFIX}"))
    return found


def walk_all(root: Path) -> int:
    """The sweep before: every file under OUT looked at."""
    return sum(len(files) for _, _, files in os.walk(root))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--others", type=int, default=20000)
    parser.add_argument("--shaders", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        root = Path(tmp)
        (root / "shaders").mkdir()
        for i in range(args.shaders):
            (root / "shaders" / f"K{i}.hlsl").write_text(KERNEL.format(factor=i + 2))
        build = [sys.executable, "-m", "oneshader.cli", "build", "-q", "shaders", "-o", "."]
        env = dict(os.environ, ONESHADER_SERVER="0")
        subprocess.run(build, cwd=root, env=env, check=True)
        planted = others(root, args.others)
        mine = ours(root, args.shaders)
        result = subprocess.run(build, cwd=root, env=env, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        removed: Counter[str] = Counter()
        for kind, paths in planted.items():
            removed[kind] = sum(1 for p in paths if not p.exists())
        total = sum(len(p) for p in planted.values())
        print(f"planted by other programs: {total} files under OUT (= the project, -o .)")
        for kind, paths in planted.items():
            before = sum(1 for p in paths if BEFORE.match(p.name))
            print(
                f"  {kind:<11} {len(paths):>6} planted, {removed[kind]} removed "
                f"(the sweep before: {before})"
            )
        left = sum(1 for p in mine if p.exists())
        print(f"left by killed builds of this project: {len(mine)}, {len(mine) - left} removed")
        state, _ = BuildState.load(root)
        owned = {STATE_NAME} | {s.path for r in state.shaders.values() for s in r.outputs}
        sweep = best(lambda: sweep_temporaries(root, owned))
        walk = best(lambda: walk_all(root))
        print(
            f"sweep {sweep * 1e3:.2f} ms (looks in the folders the build writes) against a walk "
            f"of OUT's tree {walk * 1e3:.2f} ms: ratio {sweep / walk:.3f}"
        )
        return 0 if not sum(removed.values()) and not left else 1


if __name__ == "__main__":
    sys.exit(main())
