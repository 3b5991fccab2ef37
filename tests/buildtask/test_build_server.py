"""``oneshader build`` with the compile server: the next build reuses it, results are the same
bytes as without it, it is off where asked (and in CI), and a killed build leaves only it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from build_helpers import fork_path_only, make_project, summary_counts

from process_helpers import alive, assert_no_process_left, server_pid, sockets

pytestmark = fork_path_only

NOTE = "note: started a compile server for the next builds"


def run(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A build in a fresh process with the test's environment (the server on, no CI)."""
    return subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "build", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, **env),
    )


def outputs(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def test_the_next_build_reuses_the_server_and_gets_the_same_bytes(
    runtime: Path, tmp_path: Path
) -> None:
    root = make_project(tmp_path / "proj")
    first = run(root, "-j", "2")
    assert first.returncode == 0, first.stderr
    assert NOTE in first.stderr and "ONESHADER_SERVER=0" in first.stderr
    (sock,) = sockets(runtime)
    pid = server_pid(sock)
    assert pid is not None
    second = run(root, "--force", "-o", "again")
    assert second.returncode == 0 and NOTE not in second.stderr
    assert summary_counts(second.stdout) == (5, 0, 0) and server_pid(sock) == pid
    alone = run(root, "--force", "-o", "alone", "--no-server")
    assert alone.returncode == 0 and NOTE not in alone.stderr
    assert outputs(root / "again") == outputs(root / "out") == outputs(root / "alone")
    quiet = run(root, "--force", "-q", "-o", "quiet", ONESHADER_SERVER="30")
    assert quiet.returncode == 0 and quiet.stderr == ""  # -q: no note, and none was started:
    assert sockets(runtime) == [sock]  # the idle time is not part of a server's name


def test_no_server_when_asked_or_in_ci(runtime: Path, tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", kernels=1)
    for args, env in (
        (("--no-server",), {}),
        ((), {"ONESHADER_SERVER": "0"}),
        ((), {"ONESHADER_SERVER": "", "CI": "1"}),
    ):
        result = run(root, "--force", *args, **env)
        assert result.returncode == 0 and NOTE not in result.stderr, (args, env)
    assert sockets(runtime) == []
    on_in_ci = run(root, "--force", ONESHADER_SERVER="1", CI="1")
    assert on_in_ci.returncode == 0 and NOTE in on_in_ci.stderr


def test_a_bad_server_setting_is_a_usage_error(runtime: Path, tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", kernels=1)
    result = run(root, ONESHADER_SERVER="soon")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("ONESHADER_SERVER: error OS2002: expected 0 (no compile")


def test_a_killed_build_leaves_the_server_and_no_worker(runtime: Path, tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", kernels=24)
    assert run(root, "--no-server", "-o", "warm").returncode == 0  # bytecode, page cache
    proc = subprocess.Popen(
        [sys.executable, "-m", "oneshader.cli", "build", "-q", "-j", "2"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list((root / "out").glob("*.reflection")):
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert_no_process_left(root)  # the workers saw their channels close
    (sock,) = sockets(runtime)
    pid = server_pid(sock)
    assert pid is not None and alive(pid)
    again = run(root, "-q")
    assert again.returncode == 0 and server_pid(sock) == pid
