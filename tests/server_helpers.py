"""Finding the compile servers that tests start in runtime folders of their own."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path


def server_pid(sock: Path) -> int | None:
    """The pid of the server listening on ``sock`` (from the connection's peer credentials)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as probe:
        try:
            probe.connect(os.fspath(sock))
        except OSError:
            return None
        creds = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[:4], sys.byteorder)


def sockets(runtime: Path) -> list[Path]:
    return sorted((runtime / "oneshader").glob("*.sock"))


def alive(pid: int) -> bool:
    """Running, and not a zombie (a server is its own session's, reaped by init)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(condition: object, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return bool(condition())  # type: ignore[operator]
