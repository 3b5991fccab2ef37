"""Run-time reload of generated bindings: a running program picks up what ``oneshader build
--watch`` writes, and learns of a failed build without crashing.

The build writes each module atomically (a temporary renamed over it), so a module file is
always whole: a new inode, size or mtime means a new build. A shader whose build failed keeps
its last good outputs, and its module says why in ``STALE``; reloading such a module leaves its
code the last good one, so pipelines made from it go on working.

The new module is executed beside the running one and its names are swapped in only when it
imported whole and its reflection is ABI-compatible with the running one
(:mod:`oneshader.reflection.abi`, the rules of ``oneshader reflection diff``): a module that
fails half way, or a build that moved what the program's buffers and bind groups rely on,
leaves the running module as it was.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import types

from oneshader.reflection.abi import Change, breaking, diff_reflections

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
    None while the module is current. :attr:`changes` lists what the latest reload changed
    (or would have). A reload that breaks the ABI the program was built on (a moved slot, a
    member at another offset: docs/bindings.md "ABI changes") is refused, the running module
    kept, unless ``accept_breaking`` says the program remakes everything after a reload."""

    def __init__(self, module: types.ModuleType, *, accept_breaking: bool = False) -> None:
        path = getattr(module, "__file__", None)
        if not path or not os.path.isfile(path):
            raise ValueError(
                f"{module.__name__} has no module file to watch (bindings made in memory by "
                "oneshader.bindings.load cannot be reloaded; import the generated module)"
            )
        self.module = module
        self.path = path
        self.accept_breaking = accept_breaking
        self.changes: list[Change] = []
        self._stamp = _stamp(path)
        self.error: str | None = getattr(module, "STALE", None)

    def _load(self) -> types.ModuleType:
        """The module file executed into a new module object, beside the running one."""
        spec = importlib.util.spec_from_file_location(self.module.__name__, self.path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {self.path}")
        fresh = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fresh)
        return fresh

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
            fresh = self._load()
            changes = self._classify(fresh)
        except Exception as err:  # the program goes on with what it has
            self.error = f"{self.path}: could not reload: {type(err).__name__}: {err}"
            return False
        self.changes = changes
        broken = breaking(changes)
        if broken and not self.accept_breaking:
            lines = "; ".join(c.line() for c in broken)
            self.error = f"{self.path}: refused a reload that breaks the ABI: {lines}"
            return False
        self._swap(fresh)
        self.error = getattr(self.module, "STALE", None)
        return self.error is None

    def _classify(self, fresh: types.ModuleType) -> list[Change]:
        old, new = self.module.SHADER.reflection, fresh.SHADER.reflection
        return diff_reflections(old, new)

    def _swap(self, fresh: types.ModuleType) -> None:
        """The running module object takes the new one's names (the program holds the module
        object, so ``module.SHADER`` is the new shader); nothing here can fail half way."""
        names = self.module.__dict__
        new = dict(fresh.__dict__)
        for key in [k for k in names if k not in new]:
            del names[key]
        names.update(new)
