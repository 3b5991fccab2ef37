"""Which process path a build's compilers take, and how long the compile server idles: what a
build decides before it has anything to compile, kept apart from the process code itself
(sockets, subprocesses, threads) so that a build with nothing to compile never imports that."""

from __future__ import annotations

import os
import sys

from oneshader.diagnostics import Code, UserError

__all__ = ["DEFAULT_IDLE_SECONDS", "PROCESS_ENV", "fork_path_available", "uses_spawn"]

DEFAULT_IDLE_SECONDS = 600.0  # the compile server's, without callers
PROCESS_ENV = "ONESHADER_PROCESS"


def fork_path_available() -> bool:
    """Whether this system has what the zygote's path needs: Linux's pidfds and
    ``SO_PEERCRED``, and ``fork``."""
    if not (sys.platform.startswith("linux") and hasattr(os, "fork")):
        return False
    import _socket  # socket's own module: the constants without socket.py's enums

    return hasattr(os, "pidfd_open") and hasattr(_socket, "SO_PEERCRED")


def uses_spawn() -> bool:
    """Whether builds start spawned workers (the portable path) rather than forking them from
    a zygote: ``ONESHADER_PROCESS`` decides when set (``spawn`` or ``fork``; ``fork`` where the
    system cannot is a usage error), else the system does."""
    forced = os.environ.get(PROCESS_ENV, "").strip().lower()
    if forced == "spawn":
        return True
    if forced == "fork" and fork_path_available():
        return False
    if forced not in ("", "fork"):
        message = f"{PROCESS_ENV} must be 'spawn' or 'fork', not {forced!r}"
    elif forced == "fork":
        message = f"{PROCESS_ENV}=fork: this system has no fork path (Linux only); use spawn"
    else:
        return not fork_path_available()
    raise UserError.at(PROCESS_ENV, 0, 0, message, Code.BAD_USAGE)
