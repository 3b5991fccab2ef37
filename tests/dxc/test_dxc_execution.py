"""A texture and a sampler on one SPIR-V binding (t0/s0), drawn through the WGSL build.

ps_pair.hlsl puts ``albedo`` and ``albedoSampler`` on SPIR-V set 0, binding 0, as DXC does; WGSL
needs two bindings. The bind groups here are built from nothing but the reflection's Wgsl slots;
a full-screen triangle magnifies a 2x2 texture onto 4x4 pixels, once with a linear and once
with a nearest sampler, and numpy checks every pixel, so a wrong or unbound sampler shows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from dxc_build import build, slot_of
from dxc_cases import BUILDING

from oneshader.reflection.model import Target

TEXELS = np.array(
    [[[255, 0, 0, 255], [0, 255, 0, 255]], [[0, 0, 255, 255], [255, 255, 255, 255]]],
    dtype=np.uint8,
)
SIZE = 4


def _expected(filter_mode: str) -> np.ndarray:
    """The 4x4 magnification of TEXELS with clamp-to-edge addressing, per WebGPU's rules."""
    centers = (np.arange(SIZE) + 0.5) / SIZE * TEXELS.shape[0] - 0.5
    if filter_mode == "nearest":
        idx = np.clip(np.floor(centers + 0.5), 0, 1).astype(int)
        return TEXELS[idx][:, idx].astype(np.float64)
    i0 = np.floor(centers).astype(int)
    w = centers - i0
    lo, hi = np.clip(i0, 0, 1), np.clip(i0 + 1, 0, 1)
    t = TEXELS.astype(np.float64)
    rows = t[lo] * (1 - w)[:, None, None] + t[hi] * w[:, None, None]
    return rows[:, lo] * (1 - w)[None, :, None] + rows[:, hi] * w[None, :, None]


def _wgsl(file: str) -> tuple[str, Any]:
    case = next(c for c in BUILDING if c.file == file)
    built = build(case, (Target.Wgsl,))
    assert built.reflection is not None, "; ".join(d.format() for d in built.errors)
    (code,) = built.code[Target.Wgsl]
    return code.decode(), built


def _draw(
    device: Any, pipeline: Any, groups: dict[int, list[dict[str, Any]]], vbuf: Any = None
) -> np.ndarray:
    """One full-screen triangle into a fresh SIZE x SIZE rgba8 target, read back as floats."""
    import wgpu

    target = device.create_texture(
        size=(SIZE, SIZE, 1),
        format=wgpu.TextureFormat.rgba8unorm,
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )
    encoder = device.create_command_encoder()
    rpass = encoder.begin_render_pass(
        color_attachments=[
            {
                "view": target.create_view(),
                "load_op": wgpu.LoadOp.clear,
                "store_op": wgpu.StoreOp.store,
                "clear_value": (0, 0, 0, 0),
            }
        ]
    )
    rpass.set_pipeline(pipeline)
    for group, entries in groups.items():
        layout = pipeline.get_bind_group_layout(group)
        rpass.set_bind_group(group, device.create_bind_group(layout=layout, entries=entries))
    if vbuf is not None:
        rpass.set_vertex_buffer(0, vbuf)
    rpass.draw(3)
    rpass.end()
    device.queue.submit([encoder.finish()])
    data = device.queue.read_texture(
        {"texture": target, "mip_level": 0, "origin": (0, 0, 0)},
        {"offset": 0, "bytes_per_row": SIZE * 4, "rows_per_image": SIZE},
        (SIZE, SIZE, 1),
    )
    return np.frombuffer(data, dtype=np.uint8).reshape(SIZE, SIZE, 4).astype(np.float64)


