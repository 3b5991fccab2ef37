"""Constructs a target can express that oneshader refused or broke (issue 21, part B): each
built for every target it can be, its modules validated (the suite's hook), its reflection
agreeing with the code, and its WGSL run on the software adapter where it is compute."""

from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path

import pytest
from target_support import ALL, build, run_wgsl, wgsl_of
from verify_support import pack

from oneshader.compiler.verify.crosscheck import read_output, verify
from oneshader.reflection.model import Target

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


NESTED = """\
struct Inner { float3 P; float Q; };
struct Inner2 { float A; float2 B; };
cbuffer C { float Scale; float3 ScalePad; Inner In1; float2 Off; Inner2 In2; float Tail;
            Inner Arr[2]; float3 End3; }
RWStructuredBuffer<float> Out;
[shader("compute")]
[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    Out[0] = Scale; Out[1] = ScalePad.z; Out[2] = In1.Q; Out[3] = Off.y; Out[4] = In2.B.y;
    Out[5] = Tail; Out[6] = Arr[1].P.x; Out[7] = Arr[1].Q; Out[8] = End3.z;
}
"""
STD140 = [
    ("Scale", 0),
    ("ScalePad", 16),
    ("In1", 32),
    ("Off", 48),
    ("In2", 64),
    ("Tail", 80),
    ("Arr", 96),
    ("End3", 128),
]


@pytest.mark.parametrize("targets", [ALL, (Target.Msl, Target.Wgsl), (Target.SpirV, Target.Msl)])
def test_metal_pads_a_struct_array_after_a_packed_struct(
    tmp_path: Path, targets: tuple[Target, ...]
) -> None:
    """Metal's ``Inner`` holds a ``packed_float3`` (so that Q sits at 12 as in std140), which
    makes it 4-aligned: ``Arr`` lands at 84 where std140 puts it at 96. Padding (found from
    SPIR-V's facts, else WGSL's) places it, as it places ``In2`` (Metal aligns it to 8); was
    OS9000 (the layout model kept the array 16-aligned) and, without SPIR-V, OS2001."""
    result = build(tmp_path, NESTED, targets)
    r = result.reflection
    assert r is not None
    c = next(x for x in r.resources if x.name == "C")
    assert c.layout is not None
    assert [(m.name, m.offset) for m in c.layout.members] == STD140
    msl = next(o for o in result.outputs if o.target is Target.Msl)
    metal = read_output(msl).resources["C"][0].layout
    assert metal is not None
    assert [(m.name, m.offset) for m in metal.members if m.name in dict(STD140)] == STD140
    if Target.Wgsl not in targets:
        return
    data = bytearray(c.layout.size)
    pack(
        c.layout,
        {
            "Scale": 1,
            "ScalePad": (0, 0, 2),
            "In1": {"P": (0, 0, 0), "Q": 3},
            "Off": (0, 4),
            "In2": {"A": 0, "B": (0, 5)},
            "Tail": 6,
            "Arr": [{"P": (0, 0, 0), "Q": 0}, {"P": (7, 0, 0), "Q": 8}],
            "End3": (0, 0, 9),
        },
        data,
    )
    out = run_wgsl(result, {"C": bytes(data), "Out": bytes(36)}, "Out")
    assert struct.unpack("<9f", out) == tuple(float(i) for i in range(1, 10))
