"""Building a small shader for the targets and running its WGSL compute entry point on the
software adapter with exactly the resources the reflection says it uses (a pipeline of layout
"auto" refuses a bind group with more or fewer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verify_support import dispatch

from module_validation import device
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.reflection.model import Target

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def build(tmp_path: Path, source: str, targets: tuple[Target, ...] = ALL) -> CompileResult:
    """``source`` compiled for ``targets``; a failed compile fails the test with its messages."""
    path = tmp_path / "shader.hlsl"
    path.write_text(source)
    result = compile_file(str(path), CompileOptions(targets=targets, source_name="shader.hlsl"))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def wgsl_of(result: CompileResult) -> str:
    return next(o.data.decode() for o in result.outputs if o.target is Target.Wgsl)


def run_wgsl(
    result: CompileResult,
    buffers: dict[str, bytes],
    out: str,
    entry: str = "main",
    workgroups: int = 1,
    features: tuple[str, ...] = (),
    views: dict[str, Any] | None = None,
) -> bytes:
    """The bytes of buffer ``out`` after one dispatch of ``entry``'s WGSL: each resource the
    reflection's ``uses`` and ``pushuse`` name is bound at its WGSL slot, a buffer from
    ``buffers`` (uniform for a constant buffer or push block, else storage) or a texture view
    from ``views``."""
    import wgpu

    r = result.reflection
    assert r is not None
    dev = device()
    usage = wgpu.BufferUsage
    ep = next(e for e in r.entry_points if e.name == entry)
    groups: dict[int, list[dict[str, Any]]] = {}
    made = {}
    records = {x.name: (x.slots, x.kind.name == "ConstantBuffer") for x in r.resources}
    records.update({p.name: (p.slots, True) for p in r.push_blocks})  # a uniform in WGSL
    for name in (*ep.uses, *ep.pushuse):
        slots, uniform = records[name]
        slot = next(s for s in slots if s.target is Target.Wgsl)
        if views and name in views:
            resource: Any = views[name]
        else:
            kind = usage.UNIFORM if uniform else usage.STORAGE
            made[name] = dev.create_buffer_with_data(
                data=buffers[name], usage=kind | usage.COPY_SRC
            )
            resource = {"buffer": made[name], "offset": 0, "size": made[name].size}
        groups.setdefault(slot.set, []).append({"binding": slot.binding, "resource": resource})
    module = dev.create_shader_module(code=wgsl_of(result))
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": entry}
    )
    dispatch(pipeline, groups, workgroups)
    return bytes(dev.queue.read_buffer(made[out]))
