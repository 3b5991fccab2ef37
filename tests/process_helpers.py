"""The processes tests start (compilers, zygotes, compile servers): finding them, and waiting
for them to end."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from oneshader.compiler.process.server import CompileServer


def server_pid(sock: Path) -> int | None:
    """The pid of the server listening on ``sock``, None if none is."""
    return CompileServer(sock).pid()


def sockets(runtime: Path) -> list[Path]:
    return sorted((runtime / "oneshader").glob("*.sock"))


def alive(pid: int) -> bool:
    """Running, and not a zombie (a server is its own session's, reaped by init)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def gone(pid: int) -> bool:
    """No such process, not even a zombie waiting to be reaped."""
    return not Path(f"/proc/{pid}").exists()


def parent_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))


def processes_in(folder: Path) -> list[int]:
    """Processes whose working folder is ``folder``: a build's compiler processes inherit it."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def wait_until(condition: Callable[[], bool], seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def assert_no_process_left(folder: Path) -> None:
    """The compiler's processes end with their build, however it ended (they may take a
    moment to notice)."""
    wait_until(lambda: not processes_in(folder))
    assert processes_in(folder) == []
