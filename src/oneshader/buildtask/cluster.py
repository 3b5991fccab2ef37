"""Compiles on a Dask distributed cluster: the build's side (the workers' is
:mod:`.cluster_worker`).

A shader goes to the cluster as plain data: its request (:mod:`~oneshader.compiler.process.wire`),
the compile limits, and the bytes of its main file and of every include it can read (the include
closure the source model finds, every ``#if`` branch's: a superset of what the compile reads).
The worker writes them under a folder of its own at the same absolute paths, compiles in its
crash-contained worker processes, and answers with the result's plain data. Here the answer is
decoded strictly, its paths mapped back, and each input stamped as *this* machine read it (the
digest the worker compiled must be the one sent, else the input is recorded as unknown), so the
build writes outputs and state exactly as for a local compile.

Dask pickles what clients send (functions, arguments): a scheduler runs whatever its clients send,
which is why the cluster must be reachable only by its users (mutual TLS: docs/build.md). Going
the other way, this client is made with ``msgpack`` as its only (de)serializer, so a result a
worker serialized with pickle (or Dask's own serializers, whose headers are pickles) is refused,
and what it accepts is bytes decoded as JSON. Dask's protocol itself can still carry pickled
messages between its peers, so the scheduler and workers must be trusted machines as well.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import posixpath
import queue
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from oneshader.buildtask.scheduler import WorkerPool
from oneshader.buildtask.sources import ShaderJob
from oneshader.compiler.api import CompileLimits, CompileResult, InputFile
from oneshader.compiler.process.wire import decode_result, encode_request
from oneshader.diagnostics import Code, Diagnostic, Severity, UserError
from oneshader.fsutil import read_regular

DISTRIBUTED_INSTALL_HINT = "pip install 'oneshader[distributed]'"
CONNECT_SECONDS = 10.0  # to reach the scheduler before compiling here instead
LOST_SECONDS = 10.0  # a scheduler unreachable this long mid-build is gone: the rest here


@dataclass
class _Bundle:
    """What a worker needs of this machine's files for one compile."""

    files: list[list[str]]  # (path, base64) rows
    folders: list[str]  # folders a name passes through before a '..': they must exist there
    stamps: dict[str, InputFile]  # each name's file as read here


@dataclass
class _Sent:
    job: ShaderJob
    files: dict[str, InputFile]  # what was sent, as this machine read it
    started: float


def _bundle(job: ShaderJob) -> _Bundle | None:
    """The files a compile of ``job`` may read; None when the source model cannot read them
    (the local compile then reports why). A name with ``..`` (``#include "../common.hlsli"``)
    is sent as the path it spells, with the folders it passes through: the worker's folder holds
    no links, so that is where its compile looks; two names of one path with different bytes
    (a link in between) are compiled here."""
    from oneshader.compiler import source_files

    found = source_files(
        str(job.source), job.source_name, job.options.include_dirs, job.options.preprocessor_defines
    )
    if found is None:
        return None
    sent: dict[str, str] = {}
    folders: dict[str, None] = {}
    stamps = {}
    for f in found[0]:  # each as read by the model: its digest, status, name and identity
        try:
            data, _ = read_regular(f.path)
        except OSError:
            return None
        if _sha(data) != f.sha256:  # changed since: compiled here, where it is read once
            return None
        text = base64.b64encode(data).decode()
        for path in dict.fromkeys((f.named or f.path, f.path)):  # a link's name and its file
            stamps[path] = stamps[posixpath.normpath(path)] = f
            if sent.setdefault(posixpath.normpath(path), text) != text:
                return None
            parts = path.split("/")
            folders.update(
                (posixpath.normpath("/".join(parts[:i]) or "/"), None)
                for i, part in enumerate(parts)
                if part == ".."
            )
    return _Bundle([[path, text] for path, text in sent.items()], list(folders), stamps)


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def encode_payload(job: ShaderJob, bundle: _Bundle, limits: CompileLimits, toolchain: str) -> bytes:
    return json.dumps(
        {
            "toolchain": toolchain,
            "limits": [limits.seconds, limits.memory_mib],
            "files": bundle.files,
            "folders": bundle.folders,
            "request": encode_request(str(job.source), job.options).decode(),
        },
        separators=(",", ":"),
    ).encode()


