"""Shaders really run on this machine's adapter (llvmpipe), built to SPIR-V and to WGSL, with every
buffer packed, every binding chosen and every vertex attribute described from the reflection
alone; numpy says what the results must be. No adapter is a failure, not a skip."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest
from verify_support import CORPUS, compile_exec, element_stride, pack, render, unpack

from module_validation import device
from oneshader.reflection.model import (
    EntryPoint,
    Resource,
    ShaderReflection,
    Slot,
    Stage,
    Target,
    VertexFormat,
)

_TARGETS = [Target.SpirV, Target.Wgsl]


def _module(result: Any, target: Target) -> Any:
    (out,) = [o for o in result.outputs if o.target is target]
    code: bytes | str = out.data if target is Target.SpirV else out.data.decode("utf-8")
    return device().create_shader_module(label=f"exec{out.suffix}", code=code)


def _slot(res: Resource, target: Target) -> Slot:
    return next(s for s in res.slots if s.target is target)


def _resource(r: ShaderReflection, name: str) -> Resource:
    return next(x for x in r.resources if x.name == name)


def _bind_groups(
    pipeline: Any, r: ShaderReflection, target: Target, buffers: dict[str, Any]
) -> list[tuple[int, Any]]:
    """One bind group per set/group the reflection names, each binding where its slot says."""
    import wgpu

    groups: dict[int, list[dict[str, Any]]] = {}
    for name, buf in buffers.items():
        slot = _slot(_resource(r, name), target)
        groups.setdefault(slot.set, []).append(
            {"binding": slot.binding, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        )
    out = []
    for index, entries in sorted(groups.items()):
        layout = pipeline.get_bind_group_layout(index)
        out.append((index, device().create_bind_group(layout=layout, entries=entries)))
    assert wgpu is not None
    return out


def _dispatch(result: Any, target: Target, buffers: dict[str, Any], groups: int) -> None:
    """Run the single compute entry of ``result`` on ``target`` over ``groups`` workgroups in x,
    each buffer bound where the reflection puts it."""
    r: ShaderReflection = result.reflection
    (entry,) = r.entry_points
    dev = device()
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": _module(result, target), "entry_point": entry.name}
    )
    encoder = dev.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    for index, group in _bind_groups(pipeline, r, target, buffers):
        cpass.set_bind_group(index, group)
    cpass.dispatch_workgroups(groups, 1, 1)
    cpass.end()
    dev.queue.submit([encoder.finish()])


# -- compute ------------------------------------------------------------------------------------

_N = 13  # not a multiple of the workgroup size: the shader's Count guard is exercised too


def _compute_inputs() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rng = np.random.default_rng(7)

    def small(*shape: int) -> Any:
        return (rng.integers(-8, 9, size=shape) / 4.0).astype(np.float32)

    params = {
        "Affine": small(3, 4).tolist(),
        "Transform": small(4, 4).tolist(),
        "Offset": small(3).tolist(),
        "Gain": 1.5,
        "Lights": [
            {"Color": small(4).tolist(), "Direction": small(3).tolist(), "Intensity": 0.75},
            {"Color": small(4).tolist(), "Direction": small(3).tolist(), "Intensity": -2.0},
        ],
        "Weights": [small(4).tolist(), small(4).tolist()],
        "Step": [3, -5],
        "Count": _N,
        "Mode": 9,
    }
    items = [
        {
            "Position": small(3).tolist(),
            "Mass": float(small(1)[0]),
            "Uv": small(2).tolist(),
            "Id": i * 3 + 1,
            "Delta": int(rng.integers(-100, 100)),
        }
        for i in range(_N)
    ]
    return params, items


def _expected(params: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    f = np.float32
    pos = np.array(item["Position"], f)
    value = (np.array(params["Transform"], f) @ np.append(pos, f(1.0))) * f(params["Gain"])
    moved = np.array(params["Affine"], f) @ np.append(pos, f(item["Mass"])) + np.array(
        params["Offset"], f
    )
    w0, w1 = (np.array(w, f) for w in params["Weights"])
    lit = f(0.0)
    for light in params["Lights"]:
        lit += f(light["Intensity"]) * np.dot(np.array(light["Direction"], f), pos)
        lit += f(light["Color"][3])
    return {
        "Value": value,
        "Moved": moved,
        "Id": item["Id"] * 2 + params["Mode"],
        "Uv": np.array(item["Uv"], f) * w1[:2] + w0[2:],
        "Lit": lit,
        "Sum": item["Delta"] + params["Step"][0] * params["Step"][1],
    }


@pytest.mark.parametrize("target", _TARGETS, ids=lambda t: t.value)
def test_compute_reads_buffers_packed_from_the_reflection(target: Target) -> None:
    import wgpu

    result = compile_exec("layout_compute.hlsl")
    r: ShaderReflection = result.reflection
    (entry,) = r.entry_points
    params_layout = _resource(r, "Params").layout
    item_layout = _resource(r, "Items").layout
    result_layout = _resource(r, "Results").layout
    assert params_layout and item_layout and result_layout

    params, items = _compute_inputs()
    cbuf = bytearray(params_layout.size)
    pack(params_layout, params, cbuf)
    istride = element_stride(item_layout)
    ibuf = bytearray(istride * _N)
    for i, item in enumerate(items):
        pack(item_layout, item, ibuf, i * istride)
    rstride = element_stride(result_layout)
    slots = _N + 3  # room past Count: the shader must leave it untouched

    dev = device()
    usage = wgpu.BufferUsage
    buffers = {
        "Params": dev.create_buffer_with_data(data=bytes(cbuf), usage=usage.UNIFORM),
        "Items": dev.create_buffer_with_data(data=bytes(ibuf), usage=usage.STORAGE),
        "Results": dev.create_buffer(
            size=rstride * slots, usage=usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
        ),
    }
    sentinel = b"\xab" * (rstride * slots)
    dev.queue.write_buffer(buffers["Results"], 0, sentinel)
    _dispatch(result, target, buffers, -(-_N // entry.workgroup[0]))
    out = bytes(dev.queue.read_buffer(buffers["Results"]))

    for i, item in enumerate(items):
        got = unpack(result_layout, out, i * rstride)
        want = _expected(params, item)
        for name in ("Value", "Moved", "Uv"):
            np.testing.assert_allclose(got[name], want[name], rtol=1e-6, err_msg=f"{i}.{name}")
        np.testing.assert_allclose(got["Lit"], want["Lit"], rtol=1e-6, err_msg=f"{i}.Lit")
        assert (got["Id"], got["Sum"]) == (want["Id"], want["Sum"]), i
    assert out[_N * rstride :] == sentinel[_N * rstride :]


# -- render -------------------------------------------------------------------------------------

_SIZE = 64  # 64 rgba8 texels make a 256-byte row, the copy alignment
_ATTR = {"float32": "f", "uint32": "I", "sint32": "i", "float16": "e", "uint16": "H",
         "sint16": "h", "uint8": "B", "sint8": "b"}  # fmt: skip


def _vertex_bytes(entry: EntryPoint, vertices: list[dict[str, Any]]) -> bytes:
    """Interleaved vertices written at each input's offset, in its format, ``stride`` apart."""
    data = bytearray(entry.stride * len(vertices))
    for n, vertex in enumerate(vertices):
        for var in entry.inputs:
            if var.location is None:
                continue
            base, _, count = var.format.value.partition("x")
            values = vertex[var.name]
            values = values if isinstance(values, list) else [values]
            assert len(values) == int(count or 1) == var.components, var
            struct.pack_into(
                "<" + _ATTR[base] * len(values), data, n * entry.stride + var.offset, *values
            )
    return bytes(data)


