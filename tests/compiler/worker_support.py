"""Helpers of the worker and server tests: a compiler crash in the middle of a request."""

from __future__ import annotations

import os
import signal
import threading
import time

from oneshader.compiler import CompileOptions, CompileResult
from oneshader.compiler.process.worker import CompilerWorker


def crash_mid_request(worker: CompilerWorker, path: str, options: CompileOptions) -> CompileResult:
    """What ``worker.compile`` returns when its child gets SIGSEGV with the request in flight:
    Slang's known crashes cannot be triggered on demand, their consequence can. The child is
    frozen first, so the request is certainly in flight when it dies."""
    pid = worker.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    results: list[CompileResult] = []
    thread = threading.Thread(target=lambda: results.append(worker.compile(path, options)))
    thread.start()
    time.sleep(0.2)
    os.kill(pid, signal.SIGSEGV)
    os.kill(pid, signal.SIGCONT)
    thread.join(timeout=30)
    (crashed,) = results
    return crashed
