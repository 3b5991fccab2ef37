"""A spawned worker process (the caller's side is :mod:`.spawned`): its limits, its watch on the
build that started it, then the same request loop as a forked worker, on stdin/stdout."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

_WATCH_SECONDS = 0.5  # how often a worker looks whether its build is still there


def _limit_memory(limit: int) -> None:
    """At most ``limit`` bytes of address space, where the OS has such a limit (Windows has
    none; macOS takes it without enforcing it: docs/build.md)."""
    if sys.platform == "win32":
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft == resource.RLIM_INFINITY or limit < soft:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        except (ValueError, OSError):  # refused (macOS may): no compile without the limit
            if sys.platform != "darwin":
                raise


def _watch_parent(parent: int) -> None:
    """End at once when the build ``parent`` that started this worker has gone (killed
    mid-compile, or even before this process got going): on POSIX an orphan's parent changes.
    Never returns."""
    while True:
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(_WATCH_SECONDS)


def main(argv: list[str]) -> None:
    """``--parent PID [--memory BYTES]``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C is the build's to decide (it closes us)
    if argv[:1] == ["--parent"] and sys.platform != "win32":
        parent = int(argv[1])
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    options = dict(zip(argv[::2], argv[1::2], strict=False))
    if "--memory" in options:
        _limit_memory(int(options["--memory"]))
    from oneshader.compiler.process import worker_child

    # the frames use the original stdin/stdout; whatever else writes to them (Slang) goes nowhere
    inp = os.fdopen(os.dup(0), "rb")
    out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    worker_child.prepare()
    status = 1
    try:
        worker_child.serve_requests(inp, out)
        status = 0
    finally:
        os._exit(status)


if __name__ == "__main__":
    main(sys.argv[1:])
