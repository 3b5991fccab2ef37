"""Peak memory of a cold ``oneshader build`` on generated projects of N shaders (default 100,
1,000 and 2,000), against one plain Slang process compiling the largest of their shaders.

Prints, per N: the peak resident memory (``VmHWM``) of the build process itself and of the
largest of its compiler processes (the zygote and the workers forked from it), sampled from
``/proc`` while the build runs, and each as a ratio of the plain process's peak, measured in
this run (issue 26's goal: below 1.5x, and flat whatever N). No compile server (``--no-server``):
every compiler process is then a descendant of the build. Linux only (``/proc``).

    python bench/bench_memory.py [N ...] [--targets spirv,msl,wgsl] [-j N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_build import build_env, make_project

HERE = Path(__file__).resolve().parent
POLL_SECONDS = 0.02
BUILD = [sys.executable, "-m", "oneshader.cli", "build", "-q", "shaders", "-o", "out"]


def _children() -> dict[int, list[int]]:
    """Every process's children, from ``/proc/*/stat`` (its 4th field is the parent)."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        parent = int(stat[stat.rindex(b")") + 2 :].split()[1])
        tree.setdefault(parent, []).append(int(entry))
    return tree


def _peak_kib(pid: int) -> int:
    """The process's peak resident memory so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Watch:
    """Samples the peak memory of a process and of all its descendants until it ends."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.own = 0  # KiB, the process itself
        self.descendants = 0  # KiB, the largest of its descendants
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        root = self.proc.pid
        while self.proc.poll() is None:
            tree = _children()
            self.own = max(self.own, _peak_kib(root))
            todo = list(tree.get(root, []))
            while todo:
                pid = todo.pop()
                self.descendants = max(self.descendants, _peak_kib(pid))
                todo.extend(tree.get(pid, []))
            time.sleep(POLL_SECONDS)

    def wait(self) -> tuple[float, float]:
        """(the process's own peak, its largest descendant's) in MiB."""
        self.proc.wait()
        self._thread.join()
        return self.own / 1024, self.descendants / 1024


def plain_peak(root: Path, shader: Path, targets: list[str]) -> float:
    """Peak MiB of one cold plain-Slang process compiling ``shader`` for ``targets`` (one
    request, as plain_slang.py makes it)."""
    requests = root / "requests.json"
    request = {"path": str(shader), "targets": targets, "entries": [], "defines": []}
    requests.write_text(json.dumps([request]))
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "plain_slang.py"), "--batch", str(requests)],
        stdout=subprocess.PIPE,
        env=build_env(root, server=False),
    )
    watch = Watch(proc)
    own, _ = watch.wait()
    assert proc.stdout is not None
    if proc.returncode != 0 or json.loads(proc.stdout.read())["failed"]:
        sys.exit("plain Slang failed on the shader")
    return own


def bench(n: int, targets: str, jobs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="oneshader-bench-") as tmp:
        root = Path(tmp)
        shaders = make_project(root, n)
        largest = max(shaders.rglob("*.hlsl"), key=lambda p: p.stat().st_size)
        plain = plain_peak(root, largest, targets.split(","))
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [*BUILD, "--targets", targets, "-j", str(jobs), "--no-server"],
            cwd=root,
            stdout=subprocess.PIPE,
            env=build_env(root, server=False),
        )
        build, compilers = Watch(proc).wait()
        seconds = time.perf_counter() - t0
        assert proc.stdout is not None
        line = proc.stdout.read().decode().strip().splitlines()[-1]
        if proc.returncode != 0 or f"{n} built" not in line:
            sys.exit(f"the build failed: {line}")
    print(
        f"N = {n:5} ({seconds:6.1f} s, -j {jobs}): build process {build:6.1f} MiB "
        f"({build / plain:4.2f}x), largest compiler process {compilers:6.1f} MiB "
        f"({compilers / plain:4.2f}x); plain Slang, one process, one shader: {plain:6.1f} MiB",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100, 1000, 2000])
    parser.add_argument("--targets", default="spirv,msl,wgsl")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    for n in args.sizes:
        bench(n, args.targets, args.jobs)


if __name__ == "__main__":
    main()
