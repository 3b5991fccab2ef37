"""The compiler worker process: results equal in-process ones, and a crash costs one shader."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.worker import CompilerWorker

CORPUS = Path(__file__).parent.parent / "corpus"
SPRITE = str(CORPUS / "sprite.hlsl")
OPTIONS = CompileOptions(source_name="shaders/sprite.hlsl")


def test_worker_result_equals_in_process_result() -> None:
    with CompilerWorker() as worker:
        result = worker.compile(SPRITE, OPTIONS)
    direct = compile_file(SPRITE, OPTIONS)
    assert result.ok and not result.crashed
    assert result.reflection == direct.reflection
    assert result.outputs == direct.outputs


def test_user_errors_come_back_as_diagnostics() -> None:
    with CompilerWorker() as worker:
        result = worker.compile(
            str(CORPUS / "errors/syntax.hlsl"), CompileOptions(source_name="s.hlsl")
        )
        again = worker.compile(SPRITE, OPTIONS)
    assert not result.ok and not result.crashed
    assert [(d.line, d.column) for d in result.diagnostics if d.is_error] == [(9, 5)]
    assert again.ok


def test_crash_mid_compile_becomes_an_error_and_the_worker_restarts() -> None:
    worker = CompilerWorker()
    try:
        assert worker.compile(SPRITE, OPTIONS).ok
        pid = worker.pid
        assert pid is not None
        # Freeze the child so the request is certainly in flight, then crash it.
        os.kill(pid, signal.SIGSTOP)
        results = []
        thread = threading.Thread(target=lambda: results.append(worker.compile(SPRITE, OPTIONS)))
        thread.start()
        time.sleep(0.2)
        os.kill(pid, signal.SIGSEGV)
        os.kill(pid, signal.SIGCONT)
        thread.join(timeout=30)
        (crashed,) = results
        assert crashed.crashed and not crashed.ok and crashed.reflection is None
        (diag,) = crashed.diagnostics
        assert diag.is_error and "SIGSEGV" in diag.message and diag.file == "shaders/sprite.hlsl"
        after = worker.compile(SPRITE, OPTIONS)
        assert after.ok and not after.crashed
        assert worker.pid not in (None, pid)
        assert worker.restarts == 1
    finally:
        worker.close()


def test_timeout_kills_a_hung_compile() -> None:
    with CompilerWorker(timeout=0.5) as worker:
        worker.start()
        pid = worker.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)  # a compile that never finishes
        result = worker.compile(SPRITE, OPTIONS)
        assert result.crashed and "SIGKILL" in result.diagnostics[0].message
        worker.timeout = 60  # a fresh child (imports, session) takes longer than 0.5 s
        assert worker.compile(SPRITE, OPTIONS).ok


def test_close_ends_the_child() -> None:
    worker = CompilerWorker()
    worker.start()
    pid = worker.pid
    assert pid is not None
    worker.close()
    assert worker.pid is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        pass
    else:  # reaped zombies are gone; a live pid here would be a leaked child
        raise AssertionError("worker child still running after close()")


def test_the_worker_child_imports_nothing_heavy_it_does_not_need() -> None:
    """Start-up is paid by every worker: the child (run without the site module, on this
    process's sys.path) must not import importlib.metadata (~20 ms) or the site module."""
    import subprocess
    import sys

    code = (
        "import sys, oneshader.compiler.worker as w; w._prepare(); "
        "import oneshader.compiler.driver; "
        "print('importlib.metadata' in sys.modules, 'site' in sys.modules)"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.split() == ["False", "False"]
    with CompilerWorker() as worker:
        assert worker.compile(SPRITE, OPTIONS).ok  # it finds everything without site
        assert worker.pid is not None and worker.restarts == 0
        argv = Path(f"/proc/{worker.pid}/cmdline").read_bytes().split(b"\0")
    assert argv[1:4] == [b"-S", b"-m", b"oneshader.compiler.worker"]
