"""A cold build's compiler, started while the build reads its configuration.

A build without the compile server starts a zygote of its own (Python, the compiler's modules,
Slang's session: ~0.3-0.5 s) at its first compile, after its own imports, configuration,
discovery and staleness check (~0.2-0.4 s): one after the other, before any shader compiles,
at ``-j 1`` as at ``-j N``. When the command line shows a build that will compile (no state in
its output folder: a first or a cleaned build) and will start a private zygote (no compile
server, the zygote's process path), the CLI starts that zygote first, and the build's pool
adopts it (:class:`~oneshader.buildtask.scheduler.WorkerPool`'s ``early``), so the two starts
overlap on two cores.

Only a guess from the arguments and the environment, made before the configuration is read
(which is what it overlaps): a wrong one costs a zygote that the pool does not adopt and closes
unused, never a different build. A build with a state (a no-op, an incremental build) starts
nothing early: it may compile nothing. This module imports only what the no-op's check has
loaded; the process code is imported when a zygote is started.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from oneshader.buildtask import noop

if TYPE_CHECKING:
    from oneshader.compiler.process.zygote import Zygote

STATE_FILE = ".oneshader-state.json"  # state.STATE_NAME (that module's imports are the cost)


def start(argv: Sequence[str]) -> Zygote | None:
    """The zygote of a cold build of ``argv`` (the command line after ``oneshader``), started
    now; None when the build may not need one or will fork its workers elsewhere."""
    if not argv or argv[0] != "build" or "--watch" in argv or "--scheduler" in argv:
        return None
    try:
        out = noop._out_from_argv(argv, os.getcwd())
        if out is None or os.path.lexists(os.path.join(out, STATE_FILE)):
            return None
        from oneshader.compiler.process.policy import server_idle_seconds, uses_spawn

        if server_idle_seconds("--no-server" in argv) is not None or uses_spawn():
            return None
        from oneshader.compiler.process.zygote import Zygote

        zygote = Zygote()
        zygote.start()
    except Exception:  # a doubt, or no zygote: the build starts its own as before
        return None
    return zygote
