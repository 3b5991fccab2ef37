"""Compiler bugs the trial found (tests/trial/FINDINGS.md), once strict expected failures, now
held as the tests of their fixes: #1 (Atomic<uint> was OS9000 on WGSL and Metal) and #2 (HLSL's
InterlockedAdd was an unpositioned E36107 on WGSL)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import numpy as np
from trial_helpers import SHADERS, dispatch, oneshader

from oneshader.reflection.model import ScalarKind, TypeKind


def test_atomic_structured_buffer_builds_for_every_target_and_counts(
    tmp_path: Path, gpu_device: Any
) -> None:
    """FINDINGS.md #1: built for all three targets, the bindings see a 4-byte uint, and the
    generated module alone runs it through WGSL on the software adapter."""
    import wgpu

    out, gen = tmp_path / "out", tmp_path / "gen" / "atomicgen"
    result = oneshader(
        tmp_path, "build", str(SHADERS / "known" / "atomic_counter.hlsl"), "-q",
        "-o", str(out), "--bindings", str(gen),
    )  # fmt: skip
    assert "internal error" not in result.stderr
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.glob("atomic_counter.*")) == [
        "atomic_counter.metal", "atomic_counter.reflection", "atomic_counter.spv",
        "atomic_counter.wgsl",
    ]  # fmt: skip
    assert "array<atomic<u32>>" in (out / "atomic_counter.wgsl").read_text()
    sys.path.insert(0, str(gen.parent))
    try:
        mod = importlib.import_module("atomicgen.atomic_counter")
    finally:
        sys.path.remove(str(gen.parent))
        for name in [m for m in sys.modules if m.split(".")[0] == "atomicgen"]:
            del sys.modules[name]
    counters = mod.resources.Counters
    layout = counters.resource.layout
    assert (layout.kind, layout.scalar, layout.size, layout.align) == (
        TypeKind.Scalar, ScalarKind.UInt, 4, 4,
    )  # fmt: skip

    S, cs = mod.SHADER, mod.entries.CSMain
    groups = 3
    buf = gpu_device.create_buffer_with_data(
        data=bytes(16),
        usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC,
    )
    layouts = S.create_bind_group_layouts(gpu_device)
    pipeline = gpu_device.create_compute_pipeline(
        layout=S.create_pipeline_layout(gpu_device, layouts),
        compute=cs.stage_descriptor(S.create_shader_module(gpu_device, out)),
    )
    group = counters.wgsl.set
    bind = S.create_bind_group(gpu_device, layouts[group], {counters: buf})
    dispatch(gpu_device, pipeline, group, bind, (groups, 1, 1))
    got = np.frombuffer(gpu_device.queue.read_buffer(buf), np.uint32)
    per_counter = groups * cs.workgroup[0] // 4  # Counters[id.x % 4].add(1u)
    np.testing.assert_array_equal(got, [per_counter] * 4)


def test_interlocked_add_on_wgsl_names_the_call_and_the_fix(tmp_path: Path) -> None:
    """FINDINGS.md #2: each Interlocked* call of the histogram WGSL cannot express is an error
    at the call (not Slang's E36107 at the entry point) saying what to declare instead; the
    byte-address buffer's, every use of which is one word, builds (array<atomic<u32>>)."""
    (tmp_path / "histogram.hlsl").write_text((SHADERS / "histogram.hlsl").read_text())
    result = oneshader(
        tmp_path, "build", "histogram.hlsl", "-q", "--targets", "wgsl", "-o", str(tmp_path / "o")
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "E36107" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if ": error " in line]
    assert errors == [
        "histogram.hlsl:27:9: error OS1015: WGSL: InterlockedAdd on groupshared 'LocalBins' "
        "cannot be expressed (WGSL atomics are atomic<u32>/atomic<i32> variables); declare it "
        "groupshared Atomic<uint> and use .add(), which returns the original value, or build "
        "without the wgsl target",
    ]
