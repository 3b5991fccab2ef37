"""On the software adapter, with the real compiler: values written through the generated structs
are the values the shader reads (matrices of both packings, padded matrices, arrays of structs,
a push block as a WGSL uniform), and the generated layouts for textures, storage textures and
samplers are the ones the shader declares."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from probe_build import build_probes

from oneshader.reflection.model import Target


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, ModuleType]]:
    return build_probes(
        tmp_path_factory.mktemp("gpubind"),
        "gpubind",
        ("layout_probe", "storage_probe", "counter_probe"),
    )


def _run(
    gpu_device: Any,
    shader: Any,
    out: Path,
    buffers: dict[Any, Any],
    groups: tuple[int, int, int],
    target: Target = Target.Wgsl,
) -> None:
    S = shader.SHADER
    entry = shader.entries.Main
    layouts = S.create_bind_group_layouts(gpu_device)
    pipeline = gpu_device.create_compute_pipeline(
        layout=S.create_pipeline_layout(gpu_device, layouts),
        compute=entry.stage_descriptor(S.create_shader_module(gpu_device, out, target=target)),
    )
    enc = gpu_device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipeline)
    by_group: dict[int, dict[Any, Any]] = {}
    for binding, obj in buffers.items():
        by_group.setdefault(binding.wgsl.set, {})[binding] = obj
    for group, members in by_group.items():
        cp.set_bind_group(group, S.create_bind_group(gpu_device, layouts[group], members))
    cp.dispatch_workgroups(*groups)
    cp.end()
    gpu_device.queue.submit([enc.finish()])


def test_layouts_agree_with_the_shader(
    built: tuple[Path, dict[str, ModuleType]], gpu_device: Any
) -> None:
    import wgpu

    out, mods = built
    probe = mods["layout_probe"]
    m = np.arange(16, dtype=np.float32).reshape(4, 4) + 1
    r = m + 100
    n = np.arange(9, dtype=np.float32).reshape(3, 3) + 200
    w = np.arange(8, dtype=np.float32).reshape(2, 4) + 300
    colors = np.array([[401, 402, 403], [411, 412, 413]], np.float32)
    weights = np.array([404, 414], np.float32)
    cb = probe.Probe(M=m, R=r, N=n, W=w, V=(501, 502, 503), Count=7)
    cb.Items.Color = colors
    cb.Items.Weight = weights
    push = probe.PushData(Scale=(0.5, 0.25), Bias=-3)
    assert probe.Probe.size == 256 and probe.PushData.size == 16
    expected = np.concatenate(
        [m.ravel(), r.ravel(), n.ravel(), w.ravel(),
         np.c_[colors, weights].ravel(), [501, 502, 503, 7, 0.5, 0.25, -3]]
    ).astype(np.float32)  # fmt: skip

    usage = wgpu.BufferUsage
    res = probe.resources
    ub = gpu_device.create_buffer_with_data(data=cb.bytes_view(), usage=usage.UNIFORM)
    pb = gpu_device.create_buffer_with_data(data=push.bytes_view(), usage=usage.UNIFORM)
    ob = gpu_device.create_buffer(size=4 * len(expected), usage=usage.STORAGE | usage.COPY_SRC)
    _run(
        gpu_device, probe, out, {res.Probe: ub, res.Out: ob, probe.push_blocks.Push: pb}, (1, 1, 1)
    )
    got = np.frombuffer(gpu_device.queue.read_buffer(ob), np.float32)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("target", [Target.Wgsl, Target.SpirV])
def test_counter_buffers_are_in_the_generated_layouts(
    built: tuple[Path, dict[str, ModuleType]], gpu_device: Any, target: Target
) -> None:
    """The counters of an append buffer and of an IncrementCounter buffer are bindings of their
    own (``resources.X.counter``), laid out and bound by the generated module alone."""
    import wgpu

    out, mods = built
    probe = mods["counter_probe"]
    res = probe.resources
    count = 100
    usage = wgpu.BufferUsage
    storage = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
    buffers = {
        res.Params: gpu_device.create_buffer_with_data(
            data=probe.Params(Count=count).bytes_view(), usage=usage.UNIFORM
        ),
        res.Evens: gpu_device.create_buffer(size=4 * count, usage=storage),
        res.Evens.counter: gpu_device.create_buffer(size=4, usage=storage),
        res.Odds: gpu_device.create_buffer(size=4 * count, usage=storage),
        res.Odds.counter: gpu_device.create_buffer(size=4, usage=storage),
    }
    entries = [e for g in probe.SHADER.groups() for e in probe.SHADER.bind_group_layout_entries(g)]
    assert sum(e.get("buffer", {}).get("type") == "storage" for e in entries) == 4
    _run(gpu_device, probe, out, buffers, (2, 1, 1), target)

    def read(binding: Any, n: int) -> np.ndarray:
        return np.frombuffer(gpu_device.queue.read_buffer(buffers[binding]), np.uint32)[:n]

    evens, odds = read(res.Evens.counter, 1)[0], read(res.Odds.counter, 1)[0]
    assert (evens, odds) == (count // 2, count // 2)
    assert sorted(read(res.Evens, evens)) == list(range(0, 3 * count, 6))
    assert sorted(read(res.Odds, odds)) == list(range(1, count, 2))
    with pytest.raises(LookupError, match="no counter buffer"):
        _ = res.Params.counter


@pytest.mark.parametrize("target", [Target.Wgsl, Target.SpirV])
def test_texture_and_storage_texture_layouts(
    built: tuple[Path, dict[str, ModuleType]], gpu_device: Any, target: Target
) -> None:
    """Run from the WGSL and from the SPIR-V module (naga reads both; set/binding agree here)."""
    import wgpu

    out, mods = built
    sp = mods["storage_probe"]
    entries = {e["binding"]: e for e in sp.SHADER.bind_group_layout_entries(0)}
    image = entries[sp.resources.Image.wgsl.binding]
    assert image["storage_texture"] == {
        "access": "write-only",  # only written: what every device allows (core WebGPU)
        "format": "rgba8unorm",
        "view_dimension": "2d",
    }
    src = np.random.default_rng(3).integers(0, 256, (8, 8, 4), dtype=np.uint8)
    tex = gpu_device.create_texture(
        size=(8, 8, 1),
        format=wgpu.TextureFormat.rgba8unorm,
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )
    gpu_device.queue.write_texture(
        {"texture": tex}, src.tobytes(), {"bytes_per_row": 32}, (8, 8, 1)
    )
    dst = gpu_device.create_texture(
        size=(8, 8, 1),
        format=image["storage_texture"]["format"],
        usage=wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.COPY_SRC,
    )
    sampler = gpu_device.create_sampler(mag_filter="nearest", min_filter="nearest")
    res = sp.resources
    wg = sp.entries.Main.workgroup
    _run(
        gpu_device,
        sp,
        out,
        {res.Image: dst.create_view(), res.Source: tex.create_view(), res.Nearest: sampler},
        (8 // wg[0], 8 // wg[1], 1),
        target,
    )
    data = gpu_device.queue.read_texture({"texture": dst}, {"bytes_per_row": 32}, (8, 8, 1))
    got = np.frombuffer(data, np.uint8).reshape(8, 8, 4)
    np.testing.assert_array_equal(got[..., :3], src[..., 2::-1])
    assert (got[..., 3] == 255).all()


def test_counter_buffers_bind_by_name_through_the_bind_group_class(
    built: tuple[Path, dict[str, ModuleType]], gpu_device: Any
) -> None:
    """``BindGroup0(Evens=..., Evens_counter=...)`` binds each buffer at its own binding: a
    swap of data and counter (both storage) would pass wgpu and show only in the results."""
    _, mods = built
    probe = mods["counter_probe"]
    res, main = probe.resources, probe.entries.Main
    count = 100
    buffers = {
        "Evens": res.Evens.create_buffer(gpu_device, size=4 * count),
        "Evens_counter": res.Evens.counter.create_buffer(gpu_device),
        "Odds": res.Odds.create_buffer(gpu_device, size=4 * count),
        "Odds_counter": res.Odds.counter.create_buffer(gpu_device),
    }
    params = res.Params.create_buffer(gpu_device, probe.Params(Count=count))
    group = probe.BindGroup0(gpu_device, Params=params, **buffers)
    enc = gpu_device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(probe.SHADER.create_compute_pipeline(gpu_device, main))
    group.set(cp)
    main.dispatch(cp, count)
    cp.end()
    gpu_device.queue.submit([enc.finish()])

    def read(name: str, n: int) -> list[int]:
        data = np.frombuffer(gpu_device.queue.read_buffer(buffers[name]), np.uint32)
        return sorted(int(x) for x in data[:n])

    assert read("Evens_counter", 1) == [count // 2] and read("Odds_counter", 1) == [count // 2]
    assert read("Evens", count // 2) == list(range(0, 3 * count, 6))
    assert read("Odds", count // 2) == list(range(1, count, 2))
