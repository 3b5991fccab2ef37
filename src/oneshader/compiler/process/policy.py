"""Which process path a build's compilers take, and how long the compile server idles: what a
build decides before it has anything to compile, kept apart from the process code itself
(sockets, subprocesses, threads) so that a build with nothing to compile never imports that."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oneshader.diagnostics import UserError

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "PROCESS_ENV",
    "SERVER_VARIABLE",
    "fork_path_available",
    "server_idle_seconds",
    "uses_spawn",
]

DEFAULT_IDLE_SECONDS = 600.0  # the compile server's, without callers
PROCESS_ENV = "ONESHADER_PROCESS"
SERVER_VARIABLE = "ONESHADER_SERVER"


def server_idle_seconds(no_server: bool) -> float | None:
    """How long the compile server stays for later builds; None to use none. Off with
    ``--no-server`` (``no_server``), ``ONESHADER_SERVER=0``, and by default in CI (where
    nothing comes later); ``ONESHADER_SERVER=1`` (or a number of seconds to stay) turns it on
    there too."""
    if no_server:
        return None
    value = os.environ.get(SERVER_VARIABLE, "").strip().lower()
    if not value:
        return None if os.environ.get("CI") else DEFAULT_IDLE_SECONDS
    if value in ("0", "off", "no", "false"):
        return None
    if value in ("1", "on", "yes", "true"):
        return DEFAULT_IDLE_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise _usage_error(
            SERVER_VARIABLE,
            f"expected 0 (no compile server), 1, or the seconds it stays idle, not {value!r}",
        )
    return seconds


def _usage_error(variable: str, message: str) -> UserError:
    """The error for a variable set wrong; diagnostics imported only then (the CLI asks this
    module before it starts its early zygote: the fewer imports, the sooner that starts)."""
    from oneshader.diagnostics import Code, UserError

    return UserError.at(variable, 0, 0, message, Code.BAD_USAGE)


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
    raise _usage_error(PROCESS_ENV, message)