def test_shared_binding_pair_samples_through_wgsl(gpu_device: Any) -> None:
    import wgpu

    vs_code, _ = _wgsl("vs_fullscreen.hlsl")
    ps_code, ps = _wgsl("ps_pair.hlsl")
    tex_slot = slot_of(ps.resource("albedo").slots, Target.Wgsl)
    samp_slot = slot_of(ps.resource("albedoSampler").slots, Target.Wgsl)

    device = gpu_device
    texture = device.create_texture(
        size=(2, 2, 1),
        format=wgpu.TextureFormat.rgba8unorm,
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )
    device.queue.write_texture(
        {"texture": texture, "mip_level": 0, "origin": (0, 0, 0)},
        TEXELS.tobytes(),
        {"offset": 0, "bytes_per_row": 8, "rows_per_image": 2},
        (2, 2, 1),
    )
    pipeline = device.create_render_pipeline(
        layout="auto",
        vertex={"module": device.create_shader_module(code=vs_code), "entry_point": "main"},
        fragment={
            "module": device.create_shader_module(code=ps_code),
            "entry_point": "main",
            "targets": [{"format": wgpu.TextureFormat.rgba8unorm}],
        },
        primitive={"topology": wgpu.PrimitiveTopology.triangle_list},
    )
    for mode in ("linear", "nearest"):
        sampler = device.create_sampler(mag_filter=mode, min_filter=mode)
        groups: dict[int, list[dict[str, Any]]] = {}
        groups.setdefault(tex_slot.set, []).append(
            {"binding": tex_slot.binding, "resource": texture.create_view()}
        )
        groups.setdefault(samp_slot.set, []).append(
            {"binding": samp_slot.binding, "resource": sampler}
        )
        pixels = _draw(device, pipeline, groups)
        expected = _expected(mode)
        assert np.abs(pixels - expected).max() <= 2.0, f"{mode}:\n{pixels}\nexpected\n{expected}"


def _vertex_bytes(built: Any, values: dict[str, tuple[float, ...]], count: int) -> bytes:
    """``count`` identical vertices laid out by nothing but the reflection's inputs and stride."""
    (entry,) = built.reflection.entry_points
    vertex = bytearray(entry.stride)
    for var in entry.inputs:
        data = np.array(values[var.semantic], dtype=np.float32).tobytes()
        assert var.format.value == f"float32x{len(values[var.semantic])}", var
        vertex[var.offset : var.offset + len(data)] = data
    return bytes(vertex) * count


def test_vk_location_stages_link_through_wgsl(gpu_device: Any) -> None:
    """vs_location writes COLOR0/TEXCOORD0 at [[vk::location(2/4)]], ps_location reads them there:
    the pipeline only links if WGSL keeps DXC's locations, and the colour only arrives if the
    vertex buffer follows the reflection (inputs at locations 3, 0, 5)."""
    import wgpu

    vs_code, vs = _wgsl("vs_location.hlsl")
    ps_code, ps = _wgsl("ps_location.hlsl")
    (entry,) = vs.reflection.entry_points
    device = gpu_device
    color = (0.25, 0.5, 0.75, 1.0)
    triangle = [(-1.0, -1.0, 0.0), (3.0, -1.0, 0.0), (-1.0, 3.0, 0.0)]
    data = b"".join(
        _vertex_bytes(vs, {"POSITION": p, "COLOR": color, "TEXCOORD": (0.5, 0.5)}, 1)
        for p in triangle
    )
    vbuf = device.create_buffer_with_data(data=data, usage=wgpu.BufferUsage.VERTEX)
    attributes = [
        {"shader_location": v.location, "offset": v.offset, "format": v.format.value}
        for v in entry.inputs
    ]
    pipeline = device.create_render_pipeline(
        layout="auto",
        vertex={
            "module": device.create_shader_module(code=vs_code),
            "entry_point": "main",
            "buffers": [{"array_stride": entry.stride, "attributes": attributes}],
        },
        fragment={
            "module": device.create_shader_module(code=ps_code),
            "entry_point": "main",
            "targets": [{"format": wgpu.TextureFormat.rgba8unorm}],
        },
        primitive={"topology": wgpu.PrimitiveTopology.triangle_list},
    )
    camera = device.create_buffer_with_data(
        data=np.eye(4, dtype=np.float32).tobytes(), usage=wgpu.BufferUsage.UNIFORM
    )
    white = device.create_texture(
        size=(1, 1, 1),
        format=wgpu.TextureFormat.rgba8unorm,
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )
    device.queue.write_texture(
        {"texture": white, "mip_level": 0, "origin": (0, 0, 0)},
        bytes([255, 255, 255, 255]),
        {"offset": 0, "bytes_per_row": 4, "rows_per_image": 1},
        (1, 1, 1),
    )
    resources = {
        "Camera": {"buffer": camera, "offset": 0, "size": 64},
        "tex": white.create_view(),
        "samp": device.create_sampler(),
    }
    groups: dict[int, list[dict[str, Any]]] = {}
    for built in (vs, ps):
        for r in built.reflection.resources:
            slot = slot_of(r.slots, Target.Wgsl)
            groups.setdefault(slot.set, []).append(
                {"binding": slot.binding, "resource": resources[r.name]}
            )
    pixels = _draw(device, pipeline, groups, vbuf)
    expected = np.array(color) * 255.0
    assert np.abs(pixels - expected).max() <= 1.0, pixels


