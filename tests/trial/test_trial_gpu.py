"""Trial shaders run on the software adapter through WGSL, set up with nothing but their
generated bindings (struct classes, bind group layouts, slots, vertex-less draws, constants)."""

from __future__ import annotations

from typing import Any

import numpy as np
from trial_helpers import Project, begin_color_pass, dispatch, read_rgba8


def test_blur_compute_matches_numpy(project: Project, gpu_device: Any) -> None:
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
    source = gpu_device.create_texture(
        size=(w, h, 1), format="rgba32float", usage=usage.TEXTURE_BINDING | usage.COPY_DST
    )
    gpu_device.queue.write_texture(
        {"texture": source},
        src.tobytes(),
        {"bytes_per_row": w * 16, "rows_per_image": h},
        (w, h, 1),
    )
    target = gpu_device.create_texture(
        size=(w, h, 1), format="rgba32float", usage=usage.STORAGE_BINDING | usage.COPY_SRC
    )
    ubuf = gpu_device.create_buffer_with_data(
        data=params.bytes_view(), usage=wgpu.BufferUsage.UNIFORM
    )
    # rgba32float is not filterable in WebGPU; HLSL cannot say so, the bindings take the override
    layouts = S.create_bind_group_layouts(gpu_device, sample_types={"Source": "unfilterable-float"})
    pipeline = gpu_device.create_compute_pipeline(
        layout=S.create_pipeline_layout(gpu_device, layouts),
        compute=cs.stage_descriptor(S.create_shader_module(gpu_device, project.out("blur"))),
    )
    group = res.Source.wgsl.set
    bind = S.create_bind_group(
        gpu_device,
        layouts[group],
        {res.Source: source.create_view(), res.Target: target.create_view(), res.BlurParams: ubuf},
    )
    dispatch(
        gpu_device, pipeline, group, bind, (-(-w // cs.workgroup[0]), -(-h // cs.workgroup[1]), 1)
    )
    got = np.frombuffer(
        gpu_device.queue.read_texture(
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
    project: Project, gpu_device: Any
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

    sbuf = gpu_device.create_buffer_with_data(
        data=items.bytes_view(), usage=wgpu.BufferUsage.STORAGE
    )
    ubuf = gpu_device.create_buffer_with_data(
        data=view.bytes_view(), usage=wgpu.BufferUsage.UNIFORM
    )
    target = gpu_device.create_texture(
        size=(size, size, 1),
        format="rgba8unorm",
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )
    layouts = S.create_bind_group_layouts(gpu_device)
    out = project.out("sprites")
    pipeline = gpu_device.create_render_pipeline(
        layout=S.create_pipeline_layout(gpu_device, layouts),
        vertex={
            **vs.stage_descriptor(S.create_shader_module(gpu_device, out)),
            "buffers": [],
        },
        fragment={
            **ps.stage_descriptor(S.create_shader_module(gpu_device, out)),
            "targets": [{"format": "rgba8unorm"}],
        },
        primitive={"topology": "triangle-list"},
    )
    group = res.View.wgsl.set
    bind = S.create_bind_group(gpu_device, layouts[group], {res.Sprites: sbuf, res.View: ubuf})
    enc = gpu_device.create_command_encoder()
    rp = begin_color_pass(enc, target)
    rp.set_pipeline(pipeline)
    rp.set_bind_group(group, bind)
    rp.draw(6, len(items))
    rp.end()
    gpu_device.queue.submit([enc.finish()])
    rgba = read_rgba8(gpu_device, target, size)

    want = np.zeros_like(rgba)
    for (cx, cy), (hx, hy), color in zip(items.Center, items.HalfSize, items.Color, strict=True):
        want[int(cy - hy) : int(cy + hy), int(cx - hx) : int(cx + hx)] = np.asarray(color) * 255
    assert (rgba != 0).any()
    np.testing.assert_array_equal(rgba, want)


def test_specialization_constants_choose_the_operation(project: Project, gpu_device: Any) -> None:
    import wgpu

    spec = project.module("specialized")
    S, cs = spec.SHADER, spec.entries.CSMain
    assert (spec.spec_constants.Gain.default, spec.spec_constants.Mode.default) == (2.0, 0)
    data = np.arange(64, dtype=np.float32)
    layouts = S.create_bind_group_layouts(gpu_device)
    module = S.create_shader_module(gpu_device, project.out("specialized"))
    results = {}
    for name, constants in [
        ("default", spec.constants()),
        ("add", spec.constants(Gain=0.5, Mode=1)),
    ]:
        buf = gpu_device.create_buffer_with_data(
            data=data, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
        )
        pipeline = gpu_device.create_compute_pipeline(
            layout=S.create_pipeline_layout(gpu_device, layouts),
            compute=cs.stage_descriptor(module, constants),
        )
        res = spec.resources.Data
        bind = S.create_bind_group(gpu_device, layouts[res.wgsl.set], {res: buf})
        dispatch(gpu_device, pipeline, res.wgsl.set, bind, (len(data) // cs.workgroup[0],))
        results[name] = np.frombuffer(gpu_device.queue.read_buffer(buf), np.float32)
    np.testing.assert_array_equal(results["default"], data * 2)
    np.testing.assert_array_equal(results["add"], data + 0.5)


def draw_lit_quad(project: Project, gpu_device: Any, sample_types: dict[str, str]) -> Any:
    """The lit mesh as a renderer uses it: a depth-only pass of its own vertex shader from the
    light draws an occluder over the left half into the shadow map, then a full-screen quad at
    depth 0.5 is lit, and shadowed where the occluder is."""
    import wgpu

    lit = project.module("lit_mesh")
    S, res, vs, ps = lit.SHADER, lit.resources, lit.entries.VSMain, lit.entries.PSMain
    U, T = wgpu.BufferUsage, wgpu.TextureUsage

    def quad(x0: float, x1: float, z: float) -> Any:
        v = np.zeros(6, vs.vertex_dtype())
        corners = np.array([[x0, -1], [x1, -1], [x1, 1], [x0, -1], [x1, 1], [x0, 1]], np.float32)
        v["Position"] = np.c_[corners, np.full(6, z)]
        v["Normal"] = (1, 0, 0)  # the normal matrix turns it to +z, towards the light
        v["UV"] = (corners + 1) / 2
        return gpu_device.create_buffer_with_data(data=v, usage=U.VERTEX)

    rotate = np.array([[0, 0, -1], [0, 1, 0], [1, 0, 0]], np.float32)  # (1,0,0) -> (0,0,1)
    frame = lit.PerFrame(
        ViewProj=np.eye(4), LightViewProj=np.eye(4), LightDir=(0, 0, 1), Ambient=0.25,
        LightColor=(0.5, 0.5, 0.5, 1),
    )  # fmt: skip
    obj = lit.PerObject(World=np.eye(4), NormalMatrix=rotate, Layer=1)

    albedo = gpu_device.create_texture(
        size=(1, 1, 2), format="rgba8unorm", usage=T.TEXTURE_BINDING | T.COPY_DST
    )
    layers = np.array([[255, 0, 0, 255], [204, 102, 255, 255]], np.uint8)
    gpu_device.queue.write_texture(
        {"texture": albedo}, layers.tobytes(), {"bytes_per_row": 4, "rows_per_image": 1}, (1, 1, 2)
    )
    size = 16
    depth = {"size": (size, size, 1), "format": "depth32float"}
    shadow = gpu_device.create_texture(**depth, usage=T.TEXTURE_BINDING | T.RENDER_ATTACHMENT)
    unused = gpu_device.create_texture(**depth, usage=T.TEXTURE_BINDING)
    target = gpu_device.create_texture(
        size=(size, size, 1), format="rgba8unorm", usage=T.RENDER_ATTACHMENT | T.COPY_SRC
    )

    def resources(shadow_view: Any) -> dict[Any, Any]:
        return {
            res.PerFrame: gpu_device.create_buffer_with_data(
                data=frame.bytes_view(), usage=U.UNIFORM
            ),
            res.PerObject: gpu_device.create_buffer_with_data(
                data=obj.bytes_view(), usage=U.UNIFORM
            ),
            res.Albedo: albedo.create_view(dimension="2d-array"),
            res.ShadowMap: shadow_view,
            res.LinearSampler: gpu_device.create_sampler(),
            res.ShadowSampler: gpu_device.create_sampler(compare="less"),
        }

    layouts = S.create_bind_group_layouts(gpu_device, sample_types=sample_types)
    pipeline_layout = S.create_pipeline_layout(gpu_device, layouts)
    out = project.out("lit_mesh")
    vertex = {
        **vs.stage_descriptor(S.create_shader_module(gpu_device, out)),
        "buffers": vs.vertex_buffers(),
    }
    group = res.PerFrame.wgsl.set
    enc = gpu_device.create_command_encoder()

    depth_only = gpu_device.create_render_pipeline(
        layout=pipeline_layout,
        vertex=vertex,
        primitive={"topology": "triangle-list"},
        depth_stencil={
            "format": "depth32float",
            "depth_write_enabled": True,
            "depth_compare": "less",
        },
    )
    rp = enc.begin_render_pass(
        color_attachments=[],
        depth_stencil_attachment={
            "view": shadow.create_view(),
            "depth_clear_value": 1.0,
            "depth_load_op": "clear",
            "depth_store_op": "store",
        },
    )
    rp.set_pipeline(depth_only)
    rp.set_bind_group(
        group, S.create_bind_group(gpu_device, layouts[group], resources(unused.create_view()))
    )
    rp.set_vertex_buffer(0, quad(-1, 0, 0.2))
    rp.draw(6)
    rp.end()

    shaded = gpu_device.create_render_pipeline(
        layout=pipeline_layout,
        vertex=vertex,
        fragment={
            **ps.stage_descriptor(S.create_shader_module(gpu_device, out)),
            "targets": [{"format": "rgba8unorm"}],
        },
        primitive={"topology": "triangle-list"},
    )
    rp = begin_color_pass(enc, target)
    rp.set_pipeline(shaded)
    rp.set_bind_group(
        group, S.create_bind_group(gpu_device, layouts[group], resources(shadow.create_view()))
    )
    rp.set_vertex_buffer(0, quad(-1, 1, 0.5))
    rp.draw(6)
    rp.end()
    gpu_device.queue.submit([enc.finish()])
    return read_rgba8(gpu_device, target, size)


def test_lit_mesh_is_lit_and_shadowed_where_the_shadow_map_says(
    project: Project, gpu_device: Any
) -> None:
    rgba = draw_lit_quad(project, gpu_device, {"ShadowMap": "depth"})
    albedo = np.array([204, 102, 255]) / 255  # layer 1: the Layer member reached the shader
    shadowed = np.round(albedo * 0.25 * 255)
    lit = np.round(albedo * (0.25 + 0.5) * 255)
    for x in (0, 3, 6):
        assert np.abs(rgba[4, x, :3].astype(int) - shadowed).max() <= 1, (x, rgba[4, x])
    for x in (9, 12, 15):
        assert np.abs(rgba[11, x, :3].astype(int) - lit).max() <= 1, (x, rgba[11, x])
    assert (rgba[:, :, 3] == 255).all()


def test_skinned_mesh_moves_by_its_weighted_bones(project: Project, gpu_device: Any) -> None:
    import wgpu

    sk = project.module("skinned")
    S, res, vs, ps = sk.SHADER, sk.resources, sk.entries.VSMain, sk.entries.PSMain
    size = 16
    verts = np.zeros(6, vs.vertex_dtype())
    corners = np.array([[-1, -1], [0, -1], [0, 1], [-1, -1], [0, 1], [-1, 1]], np.float32)
    verts["Position"] = np.c_[corners, np.zeros(6)]
    verts["Normal"] = (0, 0, 1)
    verts["BoneIndices"] = (3, 60, 0, 0)  # bone 0 is a wild scale, weighted 0
    verts["BoneWeights"] = (0.75, 0.25, 0, 0)
    bones = np.stack([np.eye(4)] * 64)
    bones[0] = np.diag([100.0, 100.0, 1.0, 1.0])
    bones[3][0, 3] = 0.5  # v' = M @ v: bone 3 moves x by 0.5, bone 60 by 0.5 too
    bones[60][0, 3] = 0.5
    skeleton = sk.Skeleton(Bones=bones)
    camera = sk.Camera(ViewProj=np.eye(4), Color=(1, 0.5, 0.25, 1))
    U, T = wgpu.BufferUsage, wgpu.TextureUsage
    target = gpu_device.create_texture(
        size=(size, size, 1), format="rgba8unorm", usage=T.RENDER_ATTACHMENT | T.COPY_SRC
    )
    layouts = S.create_bind_group_layouts(gpu_device)
    out = project.out("skinned")
    pipeline = gpu_device.create_render_pipeline(
        layout=S.create_pipeline_layout(gpu_device, layouts),
        vertex={
            **vs.stage_descriptor(S.create_shader_module(gpu_device, out)),
            "buffers": vs.vertex_buffers(),
        },
        fragment={
            **ps.stage_descriptor(S.create_shader_module(gpu_device, out)),
            "targets": [{"format": "rgba8unorm"}],
        },
        primitive={"topology": "triangle-list"},
    )
    group = res.Skeleton.wgsl.set
    bind = S.create_bind_group(
        gpu_device,
        layouts[group],
        {
            res.Skeleton: gpu_device.create_buffer_with_data(
                data=skeleton.bytes_view(), usage=U.UNIFORM
            ),
            res.Camera: gpu_device.create_buffer_with_data(
                data=camera.bytes_view(), usage=U.UNIFORM
            ),
        },
    )
    enc = gpu_device.create_command_encoder()
    rp = begin_color_pass(enc, target)
    rp.set_pipeline(pipeline)
    rp.set_bind_group(group, bind)
    rp.set_vertex_buffer(0, gpu_device.create_buffer_with_data(data=verts, usage=U.VERTEX))
    rp.draw(len(verts))
    rp.end()
    gpu_device.queue.submit([enc.finish()])
    rgba = read_rgba8(gpu_device, target, size)
    covered = rgba[:, :, 3] == 255
    want = np.zeros((size, size), bool)
    want[:, 4:12] = True  # x in [-1, 0] moved by 0.5: [-0.5, 0.5]
    np.testing.assert_array_equal(covered, want)
    assert (rgba[covered] == (255, 128, 64, 255)).all()
