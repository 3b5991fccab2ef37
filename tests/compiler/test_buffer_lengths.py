"""A buffer's ``GetDimensions`` on every target: SPIR-V's OpArrayLength, WGSL's arrayLength (run
here on the software adapter), and on Metal, which cannot ask a buffer for its length, the
companion constant buffer ``$BufferLengths`` the host fills (docs/compiler.md "Buffer lengths on
Metal"), reflected on Metal only and checked against the emitted MSL. The queries no target
construct gives are positioned errors naming the construct."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from verify_support import dispatch

from module_validation import device
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.verify.crosscheck import verify
from oneshader.reflection import ReflectionFormat
from oneshader.reflection.model import (
    Resource,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    StructMember,
    Target,
)

_ALL = (Target.SpirV, Target.Msl, Target.Wgsl)

# Every buffer kind that has GetDimensions, an append buffer with its hidden counter, a buffer
# no GetDimensions asks (no member for it), and an entry point that measures nothing.
_SHADER = """\
struct Node { float4 Color; float Depth; uint Next; };
StructuredBuffer<Node> Nodes;
RWStructuredBuffer<uint> Out;
ByteAddressBuffer Raw;
RWByteAddressBuffer RawOut;
AppendStructuredBuffer<float2> Queue;
StructuredBuffer<uint> Unmeasured;
[shader("compute")][numthreads(1,1,1)]
void Measure(uint3 id : SV_DispatchThreadID)
{
    uint n, s, raw, rawOut, q, qs, o, os;
    Nodes.GetDimensions(n, s);
    Raw.GetDimensions(raw);
    RawOut . GetDimensions(rawOut);
    Queue.GetDimensions(q, qs);
    Out.GetDimensions(o, os);
    Out[0] = n; Out[1] = s; Out[2] = raw; Out[3] = rawOut; Out[4] = q; Out[5] = qs;
    Out[6] = o; Out[7] = os; Out[8] = Nodes[0].Next + Unmeasured[0];
    Queue.Append(float2(1, 2));
}
[shader("compute")][numthreads(1,1,1)]
void Other(uint3 id : SV_DispatchThreadID) { RawOut.Store(0, Unmeasured[1]); }
[shader("compute")][numthreads(1,1,1)]
void Third(uint3 id : SV_DispatchThreadID) { uint u = Unmeasured[2]; }
"""


def _build(tmp_path: Path, text: str, targets: tuple[Target, ...]) -> Any:
    (tmp_path / "a.hlsl").write_text(text)
    result = compile_file(str(tmp_path / "a.hlsl"), CompileOptions(targets=targets))
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


def _errors(tmp_path: Path, text: str, targets: tuple[Target, ...]) -> list[str]:
    (tmp_path / "a.hlsl").write_text(text)
    result = compile_file(
        str(tmp_path / "a.hlsl"), CompileOptions(targets=targets, source_name="a.hlsl")
    )
    assert not result.ok
    return [d.format() for d in result.diagnostics if d.is_error]


def _res(r: ShaderReflection, name: str) -> Resource:
    return next(x for x in r.resources if x.name == name)


@pytest.mark.parametrize("targets", [_ALL, (Target.Msl,)], ids=["all", "msl"])
def test_metal_reads_buffer_lengths_from_a_companion(tmp_path: Path, targets: Any) -> None:
    result = _build(tmp_path, _SHADER, targets)
    r = result.reflection
    lengths = _res(r, "$BufferLengths")
    # Metal only; after every other buffer (6 buffers, then Queue's counter at 6): index 7.
    assert lengths.slots == (Slot(Target.Msl, 0, 7),)
    assert Slot(Target.Msl, 0, 6) in _res(r, "Queue").counters
    assert lengths.rtype is ResourceTypeKind.ConstantBuffer and lengths.counters == ()
    assert lengths.layout is not None
    members = lengths.layout.members
    assert [m.name for m in members] == ["Nodes", "Out", "Raw", "RawOut", "Queue"]
    assert [m.offset for m in members] == [0, 4, 8, 12, 16]
    assert {m.type.scalar for m in members} == {ScalarKind.UInt}
    # Used by the entry points that use a buffer it measures (Metal's code cannot tell more).
    uses = {e.name: e.uses for e in r.entry_points}
    assert "$BufferLengths" in uses["Measure"] and "$BufferLengths" in uses["Other"]
    assert "$BufferLengths" not in uses["Third"]
    msl = next(o for o in result.outputs if o.target is Target.Msl).data.decode()
    assert re.search(r"\boneshader_lengths \[\[buffer\(7\)\]\]", msl)
    for name in ("Nodes", "Out", "Raw", "RawOut", "Queue"):
        assert re.search(rf"oneshader_lengths->{name}_\d+", msl), name
    # The stride is Metal's own size of the element, the stride its code indexes by.
    assert "sizeof(*" in msl
    assert ReflectionFormat.read(ReflectionFormat.write(r)) == r


def test_other_targets_have_no_companion(tmp_path: Path) -> None:
    result = _build(tmp_path, _SHADER, (Target.SpirV, Target.Wgsl))
    assert all(not x.name.startswith("$") for x in result.reflection.resources)
    for out in result.outputs:
        assert b"oneshader_lengths" not in out.data


def test_crosscheck_holds_the_companion(tmp_path: Path) -> None:
    result = _build(tmp_path, _SHADER, _ALL)
    r = result.reflection
    assert verify(r, result.outputs) == []
    lengths = _res(r, "$BufferLengths")
    assert lengths.layout is not None

    def with_lengths(changed: Resource) -> ShaderReflection:
        return replace(r, resources=tuple(changed if x is lengths else x for x in r.resources))

    moved = verify(with_lengths(replace(lengths, slots=(Slot(Target.Msl, 0, 2),))), result.outputs)
    assert any("'$BufferLengths' [[buffer(n)]] index" in m for m in moved), moved
    first, *rest = lengths.layout.members
    renamed = replace(lengths.layout, members=(StructMember("Unmeasured", 0, first.type), *rest))
    found = verify(with_lengths(replace(lengths, layout=renamed)), result.outputs)
    assert any("Unmeasured" in m for m in found), found
    elsewhere = replace(lengths, slots=(*lengths.slots, Slot(Target.Wgsl, 0, 9)))
    found = verify(with_lengths(elsewhere), result.outputs)
    assert any("Metal only" in m for m in found), found


def test_a_parameters_length_stays_a_positioned_metal_error(tmp_path: Path) -> None:
    text = (
        "StructuredBuffer<float4> T;\nRWStructuredBuffer<uint> O;\n"
        "uint f(StructuredBuffer<float4> b) { uint n, s; b.GetDimensions(n, s); return n; }\n"
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 id : SV_DispatchThreadID)'
        " { O[0] = f(T); }\n"
    )
    (err,) = _errors(tmp_path, text, (Target.Msl,))
    assert err.startswith("a.hlsl:3:51: error E36107: Metal: 'GetDimensions'"), err
    assert "call it on the global buffer" in err


def test_a_parameter_named_as_a_global_buffer_is_not_measured(tmp_path: Path) -> None:
    """``b.GetDimensions`` on a parameter ``b`` must not read the global ``b``'s length."""
    text = (
        "StructuredBuffer<float4> b;\nStructuredBuffer<float4> c;\nRWStructuredBuffer<uint> O;\n"
        "uint f(StructuredBuffer<float4> b) { uint n, s; b.GetDimensions(n, s); return n; }\n"
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 id : SV_DispatchThreadID)'
        " { uint n, s; b.GetDimensions(n, s); O[0] = f(c) + n; }\n"
    )
    errs = _errors(tmp_path, text, (Target.Msl,))
    assert errs and all("E36107: Metal: 'GetDimensions'" in e for e in errs), errs


