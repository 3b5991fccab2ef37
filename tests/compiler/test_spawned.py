"""The portable process path: spawned compiler workers (no fork, no pidfd, no SO_PEERCRED),
with the fork path's crash containment and time and memory limits, chosen by the platform or
forced by ONESHADER_PROCESS."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from worker_support import LIT, LIT_OPTIONS, crash_mid_request, frozen_with_two_requests

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.process import spawned
from oneshader.compiler.process.spawned import SpawnedWorker, uses_spawn
from oneshader.diagnostics import UserError
from process_helpers import gone, parent_of, wait_until

CORPUS = Path(__file__).parent.parent / "corpus"
SPRITE = str(CORPUS / "sprite.hlsl")
OPTIONS = CompileOptions(source_name="shaders/sprite.hlsl")


def _command_line(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def test_a_spawned_worker_is_a_child_of_the_caller_and_compiles_the_same() -> None:
    with SpawnedWorker() as worker:
        result = worker.compile(SPRITE, OPTIONS)
        pid = worker.pid
        assert pid is not None and parent_of(pid) == os.getpid()  # spawned, no zygote
        assert "oneshader.compiler.process.spawned_child" in _command_line(pid)
    direct = compile_file(SPRITE, OPTIONS)
    assert result.ok and not result.crashed
    assert result.reflection == direct.reflection and result.outputs == direct.outputs
    assert wait_until(lambda: gone(pid))


def test_a_crash_costs_one_shader_and_names_its_signal() -> None:
    with SpawnedWorker() as worker:
        assert worker.compile(SPRITE, OPTIONS).ok
        pid = worker.pid
        crashed = crash_mid_request(worker, SPRITE, OPTIONS)
        (diag,) = crashed.diagnostics
        assert crashed.crashed and diag.code == "OS9001" and "SIGSEGV" in diag.message
        again = worker.compile(SPRITE, OPTIONS)
        assert again.ok and worker.pid not in (None, pid) and worker.restarts == 1


def test_a_crash_fails_its_own_request_and_the_queued_one_goes_to_a_fresh_child() -> None:
    """A second request waits in the pipe (POSIX) and survives the crash of the one before."""
    with SpawnedWorker() as worker:
        pid = frozen_with_two_requests(worker, SPRITE, OPTIONS)
        os.kill(pid, signal.SIGSEGV)
        os.kill(pid, signal.SIGCONT)
        crashed, queued = worker.receive(), worker.receive()
        assert crashed.crashed and "SIGSEGV" in crashed.diagnostics[0].message
        assert queued.ok and queued == compile_file(LIT, LIT_OPTIONS)
        assert worker.pid not in (None, pid) and worker.restarts == 1


def test_the_time_limit_stops_a_hung_compile() -> None:
    with SpawnedWorker(timeout=0.5) as worker:
        worker.start()
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGSTOP)
        result = worker.compile(SPRITE, OPTIONS)
        (diag,) = result.diagnostics
        assert result.crashed and diag.code == "OS9004" and "time limit of 0.5 s" in diag.message


def test_the_memory_limit_holds_in_the_worker() -> None:
    with SpawnedWorker(memory_limit=1536 << 20) as worker:
        assert worker.compile(SPRITE, OPTIONS).ok  # the limit is set before the first compile
        limits = Path(f"/proc/{worker.pid}/limits").read_text()
        (line,) = [x for x in limits.splitlines() if x.startswith("Max address space")]
        assert line.split()[3] == str(1536 << 20)


def test_a_killed_build_takes_its_busy_worker_with_it(tmp_path: Path) -> None:
    """The worker watches its parent: killed mid-compile (here: frozen, as a long compile), the
    build leaves no compiler running for nobody."""
    code = (
        "import sys\n"
        "from oneshader.compiler.process.spawned import SpawnedWorker\n"
        "w = SpawnedWorker()\n"
        "w.start()\n"
        "print(w.pid, flush=True)\n"
        "w.compile(sys.argv[1], __import__('oneshader.compiler').compiler.CompileOptions())\n"
    )
    build = subprocess.Popen(
        [sys.executable, "-c", code, SPRITE], stdout=subprocess.PIPE, text=True
    )
    assert build.stdout is not None
    pid = int(build.stdout.readline())
    os.kill(pid, signal.SIGSTOP)  # a compile that takes long
    time.sleep(0.3)
    build.kill()
    build.wait()
    os.kill(pid, signal.SIGCONT)
    assert wait_until(lambda: gone(pid), 30)


def test_the_path_follows_the_platform_unless_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(spawned.PROCESS_ENV, raising=False)
    assert uses_spawn() is False  # Linux: the zygote's fork path
    monkeypatch.setattr(spawned.sys, "platform", "darwin")
    assert uses_spawn() is True  # macOS, Windows: spawned workers
    with monkeypatch.context() as m:
        m.setenv(spawned.PROCESS_ENV, "fork")
        with pytest.raises(UserError, match="no fork path"):
            uses_spawn()
    monkeypatch.setattr(spawned.sys, "platform", "linux")
    monkeypatch.setenv(spawned.PROCESS_ENV, "spawn")
    assert uses_spawn() is True
    monkeypatch.setenv(spawned.PROCESS_ENV, "Fork")
    assert uses_spawn() is False
    monkeypatch.setenv(spawned.PROCESS_ENV, "thread")
    with pytest.raises(UserError, match="must be 'spawn' or 'fork'"):
        uses_spawn()


def test_ci_runs_the_build_tests_on_the_portable_path_too() -> None:
    script = (Path(__file__).parents[2] / "scripts" / "test.sh").read_text()
    assert "ONESHADER_PROCESS=spawn python -m pytest tests/buildtask" in script
