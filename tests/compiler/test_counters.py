"""Hidden counters on every target: append/consume buffers and RW structured buffers'
Increment/DecrementCounter become a companion ``X_counter`` (``RWStructuredBuffer<Atomic<uint>>``)
on WGSL and Metal, reflected as X's counter record there and checked against the code; the GPU
test runs them for real on this machine's adapter."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from verify_support import compile_exec, dispatch, element_stride, pack

from module_validation import device
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.verify.crosscheck import verify
from oneshader.reflection import ReflectionFormat
from oneshader.reflection.model import Resource, ShaderReflection, Slot, Target

_APPEND = (
    "AppendStructuredBuffer<uint> Out : register(u1);\n"
    "ConsumeStructuredBuffer<uint> In : register(u2);\n"
    '[shader("compute")][numthreads(8,1,1)] void M(uint3 id : SV_DispatchThreadID)\n'
    "{ Out.Append(In.Consume() + 1); }\n"
)


def _build(tmp_path: Path, text: str, targets: tuple[Target, ...]) -> Any:
    (tmp_path / "a.hlsl").write_text(text)
    options = CompileOptions(targets=targets, source_name="a.hlsl")
    result = compile_file(str(tmp_path / "a.hlsl"), options)
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


def _res(r: ShaderReflection, name: str) -> Resource:
    return next(x for x in r.resources if x.name == name)


def _counter(res: Resource, target: Target) -> tuple[int, int]:
    (slot,) = [s for s in res.counters if s.target is target]
    return slot.set, slot.binding


def test_append_and_consume_build_for_wgsl_and_metal_with_counter_records(tmp_path: Path) -> None:
    result = _build(tmp_path, _APPEND, (Target.SpirV, Target.Msl, Target.Wgsl))
    r = result.reflection
    out, inp = _res(r, "Out"), _res(r, "In")
    # SPIR-V (DXC's rule): the lowest free bindings of set 0 in declaration order; WGSL: the same.
    for target in (Target.SpirV, Target.Wgsl):
        assert (_counter(out, target), _counter(inp, target)) == ((0, 0), (0, 3)), target
    # Metal: buffer indices after the buffers (Out 0, In 1), in declaration order.
    assert (_counter(out, Target.Msl), _counter(inp, Target.Msl)) == ((0, 2), (0, 3))
    code = {o.target: o.data for o in result.outputs}
    wgsl = code[Target.Wgsl].decode()
    assert re.search(r"@binding\(0\) @group\(0\) var<storage, read_write> Out_counter :", wgsl)
    assert re.search(r"@binding\(3\) @group\(0\) var<storage, read_write> In_counter :", wgsl)
    assert "atomicAdd(&(Out_counter" in wgsl and "atomicSub(&(In_counter" in wgsl
    msl = code[Target.Msl].decode()
    assert re.search(r"\bOut_counter \[\[buffer\(2\)\]\]", msl)
    assert re.search(r"\bIn_counter \[\[buffer\(3\)\]\]", msl)
    assert "atomic_fetch_sub_explicit" in msl
    assert r.entry_points[0].uses == ("Out", "In")  # companions are the resources' counters
    # The reflection file carries every target's counter record, as host code reads it.
    text = ReflectionFormat.write(r)
    assert text.count(b"counter target=") == 6
    assert ReflectionFormat.read(text) == r


def test_append_declared_in_an_include_builds_for_wgsl(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "queue.hlsli").write_text(
        "#pragma once\nAppendStructuredBuffer<uint> Queue;\n"
        "void Push(uint v) { Queue.Append(v); }\n"
    )
    text = (
        '#include "inc/queue.hlsli"\n'
        '[shader("compute")][numthreads(1,1,1)]\n'
        "void M(uint3 id : SV_DispatchThreadID) { Push(id.x); }\n"
    )
    result = _build(tmp_path, text, (Target.Wgsl,))
    assert _counter(_res(result.reflection, "Queue"), Target.Wgsl) == (0, 1)
    assert "Queue_counter" in result.outputs[0].data.decode()


@pytest.mark.parametrize("target", [Target.Wgsl, Target.Msl], ids=lambda t: t.value)
def test_crosscheck_holds_the_counter_slot(tmp_path: Path, target: Target) -> None:
    result = _build(tmp_path, _APPEND, (target,))
    r = result.reflection
    assert verify(r, result.outputs) == []
    out = _res(r, "Out")
    moved = replace(out, counters=(Slot(target, 0, 7),))
    wrong = replace(r, resources=tuple(moved if x is out else x for x in r.resources))
    found = verify(wrong, result.outputs)
    assert found and all("'Out' counter" in m for m in found), found
    none = replace(out, counters=())
    lacking = replace(r, resources=tuple(none if x is out else x for x in r.resources))
    found = verify(lacking, result.outputs)
    assert any("'Out_counter'" in m and "reflection lacks" in m for m in found), found


def test_a_users_own_x_counter_buffer_stays_a_resource(tmp_path: Path) -> None:
    text = (
        "RWStructuredBuffer<uint> Hits_counter;\nRWStructuredBuffer<uint> Hits;\n"
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 id : SV_DispatchThreadID)\n'
        "{ Hits[0] = Hits_counter[0]; }\n"
    )
    result = _build(tmp_path, text, (Target.Wgsl, Target.Msl))
    assert [x.name for x in result.reflection.resources] == ["Hits_counter", "Hits"]
    assert all(x.counters == () for x in result.reflection.resources)


@pytest.mark.parametrize("targets", [(Target.Wgsl,), (Target.Msl,), (Target.SpirV, Target.Wgsl)])
def test_a_buffer_whose_counter_alone_is_used_is_used(
    tmp_path: Path, targets: tuple[Target, ...]
) -> None:
    """``X.IncrementCounter()`` without a read of X: the host binds X with its counter, so the
    entry point uses X on every target (WGSL's ``X_counter`` was not read as X: OS9000, the
    reflection said [] and the WGSL X; Metal said [] where SPIR-V said X)."""
    text = (
        "RWStructuredBuffer<uint> Hits;\nRWStructuredBuffer<uint> Idle;\n"
        '[shader("compute")][numthreads(1,1,1)] void M() { Hits.IncrementCounter(); }\n'
    )
    result = _build(tmp_path, text, targets)
    (entry,) = result.reflection.entry_points
    assert entry.uses == ("Hits",)


_N = 203  # not a multiple of 64: the Count guard matters
_POOL = 40
_TAKE = 25


@pytest.mark.parametrize("target", [Target.SpirV, Target.Wgsl], ids=lambda t: t.value)
def test_append_consume_and_increment_run_on_the_gpu(target: Target) -> None:
    """Bound by nothing but the reflection: each counter at its counter record's slot."""
    import wgpu

    result = compile_exec("append_compute.hlsl")
    r: ShaderReflection = result.reflection
    (entry,) = r.entry_points
    params = _res(r, "Params").layout
    assert params is not None
    for name in ("Evens", "Odds", "Pool", "Taken"):
        lay = _res(r, name).layout
        assert lay is not None and element_stride(lay) == 4, name
    cbuf = bytearray(params.size)
    pack(params, {"Count": _N, "Take": _TAKE}, cbuf)
    pool = np.arange(1000, 1000 + _POOL, dtype=np.uint32)

    dev = device()
    usage = wgpu.BufferUsage
    rw = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST

    def buf(data: bytes, use: Any = rw) -> Any:
        return dev.create_buffer_with_data(data=data, usage=use)

    def u32(*values: int) -> bytes:
        return np.array(values, dtype=np.uint32).tobytes()

    buffers = {"Params": buf(bytes(cbuf), usage.UNIFORM)}
    buffers.update(
        {n: buf(b"\xab" * (4 * _N)) for n in ("Evens", "Odds", "Taken")}, Pool=buf(pool.tobytes())
    )
    counters = {"Evens": buf(u32(0)), "Odds": buf(u32(0)), "Pool": buf(u32(_POOL))}
    groups: dict[int, list[dict[str, Any]]] = {}

    def bind(slot: Slot, b: Any) -> None:
        entry_ = {"binding": slot.binding, "resource": {"buffer": b, "offset": 0, "size": b.size}}
        groups.setdefault(slot.set, []).append(entry_)

    for res in r.resources:
        bind(next(s for s in res.slots if s.target is target), buffers[res.name])
        for s in res.counters:
            if s.target is target:
                bind(s, counters[res.name])
    assert {x.name for x in r.resources if x.counters} == set(counters)

    code = next(o for o in result.outputs if o.target is target).data
    module = dev.create_shader_module(code=code if target is Target.SpirV else code.decode("utf-8"))
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": entry.name}
    )
    dispatch(pipeline, groups, -(-_N // 64))

    def read(b: Any) -> Any:
        return np.frombuffer(bytes(dev.queue.read_buffer(b)), dtype=np.uint32)

    ids = np.arange(_N, dtype=np.uint32)
    evens, odds = ids[ids % 2 == 0] * 3, ids[ids % 2 == 1]
    assert read(counters["Evens"])[0] == len(evens)
    assert read(counters["Odds"])[0] == len(odds)
    assert read(counters["Pool"])[0] == _POOL - _TAKE
    got = read(buffers["Evens"])
    np.testing.assert_array_equal(np.sort(got[: len(evens)]), evens)
    assert (got[len(evens) :] == 0xABABABAB).all()
    np.testing.assert_array_equal(np.sort(read(buffers["Odds"])[: len(odds)]), odds)
    # Consume takes the items above the new count: the top _TAKE of the pool, each once.
    taken = read(buffers["Taken"])
    np.testing.assert_array_equal(np.sort(taken[:_TAKE]), pool[_POOL - _TAKE :])
    assert (taken[_TAKE:] == 0xABABABAB).all()


def test_an_append_buffer_passed_as_a_parameter_is_positioned_on_wgsl_and_metal(
    tmp_path: Path,
) -> None:
    text = (
        "AppendStructuredBuffer<uint> Q;\n"
        "void Push(AppendStructuredBuffer<uint> q, uint v) { q.Append(v); }\n"
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 id : SV_DispatchThreadID)\n'
        "{ Push(Q, id.x); }\n"
    )
    (tmp_path / "a.hlsl").write_text(text)
    options = CompileOptions(source_name="a.hlsl")
    result = compile_file(str(tmp_path / "a.hlsl"), options)
    errors = [(d.file, d.line, d.column, d.code, d.message) for d in result.diagnostics]
    assert [e[:4] for e in errors] == [("a.hlsl", 2, 11, "OS1002")] * 2
    assert [e[4].split(":")[0] for e in errors] == ["Metal", "WGSL"]
    assert all("use the global buffer" in e[4] for e in errors)
    spirv = compile_file(str(tmp_path / "a.hlsl"), replace(options, targets=(Target.SpirV,)))
    assert spirv.ok, [d.format() for d in spirv.diagnostics]


def test_the_crosscheck_leaves_the_shared_module_reads_as_read(tmp_path: Path) -> None:
    # The cross-check shares the compiler's reads of the same code (one read per content) and
    # folds the companions into their owners on a copy: checking twice finds the same, and the
    # shared module still declares the companions as the code does.
    from oneshader.compiler.emitted.msl import read_msl_shared
    from oneshader.compiler.emitted.wgsl import read_wgsl_shared

    result = _build(tmp_path, _APPEND, (Target.SpirV, Target.Msl, Target.Wgsl))
    code = {o.target: o.data for o in result.outputs}
    assert verify(result.reflection, result.outputs) == []
    assert verify(result.reflection, result.outputs) == []
    for module in (read_wgsl_shared(code[Target.Wgsl]), read_msl_shared(code[Target.Msl])):
        assert {"Out_counter", "In_counter"} <= module.resources.keys(), module.target
        assert all(em.role != "counter" for em in module.resources["Out"]), module.target