@pytest.mark.parametrize(
    ("decl", "body", "targets", "construct"),
    [
        ("Buffer<float4> T;", "uint w; T.GetDimensions(w); O[0] = w;", (Target.Wgsl,), "Buffer"),
    ],
    ids=["typed-buffer-wgsl"],  # GetSamplePosition builds (test_texture_loads)
)
def test_what_no_target_construct_gives_is_a_positioned_error(
    tmp_path: Path, decl: str, body: str, targets: tuple[Target, ...], construct: str
) -> None:
    text = (
        f"RWStructuredBuffer<uint> O;\n{decl}\n"
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 id : SV_DispatchThreadID)'
        f" {{ {body} }}\n"
    )
    errs = _errors(tmp_path, text, targets)
    assert len(errs) == len(targets), errs
    for err, target in zip(errs, targets, strict=True):
        name = {Target.Msl: "Metal", Target.Wgsl: "WGSL"}[target]
        assert re.match(rf"a\.hlsl:3:\d+: error E36107: {name}: '{construct}", err), err
        assert "rewrite it without this construct" not in err  # a hint that says what to do


# WGSL has what the queries need: arrayLength for buffers, textureDimensions for textures.
_WGSL_QUERIES = """\
struct Pair { float4 A; uint B; };
StructuredBuffer<Pair> Pairs;
ByteAddressBuffer Raw;
RWTexture2D<float4> Image;
Texture2DArray<float4> Layers;
RWStructuredBuffer<uint> Out;
[shader("compute")][numthreads(1,1,1)]
void M(uint3 id : SV_DispatchThreadID)
{
    uint n, s, raw, w, h, lw, lh, le, mips;
    Pairs.GetDimensions(n, s);
    Raw.GetDimensions(raw);
    Image.GetDimensions(w, h);
    Layers.GetDimensions(0, lw, lh, le, mips);
    Out[0] = n; Out[1] = s; Out[2] = raw; Out[3] = w; Out[4] = h;
    Out[5] = lw; Out[6] = lh; Out[7] = le; Out[8] = mips; Out[9] = Pairs[0].B;
}
"""


