"""Benchmark of the wgpu host helpers on the software adapter; prints figures and ratios.

1. per-object data for N objects: one uniform buffer of N aligned structs, one bind group and a
   dynamic offset per draw, against the by-hand way (N buffers, N bind groups): the time to set
   them up, and to encode and submit one frame of N draws;
2. the embedded code: the size of a generated module with and without its WGSL and SPIR-V, and
   the time to import it (executing its source).

Run: python bench/bench_host.py [--objects N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from timing import best, interleaved

from oneshader.bindings import Bindings, load
from oneshader.codegen import render_file
from oneshader.codegen.render import render_module
from oneshader.reflection.format import ReflectionFormat

SHADER = """\
cbuffer Frame { float4 Tint; };
struct ObjectData { float4 Color; float2 Offset; };
[[vk::push_constant]] ObjectData Object;

struct VSOut { float4 Position : SV_Position; float4 Color : COLOR0; };

[shader("vertex")]
VSOut VSMain(float2 Corner : POSITION)
{
    VSOut o;
    o.Position = float4(Corner * 0.01 + Object.Offset, 0.0, 1.0);
    o.Color = Object.Color * Tint;
    return o;
}

[shader("pixel")]
float4 PSMain(VSOut i) : SV_Target0 { return i.Color; }
"""


def build(folder: Path) -> Path:
    """Compile the shader with the real compiler, as ``oneshader build`` lays out its files."""
    from oneshader.compiler import CompileOptions, compile_file

    src = folder / "objects.hlsl"
    src.write_text(SHADER)
    result = compile_file(str(src), CompileOptions(source_name="objects.hlsl"))
    if result.reflection is None:
        sys.exit("\n".join(d.format() for d in result.diagnostics))
    for f in result.outputs:
        (folder / f"objects{f.target.suffix}").write_bytes(f.data)
    path = folder / "objects.reflection"
    path.write_bytes(ReflectionFormat.write(result.reflection))
    return path


def per_object(mesh: Bindings, device: Any, n: int) -> None:
    import wgpu

    vs, ps = mesh.entry("VSMain"), mesh.entry("PSMain")
    frame = mesh.binding("Frame").create_buffer(device, mesh.Frame(Tint=(1, 1, 1, 1)))
    target = device.create_texture(
        size=(64, 64, 1), format="rgba8unorm", usage=wgpu.TextureUsage.RENDER_ATTACHMENT
    )
    view = target.create_view()
    vertices = vs.vertex_buffer()
    quad = vertices.zeros(6)
    quad["Corner"] = [[-1, -1], [1, -1], [1, 1], [-1, -1], [1, 1], [-1, 1]]
    vbuf = vertices.create_buffer(device, quad)
    sync = device.create_buffer(size=4, usage=wgpu.BufferUsage.COPY_SRC)  # read back to wait
    rng = np.random.default_rng(1)
    colors, offsets = rng.uniform(0, 1, (n, 4)), rng.uniform(-1, 1, (n, 2))
    obj = mesh.binding("Object")

    dynamic = mesh.shader.layouts(device, dynamic=[obj])
    plain = mesh.shader.layouts(device)
    state: dict[str, Any] = {}

    def setup_dynamic() -> None:
        objects = mesh.ObjectData.array(n, align=dynamic.uniform_alignment)
        objects.Color, objects.Offset = colors, offsets
        state["objects"] = objects
        state["group"] = mesh.BindGroup1(dynamic, Object=obj.create_buffer(device, objects))

    def setup_by_hand() -> None:
        groups = []
        for i in range(n):
            data = mesh.ObjectData(Color=colors[i], Offset=offsets[i])
            groups.append(mesh.BindGroup1(plain, Object=obj.create_buffer(device, data)))
        state["groups"] = groups

    def frame_pass(layouts: Any, draw: Any) -> None:
        pipeline = state.setdefault(
            id(layouts), mesh.shader.create_render_pipeline(device, vs, ps, ["rgba8unorm"],
                                                             layouts=layouts)
        )  # fmt: skip
        enc = device.create_command_encoder()
        rp = enc.begin_render_pass(
            color_attachments=[{"view": view, "load_op": "clear", "store_op": "store",
                                "clear_value": (0, 0, 0, 1)}]
        )  # fmt: skip
        rp.set_pipeline(pipeline)
        mesh.BindGroup0(layouts, Frame=frame).set(rp)
        rp.set_vertex_buffer(0, vbuf)
        for i in range(n):
            draw(rp, i)
            rp.draw(6)
        rp.end()
        device.queue.submit([enc.finish()])
        device.queue.read_buffer(sync)  # waits for the frame

    def frame_dynamic() -> None:
        objects, group = state["objects"], state["group"]
        frame_pass(dynamic, lambda rp, i: group.set(rp, objects.byte_offset(i)))

    def frame_by_hand() -> None:
        groups = state["groups"]
        frame_pass(plain, lambda rp, i: groups[i].set(rp))

    t_dyn, t_hand = interleaved(setup_dynamic, setup_by_hand, repeat=3)
    print(f"per-object data for {n} objects (software adapter):")
    print(f"  setup: one buffer + one bind group {t_dyn * 1e3:.1f} ms; {n} buffers + {n} bind "
          f"groups {t_hand * 1e3:.1f} ms (ratio {t_hand / t_dyn:.0f}x)")  # fmt: skip
    f_dyn, f_hand = interleaved(frame_dynamic, frame_by_hand, repeat=5)
    print(f"  one frame of {n} draws: dynamic offsets {f_dyn * 1e3:.1f} ms; a bind group per "
          f"object {f_hand * 1e3:.1f} ms (ratio {f_hand / f_dyn:.2f})")  # fmt: skip


def embedded(path: Path) -> None:
    model = ReflectionFormat.read_file(path)
    with_code = render_file(path, model)
    without = render_module(model, "objects")
    print("embedded code (objects.hlsl: WGSL + SPIR-V):")
    print(f"  module: {len(with_code)} bytes with the code, {len(without)} without")

    def run(source: str) -> None:
        exec(compile(source, "<bench>", "exec"), {"__name__": "bench_module"})

    t_with, t_without = interleaved(lambda: run(with_code), lambda: run(without), repeat=15)
    print(f"  compiling and executing it: {t_with * 1e3:.2f} ms with, {t_without * 1e3:.2f} ms "
          f"without (ratio {t_with / t_without:.2f})")  # fmt: skip
    code_only = best(lambda: compile(with_code, "<bench>", "exec"), repeat=15)
    print(f"  of which compiling the source: {code_only * 1e3:.2f} ms (a .pyc skips it)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=1000)
    args = ap.parse_args()
    import wgpu

    adapter = wgpu.gpu.request_adapter_sync(power_preference="low-power")
    if adapter is None:
        sys.exit("no wgpu adapter")
    device = adapter.request_device_sync()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        path = build(Path(tmp))
        print(f"built objects.hlsl in {time.perf_counter() - t0:.2f} s")
        mesh = load(path)
        embedded(path)
        per_object(mesh, device, args.objects)
    return 0


if __name__ == "__main__":
    sys.exit(main())
