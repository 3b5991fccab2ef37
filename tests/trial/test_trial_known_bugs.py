"""Compiler bugs the trial found (tests/trial/FINDINGS.md), held as strict expected failures: each
turns into an unexpected pass, which fails the suite, once the compiler is fixed."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_helpers import SHADERS, oneshader


@pytest.mark.xfail(
    strict=True,
    reason="FINDINGS.md #1: Atomic<uint> in a RWStructuredBuffer is OS9000 (internal error: "
    "the verifier cannot read atomic<u32> / atomic<uint>) on WGSL and Metal",
)
def test_atomic_structured_buffer_builds_for_every_target(tmp_path: Path) -> None:
    result = oneshader(
        tmp_path, "build", str(SHADERS / "known" / "atomic_counter.hlsl"), "-q",
        "-o", str(tmp_path / "out"),
    )  # fmt: skip
    assert "internal error" not in result.stderr
    assert result.returncode == 0, result.stderr