def _quad(x0: float, x1: float, **attrs: Any) -> list[dict[str, Any]]:
    corners = [(x0, -1.0), (x1, -1.0), (x1, 1.0), (x0, -1.0), (x1, 1.0), (x0, 1.0)]
    return [{"Position": [x, y], **attrs} for x, y in corners]


@pytest.mark.parametrize("target", _TARGETS, ids=lambda t: t.value)
def test_render_uses_the_reflected_vertex_layout(target: Target) -> None:
    import wgpu

    result = compile_exec("render_vertex.hlsl")
    r: ShaderReflection = result.reflection
    vs = next(e for e in r.entry_points if e.stage is Stage.Vertex)
    ps = next(e for e in r.entry_points if e.stage is Stage.Pixel)
    located = [v for v in vs.inputs if v.location is not None]
    assert vs.stride > 0 and all(v.format is not VertexFormat.None_ for v in located)

    vertices = _quad(-1.0, 0.0, Scale=2.0, Color=[0.25, 0.5, 0.125, 1.0], Tag=3, Shift=[2, 2])
    vertices += _quad(0.0, 1.0, Scale=0.5, Color=[1.0, 0.0, 0.0, 1.0], Tag=1, Shift=[-1, 0])
    dev = device()
    usage = wgpu.BufferUsage
    vbuf = dev.create_buffer_with_data(data=_vertex_bytes(vs, vertices), usage=usage.VERTEX)
    tint = _resource(r, "Tint")
    assert tint.layout is not None
    tbuf = bytearray(tint.layout.size)
    pack(tint.layout, {"Add": [0.0, -0.5, 0.0, 0.0]}, tbuf)
    buffers = {"Tint": dev.create_buffer_with_data(data=bytes(tbuf), usage=usage.UNIFORM)}

    module = _module(result, target)
    pipeline = dev.create_render_pipeline(
        layout="auto",
        vertex={
            "module": module,
            "entry_point": vs.name,
            "buffers": [
                {
                    "array_stride": vs.stride,
                    "step_mode": "vertex",
                    "attributes": [
                        {
                            "format": v.format.value,
                            "offset": v.offset,
                            "shader_location": v.location,
                        }
                        for v in located
                    ],
                }
            ],
        },
        primitive={"topology": "triangle-list", "cull_mode": "none"},
        depth_stencil=None,
        multisample=None,
        fragment={
            "module": module,
            "entry_point": ps.name,
            "targets": [{"format": "rgba8unorm"}],
        },
    )

    def draw(rpass: Any) -> None:
        rpass.set_pipeline(pipeline)
        for index, group in _bind_groups(pipeline, r, target, buffers):
            rpass.set_bind_group(index, group)
        rpass.set_vertex_buffer(0, vbuf)
        rpass.draw(len(vertices))

    pixels = render(draw, _SIZE).astype(int)
    # Left: (0.25,0.5,0.125)*2 = (0.5,1,0.25), Tag 3+2+2 = 7 adds 0.5 blue, Add takes 0.5 green.
    left = np.array([128, 128, 191, 255])
    # Right: (1,0,0)*0.5, Tag 1-1+0 = 0 adds nothing; green clamps at 0.
    right = np.array([128, 0, 0, 255])
    assert np.abs(pixels[8 : _SIZE - 8, 4 : _SIZE // 2 - 4] - left).max() <= 1
    assert np.abs(pixels[8 : _SIZE - 8, _SIZE // 2 + 4 : _SIZE - 4] - right).max() <= 1


# -- push and specialization constants ----------------------------------------------------------


def test_push_block_and_spec_constants_where_the_reflection_puts_them() -> None:
    """WGSL only: SPIR-V push constants need wgpu's "immediates", which the OpenGL backend here
    cannot run for a struct block; WGSL gets the block as a uniform buffer at the reflection's
    slot, and the overrides are set through the reflection's WGSL ids."""
    import wgpu

    result = compile_exec("push_spec_compute.hlsl")
    r: ShaderReflection = result.reflection
    (entry,) = r.entry_points
    (push,) = r.push_blocks
    assert push.layout is not None and entry.pushuse == (push.name,)
    pslot = next(s for s in push.slots if s.target is Target.Wgsl)
    out = _resource(r, "Out")
    assert out.layout is not None
    values = {"Gain": 2.0, "Offset": 3, "Negate": 1}
    constants = {}
    for spec in r.spec_constants:
        wslot = next(s for s in spec.slots if s.target is Target.Wgsl)
        constants[str(wslot.index)] = float(values[spec.name])

    dev = device()
    pbuf = bytearray(push.layout.size)
    pack(push.layout, {"Scale": [1.0, -2.0, 0.5, 4.0], "Base": 5, "Bias": 0.25}, pbuf)
    count = 8
    stride = element_stride(out.layout)
    usage = wgpu.BufferUsage
    obuf = dev.create_buffer(size=stride * count, usage=usage.STORAGE | usage.COPY_SRC)
    pipeline = dev.create_compute_pipeline(
        layout="auto",
        compute={
            "module": _module(result, Target.Wgsl),
            "entry_point": entry.name,
            "constants": constants,
        },
    )
    groups: dict[int, list[dict[str, Any]]] = {}
    oslot = _slot(out, Target.Wgsl)
    pushed = dev.create_buffer_with_data(data=bytes(pbuf), usage=usage.UNIFORM)
    for slot, buf in ((oslot, obuf), (pslot, pushed)):
        groups.setdefault(slot.set, []).append(
            {"binding": slot.binding, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        )
    encoder = dev.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    for index, entries in groups.items():
        layout = pipeline.get_bind_group_layout(index)
        cpass.set_bind_group(index, dev.create_bind_group(layout=layout, entries=entries))
    cpass.dispatch_workgroups(count // entry.workgroup[0], 1, 1)
    cpass.end()
    dev.queue.submit([encoder.finish()])
    data = bytes(dev.queue.read_buffer(obuf))
    got = np.array([unpack(out.layout, data, i * stride) for i in range(count)], np.float32)
    scale = np.array([1.0, -2.0, 0.5, 4.0], np.float32)
    index = np.arange(count, dtype=np.float32)[:, None]
    want = -(scale * (index + 5 + 3) * 2.0 + 0.25)
    np.testing.assert_allclose(got, want, rtol=1e-6)


# -- constant buffers the host sizes and packs from the reflection alone ------------------------


def _run_outputs(result: Any, target: Target, values: dict[str, Any], count: int) -> list[float]:
    """Dispatch the single compute entry once with each constant buffer of ``values`` packed into
    a buffer of exactly the reflected size, and read ``count`` floats of ``Out``."""
    import wgpu

    r: ShaderReflection = result.reflection
    dev = device()
    usage = wgpu.BufferUsage
    buffers: dict[str, Any] = {}
    for name, value in values.items():
        layout = _resource(r, name).layout
        assert layout is not None
        data = bytearray(layout.size)
        pack(layout, value, data)
        buffers[name] = dev.create_buffer_with_data(data=bytes(data), usage=usage.UNIFORM)
    buffers["Out"] = dev.create_buffer(size=4 * count, usage=usage.STORAGE | usage.COPY_SRC)
    _dispatch(result, target, buffers, 1)
    return list(struct.unpack(f"<{count}f", bytes(dev.queue.read_buffer(buffers["Out"]))))


@pytest.mark.parametrize("target", _TARGETS, ids=lambda t: t.value)
def test_scalar_arrays_in_a_constant_buffer_are_read_at_the_reflected_stride(
    target: Target,
) -> None:
    """``float W[3]`` is 16 bytes per element in std140 and, through Slang's vec4 slots, in WGSL;
    W[1] must come from offset 16 of W."""
    result = compile_exec("cbuffer_arrays_compute.hlsl")
    params = {
        "W": [1.5, -2.25, 3.0],
        "X": [0.0, 0.0, 0.0, 7.5],
        "I": [11, -12],
        "V": [[0.5, 0.25], [4.0, -8.0]],
    }
    got = _run_outputs(result, target, {"Params": params}, 7)
    assert got == [1.5, -2.25, 3.0, 7.5, -12.0, -8.0, 0.5]


@pytest.mark.parametrize("target", _TARGETS, ids=lambda t: t.value)
def test_globals_and_metal_smaller_cbuffers_packed_from_the_reflection(target: Target) -> None:
    """Built for all three targets: Small and Tail are smaller on Metal (tail padding only), so
    the reflection records std140's sizes; WebGPU refuses a uniform buffer smaller than the
    shader's block, so the reflected sizes are proved large enough here, and every value read."""
    from oneshader.compiler import CompileOptions, compile_file

    key = "exec/globals_tail_compute.hlsl"
    options = CompileOptions(targets=(Target.SpirV, Target.Msl, Target.Wgsl), source_name=key)
    result = compile_file(str(CORPUS / key), options)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    r: ShaderReflection = result.reflection
    sizes = {x.name: x.layout.size for x in r.resources if x.layout is not None}
    assert (sizes["Small"], sizes["Tail"], sizes["$Globals"]) == (16, 32, 32)
    values = {
        "Small": {"A": 2.5},
        "$Globals": {"Tint": [0.0, -3.5, 0.0, 0.0], "Time": 42.0},
        "Tail": {"P": [0.0, 0.0, 6.25, 0.0], "Q": [0.0, -0.125]},
    }
    assert _run_outputs(result, target, values, 5) == [2.5, -3.5, 42.0, 6.25, -0.125]


# -- atomics ------------------------------------------------------------------------------------

_ATOMIC_N = 1000  # 16 workgroups of 64, the last one partly past Count
_ATOMIC_BINS = 8


@pytest.mark.parametrize("target", _TARGETS, ids=lambda t: t.value)
def test_atomics_count_what_numpy_counts(target: Target) -> None:
    """Slang's Atomic<T> (WGSL atomic<u32>/atomic<i32>) run for real: groupshared and buffer
    adds, a signed add, max, min, the original value add returns, compareExchange."""
    import wgpu

    result = compile_exec("atomics_compute.hlsl")
    r: ShaderReflection = result.reflection
    (entry,) = r.entry_points
    layouts = {res.name: res.layout for res in r.resources}
    params_layout, total_layout = layouts["Params"], layouts["Total"]
    assert params_layout and total_layout
    for name in ("Bins", "First", "Tickets", "Values"):
        lay = layouts[name]
        assert lay is not None and lay.kind.name == "Scalar" and lay.scalar.name == "UInt", name
        assert element_stride(lay) == 4, name
    assert [(m.name, m.offset, m.type.scalar.name) for m in total_layout.members] == [
        ("Sum", 0, "Int"), ("Max", 4, "UInt"), ("Min", 8, "UInt"), ("Calls", 12, "UInt")
    ]  # fmt: skip

    values = np.random.default_rng(11).integers(0, 200, size=_ATOMIC_N, dtype=np.uint32)
    cbuf = bytearray(params_layout.size)
    pack(params_layout, {"Count": _ATOMIC_N}, cbuf)
    tstride = element_stride(total_layout)
    total = bytearray(tstride)
    pack(total_layout, {"Sum": 0, "Max": 0, "Min": 0xFFFFFFFF, "Calls": 0}, total)

    dev = device()
    usage = wgpu.BufferUsage
    rw = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
    slots = 64 * -(-_ATOMIC_N // 64)  # the threads past Count must leave their tickets alone
    buffers = {
        "Params": dev.create_buffer_with_data(data=bytes(cbuf), usage=usage.UNIFORM),
        "Values": dev.create_buffer_with_data(data=values.tobytes(), usage=usage.STORAGE),
        "Bins": dev.create_buffer_with_data(data=bytes(4 * _ATOMIC_BINS), usage=rw),
        "Total": dev.create_buffer_with_data(data=bytes(total), usage=rw),
        "Tickets": dev.create_buffer_with_data(data=b"\xab" * (4 * slots), usage=rw),
        "First": dev.create_buffer_with_data(data=b"\xff" * (4 * _ATOMIC_BINS), usage=rw),
    }
    _dispatch(result, target, buffers, slots // entry.workgroup[0])

    def read(name: str) -> Any:
        return np.frombuffer(bytes(dev.queue.read_buffer(buffers[name])), dtype=np.uint32)

    bins = read("Bins")
    np.testing.assert_array_equal(bins, np.bincount(values % _ATOMIC_BINS, minlength=_ATOMIC_BINS))
    got = unpack(total_layout, bytes(dev.queue.read_buffer(buffers["Total"])))
    assert got == {
        "Sum": int(values.astype(np.int64).sum()) - 50 * _ATOMIC_N,
        "Max": int(values.max()),
        "Min": int(values.min()),
        "Calls": _ATOMIC_N,
    }
    tickets = read("Tickets")
    # add returns the value before the add: every count 0..N-1 handed out exactly once.
    np.testing.assert_array_equal(np.sort(tickets[:_ATOMIC_N]), np.arange(_ATOMIC_N))
    assert (tickets[_ATOMIC_N:] == 0xABABABAB).all()
    first = read("First")
    # compareExchange(0xFFFFFFFF, i) stores only the first claim: a thread whose value is in bin b.
    for b, i in enumerate(first):
        assert i < _ATOMIC_N and values[i] % _ATOMIC_BINS == b, (b, i)


@pytest.mark.parametrize("target", _TARGETS, ids=lambda t: t.value)
def test_bools_in_buffers_read_and_write_what_the_host_packs(target: Target) -> None:
    """A bool in a buffer is 4 bytes holding 0 or 1 on every target (WGSL's code holds a
    uint: it has no bool in buffers); the reflection says Bool."""
    import wgpu

    result = compile_exec("bools_compute.hlsl")
    r: ShaderReflection = result.reflection
    layouts = {res.name: res.layout for res in r.resources}
    flags, item = layouts["Flags"], layouts["Items"]
    assert flags is not None and item is not None
    assert [(m.name, m.offset, m.type.scalar.name) for m in flags.members] == [
        ("enabled", 0, "Bool"), ("mask", 16, "Bool")
    ]  # fmt: skip
    assert [(m.name, m.offset, m.type.scalar.name) for m in item.members] == [
        ("value", 0, "Float"), ("on", 4, "Bool")
    ]  # fmt: skip
    cbuf = bytearray(flags.size)
    pack(flags, {"enabled": 1, "mask": [0, 1, 0]}, cbuf)
    stride = element_stride(item)
    items = bytearray(2 * stride)
    for i, value in enumerate([{"value": 5.0, "on": 0}, {"value": 3.0, "on": 1}]):
        pack(item, value, items, i * stride)
    dev = device()
    usage = wgpu.BufferUsage
    buffers = {
        "Flags": dev.create_buffer_with_data(data=bytes(cbuf), usage=usage.UNIFORM),
        "Items": dev.create_buffer_with_data(data=bytes(items), usage=usage.STORAGE),
        "Written": dev.create_buffer_with_data(
            data=b"\x07" * (2 * stride), usage=usage.STORAGE | usage.COPY_SRC
        ),
        "Results": dev.create_buffer_with_data(
            data=bytes(16), usage=usage.STORAGE | usage.COPY_SRC
        ),
    }
    _dispatch(result, target, buffers, 1)
    results = np.frombuffer(bytes(dev.queue.read_buffer(buffers["Results"])), np.float32)
    assert results.tolist() == [1.0, 1.0, 3.0, -1.0]
    written = bytes(dev.queue.read_buffer(buffers["Written"]))
    assert [unpack(item, written, i * stride) for i in range(2)] == [
        {"value": 3.0, "on": 0},
        {"value": struct.unpack_from("<f", written, stride)[0], "on": 1},
    ]
