"""Kill -9 trials: a rebuild after an edit, killed in the middle, never leaves a shader's outputs
from two builds, and the next build repairs everything.

A project of N compute shaders (default 30) that all include one header is built at version A,
then the header is edited (a field added: every shader's code and reflection change) and the
rebuild is killed with SIGKILL once it has rewritten at least one shader. What is killed, per
kind: ``build`` (the ``oneshader build`` process), ``worker`` (a compile worker), ``zygote`` (the
process workers are forked from), ``server`` (the compile server, ``ONESHADER_SERVER=1``, in a
private runtime folder so no one else's server is touched), and on the portable process path
(``ONESHADER_PROCESS=spawn``, docs/build.md) ``spawned-build`` and ``spawned-worker``. After each
kill it checks:

- torn: an output that is neither version A's nor version B's bytes (both built beforehand);
- mixed: a shader whose ``.reflection`` is present but whose code files are not all from the
  reflection's own version (the one-unit rule, docs/build.md; a missing reflection is allowed:
  readers can tell, ``Shader.read_code`` refuses);
- the killed build either completed (exit 0, every shader at B) or reported the crash (an error
  on stderr), unless the build itself was killed;
- the next build exits 0 with every output at B (repaired), and the one after has nothing to do;
- left running: the killed build's compiler processes still alive 5 s after it ended.

Trials alternate the edit A -> B, B -> A, so no reset build is needed.

    python bench/bench_kill.py [--trials N] [--shaders N] [--kinds build,worker,zygote,server]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from oneshader.compiler.process.server import CompileServer

KINDS = ("build", "worker", "zygote", "server", "spawned-build", "spawned-worker")
SUFFIXES = (".spv", ".metal", ".wgsl", ".reflection")

HEADER = "struct Params {{ uint scale; {extra} }};\n"
KERNEL = """#include "common.h"
ConstantBuffer<Params> P;
RWStructuredBuffer<uint> Data;

