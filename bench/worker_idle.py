"""How long the compiler workers of a cold build wait for their next request (issue 26: a
worker waiting is time lost on the build's critical path).

    python bench/worker_idle.py PROJECT OUT [-j N] [BUILD ARGUMENTS ...]

Builds PROJECT into OUT (``oneshader build -q --no-server``; OUT a new folder for each run:
on ext4, creating files soon after deleting many costs the kernel ~0.5 ms each) in this
process, and watches each compiler process from the kernel's side: between the first request
written to it and the last reply read from it, the time it slept = wall - CPU - run-queue wait
(``/proc/PID/schedstat``), which is the time it waited for a request (its reads hit the page
cache). Unlike the wall time, this holds on a machine shared with other work. Prints it per
shader, with a digest of the outputs (equal digests: equal outputs). Linux only.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any


def schedstat(pid: int) -> tuple[float, float, float]:
    """(now, CPU seconds, run-queue seconds) of process ``pid``."""
    cpu, wait, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
    return time.perf_counter(), int(cpu) / 1e9, int(wait) / 1e9


def digest(out: Path) -> tuple[int, str]:
    """How many output files OUT holds (the build's own dot files aside), and their digest."""
    h = hashlib.sha256()
    files = sorted(p for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    for p in files:
        h.update(p.relative_to(out).as_posix().encode() + b"\0" + p.read_bytes())
    return len(files), h.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("out")
    parser.add_argument("-j", default="1")
    args, rest = parser.parse_known_args()  # the rest goes to the build (PATH, --targets)
    os.chdir(args.project)

    from oneshader.compiler.process import worker

    pids: dict[int, int] = {}  # id of a channel's writer: the child's pid
    first: dict[int, tuple[float, float, float]] = {}
    last: dict[int, tuple[float, float, float]] = {}
    replies = 0
    child_init, send, receive = worker._Child.__init__, worker.send, worker._Child.receive

    def traced_init(self: Any, pid: int, channel: Any) -> None:
        child_init(self, pid, channel)
        pids[id(self.writer)] = pid

    def traced_send(stream: Any, data: bytes) -> None:
        pid = pids.get(id(stream))
        if data and pid is not None and pid not in first:
            first[pid] = schedstat(pid)
        send(stream, data)

    def traced_receive(self: Any, deadline: float | None) -> bytes:
        nonlocal replies
        reply = receive(self, deadline)
        replies += 1
        last[self.pid] = schedstat(self.pid)
        return reply

    worker._Child.__init__ = traced_init  # type: ignore[method-assign]
    worker.send = traced_send
    worker._Child.receive = traced_receive  # type: ignore[method-assign]

    from oneshader import cli

    t0 = time.perf_counter()
    with contextlib.suppress(SystemExit):  # the build's exit status
        cli.main(["build", "-q", "--no-server", "-j", args.j, "-o", args.out, *rest])
    wall = time.perf_counter() - t0
    idle = cpu = queued = 0.0
    for pid, (t1, c1, w1) in first.items():
        t2, c2, w2 = last[pid]
        idle += (t2 - t1) - (c2 - c1) - (w2 - w1)
        cpu += c2 - c1
        queued += w2 - w1
    files, sha = digest(Path(args.out))
    print(
        json.dumps(
            {
                "j": args.j,
                "wall_s": round(wall, 2),
                "replies": replies,
                "workers": len(first),
                "idle_s": round(idle, 4),
                "idle_ms_per_shader": round(1000 * idle / max(1, replies), 3),
                "worker_cpu_s": round(cpu, 2),
                "worker_run_queue_s": round(queued, 2),
                "files": files,
                "digest": sha,
            }
        )
    )


if __name__ == "__main__":
    main()
