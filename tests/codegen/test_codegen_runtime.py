"""The bindings runtime without a GPU: struct behaviour, layout checks, wgpu descriptors as data."""

from __future__ import annotations

import dataclasses
import os
import struct
from pathlib import Path

import codegen_samples as samples
import numpy as np
import pytest

from oneshader.bindings import from_reflection
from oneshader.bindings.binding import storage_texture_format
from oneshader.bindings.runtime import Struct, StructArray
from oneshader.codegen.names import STRUCT_RESERVED
from oneshader.reflection.model import (
    MatrixPacking,
    ScalarKind,
    SpecConstant,
    SpecSlot,
    Target,
    TypeKind,
    TypeLayout,
)
from oneshader.reflection.validate import LayoutError, check_layout


@pytest.fixture(scope="module")
def sprite():  # type: ignore[no-untyped-def]
    return from_reflection(samples.sprite(), "sprite")


@pytest.fixture(scope="module")
def particles():  # type: ignore[no-untyped-def]
    return from_reflection(samples.particles(), "particles")


def test_reserved_names_cover_the_struct_api() -> None:
    public = {n for cls in (Struct, StructArray) for n in dir(cls) if not n.startswith("_")}
    assert public <= STRUCT_RESERVED, public - STRUCT_RESERVED


def test_a_misspelt_field_is_an_error_not_a_new_attribute(sprite) -> None:  # type: ignore[no-untyped-def]
    frame = sprite.Frame()
    with pytest.raises(AttributeError):
        frame.Tnit = (1, 2, 3, 4)
    with pytest.raises(AttributeError, match="has no field 'Tnit'; it has ViewProjection, Tint"):
        frame.set(Tnit=1)
    with pytest.raises(AttributeError):
        sprite.Frame.array(2).Tnit = 1


def test_shape_errors_name_the_field(sprite) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(
        ValueError, match=r"Frame\.ViewProjection takes shape 4x4, got list of shape 3"
    ):
        sprite.Frame(ViewProjection=[1, 2, 3])


def test_nested_structs_and_arrays_share_memory(particles) -> None:  # type: ignore[no-untyped-def]
    lights = particles.Lights(Count=2, Enabled=True)
    lights.Items[0].Intensity = 2.5
    lights.Items.Dir = [[0, 0, 1], [0, 1, 0], [1, 0, 0]]
    raw = lights.to_bytes()
    assert struct.unpack_from("<f", raw, 48 + 12)[0] == 2.5  # Items at 48, Intensity at 12
    assert struct.unpack_from("<3f", raw, 48 + 32 + 16) == (0.0, 1.0, 0.0)  # Items[1].Dir
    assert struct.unpack_from("<II", raw, 144) == (2, 1)
    assert lights.Enabled is True and lights.Count == 2
    light = particles.Light(Color=(1, 2, 3), Intensity=4)
    arr = particles.LightArray(3)
    assert len(arr) == 3 and arr.shape == (3,) and arr.nbytes == 96
    assert arr[2] != light
    copied = light.copy()
    copied.Intensity = 5
    assert light.Intensity == 4.0


def test_bytes_round_trip_keeps_padding(sprite) -> None:  # type: ignore[no-untyped-def]
    raw = bytes(range(128))
    frame = sprite.Frame.from_bytes(raw)
    assert frame.to_bytes() == raw == bytes(frame.bytes_view()) == frame.copy().to_bytes()
    frame.Weights = [7, 8, 9]
    out = frame.to_bytes()
    assert struct.unpack_from("<f", out, 96)[0] == 8.0
    assert out[84:96] == raw[84:96]  # the padding after Weights[0] is untouched
    with pytest.raises(ValueError, match="Frame is 128 bytes, got 127"):
        sprite.Frame.from_bytes(raw[:-1])
    arr = sprite.FrameArray.from_bytes(raw * 3)
    assert len(arr) == 3 and arr.to_bytes() == raw * 3
    with pytest.raises(ValueError, match="not a whole number"):
        sprite.FrameArray.from_bytes(raw + b"x")