[shader("compute")]
[numthreads(8, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{{
    Data[id.x] = id.x * {factor}u + P.scale + VALUE(P);
}}
"""
VERSIONS = {
    "A": HEADER.format(extra="") + "#define VALUE(p) 0u\n",
    "B": HEADER.format(extra="uint bias;") + "#define VALUE(p) p.bias\n",
}
PYPROJECT = """[project]
name = "killtrial"
version = "0"

[tool.oneshader]
sources = ["shaders"]
out = "out"
"""


def make_project(root: Path, shaders: int) -> None:
    (root / "shaders").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    for i in range(shaders):
        (root / "shaders" / f"K{i:02}.hlsl").write_text(KERNEL.format(factor=i + 2))


def set_version(root: Path, version: str) -> None:
    (root / "shaders" / "common.h").write_text(VERSIONS[version])


def build_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "oneshader.cli", "build", "-q", *args]


def outputs(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in SUFFIXES}


def proc_parent(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return -1
    return int(next(x.split()[1] for x in status.splitlines() if x.startswith("PPid:")))


def runs(pid: int, module: bytes) -> bool:
    try:
        return module in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return not any(x.startswith("State:") and "Z" in x.split()[1] for x in status.splitlines())


def is_zygote(pid: int) -> bool:
    return runs(pid, b"zygote_child")


def children(pid: int) -> list[int]:
    return [
        int(p.name)
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and proc_parent(int(p.name)) == pid
    ]


def victim(kind: str, build: subprocess.Popen[bytes] | None, runtime: Path) -> int | None:
    """The pid to kill for this kind, None if it is not running (yet)."""
    if kind == "server":
        socks = sorted((runtime / "oneshader").glob("*.sock"))
        return CompileServer(socks[0]).pid() if socks else None
    assert build is not None
    if kind in ("build", "spawned-build"):
        return build.pid
    if kind == "spawned-worker":
        spawned = [p for p in children(build.pid) if runs(p, b"spawned_child")]
        return spawned[0] if spawned else None
    zygotes = [p for p in children(build.pid) if is_zygote(p)]
    if not zygotes:
        return None
    if kind == "zygote":
        return zygotes[0]
    workers = children(zygotes[0])
    return workers[0] if workers else None


def classify(out: Path, refs: dict[str, dict[str, bytes]], stems: list[str]) -> tuple[int, int]:
    """(torn files, mixed shaders) in OUT against the two versions' reference outputs."""
    have = outputs(out)
    torn = sum(
        1 for name, data in have.items() if data not in (refs["A"].get(name), refs["B"].get(name))
    )
    mixed = 0
    for stem in stems:
        refl = have.get(stem + ".reflection")
        if refl is None:
            continue
        version = next((v for v in refs if refs[v][stem + ".reflection"] == refl), None)
        code = [stem + s for s in SUFFIXES if s != ".reflection"]
        if version is None or any(have.get(c) != refs[version][c] for c in code):
            mixed += 1
    return torn, mixed


def trial(
    root: Path,
    kind: str,
    target: str,
    env: dict[str, str],
    runtime: Path,
    refs: dict[str, dict[str, bytes]],
    stems: list[str],
) -> dict[str, int]:
    out = root / "out"
    before = {n: (out / n).stat().st_mtime_ns for n in os.listdir(out) if n.endswith(".reflection")}
    set_version(root, target)
    build = subprocess.Popen(
        build_cmd("-j", "1"), cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    killed = 0
    deadline = time.monotonic() + 120
    while build.poll() is None and time.monotonic() < deadline:
        changed = any(
            not (out / n).exists() or (out / n).stat().st_mtime_ns != t for n, t in before.items()
        )
        pid = victim(kind, build, runtime) if changed else None
        kids = [p for p in children(build.pid) if runs(p, b"oneshader.compiler.process")]
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
                killed = 1
            except ProcessLookupError:
                pass
            break
        time.sleep(0.01)
    _, stderr = build.communicate(timeout=300)
    time.sleep(5)
    left = sum(1 for p in kids if running(p))
    torn, mixed = classify(out, refs, stems)
    at_target = outputs(out) == refs[target]
    completed = build.returncode == 0 and at_target
    reported = build.returncode != 0 and (kind.endswith("build") or b"error" in stderr)
    repair = subprocess.run(build_cmd("-j", "2"), cwd=root, env=env, capture_output=True)
    repaired = repair.returncode == 0 and outputs(out) == refs[target]
    if not repaired:  # say why: a figure alone does not tell what to fix
        print(f"  not repaired ({kind}): exit {repair.returncode}: {repair.stderr[-400:]!r}")
    noop = subprocess.run(
        build_cmd(), cwd=root, env=dict(env, ONESHADER_SERVER="0"), capture_output=True, text=True
    )
    settled = noop.returncode == 0 and ": 0 built," in noop.stdout
    return {
        "killed": killed,
        "torn": torn,
        "mixed": mixed,
        "completed": int(completed),
        "reported": int(reported),
        "silent wrong": int(not completed and not reported),
        "repaired": int(repaired),
        "no-op after": int(settled),
        "left running": left,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--shaders", type=int, default=30)
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    with tempfile.TemporaryDirectory(prefix="bench-kill-") as tmp:
        base = Path(tmp)
        runtime = base / "runtime"
        runtime.mkdir(mode=0o700)
        env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), ONESHADER_SERVER="0")
        env.pop("CI", None)
        refs: dict[str, dict[str, bytes]] = {}
        for v in VERSIONS:
            ref = base / f"ref{v}"
            make_project(ref, args.shaders)
            set_version(ref, v)
            subprocess.run(build_cmd("-j", "2"), cwd=ref, env=env, check=True)
            refs[v] = outputs(ref / "out")
        assert all(refs["A"][n] != refs["B"][n] for n in refs["A"]), (
            "the edit must change every output"
        )
        stems = sorted({n.rsplit(".", 1)[0] for n in refs["A"]})
        print(
            f"{len(stems)} shaders, {len(refs['A'])} outputs per version; "
            f"{args.trials} trial(s) per kind"
        )
        server_pids: set[int] = set()
        try:
            for kind in kinds:
                root = base / kind
                make_project(root, args.shaders)
                set_version(root, "A")
                kenv = dict(env, ONESHADER_SERVER="1" if kind == "server" else "0")
                if kind.startswith("spawned"):
                    kenv["ONESHADER_PROCESS"] = "spawn"
                subprocess.run(build_cmd("-j", "2"), cwd=root, env=kenv, check=True)
                totals: Counter[str] = Counter()
                start = time.monotonic()
                for i in range(args.trials):
                    if kind == "server":
                        pid = victim("server", None, runtime)
                        if pid is not None:
                            server_pids.add(pid)
                    totals.update(trial(root, kind, "BA"[i % 2], kenv, runtime, refs, stems))
                seconds = time.monotonic() - start
                figures = ", ".join(f"{k} {v}" for k, v in totals.items())
                print(f"kill -9 {kind:<6}: {args.trials} trials, {figures} ({seconds:.0f} s)")
        finally:
            last = victim("server", None, runtime)
            for pid in server_pids | (
                {last} if last else set()
            ):  # the servers this run started, in its own runtime folder
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
    return 0


if __name__ == "__main__":
    sys.exit(main())
