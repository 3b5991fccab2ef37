"""One wgpu device for the DXC tests: naga validation of WGSL and the execution test."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def gpu_device() -> Any:
    """The software adapter's device; a missing adapter fails the test, it never skips it."""
    import wgpu

    adapter = wgpu.gpu.request_adapter_sync(power_preference="low-power")
    if adapter is None:
        pytest.fail("no wgpu adapter found (expected the llvmpipe software adapter)")
    return adapter.request_device_sync()