def test_a_depth_texture_binds_as_depth() -> None:
    """A texture the reflection marks ``depth`` (WGSL ``texture_depth_2d``) needs no override."""
    model = samples.sprite()
    res = tuple(
        dataclasses.replace(r, depth=True) if r.name == "Tex" else r for r in model.resources
    )
    shadowed = from_reflection(dataclasses.replace(model, resources=res), "shadowed")
    (tex,) = [e for e in shadowed.SHADER.bind_group_layout_entries(0) if "texture" in e]
    assert tex["texture"]["sample_type"] == "depth"
    override = shadowed.SHADER.bind_group_layout_entries(0, sample_types={"Tex": "float"})
    assert next(e for e in override if "texture" in e)["texture"]["sample_type"] == "float"


def test_bind_group_layout_entries(sprite, particles) -> None:  # type: ignore[no-untyped-def]
    assert sprite.SHADER.bind_group_layout_entries(0) == [
        {
            "binding": 0,
            "visibility": 3,
            "buffer": {"type": "uniform", "has_dynamic_offset": False, "min_binding_size": 128},
        },
        {
            "binding": 1,
            "visibility": 2,
            "texture": {"sample_type": "float", "view_dimension": "2d", "multisampled": False},
        },
        {"binding": 2, "visibility": 2, "sampler": {"type": "filtering"}},
    ]
    depth = sprite.SHADER.bind_group_layout_entries(0, sample_types={"Tex": "depth"})
    assert depth[1]["texture"]["sample_type"] == "depth"
    assert particles.SHADER.groups() == [0, 1]
    group0 = particles.SHADER.bind_group_layout_entries(0)
    assert [e["buffer"]["type"] for e in group0] == [
        "storage",
        "uniform",
        "uniform",
    ]  # push: uniform
    assert particles.SHADER.bind_group_layout_entries(1) == [
        {
            "binding": 0,
            "visibility": 4,
            "storage_texture": {
                "access": "read-write",
                "format": "rgba8unorm",
                "view_dimension": "2d",
            },
        }
    ]
    assert (
        particles.resources.Lights.spirv.binding == 1
        and particles.resources.Lights.msl.binding == 2
    )
    with pytest.raises(LookupError, match="'Params' has no SpirV slot"):
        _ = particles.push_blocks.Params.spirv


@pytest.mark.parametrize(
    ("vk", "wgpu"),
    [
        ("rgba8", "rgba8unorm"),
        ("rgba8snorm", "rgba8snorm"),
        ("rgba16f", "rgba16float"),
        ("r32f", "r32float"),
        ("rgba32ui", "rgba32uint"),
        ("r32i", "r32sint"),
        ("r11g11b10f", "rg11b10ufloat"),
        ("rgb10a2", "rgb10a2unorm"),
    ],
)
def test_storage_texture_formats(vk: str, wgpu: str) -> None:
    assert storage_texture_format(vk, None) == wgpu


def test_storage_texture_format_from_texel_type() -> None:
    assert storage_texture_format(None, samples.vector(4)) == "rgba32float"
    assert storage_texture_format(None, samples.scalar(ScalarKind.UInt)) == "r32uint"
    with pytest.raises(ValueError, match="3 channels"):
        storage_texture_format(None, samples.vector(3))


def test_vertex_layout_and_dtype(sprite) -> None:  # type: ignore[no-untyped-def]
    vs = sprite.entries.VSMain
    assert vs.vertex_buffers() == [
        {
            "array_stride": 16,
            "step_mode": "vertex",
            "attributes": [
                {"format": "float32x2", "offset": 0, "shader_location": 0},
                {"format": "float32x2", "offset": 8, "shader_location": 1},
            ],
        }
    ]
    dt = vs.vertex_dtype()
    assert dt.itemsize == 16 and dt.fields["UV"][1] == 8
    assert sprite.entries.PSMain.vertex_buffers() == []
    with pytest.raises(ValueError, match="PSMain is a Pixel entry point"):
        sprite.entries.PSMain.vertex_buffer_layout()


