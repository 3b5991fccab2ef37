"""Run-time reload of generated bindings: a running program picks up what ``oneshader build
--watch`` writes, and learns of a failed build without crashing.

The build writes each module atomically (a temporary renamed over it), so a module file is
always whole: a new inode, size or mtime means a new build. A shader whose build failed keeps
its last good outputs, and its module says why in ``STALE``; reloading such a module leaves its
code the last good one, so pipelines made from it go on working.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import types

__all__ = ["Reloader"]


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class Reloader:
    """Watches one imported generated module. Call :meth:`poll` now and then (once a frame):
    True means the module was reloaded in place with a new good build, so the program makes
    its pipelines again (``module.SHADER`` and the classes are the new ones); :attr:`error`
    says why the latest build of the shader failed, or why the module did not reload, and is
    None while the module is current."""

    def __init__(self, module: types.ModuleType) -> None:
        path = getattr(module, "__file__", None)
        if not path or not os.path.isfile(path):
            raise ValueError(
                f"{module.__name__} has no module file to watch (bindings made in memory by "
                "oneshader.bindings.load cannot be reloaded; import the generated module)"
            )
        self.module = module
        self.path = path
        self._stamp = _stamp(path)
        self.error: str | None = getattr(module, "STALE", None)

    def poll(self) -> bool:
        """Reload the module if the build rewrote it; True if it now holds a good build."""
        stamp = _stamp(self.path)
        if stamp is None or stamp == self._stamp:
            return False
        self._stamp = stamp
        # Python's cached bytecode is keyed to the source's mtime in seconds and its size: a
        # module rewritten within the same second at the same size would load the old code.
        with contextlib.suppress(OSError, NotImplementedError, ValueError):
            os.unlink(importlib.util.cache_from_source(self.path))
        try:
            importlib.reload(self.module)
        except Exception as err:  # the program goes on with what it has
            self.error = f"{self.path}: could not reload: {type(err).__name__}: {err}"
            return False
        self.error = getattr(self.module, "STALE", None)
        return self.error is None
