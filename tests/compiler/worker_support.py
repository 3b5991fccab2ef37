"""Helpers of the worker and server tests: a compiler crash in the middle of a request."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from oneshader.compiler import CompileOptions, CompileResult
from oneshader.compiler.process.worker import CompilerWorker

LIT = str(Path(__file__).parent.parent / "corpus" / "particles.hlsl")
LIT_OPTIONS = CompileOptions(source_name="shaders/particles.hlsl")


def crash_mid_request(
    worker: CompilerWorker,
    path: str,
    options: CompileOptions,
    sig: signal.Signals = signal.SIGSEGV,
) -> CompileResult:
    """What ``worker.compile`` returns when its child gets ``sig`` (SIGSEGV: a crash) with the
    request in flight: Slang's known crashes cannot be triggered on demand, their consequence
    can. The child is frozen first, so the request is certainly in flight when it dies."""
    pid = worker.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    results: list[CompileResult] = []
    thread = threading.Thread(target=lambda: results.append(worker.compile(path, options)))
    thread.start()
    time.sleep(0.2)
    os.kill(pid, sig)
    os.kill(pid, signal.SIGCONT)
    thread.join(timeout=30)
    (crashed,) = results
    return crashed


def frozen_with_two_requests(worker: CompilerWorker, path: str, options: CompileOptions) -> int:
    """The worker's child stopped (SIGSTOP) with two requests written to it: ``path``'s, then
    :data:`LIT`'s queued behind it. Its pid."""
    worker.start()
    pid = worker.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    worker.submit(path, options)
    worker.submit(LIT, LIT_OPTIONS)
    assert worker._sent == 2  # both in the channel
    return pid