def _compute_result(device: Any, file: str, block: str, data: bytes) -> float:
    """Run ``file``'s compute ``main`` through the WGSL build with ``data`` as the constant
    buffer ``block`` (bound at its reflected Wgsl slot) and return ``results[0]``."""
    import wgpu

    code, built = _wgsl(file)
    pipeline = device.create_compute_pipeline(
        layout="auto",
        compute={"module": device.create_shader_module(code=code), "entry_point": "main"},
    )
    size = built.resource(block).layout.size
    uniform = device.create_buffer_with_data(
        data=data.ljust(size, b"\0"), usage=wgpu.BufferUsage.UNIFORM
    )
    results = device.create_buffer(
        size=16, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    )
    bound = {block: uniform, "results": results}
    groups: dict[int, list[dict[str, Any]]] = {}
    for r in built.reflection.resources:
        slot = slot_of(r.slots, Target.Wgsl)
        buffer = bound[r.name]
        groups.setdefault(slot.set, []).append(
            {
                "binding": slot.binding,
                "resource": {"buffer": buffer, "offset": 0, "size": buffer.size},
            }
        )
    encoder = device.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    for group, entries in groups.items():
        layout = pipeline.get_bind_group_layout(group)
        cpass.set_bind_group(group, device.create_bind_group(layout=layout, entries=entries))
    cpass.dispatch_workgroups(1)
    cpass.end()
    device.queue.submit([encoder.finish()])
    return float(np.frombuffer(bytes(device.queue.read_buffer(results)), np.float32)[0])


def test_row_major_matrix_arrays_read_at_dxcs_offsets(gpu_device: Any) -> None:
    """cs_row_major_array on WGSL, every float of Skin holding its own byte offset: the shader
    adds a (0), bones[1][1][2] (16 + 32 + 16 + 8 = 72 with DXC's stride 32, not 48), b (80)
    and pose.joints[1][0][1] (112 + 32 + 4 = 148) times pose.weight (96)."""
    words = np.arange(0, 256, 4, dtype=np.float32)
    got = _compute_result(gpu_device, "cs_row_major_array.hlsl", "Skin", words.tobytes())
    assert got == 0 + 72 + 80 + 148 * 96


def test_row_major_int_matrix_reads_its_rows(gpu_device: Any) -> None:
    """cs_int_matrix on WGSL: cells[1][2] is the int at 16 + 8 (the second row, 16 bytes on),
    scale the float at 32."""
    data = np.zeros(12, np.int32)
    data[6] = 7  # byte 24: cells[1][2]
    data[8] = np.array([3.0], np.float32).view(np.int32)[0]  # byte 32: scale
    assert _compute_result(gpu_device, "cs_int_matrix.hlsl", "Params", data.tobytes()) == 21.0
