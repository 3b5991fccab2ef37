"""The OUT lock: a second holder waits, says so once, and a SIGKILLed holder frees it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from oneshader.buildtask.lock import LOCK_NAME, OutLock

HOLDER = """
import sys, time
from pathlib import Path
from oneshader.buildtask.lock import OutLock
with OutLock(Path(sys.argv[1]), print):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def start_holder(out: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_second_build_waits_with_a_message(tmp_path: Path) -> None:
    holder = start_holder(tmp_path, 1.0)
    messages: list[str] = []
    t0 = time.monotonic()
    with OutLock(tmp_path, messages.append, poll_seconds=0.02):
        waited = time.monotonic() - t0
    holder.wait()
    assert len(messages) == 1
    assert "waiting for another build" in messages[0] and str(holder.pid) in messages[0]
    assert waited > 0.6  # the holder kept it for 1 s after saying so


def test_uncontended_lock_says_nothing(tmp_path: Path) -> None:
    messages: list[str] = []
    with OutLock(tmp_path, messages.append):
        assert (tmp_path / LOCK_NAME).read_text().strip() == str(os.getpid())
    with OutLock(tmp_path, messages.append):
        pass
    assert messages == []


def test_sigkilled_holder_frees_the_lock(tmp_path: Path) -> None:
    holder = start_holder(tmp_path, 60.0)
    messages: list[str] = []
    got = threading.Event()

    def take() -> None:
        with OutLock(tmp_path, messages.append, poll_seconds=0.02):
            got.set()

    t = threading.Thread(target=take)
    t.start()
    time.sleep(0.3)
    assert not got.is_set()
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    t.join(10)
    assert got.is_set() and len(messages) == 1