def test_spec_constants(particles) -> None:  # type: ignore[no-untyped-def]
    gravity = particles.spec_constants.Gravity
    assert gravity.key == "0" and gravity.wgsl_name == "Gravity_0"
    assert gravity.default == pytest.approx(9.81)
    assert particles.constants() == {}
    assert particles.constants(Gravity=1.5, Steps=None) == {"0": 1.5}
    assert [s.name for s in particles.entries.main.spec_constants] == ["Gravity", "Steps"]
    neg = SpecConstant(
        "N", 3, ScalarKind.Int, default=0xFFFFFFFE, slots=(SpecSlot(Target.Msl, 3, "n"),)
    )
    from oneshader.bindings.shader import Spec

    assert Spec(neg).default == -2 and Spec(neg).key == "3"


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        (
            samples.struct("S", 16, ("a", 0, samples.array(samples.scalar(), 2, 2))),
            "stride 2 is smaller",
        ),
        (
            samples.struct("S", 16, ("a", 0, samples.vector(4)), ("b", 8, samples.scalar())),
            "overlaps 'a'",
        ),
        (samples.struct("S", 16, ("a", 2, samples.scalar())), "not aligned"),
        (samples.struct("S", 16, ("a", 8, samples.vector(4))), "runs past the struct's size 16"),
        (samples.struct("S", 64, ("m", 0, samples.matrix(4, 4, mstride=8))), "matrix stride 8"),
        (
            samples.struct("S", 64, ("v", 0, dataclasses.replace(samples.vector(4), rows=5))),
            "1 to 4 components",
        ),
        (TypeLayout(TypeKind.Array, length=2, stride=4), "without an element"),
    ],
)
def test_unsound_layouts_are_rejected(layout: TypeLayout, message: str) -> None:
    with pytest.raises(LayoutError, match=message):
        check_layout(layout, "S")


def test_row_major_matrix_in_an_array() -> None:
    m = samples.matrix(2, 3, mstride=16, packing=MatrixPacking.RowMajor)  # 2 rows of 3, 16 apart
    layout = samples.struct("S", 64, ("ms", 0, samples.array(m, 2, 32)))
    mod = from_reflection(samples.one_buffer(layout), "m")
    s = mod.S()
    s.ms = np.arange(12).reshape(2, 2, 3)
    raw = s.to_bytes()
    for k in range(2):
        for r in range(2):
            assert struct.unpack_from("<3f", raw, 32 * k + 16 * r) == tuple(
                float(6 * k + 3 * r + c) for c in range(3)
            )


def test_slices_are_views_and_bad_values_name_the_field(particles) -> None:  # type: ignore[no-untyped-def]
    ps = particles.Particle.array(6)
    tail = ps[2:5]
    assert isinstance(tail, particles.ParticleArray) and len(tail) == 3
    tail.Mass = [1, 2, 3]
    assert ps.Mass.tolist() == [0, 0, 1, 2, 3, 0]
    assert ps[-1].Mass == 0.0 and [p.Mass for p in ps][3] == 2.0
    lights = particles.Lights()
    with pytest.raises(
        ValueError, match=r"Lights\.Count holds uint32 \(0\.\.4294967295\), got int -1"
    ):
        lights.Count = -1
    with pytest.raises(ValueError, match=r"Lights\.Count holds uint32 integers, got str 'many'"):
        lights.Count = "many"
    with pytest.raises(ValueError, match=r"Lights\.Count holds uint32 integers, got float 1\.5"):
        lights.Count = 1.5  # numpy would store 1
    with pytest.raises(ValueError, match=r"got float nan"):
        lights.Count = float("nan")
    lights.Count = 3.0  # an integral float is that integer
    assert lights.Count == 3
    assert particles.Lights(Count=7).Count == 7


def test_write_many_if_changed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from oneshader.fsutil import write_many_if_changed

    a, b = tmp_path / "d" / "a.py", tmp_path / "d" / "b.py"
    assert write_many_if_changed([(a, b"1"), (b, b"2")]) == [a, b]
    assert write_many_if_changed([(a, b"1"), (b, b"3")]) == [b]
    assert a.read_bytes() == b"1" and b.read_bytes() == b"3"
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["a.py", "b.py"]  # no temporaries


def test_write_many_if_changed_is_all_or_nothing_and_never_syncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from oneshader.fsutil import write_many_if_changed

    def refuse(*_: object) -> None:
        raise AssertionError("regenerable outputs are not flushed (docs/bindings.md)")

    monkeypatch.setattr(os, "fsync", refuse)
    monkeypatch.setattr(os, "sync", refuse)
    a = tmp_path / "a.py"
    a.write_bytes(b"old")
    (tmp_path / "blocker").write_bytes(b"")  # a file where a folder must be made
    with pytest.raises(OSError):
        write_many_if_changed([(a, b"new"), (tmp_path / "blocker" / "b.py", b"2")])
    assert a.read_bytes() == b"old"  # the first file was written but not renamed over
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "blocker"]
    assert write_many_if_changed([(a, b"new")]) == [a] and a.read_bytes() == b"new"
