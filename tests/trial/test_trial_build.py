"""Every trial shader builds for its targets (conftest.TARGETS), the reflection tools accept the
results, and the generated bindings import with exactly the reflection's sizes and offsets."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from trial_helpers import ALL, TARGETS, Project, oneshader

from oneshader.reflection import ReflectionFormat, ShaderReflection, TypeKind, TypeLayout

SUFFIX = {"spirv": ".spv", "msl": ".metal", "wgsl": ".wgsl"}
TOKEN = {"spirv": "SpirV", "msl": "Msl", "wgsl": "Wgsl"}
SCALAR = {"Float": np.float32, "Int": np.int32, "UInt": np.uint32}


def reflection(project: Project, shader: str) -> ShaderReflection:
    path = project.out(shader) / f"{shader}.reflection"
    return ReflectionFormat.read(path.read_bytes(), file=path.name)


@pytest.mark.parametrize("shader", sorted(TARGETS))
def test_builds_for_its_targets_and_no_other(project: Project, shader: str) -> None:
    out = project.out(shader)
    for target in ALL:
        assert (out / f"{shader}{SUFFIX[target]}").is_file() == (target in TARGETS[shader]), target
    model = reflection(project, shader)
    assert [t.name for t in model.targets] == [TOKEN[t] for t in TARGETS[shader]]
    assert model.source == f"shaders/{shader}.hlsl"
    text = (out / f"{shader}.reflection").read_text()
    assert str(project.root) not in text and "\\" not in model.source


def struct_layouts(model: ShaderReflection) -> dict[str, TypeLayout]:
    """Every top-level struct layout of a buffer or push block, by its struct's name."""
    found: dict[str, TypeLayout] = {}
    for holder in (*model.resources, *model.push_blocks):
        layout = holder.layout
        if layout is not None and layout.kind is TypeKind.Struct:
            found[layout.name or holder.name] = layout
    return found


def check_leaf(raw: bytes, base: int, t: TypeLayout, value: Any) -> None:
    """``value`` (math order) is stored at ``base`` as the layout says."""
    if t.kind is TypeKind.Array:
        assert t.element is not None
        for i in range(t.length):
            check_leaf(raw, base + i * t.stride, t.element, value[i])
        return
    dtype = SCALAR[t.scalar.name]
    if t.kind is TypeKind.Matrix:
        packed_cols = t.packing.name == "ColumnMajor"
        for k in range(t.cols if packed_cols else t.rows):
            n = t.rows if packed_cols else t.cols
            stored = np.frombuffer(raw, dtype, n, base + k * t.mstride)
            want = value[:, k] if packed_cols else value[k, :]
            np.testing.assert_array_equal(stored, want)
        return
    count = max(t.rows, 1) * max(t.cols, 1) if t.kind is TypeKind.Vector else 1
    np.testing.assert_array_equal(np.frombuffer(raw, dtype, count, base), np.ravel(value))


def sample(t: TypeLayout, seed: int) -> Any:
    """A value for a member whose every element differs."""
    if t.kind is TypeKind.Array:
        assert t.element is not None
        return np.stack([sample(t.element, seed * 7 + i) for i in range(t.length)])
    if t.kind is TypeKind.Matrix:
        return np.arange(t.rows * t.cols).reshape(t.rows, t.cols) + 100 * seed
    if t.kind is TypeKind.Vector:
        return np.arange(t.rows) + 10 * seed
    return seed + 1


@pytest.mark.parametrize("shader", sorted(TARGETS))
def test_generated_structs_match_the_reflection(project: Project, shader: str) -> None:
    module = project.module(shader)
    model = reflection(project, shader)
    assert model == module.REFLECTION
    layouts = struct_layouts(model)
    for name, layout in layouts.items():
        cls = getattr(module, name)
        assert cls.size == layout.size, name
        inst = cls()
        assert inst.data.dtype.itemsize == layout.size
        values = {}
        for i, member in enumerate(layout.members):
            assert inst.data.dtype.fields[member.name][1] == member.offset, (name, member.name)
            values[member.name] = sample(member.type, i)
            setattr(inst, member.name, values[member.name])
        raw = inst.to_bytes()
        assert len(raw) == layout.size
        for member in layout.members:
            check_leaf(raw, member.offset, member.type, values[member.name])


