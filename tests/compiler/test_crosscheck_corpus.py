"""verify() against real Slang output: the producer's reflection of corpus shaders, with one number
tampered at a time, must be caught on each target whose code shows that number, and only there."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from verify_support import compiled

from oneshader.compiler.verify.crosscheck import verify
from oneshader.reflection.model import (
    BuiltIn,
    ShaderReflection,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
)

_ALL = {Target.SpirV, Target.Msl, Target.Wgsl}
_PREFIX = {Target.SpirV: "SPIR-V (", Target.Msl: "Metal (", Target.Wgsl: "WGSL ("}


def _reflection(file: str) -> tuple[ShaderReflection, tuple]:  # type: ignore[type-arg]
    result = compiled(file)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result.reflection, result.outputs


def _hit(mismatches: list[str]) -> set[Target]:
    return {t for t, p in _PREFIX.items() if any(m.startswith(p) for m in mismatches)}


def _set_resource(r: ShaderReflection, name: str, **changes: object) -> ShaderReflection:
    resources = tuple(
        replace(x, **changes) if x.name == name else x  # type: ignore[arg-type]
        for x in r.resources
    )
    return replace(r, resources=resources)


def _edit_first(
    layout: TypeLayout, want: Callable[[TypeLayout], bool], edit: Callable[[TypeLayout], TypeLayout]
) -> tuple[TypeLayout, bool]:
    """``layout`` with the first node (depth first) that ``want`` accepts replaced by ``edit``."""
    if want(layout):
        return edit(layout), True
    if layout.element is not None:
        element, done = _edit_first(layout.element, want, edit)
        if done:
            return replace(layout, element=element), True
    members = list(layout.members)
    for i, m in enumerate(members):
        t, done = _edit_first(m.type, want, edit)
        if done:
            members[i] = replace(m, type=t)
            return replace(layout, members=tuple(members)), True
    return layout, False


def _edit_layout(
    r: ShaderReflection,
    resource: str,
    want: Callable[[TypeLayout], bool],
    edit: Callable[[TypeLayout], TypeLayout],
) -> ShaderReflection:
    res = next(x for x in r.resources if x.name == resource)
    assert res.layout is not None
    layout, done = _edit_first(res.layout, want, edit)
    assert done, f"nothing to tamper with in {resource}"
    return _set_resource(r, resource, layout=layout)


def _shift_member(layout: TypeLayout) -> TypeLayout:
    """The struct with its last member moved 4 bytes further."""
    last = layout.members[-1]
    moved: StructMember = replace(last, offset=last.offset + 4)
    return replace(layout, members=(*layout.members[:-1], moved))


@pytest.mark.parametrize("target", sorted(_ALL, key=lambda t: t.value))
@pytest.mark.parametrize(
    ("file", "resource"),
    [
        ("sprite.hlsl", "SpriteTexture"),
        ("compute_layout.hlsl", "Items"),
        ("registers.hlsl", "Camera"),
    ],
)
def test_one_slot_changed_on_one_target(file: str, resource: str, target: Target) -> None:
    r, outputs = _reflection(file)
    res = next(x for x in r.resources if x.name == resource)
    slots = tuple(
        replace(s, binding=s.binding + 17) if s.target is target else s for s in res.slots
    )
    mismatches = verify(_set_resource(r, resource, slots=slots), outputs)
    assert _hit(mismatches) == {target}, mismatches
    assert all(f"resource '{resource}'" in m for m in mismatches), mismatches


@pytest.mark.parametrize(
    ("file", "resource"),
    [
        ("sprite.hlsl", "Frame"),
        ("compute_layout.hlsl", "Params"),
        ("compute_layout.hlsl", "Items"),
        ("structs.hlsl", "Scene"),
        ("matrices.hlsl", "Transforms"),
    ],
)
def test_member_offset_changed(file: str, resource: str) -> None:
    r, outputs = _reflection(file)
    tampered = _edit_layout(
        r, resource, lambda t: t.kind is TypeKind.Struct and len(t.members) > 1, _shift_member
    )
    mismatches = verify(tampered, outputs)
    assert _hit(mismatches) == _ALL, mismatches
    assert all("offset" in m and resource in m for m in mismatches), mismatches


@pytest.mark.parametrize(
    ("file", "resource", "kind", "field"),
    [
        ("structs.hlsl", "Scene", TypeKind.Array, "stride"),
        ("matrices.hlsl", "Transforms", TypeKind.Matrix, "mstride"),
    ],
)
def test_stride_changed(file: str, resource: str, kind: TypeKind, field: str) -> None:
    r, outputs = _reflection(file)
    tampered = _edit_layout(
        r,
        resource,
        lambda t: t.kind is kind,
        lambda t: replace(t, **{field: getattr(t, field) + 16}),  # type: ignore[arg-type]
    )
    mismatches = verify(tampered, outputs)
    assert _hit(mismatches) == _ALL, mismatches
    word = "array stride" if kind is TypeKind.Array else "matrix stride"
    assert any(word in m for m in mismatches), mismatches


@pytest.mark.parametrize("file", ["sprite.hlsl", "vertex_formats.hlsl"])
def test_vertex_input_location_changed(file: str) -> None:
    r, outputs = _reflection(file)
    vs = next(e for e in r.entry_points if e.stage.value == "vertex")
    located = [v for v in vs.inputs if v.location is not None]
    moved = replace(located[-1], location=15)
    inputs = tuple(moved if v is located[-1] else v for v in vs.inputs)
    entries = tuple(replace(e, inputs=inputs) if e is vs else e for e in r.entry_points)
    mismatches = verify(replace(r, entry_points=entries), outputs)
    assert _hit(mismatches) == _ALL, mismatches
    assert all(f"'{moved.name}' location" in m and "15" in m for m in mismatches), mismatches


@pytest.mark.parametrize("target", sorted(_ALL, key=lambda t: t.value))
def test_spec_constant_index_changed(target: Target) -> None:
    r, outputs = _reflection("particles_portable.hlsl")
    spec = r.spec_constants[0]
    slots = tuple(replace(s, index=s.index + 9) if s.target is target else s for s in spec.slots)
    tampered = replace(r, spec_constants=(replace(spec, slots=slots), *r.spec_constants[1:]))
    mismatches = verify(tampered, outputs)
    assert _hit(mismatches) == {target}, mismatches
    assert all(f"spec constant '{spec.name}'" in m for m in mismatches), mismatches


@pytest.mark.parametrize("target", [Target.Msl, Target.Wgsl])
def test_push_block_slot_changed(target: Target) -> None:
    r, outputs = _reflection("particles_portable.hlsl")
    (push,) = r.push_blocks
    slots = tuple(
        replace(s, binding=s.binding + 5) if s.target is target else s for s in push.slots
    )
    mismatches = verify(replace(r, push_blocks=(replace(push, slots=slots),)), outputs)
    assert _hit(mismatches) == {target}, mismatches
    assert all(f"push block '{push.name}'" in m for m in mismatches), mismatches


def test_workgroup_and_builtin_changed() -> None:
    r, outputs = _reflection("compute_layout.hlsl")
    (cs,) = r.entry_points
    wrong = replace(cs, workgroup=(cs.workgroup[0] * 2, 1, 1))
    mismatches = verify(replace(r, entry_points=(wrong,)), outputs)
    # Metal does not state a workgroup size in its code.
    assert _hit(mismatches) == {Target.SpirV, Target.Wgsl}, mismatches
    without = replace(cs, inputs=tuple(v for v in cs.inputs if v.builtin is BuiltIn.None_))
    mismatches = verify(replace(r, entry_points=(without,)), outputs)
    assert _hit(mismatches) == _ALL, mismatches
    assert all("built-in" in m and "reflection lacks" in m for m in mismatches), mismatches


def test_dropped_resource_and_features() -> None:
    r, outputs = _reflection("half_types.hlsl")
    assert any(e.features for e in r.entry_points)
    plain = replace(
        r, entry_points=tuple(replace(e, features=type(e.features)(0)) for e in r.entry_points)
    )
    mismatches = verify(plain, outputs)
    # SPIR-V declares the Float16 capability; the WGSL module enables f16.
    assert _hit(mismatches) == {Target.SpirV, Target.Wgsl}, mismatches
    assert all("features" in m for m in mismatches)
    used = r.entry_points[0].uses[0]
    fewer = replace(r, resources=tuple(x for x in r.resources if x.name != used))
    mismatches = verify(fewer, outputs)
    assert _hit(mismatches) == _ALL, mismatches


def test_interpolation_changed() -> None:
    from oneshader.reflection.model import Interpolation

    r, outputs = _reflection("vertex_formats.hlsl")
    ps = next(e for e in r.entry_points if e.stage.value == "pixel")
    name = next(v.name for v in ps.inputs if v.interp is Interpolation.NoPerspective)
    inputs = tuple(
        replace(v, interp=Interpolation.Sample) if v.name == name else v for v in ps.inputs
    )
    entries = tuple(replace(e, inputs=inputs) if e is ps else e for e in r.entry_points)
    mismatches = verify(replace(r, entry_points=entries), outputs)
    assert _hit(mismatches) == _ALL, mismatches
    assert all(f"'{name}' interpolation" in m and "Sample" in m for m in mismatches), mismatches


def test_depth_texture_flag_is_held_against_the_wgsl() -> None:
    """``Depth`` is only compared, so the WGSL declares ``texture_depth_2d`` and the reflection
    says ``depth``; flipping the flag either way is a WGSL mismatch (no other target shows it)."""
    r, outputs = _reflection("resources_portable.hlsl")
    flags = {x.name: x.depth for x in r.resources}
    assert flags["Depth"] is True and not any(v for k, v in flags.items() if k != "Depth")
    for name, flag in (("Depth", False), ("Tex2D", True)):
        mismatches = verify(_set_resource(r, name, depth=flag), outputs)
        assert _hit(mismatches) == {Target.Wgsl}, mismatches
        assert any(f"resource '{name}' depth texture" in m for m in mismatches), mismatches
