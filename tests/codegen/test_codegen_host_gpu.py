"""Host code written with the generated bindings alone, on the software adapter: embedded code,
bind group classes (with min_binding_size and dynamic offsets), per-object data in one buffer,
per-vertex and per-instance buffers, checked pipelines, workgroup counts and buffer creation."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from probe_build import build_probes

from oneshader.bindings import load
from oneshader.bindings.runtime import BufferRange, LinkError, check_link
from oneshader.reflection.model import Target

SIZE = 64


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, ModuleType]]:
    return build_probes(
        tmp_path_factory.mktemp("hostbind"), "hostbind", ("mesh_probe", "link_probe", "scale_probe")
    )


def _target(gpu_device: Any) -> Any:
    import wgpu

    return gpu_device.create_texture(
        size=(SIZE, SIZE, 1),
        format=wgpu.TextureFormat.rgba8unorm,
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )


def _pixel(ndc: tuple[float, float]) -> tuple[int, int]:
    """(row, column) of the pixel whose centre is nearest to an NDC point."""
    return int((1 - ndc[1]) / 2 * SIZE), int((ndc[0] + 1) / 2 * SIZE)


def test_the_module_carries_its_built_code(built: tuple[Path, dict[str, ModuleType]]) -> None:
    out, mods = built
    mesh = mods["mesh_probe"]
    assert mesh.SHADER.code(Target.Wgsl) == (out / "mesh_probe.wgsl").read_text("utf-8")
    assert mesh.SHADER.code(Target.SpirV) == (out / "mesh_probe.spv").read_bytes()
    assert load(out / "mesh_probe.reflection").shader.code() == mesh.SHADER.code()
    with pytest.raises(LookupError, match=r"no Msl code was embedded \(embedded: Wgsl, SpirV\)"):
        mesh.SHADER.code(Target.Msl)


def test_instanced_objects_at_dynamic_offsets(
    built: tuple[Path, dict[str, ModuleType]], gpu_device: Any
) -> None:
    """Two objects' data in one uniform buffer (one bind group, two dynamic offsets), each
    drawn as two instances from a per-instance buffer beside the per-vertex one."""
    _, mods = built
    mesh = mods["mesh_probe"]
    vs, ps = mesh.entries.VSMain, mesh.entries.PSMain
    layouts = mesh.SHADER.layouts(gpu_device, dynamic=[mesh.push_blocks.Object])
    buffers = vs.buffers(
        geometry=vs.vertex_buffer("Corner"), per_instance=vs.instance_buffer("Shift", "Dim")
    )
    geometry, per_instance = buffers.geometry, buffers.per_instance
    pipeline = mesh.SHADER.create_render_pipeline(
        gpu_device, vs, ps, ["rgba8unorm"], buffers=buffers, layouts=layouts
    )

    quad = geometry.zeros(6)
    quad["Corner"] = [[-1, -1], [1, -1], [1, 1], [-1, -1], [1, 1], [-1, 1]]
    instances = per_instance.zeros(2)
    instances["Shift"] = [[-0.25, 0.0], [0.25, 0.0]]
    instances["Dim"] = [0, 1]
    objects = mesh.ObjectData.array(2, align=layouts.uniform_alignment)
    objects.Color = [[1.0, 0.2, 0.0, 1.0], [0.0, 0.4, 1.0, 1.0]]
    objects.Offset = [[0.0, 0.5], [0.0, -0.5]]
    assert objects.byte_offset(1) == max(layouts.uniform_alignment, mesh.ObjectData.size)
    frame = mesh.Frame(Tint=(1.0, 1.0, 1.0, 1.0), Scale=0.1)

    group0 = mesh.BindGroup0(layouts, Frame=mesh.resources.Frame.create_buffer(gpu_device, frame))
    group1 = mesh.BindGroup1(
        layouts, Object=mesh.push_blocks.Object.create_buffer(gpu_device, objects)
    )
    target = _target(gpu_device)
    enc = gpu_device.create_command_encoder()
    rp = enc.begin_render_pass(
        color_attachments=[{"view": target.create_view(), "clear_value": (0, 0, 0, 1),
                            "load_op": "clear", "store_op": "store"}]
    )  # fmt: skip
    rp.set_pipeline(pipeline)
    group0.set(rp)
    buffers.set(  # by name: no slot number typed by hand
        rp,
        geometry=geometry.create_buffer(gpu_device, quad),
        per_instance=per_instance.create_buffer(gpu_device, instances),
    )
    with pytest.raises(ValueError, match=r"group 1 takes 1 dynamic offsets \(Object\), got 0"):
        group1.set(rp)
    with pytest.raises(ValueError, match="dynamic offset of 'Object' must be a multiple of"):
        group1.set(rp, 4)
    for i in range(2):
        group1.set(rp, objects.byte_offset(i))
        rp.draw(6, 2)
    rp.end()
    gpu_device.queue.submit([enc.finish()])
    rgba = np.frombuffer(
        gpu_device.queue.read_texture(
            {"texture": target}, {"bytes_per_row": SIZE * 4}, (SIZE, SIZE, 1)
        ),
        np.uint8,
    ).reshape(SIZE, SIZE, 4)

    for obj in range(2):
        for inst in range(2):
            centre = (
                float(objects.Offset[obj, 0] + instances["Shift"][inst, 0]),
                float(objects.Offset[obj, 1] + instances["Shift"][inst, 1]),
            )
            colour = objects.Color[obj] * (0.5 if inst == 1 else 1.0)
            want = np.round(colour * 255)
            row, col = _pixel(centre)
            assert np.abs(rgba[row, col].astype(int) - want).max() <= 1, (obj, inst, rgba[row, col])
    assert (rgba[_pixel((0.0, 0.0))] == [0, 0, 0, 255]).all()  # between the quads: cleared
    assert int((rgba[..., :3].sum(axis=2) > 0).sum()) == 4 * 6 * 6  # four 6x6-pixel quads


def test_stage_mismatch_is_named_before_wgpu_refuses_it(
    built: tuple[Path, dict[str, ModuleType]], gpu_device: Any
) -> None:
    import wgpu

    _, mods = built
    mesh, other = mods["mesh_probe"], mods["link_probe"]
    with pytest.raises(LinkError) as err:
        check_link(other.entries.VSMain, mesh.entries.PSMain)
    text = str(err.value)
    assert "link_probe.hlsl VSMain TEXCOORD (location 0) as float2" in text
    assert "mesh_probe.hlsl PSMain COLOR (location 0) as float4" in text
    check_link(mesh.entries.VSMain, mesh.entries.PSMain)  # the matching pair passes

    # wgpu agrees: the same pair fails in create_render_pipeline
    layout = mesh.SHADER.layouts(gpu_device).pipeline
    with pytest.raises(wgpu.GPUError):
        gpu_device.create_render_pipeline(
            layout=layout,
            vertex={
                "module": other.SHADER.create_shader_module(gpu_device),
                "entry_point": "VSMain",
                "buffers": other.entries.VSMain.vertex_buffers(),
            },
            fragment={
                "module": mesh.SHADER.create_shader_module(gpu_device),
                "entry_point": "PSMain",
                "targets": [{"format": "rgba8unorm"}],
            },
        )
    with pytest.raises(
        LinkError, match=r"PSMain SV_Target \(location 0\) as float4 is written to a r32uint target"
    ):
        mesh.SHADER.create_render_pipeline(
            gpu_device, mesh.entries.VSMain, mesh.entries.PSMain, ["r32uint"]
        )
    vs = mesh.entries.VSMain
    with pytest.raises(ValueError, match="VSMain reads Dim, which no buffer holds"):
        vs.vertex_buffers(vs.vertex_buffer("Corner", "Shift"))
    with pytest.raises(LookupError, match="has no vertex input 'Shfit'; it has Corner, Shift, Dim"):
        vs.instance_buffer("Shfit")


def test_compute_dispatch_buffers_and_bind_group_checks(
    built: tuple[Path, dict[str, ModuleType]], gpu_device: Any
) -> None:
    import wgpu

    _, mods = built
    scale = mods["scale_probe"]
    main, res = scale.entries.Main, scale.resources
    n = 100  # not a multiple of the workgroup's 64
    assert main.workgroups(n) == (2, 1, 1) and main.workgroups(64, 3) == (1, 3, 1)
    values = np.arange(n + 8, dtype=np.float32)  # 8 more than the shader may touch
    data = res.Data.create_buffer(gpu_device, values)
    params = res.Params.create_buffer(gpu_device, scale.Params(Factor=3.0, Count=n))
    group = scale.BindGroup0(gpu_device, Params=params, Data=data)
    pipeline = scale.SHADER.create_compute_pipeline(gpu_device, main)
    enc = gpu_device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipeline)
    group.set(cp)
    main.dispatch(cp, n)
    cp.end()
    gpu_device.queue.submit([enc.finish()])
    got = np.frombuffer(gpu_device.queue.read_buffer(data), np.float32)
    np.testing.assert_array_equal(got[:n], values[:n] * 3)
    np.testing.assert_array_equal(got[n:], values[n:])

    assert res.Params.min_binding_size == 16 and res.Data.min_binding_size == 4
    with pytest.raises(LookupError, match="scale_probe has no binding 'Object'"):
        scale.SHADER.layouts(gpu_device, dynamic=[mods["mesh_probe"].push_blocks.Object])
    small = gpu_device.create_buffer(size=8, usage=wgpu.BufferUsage.UNIFORM)
    with pytest.raises(ValueError, match="'Params' needs at least 16 bytes, got a 8-byte buffer"):
        scale.BindGroup0(gpu_device, Params=small, Data=data)
    with pytest.raises(ValueError, match="'Params' needs a buffer with usage UNIFORM"):
        scale.BindGroup0(gpu_device, Params=data, Data=data)
    with pytest.raises(TypeError, match="'Data' is a buffer binding; got a GPUSampler"):
        scale.BindGroup0(gpu_device, Params=params, Data=gpu_device.create_sampler())
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'Data'"):
        scale.BindGroup0(gpu_device, Params=params)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="'Params' needs at least 16 bytes, got 8"):
        res.Params.create_buffer(gpu_device, size=8)
    # a sub-range binds: the 16 bytes after 256 of a bigger buffer
    big = gpu_device.create_buffer(size=512, usage=wgpu.BufferUsage.UNIFORM)
    scale.BindGroup0(gpu_device, Params=BufferRange(big, 256, 16), Data=data)
    # the layouts carry min_binding_size, so wgpu itself refuses the small buffer when the
    # bind group is made, not at encoder.finish()
    layout = scale.SHADER.layouts(gpu_device).groups[0]
    with pytest.raises(wgpu.GPUError):
        gpu_device.create_bind_group(
            layout=layout,
            entries=[
                {"binding": res.Params.wgsl.binding,
                 "resource": {"buffer": small, "offset": 0, "size": 8}},
                {"binding": res.Data.wgsl.binding,
                 "resource": {"buffer": data, "offset": 0, "size": data.size}},
            ],
        )  # fmt: skip