def test_the_project_has_the_structs_a_user_expects(project: Project) -> None:
    """Not an empty loop above: the buffers of the trial shaders really are there."""
    names = {s: set(struct_layouts(reflection(project, s))) for s in TARGETS}
    assert names["lit_mesh"] == {"PerFrame", "PerObject"}
    assert names["skinned"] == {"Skeleton", "Camera"}
    assert names["sprites"] == {"Sprite", "View"}
    assert names["tonemap"] == {"TonemapConstants"}
    assert names["emitter"] == {"Particle", "Emitter"}
    assert names["with_include"] == {"Payload"}
    skeleton = struct_layouts(reflection(project, "skinned"))["Skeleton"]
    assert (skeleton.size, skeleton.members[0].type.length, skeleton.members[0].type.stride) == (
        64 * 64,
        64,
        64,
    )
    per_object = struct_layouts(reflection(project, "lit_mesh"))["PerObject"]
    normal = per_object.members[1].type
    assert (normal.rows, normal.cols, normal.mstride, normal.size) == (3, 3, 16, 48)


def test_vertex_inputs_of_the_skinned_mesh(project: Project) -> None:
    vs = project.module("skinned").entries.VSMain
    layout = vs.vertex_buffer_layout()
    formats = [(a["format"], a["offset"], a["shader_location"]) for a in layout["attributes"]]
    assert formats == [
        ("float32x3", 0, 0),
        ("float32x3", 12, 1),
        ("uint32x4", 24, 2),
        ("float32x4", 40, 3),
    ]
    assert layout["array_stride"] == vs.stride == 56 == vs.vertex_dtype().itemsize


def test_slots_follow_the_configured_shifts(project: Project) -> None:
    lit = project.module("lit_mesh").resources
    assert (lit.PerObject.spirv.binding, lit.ShadowMap.spirv.binding) == (1, 11)
    assert (lit.ShadowSampler.wgsl.set, lit.ShadowSampler.wgsl.binding) == (0, 23)
    assert lit.ShadowSampler.layout_entry()["sampler"]["type"] == "comparison"
    assert lit.Albedo.layout_entry()["texture"]["view_dimension"] == "2d-array"
    tonemap = project.module("tonemap")
    assert tonemap.push_blocks.PC.wgsl.set == 1 + tonemap.resources.HDR.wgsl.set
    # blur.hlsl only writes Target: a write-only storage texture, which every device has
    assert project.module("blur").resources.Target.layout_entry()["storage_texture"] == {
        "access": "write-only",
        "format": "rgba32float",
        "view_dimension": "2d",
    }


def test_reflection_tools_and_generate_check(project: Project) -> None:
    files = sorted(str(p) for p in (project.root / "build").rglob("*.reflection"))
    assert len(files) == len(TARGETS)
    checked = oneshader(project.root, "reflection", "check", *files)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    canonical = oneshader(project.root, "reflection", "format", "--check", *files)
    assert canonical.returncode == 0, canonical.stdout + canonical.stderr
    shown = oneshader(project.root, "reflection", "show", "build/shaders/tonemap.reflection")
    assert shown.returncode == 0, shown.stderr
    assert "push PC: stages Pixel" in shown.stdout
    assert "slot Wgsl group 1 binding 0" in shown.stdout
    portable = sorted(str(p) for p in (project.root / "build" / "shaders").glob("*.reflection"))
    fresh = oneshader(project.root, "generate", *portable, "-o", "gen/trialgen", "--check")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr


def test_a_second_build_is_up_to_date(project: Project) -> None:
    again = oneshader(project.root, "build", "-q")
    assert again.returncode == 0, again.stderr
    portable = sum(targets == ALL for targets in TARGETS.values())
    assert f"0 built, {portable} up to date, 0 failed" in again.stdout


def test_load_without_generating_equals_the_generated_module(project: Project) -> None:
    from oneshader.bindings import load

    path = project.out("lit_mesh") / "lit_mesh.reflection"
    loaded, generated = load(path), project.module("lit_mesh")
    public = {n for n in dir(generated) if not n.startswith("_")}
    assert public == {n for n in dir(loaded.module) if not n.startswith("_")}
    assert public <= set(dir(loaded))  # the module's names, through the typed Bindings
    assert loaded.PerObject.size == generated.PerObject.size == 144
    assert loaded.resources.ShadowSampler.wgsl == generated.resources.ShadowSampler.wgsl
