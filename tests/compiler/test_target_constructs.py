"""Constructs a target can express that oneshader refused or broke (issue 21, part B): each
built for every target it can be, its modules validated (the suite's hook), its reflection
agreeing with the code, and its WGSL run on the software adapter where it is compute."""

from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path

from target_support import build, run_wgsl, wgsl_of

from oneshader.compiler.verify.crosscheck import verify

FOLDED = """\
cbuffer P { float4 k; }
RWStructuredBuffer<float4> Out;
[shader("compute")]
[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) { Out[id.x] = k * 0; }
"""


def test_a_read_one_target_folds_away_is_still_a_use(tmp_path: Path) -> None:
    """Slang folds ``k * 0`` in the SPIR-V but reads ``k`` in the WGSL: the entry point uses P
    (what any target's code touches; the host binds it for each), and the WGSL runs with
    exactly the resources the reflection lists."""
    result = build(tmp_path, FOLDED)
    r = result.reflection
    assert r is not None
    assert sorted(r.entry_points[0].uses) == ["Out", "P"]
    assert "P" in wgsl_of(result)
    data = run_wgsl(result, {"P": struct.pack("<4f", 1, 2, 3, 4), "Out": bytes(16)}, "Out")
    assert struct.unpack("<4f", data) == (0.0, 0.0, 0.0, 0.0)
    # The union is exact: a reflection that leaves P out disagrees with the WGSL.
    dropped = replace(r, entry_points=(replace(r.entry_points[0], uses=("Out",)),))
    assert any("uses" in m and "'P'" in m for m in verify(dropped, result.outputs))
