"""The Dask worker's side of compiles on a cluster: a worker plugin that keeps the same
crash-contained, time- and memory-limited compiler processes a local build uses, and the task
that compiles one shader from plain data and answers with plain data.

Nothing here is pickled back to the client: the task takes and returns bytes (JSON), which the
client decodes strictly (:mod:`oneshader.compiler.process.wire`). A worker whose toolchain (Slang's
and oneshader's versions, the compiler's code) differs from the client's refuses every request,
naming itself, and never compiles: its outputs would not be what a local build writes.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import queue
import shutil
import tempfile
import threading
from pathlib import PurePosixPath
from typing import Any

from oneshader.compiler.api import CompileLimits
from oneshader.compiler.process.wire import decode_request, encode_result
from oneshader.compiler.process.worker import CompilerWorker
from oneshader.compiler.process.zygote import Zygote

PLUGIN_NAME = "oneshader-compilers"

_Plugin: Any
try:  # the worker plugin's base: Dask registers a plugin by its class
    from distributed import WorkerPlugin as _Plugin
except ImportError:  # without Dask this module still imports (and its tests run)
    _Plugin = object


def worker_toolchain() -> str:
    """What a worker's outputs depend on, as the client computes it for itself."""
    from oneshader.buildtask.toolchain import toolchain_version

    return toolchain_version()


class CompilerPlugin(_Plugin):  # type: ignore[misc]
    """Registered on every Dask worker (``Client.register_plugin``): checks the worker's
    toolchain against the client's and keeps warm compiler processes for its tasks."""

    name = PLUGIN_NAME
    idempotent = False  # a client of another toolchain must be able to replace it

    def __init__(self, toolchain: str) -> None:
        self.toolchain = toolchain
        self.refused = ""
        self.worker_name = ""
        self.compiled = 0  # compiles this worker ran (what an operator, or a test, asks)
        self._folder = ""
        self._zygotes: dict[int | None, Zygote] = {}
        self._idle: queue.SimpleQueue[tuple[tuple[float | None, int | None], CompilerWorker]]
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:  # only the expected toolchain crosses the wire
        return {"toolchain": self.toolchain}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(str(state["toolchain"]))  # type: ignore[misc]

    def setup(self, worker: Any) -> None:
        self.worker_name = str(getattr(worker, "name", "") or getattr(worker, "address", "?"))
        mine = worker_toolchain()
        if mine != self.toolchain:
            self.refused = (
                f"Dask worker {self.worker_name} refuses to compile: its toolchain is "
                f"'{mine}', the build's is '{self.toolchain}' (install the same oneshader and "
                "Slang on every worker)"
            )
            return
        self._folder = tempfile.mkdtemp(prefix="oneshader-dask-")
        self._idle = queue.SimpleQueue()

    def teardown(self, worker: Any) -> None:
        while True:
            try:
                _, w = self._idle.get_nowait()
            except (queue.Empty, AttributeError):
                break
            with contextlib.suppress(Exception):
                w.close()
        with self._lock:
            zygotes, self._zygotes = list(self._zygotes.values()), {}
        for z in zygotes:
            with contextlib.suppress(Exception):
                z.close()
        if self._folder:
            shutil.rmtree(self._folder, ignore_errors=True)

    # --- compiling ---------------------------------------------------------------------------

    def _worker(self, limits: CompileLimits) -> CompilerWorker:
        """A warm compiler process for these limits: an idle one, else one forked from the
        zygote of that memory limit (Slang's start-up paid once per worker)."""
        want = (limits.seconds, limits.memory_mib)
        parked = []
        found = None
        while True:
            try:
                item = self._idle.get_nowait()
            except queue.Empty:
                break
            if item[0] == want and found is None:
                found = item[1]
            else:
                parked.append(item)
        for item in parked:
            self._idle.put(item)
        if found is not None:
            return found
        with self._lock:
            zygote = self._zygotes.get(limits.memory_mib)
            if zygote is None:
                zygote = self._zygotes[limits.memory_mib] = Zygote(None, limits.memory_bytes)
        return CompilerWorker(limits.seconds, zygote)

    def compile(self, payload: bytes) -> bytes:
        """One request (see :func:`encode_payload` in ``cluster``) to one answer, both JSON."""
        if self.refused:
            return _dumps({"refused": self.refused})
        doc = json.loads(payload)
        if doc["toolchain"] != self.toolchain:  # another client's request on a shared cluster
            return _dumps({"refused": f"Dask worker {self.worker_name} serves another toolchain"})
        seconds, memory = doc["limits"]
        limits = CompileLimits(seconds, memory)
        here = tempfile.mkdtemp(dir=self._folder)
        try:
            for name, data in doc["files"]:
                path = _inside(here, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(base64.b64decode(data, validate=True))
            path, options = decode_request(doc["request"].encode())
            for d in (*options.include_dirs, *doc["folders"]):
                os.makedirs(_inside(here, d), exist_ok=True)
            options = dataclasses.replace(
                options, include_dirs=tuple(_inside(here, d) for d in options.include_dirs)
            )
            worker = self._worker(limits)
            try:
                result = worker.compile(_inside(here, path), options)
            except Exception:
                with contextlib.suppress(Exception):
                    worker.close()
                raise
            self._idle.put(((limits.seconds, limits.memory_mib), worker))
            self.compiled += 1
            frame = base64.b64encode(encode_result(result)).decode()  # bytes after its JSON head
            return _dumps({"worker": self.worker_name, "root": here, "result": frame})
        finally:
            shutil.rmtree(here, ignore_errors=True)


def _inside(folder: str, client_path: str) -> str:
    """Where a file of the client's (an absolute path there) lives in this request's folder;
    ValueError for a path that could leave it."""
    p = PurePosixPath(client_path)
    if not p.is_absolute() or any(part in ("..", ".") for part in p.parts) or "\0" in client_path:
        raise ValueError(f"not a plain absolute path: {client_path!r}")
    return os.path.join(folder, *p.parts[1:])


def _dumps(doc: object) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def _plugin() -> CompilerPlugin | None:
    from distributed import get_worker

    plugin = get_worker().plugins.get(PLUGIN_NAME)
    return plugin if isinstance(plugin, CompilerPlugin) else None


def worker_status(_payload: bytes) -> bytes:
    """The Dask task that asks a worker whether it compiles for the build (by its toolchain)."""
    try:
        plugin = _plugin()
        if plugin is None:
            return _dumps({"error": "the oneshader plugin is not registered on this worker"})
        return _dumps({"name": plugin.worker_name, "refused": plugin.refused})
    except Exception as err:
        return _dumps({"error": f"{type(err).__name__}: {err}"})


def compile_on_worker(payload: bytes) -> bytes:
    """The Dask task: compile one shader on this worker through its plugin. Never raises (an
    exception would travel back pickled): a failure is an answer the client reports."""
    try:
        plugin = _plugin()
        if plugin is None:
            return _dumps({"error": "the oneshader plugin is not registered on this worker"})
        return plugin.compile(payload)
    except Exception as err:
        return _dumps({"error": f"{type(err).__name__}: {err}"})
