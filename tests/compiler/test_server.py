"""The compile server: one warm zygote per user and toolchain, shared by builds one after the
other, ending when idle, replaced when dead, never serving other code or other users."""

from __future__ import annotations

import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from worker_support import crash_mid_request

from oneshader.compiler import CompileOptions
from oneshader.compiler.process.server import CompileServer, runtime_folder, toolchain_key
from oneshader.compiler.process.worker import CompilerWorker
from oneshader.compiler.process.zygote import Zygote
from process_helpers import alive, gone, parent_of, server_pid, sockets, wait_until

CORPUS = Path(__file__).parent.parent / "corpus"
SPRITE = str(CORPUS / "sprite.hlsl")
OPTIONS = CompileOptions(source_name="shaders/sprite.hlsl")


def serve() -> CompileServer:
    server = CompileServer.for_this_process(idle_seconds=60)
    assert server is not None
    return server


def compile_through(server: CompileServer) -> int:
    """A compile through ``server`` (started if need be), the caller gone after; its pid."""
    with Zygote(server.connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        assert worker.compile(SPRITE, OPTIONS).ok
    pid = server_pid(server.path)
    assert pid is not None
    return pid


def test_builds_one_after_the_other_share_one_warm_server(runtime: Path) -> None:
    first = serve()
    with Zygote(first.connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        result = worker.compile(SPRITE, OPTIONS)
        assert result.ok and worker.pid is not None
        pid = server_pid(first.path)
        assert first.started and pid is not None and parent_of(worker.pid) == pid
        assert first.path.parent == runtime / "oneshader"
    assert alive(pid)  # the caller has gone, the server stays
    second = serve()  # as the next build makes it
    with Zygote(second.connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        assert worker.compile(SPRITE, OPTIONS) == result
        assert worker.pid is not None and parent_of(worker.pid) == pid
    assert not second.started and server_pid(second.path) == pid
    mode = stat.S_IMODE((runtime / "oneshader").stat().st_mode)
    assert mode == 0o700 and stat.S_IMODE(first.path.stat().st_mode) & 0o077 == 0


def test_the_server_ends_when_idle_and_removes_its_socket(runtime: Path) -> None:
    server = CompileServer.for_this_process(idle_seconds=1)
    assert server is not None
    with Zygote(server.connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        assert worker.compile(SPRITE, OPTIONS).ok
        pid = server_pid(server.path)
        assert pid is not None
        time.sleep(1.5)
        assert alive(pid)  # not idle while a caller is connected
    assert wait_until(lambda: not alive(pid) and not server.path.exists())


@pytest.mark.parametrize("how", ["replaced", "removed"])
def test_a_server_whose_socket_file_is_gone_ends(runtime: Path, how: str) -> None:
    """No build can reach a server whose socket file was replaced or removed: it ends at once
    (when idle), not at its idle time-out, leaving the new file alone."""
    server = serve()
    pid = compile_through(server)
    server.path.unlink()
    if how == "replaced":
        server.path.write_bytes(b"another program's file")
    assert wait_until(lambda: not alive(pid), 10)
    assert server.path.exists() == (how == "replaced")


def test_a_dead_servers_socket_is_replaced(runtime: Path) -> None:
    server = serve()
    pid = compile_through(server)
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: not alive(pid)) and server.path.exists()  # left behind
    again = serve()
    assert compile_through(again) != pid and again.started


def test_a_crash_of_a_server_worker_names_its_signal(runtime: Path) -> None:
    with Zygote(serve().connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        assert worker.compile(SPRITE, OPTIONS).ok
        pid = worker.pid
        crashed = crash_mid_request(worker, SPRITE, OPTIONS)
        assert crashed.crashed and "SIGSEGV" in crashed.diagnostics[0].message
        assert worker.compile(SPRITE, OPTIONS).ok and worker.pid != pid
        assert gone(pid)  # reaped by the server when asked


def test_workers_run_in_the_callers_folder(
    runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "project"
    here.mkdir()
    monkeypatch.chdir(here)
    with Zygote(serve().connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        worker.start()
        assert worker.pid is not None
        assert Path(os.readlink(f"/proc/{worker.pid}/cwd")) == here
    (sock,) = sockets(runtime)
    pid = server_pid(sock)
    assert pid is not None and os.readlink(f"/proc/{pid}/cwd") == "/"


def test_a_caller_that_dies_leaves_no_worker_behind(runtime: Path) -> None:
    code = (
        "import os, sys\n"
        "from oneshader.compiler.process.server import CompileServer\n"
        "from oneshader.compiler.process.worker import CompilerWorker\n"
        "from oneshader.compiler.process.zygote import Zygote\n"
        "w = CompilerWorker(zygote=Zygote(CompileServer.for_this_process(60).connect))\n"
        "w.start(); print(w.pid, flush=True); os._exit(0)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    pid = int(out.stdout)
    assert wait_until(lambda: gone(pid))  # ended and reaped


def test_no_server_in_a_folder_others_can_enter(runtime: Path) -> None:
    assert runtime_folder() == runtime / "oneshader"
    (runtime / "oneshader").chmod(0o755)
    assert runtime_folder() is None and CompileServer.for_this_process() is None


def test_the_name_follows_the_toolchain(monkeypatch: pytest.MonkeyPatch) -> None:
    toolchain_key.cache_clear()
    before = toolchain_key()
    monkeypatch.setenv("SLANG_DEBUG_TEST", "1")
    toolchain_key.cache_clear()
    with_variable = toolchain_key()
    monkeypatch.delenv("SLANG_DEBUG_TEST")
    monkeypatch.setattr(sys, "path", [*sys.path, "/elsewhere"])
    toolchain_key.cache_clear()
    with_path = toolchain_key()
    monkeypatch.setattr(sys, "path", ["/some/project", *sys.path[1:-1]])
    toolchain_key.cache_clear()
    from_elsewhere = toolchain_key()  # `python -m` in another folder: the same server
    monkeypatch.undo()
    toolchain_key.cache_clear()
    assert len({before, with_variable, with_path}) == 3 and toolchain_key() == before
    assert from_elsewhere == before


def test_requests_not_from_oneshader_are_answered_none(runtime: Path) -> None:
    server = serve()
    with Zygote(server.connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        assert worker.compile(SPRITE, OPTIONS).ok
        pid = server_pid(server.path)
        with server.connect() as control:
            for request in (b"wait\0x\0y", b"fork\0/", b"hello", b"wait\0" + str(pid).encode()):
                control.send(request)
                assert control.recv(64) == b"none"
        assert worker.compile(SPRITE, OPTIONS).ok and server_pid(server.path) == pid


def test_a_server_that_dies_during_a_build_is_started_again(runtime: Path) -> None:
    server = serve()
    with Zygote(server.connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        assert worker.compile(SPRITE, OPTIONS).ok
        pid = server_pid(server.path)
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        assert worker.compile(SPRITE, OPTIONS).ok  # its worker lives on
        with CompilerWorker(zygote=zygote) as other:  # the next fork reaches a new server
            assert other.compile(SPRITE, OPTIONS).ok
        assert zygote.starts == 2 and server_pid(server.path) not in (None, pid)


def test_a_server_that_cannot_be_started_leaves_a_zygote_of_the_callers(runtime: Path) -> None:
    nowhere = CompileServer(runtime / "missing" / "zygote.sock")  # its folder does not exist
    with Zygote(nowhere.connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        assert worker.compile(SPRITE, OPTIONS).ok
        assert zygote.pid is not None and parent_of(zygote.pid) == os.getpid()
        assert worker.pid is not None and parent_of(worker.pid) == zygote.pid
    assert not nowhere.started and sockets(runtime) == []


def test_a_killed_callers_busy_worker_stops_at_once(runtime: Path) -> None:
    code = (
        "import os, sys, time\n"
        "from oneshader.compiler.process.server import CompileServer\n"
        "from oneshader.compiler.process.worker import CompilerWorker\n"
        "from oneshader.compiler.process.zygote import Zygote\n"
        "w = CompilerWorker(zygote=Zygote(CompileServer.for_this_process(60).connect))\n"
        "w.start(); print(w.pid, flush=True); time.sleep(60)\n"
    )
    caller = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert caller.stdout is not None
    pid = int(caller.stdout.readline())
    os.kill(pid, signal.SIGSTOP)  # busy: it would not notice its channel closing
    caller.kill()
    caller.wait()
    assert wait_until(lambda: gone(pid), seconds=5)  # not left compiling for nobody


def test_workers_of_the_server_get_the_callers_limits(runtime: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (123 << 20, hard))
    try:
        zygote = Zygote(serve().connect, memory_limit=3 << 30)
        with zygote, CompilerWorker(zygote=zygote) as worker:
            assert worker.compile(SPRITE, OPTIONS).ok and worker.pid is not None
            limits = Path(f"/proc/{worker.pid}/limits").read_text()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    fsize = next(line for line in limits.splitlines() if line.startswith("Max file size"))
    space = next(line for line in limits.splitlines() if line.startswith("Max address space"))
    assert fsize.split()[3] == str(123 << 20) and space.split()[3] == str(3 << 30)


def test_a_newer_server_retires_the_older_ones(runtime: Path) -> None:
    """Another toolchain (an upgrade, an edit of oneshader) starts another server, which asks
    the older ones to stop listening; each ends when its last build has."""
    old = serve()
    with Zygote(old.connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        assert worker.compile(SPRITE, OPTIONS).ok  # a build still running on the old one
        old_pid = server_pid(old.path)
        assert old_pid is not None
        newer = CompileServer(old.path.with_name("zygote-000000000000.sock"), 60)
        new_pid = compile_through(newer)
        assert new_pid != old_pid and wait_until(lambda: not old.path.exists())
        assert alive(old_pid) and worker.compile(SPRITE, OPTIONS).ok  # its build goes on
    assert wait_until(lambda: not alive(old_pid))
    assert sockets(runtime) == [newer.path] and alive(new_pid)


def test_a_folder_that_is_a_link_is_refused_with_a_reason(runtime: Path) -> None:
    elsewhere = runtime / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (runtime / "oneshader").symlink_to(elsewhere)
    found = CompileServer.find()
    assert isinstance(found, str) and "oneshader" in found and "link" in found
    assert runtime_folder() is None


def test_a_build_says_why_it_used_no_server(runtime: Path, tmp_path: Path) -> None:
    (runtime / "oneshader").mkdir(mode=0o755)
    (tmp_path / "K.hlsl").write_text(
        '[shader("compute")][numthreads(1,1,1)] void main() {}\n'  # nothing to bind
    )
    out = subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "build", "K.hlsl", "-o", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "note: no compile server used: its folder is refused:" in out.stderr
    assert "open to other users (mode 755)" in out.stderr


needs_root = pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")


@needs_root
def test_a_runtime_folder_another_user_owns_is_refused(runtime: Path) -> None:
    """As after ``sudo -E``: root must not use a folder another user can rename things in."""
    os.chown(runtime, 65534, 65534)
    found = CompileServer.find()
    assert isinstance(found, str) and "belongs to another user (uid 65534)" in found


@needs_root
def test_a_socket_held_by_another_user_is_refused(runtime: Path) -> None:
    server = serve()
    ready, tell = os.pipe()
    pid = os.fork()
    if pid == 0:  # another user listening where our server should
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(os.fspath(server.path))
        os.setgid(65534)
        os.setuid(65534)
        listener.listen(1)
        os.write(tell, b"1")
        time.sleep(30)
        os._exit(0)
    try:
        os.read(ready, 1)
        with Zygote(server.connect) as zygote, CompilerWorker(zygote=zygote) as worker:
            assert worker.compile(SPRITE, OPTIONS).ok  # on a zygote of its own
            assert zygote.pid is not None and parent_of(zygote.pid) == os.getpid()
        assert "held by another user (uid 65534)" in server.refused
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(ready)
        os.close(tell)
