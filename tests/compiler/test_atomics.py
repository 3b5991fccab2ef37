"""Atomics on every target: Slang's Atomic<T> builds and is reflected as its 4-byte integer; HLSL's
Interlocked* builds for SPIR-V and Metal and, for WGSL (where Slang cannot express any form of it),
is an error at each call saying what to declare instead; other checks report in the same run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from oneshader.compiler import CompileOptions, CompileResult, compile_file
from oneshader.reflection.model import ScalarKind, Target, TypeKind

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)
_WGSL_SAYS = "cannot be expressed (WGSL atomics are atomic<u32>/atomic<i32> variables); "
_KERNEL = """
[shader("compute")]
[numthreads(64, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID, uint gi : SV_GroupIndex)
{{
{body}
}}
"""


def _compile(
    tmp_path: Path, text: str, targets: tuple[Target, ...] = ALL, *, dxc: bool = False
) -> CompileResult:
    """``dxc``: DXC's placement exactly, where b0 and u0 clash (OS3001)."""
    (tmp_path / "a.hlsl").write_text(text)
    options = CompileOptions(targets=targets, source_name="shaders/a.hlsl", dxc_placement=dxc)
    return compile_file(str(tmp_path / "a.hlsl"), options)


def _errors(result: CompileResult) -> list[tuple[int, int, str, str]]:
    return [(d.line, d.column, d.code, d.message) for d in result.diagnostics if d.is_error]


def test_atomic_members_and_elements_are_reflected_as_their_integer(tmp_path: Path) -> None:
    text = (
        "struct Bin { Atomic<uint> Count; float Weight; Atomic<int> Delta; };\n"
        "RWStructuredBuffer<Atomic<uint>> Counters;\n"
        "RWStructuredBuffer<Bin> Bins;\n"
    ) + _KERNEL.format(body="    Bins[Counters[0].add(1u) % 3].Delta.add(-1);")
    result = _compile(tmp_path, text)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.reflection is not None
    layouts = {r.name: r.layout for r in result.reflection.resources}
    counters, bins = layouts["Counters"], layouts["Bins"]
    assert counters is not None and bins is not None
    assert (counters.kind, counters.scalar, counters.size) == (TypeKind.Scalar, ScalarKind.UInt, 4)
    assert [(m.name, m.offset, m.type.scalar) for m in bins.members] == [
        ("Count", 0, ScalarKind.UInt),
        ("Weight", 4, ScalarKind.Float),
        ("Delta", 8, ScalarKind.Int),
    ]
    assert bins.size == 12
    # The generated bindings see plain 4-byte integers: the host writes and reads them as such.
    from oneshader.bindings import from_reflection

    mod = from_reflection(result.reflection, "a")
    arr = mod.Bin.array(2)
    arr.Count = [7, 0xFFFFFFFF]
    arr.Delta = [-3, 5]
    raw = arr.to_bytes()
    assert arr.nbytes == len(raw) == 24
    assert np.frombuffer(raw, np.uint32)[[0, 3]].tolist() == [7, 0xFFFFFFFF]
    assert np.frombuffer(raw, np.int32)[[2, 5]].tolist() == [-3, 5]


# (declarations, body, line, column, what the message must say)
_INTERLOCKED = [
    pytest.param(
        "groupshared uint G[4];",
        "    InterlockedAdd(G[gi % 4], 1);",
        7, 5, "InterlockedAdd on groupshared 'G' " + _WGSL_SAYS
        + "declare it groupshared Atomic<uint> and use .add()",
        id="groupshared",
    ),
    pytest.param(
        "groupshared int G[4]; RWStructuredBuffer<int> O;",
        "    int old; InterlockedMin(G[gi % 4], 1, old); O[gi] = old;",
        7, 14, "InterlockedMin on groupshared 'G' " + _WGSL_SAYS
        + "declare it groupshared Atomic<int> and use .min()",
        id="groupshared-int-original-value",
    ),
    pytest.param(
        "RWStructuredBuffer<uint> O;",
        "    uint old; InterlockedAdd(O[id.x % 4], 1, old); O[4 + id.x] = old;",
        7, 15, "InterlockedAdd on a RWStructuredBuffer<uint> ('O') " + _WGSL_SAYS
        + "declare RWStructuredBuffer<Atomic<uint>> and use .add(), which returns the original",
        id="structured-original-value",
    ),
    pytest.param(
        "RWStructuredBuffer<int> O;",
        "    InterlockedMax(O[0], int(id.x));",
        7, 5, "InterlockedMax on a RWStructuredBuffer<int> ('O') " + _WGSL_SAYS
        + "declare RWStructuredBuffer<Atomic<int>> and use .max()",
        id="structured-int-max",
    ),
    pytest.param(
        "RWStructuredBuffer<uint> O;",
        "    uint old;\n    InterlockedCompareExchange(O[0], 0, id.x, old);",
        8, 5, "InterlockedCompareExchange on a RWStructuredBuffer<uint> ('O') " + _WGSL_SAYS
        + "declare RWStructuredBuffer<Atomic<uint>> and use .compareExchange()",
        id="structured-compare-exchange",
    ),
    pytest.param(
        "RWByteAddressBuffer B;",
        "    B.InterlockedOr(0, id.x); B.Store2(8, uint2(1, 2));",
        7, 7, "InterlockedOr on a RWByteAddressBuffer ('B') that is not only read and written "
        "one word at a time",
        id="byte-address",
    ),
    pytest.param(
        "struct S { uint a; uint b; }; RWStructuredBuffer<S> O;",
        "    InterlockedAdd(O[0].b, 1); // InterlockedAdd(in a comment is no call",
        7, 5, "InterlockedAdd on 'O' " + _WGSL_SAYS
        + "declare the variable or struct member Atomic<uint> (or Atomic<int>) and use .add()",
        id="struct-member",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("decls", "body", "line", "col", "says"), _INTERLOCKED)
def test_interlocked_is_positioned_on_wgsl_and_builds_elsewhere(
    tmp_path: Path, decls: str, body: str, line: int, col: int, says: str
) -> None:
    text = decls + "\n" + _KERNEL.format(body=body)
    result = _compile(tmp_path, text, (Target.Wgsl,))
    ((got_line, got_col, code, message),) = _errors(result)
    assert (got_line, got_col, code) == (line, col, "OS1015"), message
    assert message.startswith("WGSL: " + says), message
    assert result.diagnostics[0].file == "shaders/a.hlsl"
    assert f"{line:>4} |" in result.diagnostics[0].excerpt
    other = _compile(tmp_path, text, (Target.SpirV, Target.Msl))
    assert other.ok, [d.format() for d in other.diagnostics]


def test_interlocked_no_entry_point_reaches_still_builds_for_wgsl(tmp_path: Path) -> None:
    text = "RWStructuredBuffer<uint> O;\nvoid Unused() { InterlockedAdd(O[0], 1); }\n" + (
        _KERNEL.format(body="    O[id.x] = 1;")
    )
    result = _compile(tmp_path, text, (Target.Wgsl,))
    assert result.ok, [d.format() for d in result.diagnostics]


def test_float_atomics_are_refused_on_wgsl_at_the_type(tmp_path: Path) -> None:
    text = "RWStructuredBuffer<Atomic<float>> F;\n" + _KERNEL.format(body="    F[0].add(1.0);")
    ((line, col, code, message),) = _errors(_compile(tmp_path, text, (Target.Wgsl,)))
    assert (line, col, code) == (1, 20, "OS1003")
    assert message.startswith("WGSL: atomics are integers only (Atomic<float>); use Atomic<uint>")
    metal = _compile(tmp_path, text, (Target.Msl,))  # Metal 3 has atomic<float>
    assert metal.ok, [d.format() for d in metal.diagnostics]
    assert metal.reflection is not None
    (f,) = metal.reflection.resources
    assert f.layout is not None and (f.layout.scalar, f.layout.size) == (ScalarKind.Float, 4)


def test_a_target_error_and_another_targets_slot_clash_come_in_one_run(tmp_path: Path) -> None:
    text = (
        "cbuffer P : register(b0) { uint N; uint3 Pad; };\nRWByteAddressBuffer H : register(u0);\n"
    ) + _KERNEL.format(body="    if (id.x < N) H.InterlockedMax(0, 1);")
    errors = _errors(_compile(tmp_path, text, dxc=True))
    assert [(line, col, code) for line, col, code, _ in errors] == [
        (8, 21, "OS1015"),
        (2, 21, "OS3001"),
    ]
    assert errors[1][3].startswith("SPIR-V: 'H' and 'P' (line 1) are both bound to set 0, binding")
    # Without the clash the WGSL error is alone; without WGSL the clash is alone.
    assert [e[2] for e in _errors(_compile(tmp_path, text, (Target.SpirV,), dxc=True))] == [
        "OS3001"
    ]
    fixed = text.replace("register(u0)", "register(u1)")
    assert [e[2] for e in _errors(_compile(tmp_path, fixed, dxc=True))] == ["OS1015"]


def test_a_target_the_precheck_refuses_does_not_hide_the_others_errors(tmp_path: Path) -> None:
    text = (
        "cbuffer P : register(b0) { uint N; uint3 Pad; };\n"
        "RWStructuredBuffer<Atomic<float>> F : register(u0);\n"
    ) + _KERNEL.format(body="    if (id.x < N) F[0].add(1.0);")
    errors = _errors(_compile(tmp_path, text, (Target.SpirV, Target.Wgsl), dxc=True))
    assert [(line, col, code) for line, col, code, _ in errors] == [
        (2, 20, "OS1003"),
        (2, 35, "OS3001"),
    ]
    assert errors[0][3].startswith("WGSL: atomics are integers only")
    assert errors[1][3].startswith("SPIR-V: 'F' and 'P' (line 1) are both bound to set 0, binding")
