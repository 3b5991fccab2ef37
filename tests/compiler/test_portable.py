"""One source for SPIR-V, WGSL and Metal where the targets can express it: real DXC-era idioms
(vk::offset, packed float3 layouts, clip, ...) built for every target, run where they can run
(SPIR-V and WGSL on the software adapter) and read back from the emitted MSL; a positioned
error, naming the construct and the target, where a target truly lacks it."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from verify_support import CORPUS, device, pack

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.compiler.emitted.msl import read_msl
from oneshader.reflection.model import ShaderReflection, Target, TypeLayout

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def _build(path: Path, targets: tuple[Target, ...] = ALL, name: str = "") -> CompileResult:
    return compile_file(str(path), CompileOptions(targets=targets, source_name=name or path.name))


def _ok(path: Path, targets: tuple[Target, ...] = ALL) -> CompileResult:
    result = _build(path, targets)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def _errors(tmp_path: Path, source: str, targets: tuple[Target, ...] = ALL) -> list[str]:
    path = tmp_path / "s.hlsl"
    path.write_text(source)
    result = _build(path, targets, "s.hlsl")
    assert not result.ok
    return [d.format() for d in result.diagnostics if d.is_error]


def _code(result: CompileResult, target: Target) -> str:
    return next(o.data.decode() for o in result.outputs if o.target is target)


def _offsets(layout: TypeLayout | None) -> dict[str, int]:
    assert layout is not None
    return {m.name: m.offset for m in layout.members}


def _run_wgsl(result: CompileResult, uniforms: dict[str, bytes], count: int) -> list[float]:
    """Dispatch the single compute entry of ``result``'s WGSL once, each uniform block (resource
    or push block, by name) bound at its reflected WGSL slot; ``count`` floats of ``Out``."""
    import wgpu

    r = result.reflection
    assert r is not None
    dev = device()
    usage = wgpu.BufferUsage
    out = dev.create_buffer(size=4 * count, usage=usage.STORAGE | usage.COPY_SRC)
    blocks = {**{x.name: x for x in r.resources}, **{p.name: p for p in r.push_blocks}}
    bound: list[tuple[Any, Any]] = [(blocks["Out"], out)]
    for name, data in uniforms.items():
        bound.append((blocks[name], dev.create_buffer_with_data(data=data, usage=usage.UNIFORM)))
    module = dev.create_shader_module(code=_code(result, Target.Wgsl))
    (entry,) = r.entry_points
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": entry.name}
    )
    groups: dict[int, list[dict[str, Any]]] = {}
    for record, buf in bound:
        slot = next(s for s in record.slots if s.target is Target.Wgsl)
        groups.setdefault(slot.set, []).append(
            {"binding": slot.binding, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        )
    encoder = dev.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    for index, entries in sorted(groups.items()):
        layout = pipeline.get_bind_group_layout(index)
        cpass.set_bind_group(index, dev.create_bind_group(layout=layout, entries=entries))
    cpass.dispatch_workgroups(1, 1, 1)
    cpass.end()
    dev.queue.submit([encoder.finish()])
    return list(struct.unpack(f"<{count}f", bytes(dev.queue.read_buffer(out))))


def _packed(layout: TypeLayout | None, value: dict[str, Any]) -> bytes:
    assert layout is not None
    data = bytearray(layout.size)
    pack(layout, value, data)
    return bytes(data)


# -- [[vk::offset]] and packed float3: one layout on every target -------------------------------


def test_vk_offset_and_float3_scalar_layouts_run_from_the_reflection() -> None:
    result = _ok(CORPUS / "exec" / "offsets_compute.hlsl")
    r: ShaderReflection = result.reflection
    (push,) = r.push_blocks
    frame = next(x for x in r.resources if x.name == "Frame")
    assert _offsets(push.layout) == {"Roughness": 64, "NumSamples": 68}
    assert _offsets(frame.layout) == {
        "ViewProj": 0,
        "LightDir": 64,
        "Ambient": 76,
        "Tint": 80,
        "Flags": 92,
    }
    # Metal's own code says the same offsets (packed_float3 where a scalar follows a float3).
    msl = read_msl(_code(result, Target.Msl).encode())
    (mpush,) = msl.resources["Push"]
    (mframe,) = msl.resources["Frame"]
    assert {k: v for k, v in _offsets(mpush.layout).items() if k in ("Roughness", "NumSamples")} == (
        _offsets(push.layout)
    )
    assert _offsets(mframe.layout) == _offsets(frame.layout)
    assert "packed_float3 LightDir" in _code(result, Target.Msl)
    matrix = [[float(10 * row + col) for col in range(4)] for row in range(4)]
    frame_bytes = _packed(
        frame.layout,
        {
            "ViewProj": matrix,
            "LightDir": [0.5, -1.5, 2.0],
            "Ambient": 0.25,
            "Tint": [2.0, 4.0, 8.0],
            "Flags": 7,
        },
    )
    push_bytes = _packed(push.layout, {"Roughness": 0.75, "NumSamples": 1024})
    got = _run_wgsl(result, {"Frame": frame_bytes, "Push": push_bytes}, 7)
    assert got == [0.75, 1024.0, 12.0, -1.5, 0.25, 0.5 * 2 - 1.5 * 4 + 2.0 * 8, 7.0]