def test_wgsl_getdimensions_runs_on_the_gpu(tmp_path: Path) -> None:
    """Bound by the reflection's WGSL slots; the lengths come from the bound resources."""
    import wgpu

    result = _build(tmp_path, _WGSL_QUERIES, (Target.Wgsl,))
    r = result.reflection
    wgsl = result.outputs[0].data.decode()
    assert "arrayLength" in wgsl and "textureDimensions" in wgsl
    dev = device()
    usage = wgpu.BufferUsage
    pairs = dev.create_buffer(size=32 * 5, usage=usage.STORAGE)
    raw = dev.create_buffer(size=44, usage=usage.STORAGE)
    out = dev.create_buffer(size=4 * 10, usage=usage.STORAGE | usage.COPY_SRC)
    image = dev.create_texture(
        size=(6, 3, 1),
        format=wgpu.TextureFormat.rgba32float,
        usage=wgpu.TextureUsage.STORAGE_BINDING,
    )
    layers = dev.create_texture(
        size=(8, 4, 3),
        mip_level_count=2,
        format=wgpu.TextureFormat.rgba8unorm,
        usage=wgpu.TextureUsage.TEXTURE_BINDING,
    )
    views = {
        "Pairs": {"buffer": pairs, "offset": 0, "size": pairs.size},
        "Raw": {"buffer": raw, "offset": 0, "size": raw.size},
        "Out": {"buffer": out, "offset": 0, "size": out.size},
        "Image": image.create_view(),
        "Layers": layers.create_view(dimension="2d-array"),
    }
    groups: dict[int, list[dict[str, Any]]] = {}
    for res in r.resources:
        (slot,) = [s for s in res.slots if s.target is Target.Wgsl]
        groups.setdefault(slot.set, []).append(
            {"binding": slot.binding, "resource": views[res.name]}
        )
    module = dev.create_shader_module(code=wgsl)
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "M"}
    )
    dispatch(pipeline, groups, 1)
    got = np.frombuffer(dev.queue.read_buffer(out), dtype=np.uint32)
    # 5 elements of 32 bytes; 44 bytes; a 6x3 image; 8x4 with 3 layers and 2 mip levels.
    assert got[:9].tolist() == [5, 32, 44, 6, 3, 8, 4, 3, 2]


@pytest.mark.parametrize("decl", ["Texture1DArray<float4> T;", "RWTexture1DArray<float4> T;"])
def test_wgsl_refuses_1d_array_textures_at_the_declaration(tmp_path: Path, decl: str) -> None:
    """WGSL has no texture_1d_array (naga refused the module Slang wrote); a positioned error."""
    text = (
        f"RWStructuredBuffer<uint> O;\n{decl}\n"
        '[shader("compute")][numthreads(1,1,1)] void M(uint3 id : SV_DispatchThreadID)'
        " { uint w, e; T.GetDimensions(w, e); O[0] = w + e; }\n"
    )
    (err,) = _errors(tmp_path, text, (Target.Wgsl,))
    assert re.match(r"a\.hlsl:2:\d+: error OS1003: WGSL: no 1D array textures \('T'", err), err
    assert _build(tmp_path, text, (Target.SpirV, Target.Msl)).ok
