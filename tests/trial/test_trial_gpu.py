"""Trial shaders run on the software adapter through WGSL, set up with nothing but their
generated bindings (struct classes, bind group layouts, slots, vertex-less draws, constants)."""

from __future__ import annotations

from typing import Any

import numpy as np
from trial_helpers import Project


def test_blur_compute_matches_numpy(project: Project, device: Any) -> None:
    import wgpu

    blur = project.module("blur")
    S, res, cs = blur.SHADER, blur.resources, blur.entries.CSMain
    assert cs.workgroup == (8, 8, 1)
    w, h = 37, 13  # not multiples of the workgroup: the edge clamps and the early return matter
    rng = np.random.default_rng(7)
    src = rng.random((h, w, 4), dtype=np.float32)
    weights = np.array([0.4, 0.2, 0.1, 0.0], np.float32)
    params = blur.BlurParams(Weights=weights, Size=(w, h))

    usage = wgpu.TextureUsage
    source = device.create_texture(
        size=(w, h, 1), format="rgba32float", usage=usage.TEXTURE_BINDING | usage.COPY_DST
    )
    device.queue.write_texture(
        {"texture": source},
        src.tobytes(),
        {"bytes_per_row": w * 16, "rows_per_image": h},
        (w, h, 1),
    )
    target = device.create_texture(
        size=(w, h, 1), format="rgba32float", usage=usage.STORAGE_BINDING | usage.COPY_SRC
    )
    ubuf = device.create_buffer_with_data(data=params.bytes_view(), usage=wgpu.BufferUsage.UNIFORM)
    # rgba32float is not filterable in WebGPU; HLSL cannot say so, the bindings take the override
    layouts = S.create_bind_group_layouts(device, sample_types={"Source": "unfilterable-float"})
    pipeline = device.create_compute_pipeline(
        layout=S.create_pipeline_layout(device, layouts),
        compute=cs.stage_descriptor(
            S.create_shader_module(device, project.out("blur"), entry="CSMain")
        ),
    )
    group = res.Source.wgsl.set
    bind = S.create_bind_group(
        device,
        layouts[group],
        {res.Source: source.create_view(), res.Target: target.create_view(), res.BlurParams: ubuf},
    )
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipeline)
    cp.set_bind_group(group, bind)
    cp.dispatch_workgroups(-(-w // cs.workgroup[0]), -(-h // cs.workgroup[1]), 1)
    cp.end()
    device.queue.submit([enc.finish()])
    got = np.frombuffer(
        device.queue.read_texture(
            {"texture": target}, {"bytes_per_row": w * 16, "rows_per_image": h}, (w, h, 1)
        ),
        np.float32,
    ).reshape(h, w, 4)

    padded = np.concatenate([src[:, :1], src[:, :1], src, src[:, -1:], src[:, -1:]], axis=1)
    want = weights[0] * padded[:, 2:-2]
    for k in (1, 2):
        want = want + weights[k] * (padded[:, 2 - k : w + 2 - k] + padded[:, 2 + k : w + 2 + k])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_instanced_sprites_draw_where_the_structured_buffer_says(
    project: Project, device: Any
) -> None:
    import wgpu

    sprites = project.module("sprites")
    S, res = sprites.SHADER, sprites.resources
    vs, ps = sprites.entries.VSMain, sprites.entries.PSMain
    assert vs.stride == 0 and vs.vertex_buffers() == []
    size = 32
    items = sprites.Sprite.array(3)
    items.Center = [(8, 8), (24, 8), (16, 24)]  # pixels, y down
    items.HalfSize = [(4, 4), (6, 3), (2, 5)]
    items.Color = [(1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 1, 1)]
    view = sprites.View(Scale=(2 / size, -2 / size), Offset=(-1, 1))

    sbuf = device.create_buffer_with_data(data=items.bytes_view(), usage=wgpu.BufferUsage.STORAGE)
    ubuf = device.create_buffer_with_data(data=view.bytes_view(), usage=wgpu.BufferUsage.UNIFORM)
    target = device.create_texture(
        size=(size, size, 1),
        format="rgba8unorm",
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )
    layouts = S.create_bind_group_layouts(device)
    out = project.out("sprites")
    pipeline = device.create_render_pipeline(
        layout=S.create_pipeline_layout(device, layouts),
        vertex={
            **vs.stage_descriptor(S.create_shader_module(device, out, entry=vs.name)),
            "buffers": [],
        },
        fragment={
            **ps.stage_descriptor(S.create_shader_module(device, out, entry=ps.name)),
            "targets": [{"format": "rgba8unorm"}],
        },
        primitive={"topology": "triangle-list"},
    )
    group = res.View.wgsl.set
    bind = S.create_bind_group(device, layouts[group], {res.Sprites: sbuf, res.View: ubuf})
    enc = device.create_command_encoder()
    rp = enc.begin_render_pass(
        color_attachments=[
            {
                "view": target.create_view(),
                "clear_value": (0, 0, 0, 0),
                "load_op": "clear",
                "store_op": "store",
            }
        ]
    )
    rp.set_pipeline(pipeline)
    rp.set_bind_group(group, bind)
    rp.draw(6, len(items))
    rp.end()
    device.queue.submit([enc.finish()])
    rgba = np.frombuffer(
        device.queue.read_texture(
            {"texture": target},
            {"bytes_per_row": size * 4, "rows_per_image": size},
            (size, size, 1),
        ),
        np.uint8,
    ).reshape(size, size, 4)

    want = np.zeros_like(rgba)
    for (cx, cy), (hx, hy), color in zip(items.Center, items.HalfSize, items.Color, strict=True):
        want[int(cy - hy) : int(cy + hy), int(cx - hx) : int(cx + hx)] = np.asarray(color) * 255
    assert (rgba != 0).any()
    np.testing.assert_array_equal(rgba, want)


def test_specialization_constants_choose_the_operation(project: Project, device: Any) -> None:
    import wgpu

    spec = project.module("specialized")
    S, cs = spec.SHADER, spec.entries.CSMain
    assert (spec.spec_constants.Gain.default, spec.spec_constants.Mode.default) == (2.0, 0)
    data = np.arange(64, dtype=np.float32)
    layouts = S.create_bind_group_layouts(device)
    module = S.create_shader_module(device, project.out("specialized"), entry="CSMain")
    results = {}
    for name, constants in [
        ("default", spec.constants()),
        ("add", spec.constants(Gain=0.5, Mode=1)),
    ]:
        buf = device.create_buffer_with_data(
            data=data, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
        )
        pipeline = device.create_compute_pipeline(
            layout=S.create_pipeline_layout(device, layouts),
            compute=cs.stage_descriptor(module, constants),
        )
        res = spec.resources.Data
        bind = S.create_bind_group(device, layouts[res.wgsl.set], {res: buf})
        enc = device.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipeline)
        cp.set_bind_group(res.wgsl.set, bind)
        cp.dispatch_workgroups(len(data) // cs.workgroup[0])
        cp.end()
        device.queue.submit([enc.finish()])
        results[name] = np.frombuffer(device.queue.read_buffer(buf), np.float32)
    np.testing.assert_array_equal(results["default"], data * 2)
    np.testing.assert_array_equal(results["add"], data + 0.5)