def mapped_result(answer: CompileResult, root: str, sent: dict[str, InputFile]) -> CompileResult:
    """A worker's result with its paths (under ``root``) made this machine's again, and each
    input stamped as read here: the worker must have compiled the bytes sent, else the input's
    digest is unknown (and the next build compiles the shader again)."""

    def here(text: str) -> str:
        return text.replace(root, "") if root else text

    inputs = []
    for f in answer.inputs:
        path = here(f.named or f.path)  # the worker has no links: each name is a file there
        mine = sent.get(path)
        if mine is not None and mine.sha256 == f.sha256 and f.sha256:
            inputs.append(mine)
        else:
            inputs.append(InputFile(path, 0, f.size, "", time.time_ns()))
    diagnostics = tuple(
        replace(d, file=here(d.file), message=here(d.message), excerpt=here(d.excerpt))
        for d in answer.diagnostics
    )
    return replace(answer, inputs=tuple(inputs), diagnostics=diagnostics)


def _failure(job: ShaderJob, message: str, crashed: bool = True) -> CompileResult:
    diag = Diagnostic(job.source_name, 0, 0, Severity.ERROR, message, Code.WORKER_FAILED)
    return CompileResult(diagnostics=(diag,), crashed=crashed)


class ClusterPool:
    """Compiles on the Dask cluster at ``address`` (``tcp://`` or ``tls://``), with the same
    :meth:`run` as :class:`WorkerPool`; what the cluster cannot do (the scheduler unreachable or
    gone, no worker of this toolchain, a source the model cannot read) is compiled by ``local``,
    with a note."""

    def __init__(
        self,
        address: str,
        local: WorkerPool,
        limits: CompileLimits,
        note: Callable[[str], None],
        *,
        connect_seconds: float = CONNECT_SECONDS,
    ) -> None:
        self.address = address
        self.local = local
        self.limits = limits
        self.note = note
        self.connect_seconds = connect_seconds
        self.client: Any = None
        self.workers: list[str] = []  # the addresses of the workers that accept this build's
        self.unusable = ""  # why the cluster is not used (set once)
        self.remote = 0  # shaders compiled on the cluster (for the summary's note and tests)

    # --- connecting --------------------------------------------------------------------------

    def _connect(self) -> bool:
        if self.client is not None:
            return True
        if self.unusable:
            return False
        try:
            from distributed import Client
        except ImportError:
            raise UserError.at(
                "oneshader build",
                0,
                0,
                f"--scheduler needs Dask distributed: {DISTRIBUTED_INSTALL_HINT}",
                Code.BAD_USAGE,
            ) from None
        from oneshader.buildtask.cluster_worker import PLUGIN_NAME, CompilerPlugin
        from oneshader.buildtask.cluster_worker import worker_toolchain as toolchain

        # Dask logs its connection troubles on stderr: the build says what matters in its notes
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        try:
            client = Client(  # type: ignore[no-untyped-call]
                self.address,
                timeout=f"{self.connect_seconds}s",
                set_as_default=False,
                serializers=["msgpack"],
                deserializers=["msgpack"],
            )
        except Exception as err:  # refused, a timeout, a TLS handshake that failed
            return self._give_up(f"cannot reach the Dask scheduler {self.address} ({_why(err)})")
        self.client = client
        self.toolchain = toolchain()
        try:
            client.register_plugin(CompilerPlugin(self.toolchain), name=PLUGIN_NAME)
            self.workers = self._accepting()
        except Exception as err:
            return self._give_up(f"the Dask cluster at {self.address} failed ({_why(err)})")
        if not self.workers:
            return self._give_up(f"no Dask worker at {self.address} accepts this build")
        return True

    def _accepting(self) -> list[str]:
        """The workers whose toolchain is the build's; a note names each one that refuses."""
        from oneshader.buildtask.cluster_worker import worker_status

        addresses = sorted(self.client.scheduler_info(n_workers=-1)["workers"])
        futures = [
            self.client.submit(
                worker_status, b"", workers=[a], allow_other_workers=False, pure=False
            )
            for a in addresses
        ]
        accepting = []
        for address, future in zip(addresses, futures, strict=True):
            answer = json.loads(future.result(timeout=60))
            if answer.get("refused"):
                self.note(f"note: {answer['refused']}")
            else:
                accepting.append(address)
        return accepting

    def _give_up(self, why: str) -> bool:
        self.unusable = why
        self.note(f"note: {why}; compiling here")
        self._close_client()
        return False

    # --- compiling ---------------------------------------------------------------------------

    def run(
        self,
        jobs: Sequence[ShaderJob],
        on_start: Callable[[ShaderJob], None],
        on_result: Callable[[ShaderJob, CompileResult, float], None],
        on_tick: Callable[[], None],
        tick_seconds: float = 0.1,
    ) -> None:
        """Compile every job on the cluster (those it cannot take here); callbacks as for
        :meth:`WorkerPool.run`, on the calling thread."""
        here: list[ShaderJob] = []
        if jobs and self._connect():
            here = self._remote(jobs, on_start, on_result, on_tick, tick_seconds)
        else:
            here = list(jobs)
        if here:
            self.local.run(here, on_start, on_result, on_tick, tick_seconds)

    def _remote(
        self,
        jobs: Sequence[ShaderJob],
        on_start: Callable[[ShaderJob], None],
        on_result: Callable[[ShaderJob, CompileResult, float], None],
        on_tick: Callable[[], None],
        tick_seconds: float,
    ) -> list[ShaderJob]:
        """Submit the jobs, take their answers as they come; the jobs left for a local compile."""
        from distributed import as_completed

        from oneshader.buildtask.cluster_worker import compile_on_worker

        here: list[ShaderJob] = []
        sent: dict[Any, _Sent] = {}
        for job in jobs:
            bundle = _bundle(job)
            if bundle is None:
                here.append(job)
                continue
            payload = encode_payload(job, bundle, self.limits, self.toolchain)
            future = self.client.submit(
                compile_on_worker,
                payload,
                key=f"oneshader-compile-{uuid.uuid4().hex}",
                workers=self.workers,
                allow_other_workers=False,
                pure=False,
            )
            sent[future] = _Sent(job, bundle.stamps, time.perf_counter())
            on_start(job)
        events: queue.SimpleQueue[Any] = queue.SimpleQueue()

        def collect() -> None:
            try:
                done = as_completed(list(sent), loop=self.client.loop)  # type: ignore[no-untyped-call]
                for future in done:
                    events.put(future)
            except Exception as err:  # the client closed under it
                events.put(err)

        threading.Thread(target=collect, daemon=True, name="oneshader-cluster").start()
        pending = set(sent)
        lost_since: float | None = None
        while pending:
            try:
                item = events.get(timeout=tick_seconds)
            except queue.Empty:
                on_tick()
                if self.client.status in ("running", "connecting") and self._scheduler_up():
                    lost_since = None
                    continue
                lost_since = lost_since or time.monotonic()
                if time.monotonic() - lost_since < LOST_SECONDS:
                    continue
                item = ConnectionError("the scheduler stopped answering")
            result: CompileResult | BaseException | None = None
            if not isinstance(item, BaseException):
                result = self._answer(item, sent[item])
                if isinstance(result, BaseException):  # cancelled: the scheduler went away
                    item = result
            if isinstance(item, BaseException):
                self.note(
                    f"note: the Dask scheduler {self.address} is gone ({_why(item)}); "
                    f"compiling the {len(pending)} shaders left here"
                )
                here.extend(sent[f].job for f in pending)
                self.unusable = "the scheduler is gone"
                self._close_client()
                break
            pending.discard(item)
            s = sent[item]
            if result is None:  # the cluster failed this one, not the shader: compile it here
                here.append(s.job)
                continue
            assert not isinstance(result, BaseException)
            self.remote += 1
            on_result(s.job, result, time.perf_counter() - s.started)
        return here

    def _scheduler_up(self) -> bool:
        try:
            comm = self.client.scheduler_comm
            return comm is not None and not comm.comm.closed()
        except Exception:
            return False

    def _answer(self, future: Any, s: _Sent) -> CompileResult | BaseException | None:
        """The compile result of a finished task; None when it must be compiled here, the
        error when the task was cancelled (the scheduler is gone: so are the others)."""
        try:
            raw = future.result()
        except Exception as err:
            name = type(err).__name__
            if "Cancelled" in name:
                return err
            if name == "KilledWorker":  # it ran on workers that died, each time
                return _failure(
                    s.job,
                    f"Dask workers died each time they compiled this shader ({_why(err)}); "
                    "the build goes on without it",
                )
            self.note(f"note: the cluster failed {s.job.label} ({_why(err)}); compiling it here")
            return None
        try:
            if type(raw) is not bytes:
                raise ValueError(f"a {type(raw).__name__}, not bytes")
            answer = json.loads(raw)
            if type(answer) is not dict:
                raise ValueError("not an object")
            if "refused" in answer or "error" in answer:
                why = str(answer.get("refused") or answer.get("error"))
                self.note(f"note: {why}; compiling {s.job.label} here")
                return None
            root, text = answer["root"], answer["result"]
            if type(root) is not str or type(text) is not str:
                raise ValueError("bad fields")
            frame = base64.b64decode(text, validate=True)  # binascii.Error: a ValueError
            return mapped_result(decode_result(frame), root, s.files)
        except (ValueError, KeyError, TypeError, RecursionError) as err:
            return _failure(s.job, f"the cluster's answer is not a compile result: {err}")

    def _close_client(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close(timeout=5)

    def close(self) -> None:
        self._close_client()
        self.local.close()

    def __enter__(self) -> ClusterPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _why(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text and text[0] else type(err).__name__
