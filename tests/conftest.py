"""Shared test setup: the shader corpus and a quiet, private Mesa for GPU-execution tests."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).parent / "corpus"

os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="oneshader-xdg-"))
os.environ.setdefault("MESA_SHADER_CACHE_DIR", tempfile.mkdtemp(prefix="oneshader-mesa-"))


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
