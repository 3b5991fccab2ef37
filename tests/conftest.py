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

from module_validation import EmittedModules
from process_helpers import server_pid, sockets

CORPUS = Path(__file__).parent / "corpus"

os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="oneshader-xdg-"))
os.environ.setdefault("MESA_SHADER_CACHE_DIR", tempfile.mkdtemp(prefix="oneshader-mesa-"))
# Builds under test use a zygote of their own: a compile server would outlive the run. The
# server's own tests (tests/compiler/test_server.py, tests/buildtask/test_build_server.py) turn it
# on in runtime folders of their own and end what they started.
os.environ["ONESHADER_SERVER"] = "0"


EMITTED = EmittedModules()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "invalid_modules(reason): the test emits or plants invalid modules on purpose (the "
        "check that every emitted module is valid leaves it alone)",
    )


@pytest.fixture(scope="session", autouse=True)
def _gather_emitted_modules() -> Iterator[None]:
    """Every module a compile in this process or on a compiler worker emits is gathered for
    :func:`_every_emitted_module_is_valid`."""
    from oneshader.compiler import driver
    from oneshader.compiler.process import worker

    compile_here, receive_there = driver._compile, worker.CompilerWorker.receive

    def here(path: str, options: Any) -> Any:
        result = compile_here(path, options)
        EMITTED.add_result(result)
        return result

    def there(self: worker.CompilerWorker) -> Any:
        result = receive_there(self)
        EMITTED.add_result(result)
        return result

    driver._compile = here  # type: ignore[assignment]
    worker.CompilerWorker.receive = there  # type: ignore[method-assign]
    yield
    driver._compile = compile_here  # type: ignore[assignment]
    worker.CompilerWorker.receive = receive_there  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _every_emitted_module_is_valid(request: pytest.FixtureRequest) -> Iterator[None]:
    """An invalid module is a bug even when the reflection agrees with it: after each test,
    spirv-val (vulkan1.2) and naga check what it compiled and what builds wrote into its
    ``tmp_path`` (and what session fixtures built before it)."""
    folder = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if folder is not None:
        EMITTED.add_folder(folder)
    problems = EMITTED.problems()
    if problems and request.node.get_closest_marker("invalid_modules") is None:
        pytest.fail("invalid modules:\n" + "\n".join(problems), pytrace=False)


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
