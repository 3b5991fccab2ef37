"""The compiler worker process: results equal in-process ones, and a crash costs one shader."""

from __future__ import annotations

import os
import pickle
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

from worker_support import LIT, LIT_OPTIONS, crash_mid_request, frozen_with_two_requests

from oneshader.compiler import CompileOptions, CompileResult, compile_file
from oneshader.compiler.process.wire import encode_result
from oneshader.compiler.process.worker import CompilerWorker
from oneshader.compiler.process.zygote import Zygote
from process_helpers import gone, parent_of

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
    assert [(d.line, d.column) for d in result.diagnostics if d.is_error] == [(8, 18)]
    assert again.ok


def test_crash_mid_compile_becomes_an_error_and_the_worker_restarts() -> None:
    worker = CompilerWorker()
    try:
        assert worker.compile(SPRITE, OPTIONS).ok
        pid = worker.pid
        crashed = crash_mid_request(worker, SPRITE, OPTIONS)
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
        (diag,) = result.diagnostics
        assert result.crashed and diag.code == "OS9004" and "time limit of 0.5 s" in diag.message
        worker.timeout = 60  # a fresh child (imports, session) takes longer than 0.5 s
        assert worker.compile(SPRITE, OPTIONS).ok


def test_close_ends_the_child_and_its_private_zygote() -> None:
    worker = CompilerWorker()
    worker.start()
    pid, zygote = worker.pid, worker._zygote.pid
    assert pid is not None and zygote is not None and parent_of(pid) == zygote
    worker.close()
    assert worker.pid is None
    assert gone(pid) and gone(zygote)  # reaped, not left as zombies or orphans


def test_workers_of_one_zygote_are_forked_warm_from_it() -> None:
    """The session is made once: every worker is a child of the one zygote, and a worker
    closed while the zygote goes on is reaped at once."""
    with Zygote() as zygote:
        first, second = CompilerWorker(zygote=zygote), CompilerWorker(zygote=zygote)
        try:
            results = [w.compile(SPRITE, OPTIONS) for w in (first, second)]
            pids = [first.pid, second.pid]
            assert zygote.starts == 1 and len(set(pids)) == 2
            assert all(p is not None and parent_of(p) == zygote.pid for p in pids)
            assert results[0] == results[1] and results[0].ok
            first.close()
            assert pids[0] is not None and gone(pids[0])
            assert second.compile(SPRITE, OPTIONS) == results[0]
        finally:
            first.close()
            second.close()
        zygote_pid = zygote.pid
    assert zygote_pid is not None and gone(zygote_pid)


def test_a_worker_that_died_while_idle_is_replaced_without_a_crash_report() -> None:
    with CompilerWorker() as worker:
        worker.start()
        pid = worker.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        result = worker.compile(SPRITE, OPTIONS)
        assert result.ok and not result.crashed
        assert worker.pid != pid and worker.restarts == 1


def test_a_zygote_that_died_is_started_again() -> None:
    with Zygote() as zygote, CompilerWorker(zygote=zygote) as worker:
        assert worker.compile(SPRITE, OPTIONS).ok
        assert zygote.pid is not None
        os.kill(zygote.pid, signal.SIGKILL)
        assert worker.compile(SPRITE, OPTIONS).ok  # the worker itself lives on
        with CompilerWorker(zygote=zygote) as other:
            assert other.compile(SPRITE, OPTIONS).ok
        assert zygote.starts == 2


