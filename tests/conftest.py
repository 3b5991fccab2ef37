"""Shared test setup: the shader corpus and a quiet, private Mesa for GPU-execution tests."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from process_helpers import server_pid, sockets

CORPUS = Path(__file__).parent / "corpus"

os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="oneshader-xdg-"))
os.environ.setdefault("MESA_SHADER_CACHE_DIR", tempfile.mkdtemp(prefix="oneshader-mesa-"))
# Builds under test use a zygote of their own: a compile server would outlive the run. The
# server's own tests (tests/compiler/test_server.py, tests/build/test_build_server.py) turn it
# on in runtime folders of their own and end what they started.
os.environ["ONESHADER_SERVER"] = "0"


@pytest.fixture
def corpus() -> Path:
    return CORPUS


@pytest.fixture(scope="session")
def gpu_device() -> Any:
    """The software adapter's wgpu device, one per test run; a missing adapter fails the test
    that asks for it, it never skips it."""
    import wgpu

    adapter = wgpu.gpu.request_adapter_sync(power_preference="low-power")
    if adapter is None:
        pytest.fail("no wgpu adapter found (expected the llvmpipe software adapter)")
    return adapter.request_device_sync()


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private runtime folder with the compile server on; servers started in it end with the
    test. Made short, as runtime folders are: a socket's path holds at most 108 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="os-run-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    monkeypatch.setenv("ONESHADER_SERVER", "60")
    monkeypatch.delenv("CI", raising=False)
    yield folder
    for sock in sockets(folder):
        pid = server_pid(sock)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)
