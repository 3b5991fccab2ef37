"""WGSL keywords that HLSL lets a name be (``var``, ``let``, ``loop``, ``fn``, ...) as the names
Slang keeps in WGSL (constant-buffer members, spec constants, resources) or as member and
varying names: renamed in the WGSL only where a name stands, so naga accepts the module and it
runs; the reflection keeps the HLSL names the host writes by."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from verify_support import dispatch

from module_validation import device
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.reflection.model import Target

SOURCE = """\
[[vk::constant_id(0)]] const float loop = 2.0;
cbuffer Frame { float4 var; float let; uint override; };
struct Pair { float alias; float enable; };
RWStructuredBuffer<float> fn;

float twice(Pair p) { return p.alias + p.enable; }

[shader("compute")]
[numthreads(1, 1, 1)]
void main()
{
    Pair p;
    p.alias = let;
    p.enable = let;
    fn[0] = var.x * loop + twice(p) + override;
}
"""


def _build(tmp_path: Path) -> CompileResult:
    path = tmp_path / "keywords.hlsl"
    path.write_text(SOURCE)
    targets = (Target.SpirV, Target.Msl, Target.Wgsl)
    result = compile_file(str(path), CompileOptions(targets=targets, source_name="keywords.hlsl"))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def test_the_reflection_keeps_the_hlsl_names(tmp_path: Path) -> None:
    r = _build(tmp_path).reflection
    assert r is not None
    frame = next(x for x in r.resources if x.name == "Frame")
    assert frame.layout is not None
    assert [(m.name, m.offset) for m in frame.layout.members] == [
        ("var", 0),
        ("let", 16),
        ("override", 20),
    ]
    assert [s.name for s in r.spec_constants] == ["loop"]
    assert "fn" in [x.name for x in r.resources]


def test_the_module_runs_on_the_software_adapter(tmp_path: Path) -> None:
    import wgpu

    result = _build(tmp_path)
    r = result.reflection
    assert r is not None
    wgsl = next(o.data.decode() for o in result.outputs if o.target is Target.Wgsl)
    assert ".var_0" in wgsl and "override loop_0" in wgsl
    dev = device()
    usage = wgpu.BufferUsage
    out = dev.create_buffer(size=4, usage=usage.STORAGE | usage.COPY_SRC)
    frame = dev.create_buffer_with_data(
        data=struct.pack("<4ffI8x", 1.5, 0, 0, 0, 0.25, 7), usage=usage.UNIFORM
    )
    module = dev.create_shader_module(code=wgsl)
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"}
    )
    groups: dict[int, list[dict[str, Any]]] = {}
    for name, buf in (("fn", out), ("Frame", frame)):
        record = next(x for x in r.resources if x.name == name)
        slot = next(s for s in record.slots if s.target is Target.Wgsl)
        groups.setdefault(slot.set, []).append(
            {"binding": slot.binding, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        )
    dispatch(pipeline, groups, 1)
    (value,) = struct.unpack("<f", bytes(dev.queue.read_buffer(out)))
    assert value == 1.5 * 2.0 + 0.25 + 0.25 + 7