def test_the_zygote_imports_nothing_heavy_it_does_not_need() -> None:
    """Start-up is paid once per pool: the zygote (run without the site module, on this
    process's sys.path) must not import importlib.metadata (~20 ms) or the site module."""
    import subprocess
    import sys

    code = (
        "import sys, oneshader.compiler.process.worker_child as w; w.prepare(); "
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
    assert argv[1:4] == [b"-S", b"-m", b"oneshader.compiler.process.zygote_child"]


def test_a_forked_worker_imports_nothing_at_its_first_request() -> None:
    """What a request's decoding, its compile and its reply import is imported once, in the
    zygote (:func:`prepare`), not by each worker at its first request."""
    import subprocess
    import sys

    code = (
        "import sys, oneshader.compiler.process.worker_child as w; w.prepare(); "
        "from oneshader.compiler import CompileOptions, compile_file; "
        "from oneshader.compiler.process import wire; "
        "request = wire.encode_request(" + repr(SPRITE) + ", CompileOptions()); "
        "before = set(sys.modules); "
        "result = compile_file(*wire.decode_request(request)); "
        "assert result.ok and wire.encode_result(result); "
        "print(sorted(set(sys.modules) - before))"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "[]"


class _Plant:
    """Unpickling this makes the folder ``path``: the code a pickle can run."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.mkdir, (str(self.path),)


def _frame(data: bytes) -> bytes:
    return struct.pack("<Q", len(data)) + data


class _FakeZygote(Zygote):
    """A "zygote" whose workers are whatever answers on the other end of the channel."""

    def __init__(self, reply: bytes) -> None:
        super().__init__()
        self.reply = reply  # what the next "worker" answers to its first request
        self.stand_ins: dict[int, subprocess.Popen[bytes]] = {}

    def fork(self) -> tuple[int, socket.socket]:
        ours, theirs = socket.socketpair()
        reply = self.reply

        def answer() -> None:
            with theirs, theirs.makefile("rb") as inp:
                (size,) = struct.unpack("<Q", inp.read(8))
                inp.read(size)
                theirs.sendall(_frame(reply))

        threading.Thread(target=answer, daemon=True).start()
        stand_in = subprocess.Popen(["sleep", "60"])  # the pid a caller may kill
        self.stand_ins[stand_in.pid] = stand_in
        return stand_in.pid, ours

    def wait(self, pid: int, timeout: float) -> tuple[int, int] | None:
        stand_in = self.stand_ins.pop(pid)
        stand_in.kill()
        stand_in.wait()
        return None


def test_a_reply_that_is_a_pickle_runs_nothing(tmp_path: Path) -> None:
    """Whatever listens where the compile server should can answer anything: the answer is
    read as plain data, and a pickle is a broken worker, not code to run."""
    planted = tmp_path / "planted"
    for reply in (pickle.dumps(_Plant(planted)), b"{}", b'{"diagnostics": 1}', b"\xff" * 9):
        with CompilerWorker(zygote=_FakeZygote(reply)) as worker:
            result = worker.compile(SPRITE, OPTIONS)
        (diag,) = result.diagnostics
        assert result.crashed and not result.ok and diag.code == "OS9003"
        assert "not a compile result" in diag.message and "Slang bug" not in diag.message
    assert not planted.exists()


def test_a_garbled_reply_sends_the_queued_request_to_a_fresh_worker() -> None:
    """The request waiting behind one answered with something that is no compile result gets
    its own answer from the next worker."""
    zygote = _FakeZygote(b"{}")
    with CompilerWorker(zygote=zygote) as worker:
        worker.submit(SPRITE, OPTIONS)
        worker.submit(LIT, LIT_OPTIONS)
        zygote.reply = encode_result(CompileResult())
        garbled, queued = worker.receive(), worker.receive()
        assert garbled.crashed and "not a compile result" in garbled.diagnostics[0].message
        assert queued == CompileResult() and worker.restarts == 1
    assert not zygote.stand_ins


def test_a_request_that_is_a_pickle_runs_nothing_in_the_worker(tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    with Zygote() as zygote:
        pid, channel = zygote.fork()
        with channel:
            channel.sendall(_frame(pickle.dumps(_Plant(planted))))
            channel.settimeout(30)
            assert channel.recv(1) == b""  # the worker ends without an answer
        zygote.wait(pid, 5)
    assert not planted.exists()


def test_a_worker_killed_from_outside_is_not_called_a_slang_bug() -> None:
    with CompilerWorker() as worker:
        worker.start()
        result = crash_mid_request(worker, SPRITE, OPTIONS, signal.SIGKILL)  # the OOM killer's
        (diag,) = result.diagnostics
        assert result.crashed and "SIGKILL" in diag.message
        assert "Slang bug" not in diag.message and "killed" in diag.message


def _macro_bomb(path: Path, levels: int) -> Path:
    """A few hundred bytes whose expansion makes 2**levels tokens."""
    lines = ["#define A0 x+", *(f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, levels + 1))]
    last = f"A{levels}"
    lines.append(f'[shader("compute")][numthreads(1,1,1)] void main() {{ float x = {last} 1; }}')
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_macro_bomb_is_a_positioned_error_not_an_exhausted_machine(tmp_path: Path) -> None:
    """2**30 tokens asked of the preprocessor: refused at the invocation, in the worker as in
    the build's own process (which reads sources with the same model)."""
    bomb = _macro_bomb(tmp_path / "bomb.hlsl", 30)
    with Zygote(memory_limit=1024 << 20) as zygote, CompilerWorker(60, zygote) as worker:
        result = worker.compile(str(bomb), OPTIONS)
    (diag,) = result.diagnostics
    assert not result.crashed and diag.code == "OS1042", diag
    assert (diag.line, diag.column) == (32, 64) and "makes more than" in diag.message


def test_a_compile_over_the_memory_limit_fails_that_shader(tmp_path: Path) -> None:
    """A macro expansion under the preprocessor's bound still asks for more than a small
    cap; its worker dies, and the message says it ran out of memory, not that Slang has a bug."""
    bomb = _macro_bomb(tmp_path / "bomb.hlsl", 18)
    with Zygote(memory_limit=1024 << 20) as zygote, CompilerWorker(60, zygote) as worker:
        result = worker.compile(str(bomb), OPTIONS)
        (diag,) = result.diagnostics
        assert result.crashed and "ran out of memory" in diag.message, diag.message
        assert worker.compile(SPRITE, OPTIONS).ok  # the next shader gets a fresh worker


def test_a_queued_request_is_compiled_as_the_one_before_it_is_answered() -> None:
    with CompilerWorker() as worker:
        pid = frozen_with_two_requests(worker, SPRITE, OPTIONS)
        os.kill(pid, signal.SIGCONT)
        first, second = worker.receive(), worker.receive()
        assert first == worker.compile(SPRITE, OPTIONS) and first.ok
        assert second == worker.compile(LIT, LIT_OPTIONS) and second.ok
        assert worker.pid == pid and worker.restarts == 0


def test_a_crash_fails_its_own_request_and_the_queued_one_goes_to_a_fresh_child() -> None:
    with CompilerWorker() as worker:
        pid = frozen_with_two_requests(worker, SPRITE, OPTIONS)
        os.kill(pid, signal.SIGSEGV)
        os.kill(pid, signal.SIGCONT)
        crashed, queued = worker.receive(), worker.receive()
        assert crashed.crashed and "SIGSEGV" in crashed.diagnostics[0].message
        assert crashed.diagnostics[0].file == "shaders/sprite.hlsl"
        assert queued.ok and not queued.crashed and queued == worker.compile(LIT, LIT_OPTIONS)
        assert worker.pid not in (None, pid) and worker.restarts == 1


def test_a_timed_out_compile_sends_its_queued_request_to_a_fresh_child() -> None:
    with CompilerWorker(timeout=0.5) as worker:
        pid = frozen_with_two_requests(worker, SPRITE, OPTIONS)  # the sprite's never finishes
        timed_out = worker.receive()
        assert timed_out.crashed and timed_out.diagnostics[0].code == "OS9004"
        worker.timeout = 60  # a fresh child (imports, session) takes longer than 0.5 s
        queued = worker.receive()
        assert queued.ok and not queued.crashed and worker.pid not in (None, pid)


def test_a_queued_requests_time_limit_counts_from_the_reply_before_it() -> None:
    """Its compile starts when the child has answered the one before: the time that one
    took is not its own."""
    with CompilerWorker(timeout=5) as worker:
        pid = frozen_with_two_requests(worker, SPRITE, OPTIONS)
        time.sleep(3)  # the first request's compile takes 3 s
        os.kill(pid, signal.SIGCONT)
        assert worker.receive().ok
        os.kill(pid, signal.SIGSTOP)
        time.sleep(3)  # and the second's 3 s: 6 s after it was sent, 3 s after it started
        os.kill(pid, signal.SIGCONT)
        assert worker.receive().ok


def test_a_big_request_waits_for_the_reply_before_it_instead_of_blocking() -> None:
    """The child reads no request while it writes a reply: a request bigger than the channel
    holds is written once the reply before it has arrived (else both sides would block)."""
    big = CompileOptions(
        source_name="shaders/particles.hlsl", defines=(("UNUSED", "1" * (4 << 20)),)
    )
    with CompilerWorker() as worker:
        worker.start()
        pid = worker.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        worker.submit(SPRITE, OPTIONS)
        thread = threading.Thread(target=worker.submit, args=(LIT, big), daemon=True)
        thread.start()
        thread.join(10)
        assert not thread.is_alive() and worker._sent == 1
        os.kill(pid, signal.SIGCONT)
        assert worker.receive().ok and worker.receive().ok
