"""``oneshader reflection diff``: every rule of docs/bindings.md "ABI changes", one edit each, on
a shader with a constant buffer, a structured buffer, a texture, a sampler, a spec constant, a
vertex entry and a compute entry; then the command over files and folders, text and JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from oneshader.cli import main
from oneshader.reflection.abi import diff_reflections
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import (
    Access,
    EntryPoint,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    SpecConstant,
    SpecSlot,
    Stage,
    StageVariable,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
    VertexFormat,
)

F, U = ScalarKind.Float, ScalarKind.UInt
Capture = pytest.CaptureFixture[str]


def _scalar(kind: ScalarKind = F) -> TypeLayout:
    return TypeLayout(TypeKind.Scalar, kind, size=4, align=4)


def _vector(n: int) -> TypeLayout:
    return TypeLayout(TypeKind.Vector, F, rows=n, size=4 * n, align=16)


def _struct(name: str, size: int, *members: tuple[str, int, TypeLayout]) -> TypeLayout:
    fields = tuple(StructMember(n, o, t) for n, o, t in members)
    return TypeLayout(TypeKind.Struct, name=name, size=size, align=16, members=fields)


def _slots(set_: int, binding: int) -> tuple[Slot, ...]:
    return (Slot(Target.SpirV, set_, binding), Slot(Target.Wgsl, set_, binding))


FRAME = _struct(
    "Frame", 32, ("Tint", 0, _vector(4)), ("Scale", 16, _scalar()), ("Count", 20, _scalar(U))
)
ITEM = _struct("Item", 16, ("Position", 0, _vector(3)), ("Mass", 12, _scalar()))
POSITION = StageVariable(
    "Position", "POSITION", location=0, components=3, format=VertexFormat.Float32x3
)
COLOR = StageVariable(
    "Color", "COLOR", location=1, components=4, format=VertexFormat.Float32x4, offset=12
)
BASE = ShaderReflection(
    source="shaders/s.hlsl",
    targets=(Target.SpirV, Target.Wgsl),
    resources=(
        Resource("Frame", ResourceKind.ConstantBuffer, ResourceTypeKind.ConstantBuffer,
                 stages=(Stage.Vertex,), slots=_slots(0, 0), layout=FRAME),
        Resource("Items", ResourceKind.UnorderedAccess, ResourceTypeKind.RWStructuredBuffer,
                 stages=(Stage.Compute,), slots=_slots(0, 1), layout=ITEM),
        Resource("Tex", ResourceKind.ShaderResource, ResourceTypeKind.Texture2D,
                 stages=(Stage.Pixel,), slots=_slots(1, 0), layout=_vector(4)),
    ),
    spec_constants=(
        SpecConstant("Drag", 0, F, 0, (SpecSlot(Target.SpirV, 0, "Drag"),
                                       SpecSlot(Target.Wgsl, 0, "Drag"))),
    ),
    entry_points=(
        EntryPoint("VSMain", Stage.Vertex, stride=28, inputs=(POSITION, COLOR), uses=("Frame",)),
        EntryPoint("PSMain", Stage.Pixel, uses=("Tex",)),
        EntryPoint("Step", Stage.Compute, workgroup=(64, 1, 1), uses=("Items",),
                   specuse=("Drag",)),
    ),
)  # fmt: skip


def _resource(name: str, **changes: object) -> Callable[[ShaderReflection], ShaderReflection]:
    def edit(m: ShaderReflection) -> ShaderReflection:
        res = tuple(replace(r, **changes) if r.name == name else r for r in m.resources)  # type: ignore[arg-type]
        return replace(m, resources=res)

    return edit


def _frame(*members: tuple[str, int, TypeLayout], size: int = 32) -> TypeLayout:
    return _struct("Frame", size, *members)


def _entry(name: str, **changes: object) -> Callable[[ShaderReflection], ShaderReflection]:
    def edit(m: ShaderReflection) -> ShaderReflection:
        entries = tuple(replace(e, **changes) if e.name == name else e for e in m.entry_points)  # type: ignore[arg-type]
        return replace(m, entry_points=entries)

    return edit


def _spec(**changes: object) -> Callable[[ShaderReflection], ShaderReflection]:
    def edit(m: ShaderReflection) -> ShaderReflection:
        return replace(m, spec_constants=(replace(m.spec_constants[0], **changes),))  # type: ignore[arg-type]

    return edit


TINT, SCALE, COUNT = ("Tint", 0, _vector(4)), ("Scale", 16, _scalar()), ("Count", 20, _scalar(U))

# (what, the edit, record, name, member, breaking, words of the message)
CASES: list[tuple[str, Callable[[ShaderReflection], ShaderReflection], str, str, str, bool, str]]
CASES = [
    ("slot moved", _resource("Frame", slots=_slots(0, 3)), "resource", "Frame", "", True,
     "Wgsl slot moved: set 0 binding 0 -> set 0 binding 3"),
    ("group moved", _resource("Tex", slots=_slots(2, 0)), "resource", "Tex", "", True,
     "set 1 binding 0 -> set 2 binding 0"),
    ("offset", _resource("Frame", layout=_frame(TINT, ("Scale", 24, _scalar()), COUNT)),
     "resource", "Frame", "Scale", True, "offset 16 -> 24"),
    ("type", _resource("Frame", layout=_frame(TINT, ("Scale", 16, _scalar(U)), COUNT)),
     "resource", "Frame", "Scale", True, "type float -> uint"),
    ("size of a member", _resource("Frame", layout=_frame(TINT, ("Scale", 16, _vector(1)),
     ("Count", 20, _scalar(U)))), "resource", "Frame", "Scale", True, "type float -> float1"),
    ("removed", _resource("Frame", layout=_frame(TINT, SCALE)), "resource", "Frame", "Count",
     True, "removed (was uint at offset 20)"),
    ("renamed", _resource("Frame", layout=_frame(TINT, SCALE, ("Total", 20, _scalar(U)))),
     "resource", "Frame", "Count", True, "renamed Total"),
    ("grown", _resource("Frame", layout=_frame(TINT, SCALE, COUNT, ("Extra", 32, _vector(4)),
     size=48)), "resource", "Frame", "", True, "grew from 32 to 48 bytes"),
    ("element grown", _resource("Items", layout=_struct("Item", 32, ("Position", 0, _vector(3)),
     ("Mass", 12, _scalar()), ("Spin", 16, _vector(4)))), "resource", "Items", "", True,
     "element size 16 -> 32"),
    ("array stride", _resource("Frame", layout=_frame(TINT, ("Scale", 16, TypeLayout(
        TypeKind.Array, size=8, align=4, length=2, stride=4, element=_scalar())))),
     "resource", "Frame", "Scale", True, "type float -> float[2]"),
    ("vertex input format", _entry("VSMain", inputs=(POSITION, replace(
        COLOR, format=VertexFormat.Unorm8x4))), "entry", "VSMain", "input Color", True,
     "as Float32x4 at offset 12 -> float4 COLOR at location 1 as Unorm8x4"),
    ("vertex input added", _entry("VSMain", inputs=(POSITION, COLOR, replace(
        COLOR, name="UV", semantic="TEXCOORD", location=2, offset=28))), "entry", "VSMain",
     "input UV", True, "none -> float4 TEXCOORD at location 2"),
    ("vertex output", _entry("VSMain", outputs=(replace(COLOR, format=VertexFormat.None_),)),
     "entry", "VSMain", "output Color", True, "none -> float4 COLOR at location 1"),
    ("storage access", _resource("Tex", access=Access.WriteOnly), "resource", "Tex", "", True,
     "access ReadWrite -> WriteOnly"),
    ("spec id", _spec(id=3), "spec", "Drag", "", True, "id 0 -> 3"),
    ("spec type", _spec(scalar=ScalarKind.Int), "spec", "Drag", "", True, "type Float -> Int"),
    ("resource removed", lambda m: _entry("PSMain", uses=())(replace(m, resources=m.resources[:2])),
     "resource", "Tex", "", True, "removed"),
    ("resource in a held slot", lambda m: replace(m, resources=(*m.resources, Resource(
        "Samp", ResourceKind.Sampler, ResourceTypeKind.SamplerState, slots=_slots(1, 0)))),
     "resource", "Samp", "", True, "added in SpirV set 1 binding 0, which Tex held"),
    ("new stage", _resource("Frame", stages=(Stage.Vertex, Stage.Pixel)), "resource", "Frame",
     "", True, "now used by Pixel"),
    ("workgroup", _entry("Step", workgroup=(32, 1, 1)), "entry", "Step", "", True,
     "workgroup 64x1x1 -> 32x1x1"),
    ("entry removed", lambda m: replace(m, entry_points=m.entry_points[:2]), "entry", "Step",
     "", True, "removed"),
    ("target dropped", lambda m: replace(m, targets=(Target.SpirV,)), "shader", "", "", True,
     "target Wgsl no longer built"),
    # compatible
    ("appended in padding", _resource("Frame", layout=_frame(TINT, SCALE, COUNT,
     ("Flags", 24, _scalar(U)))), "resource", "Frame", "Flags", False,
     "added at offset 24, inside the old size 32"),
    ("new resource in a new slot", lambda m: replace(m, resources=(*m.resources, Resource(
        "Samp", ResourceKind.Sampler, ResourceTypeKind.SamplerState, slots=_slots(1, 1)))),
     "resource", "Samp", "", False, "added"),
    ("documentation", _resource("Frame", layout=replace(FRAME, members=(FRAME.members[0],
     replace(FRAME.members[1], doc="per frame"), FRAME.members[2]))), "resource", "Frame",
     "Scale", False, "documentation changed"),
    ("spec default", _spec(default=1065353216), "spec", "Drag", "", False,
     "default bits 0 -> 1065353216"),
    ("stage dropped", _resource("Frame", stages=()), "resource", "Frame", "", False,
     "no longer used by Vertex"),
    ("new entry", lambda m: replace(m, entry_points=(*m.entry_points, EntryPoint(
        "Other", Stage.Compute, workgroup=(8, 8, 1)))), "entry", "Other", "", False, "added"),
    ("uses", _entry("PSMain", uses=()), "entry", "PSMain", "", False, "uses Tex -> -"),
    ("shrunk", _resource("Frame", layout=_frame(TINT, SCALE, COUNT, size=24)), "resource",
     "Frame", "", False, "shrank from 32 to 24 bytes"),
    ("target added", lambda m: replace(m, targets=(*m.targets, Target.Msl)), "shader", "", "",
     False, "target Msl added"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_rule(
    case: tuple[str, Callable[..., ShaderReflection], str, str, str, bool, str],
) -> None:
    _, edit, record, name, member, is_breaking, words = case
    new = edit(BASE)
    ReflectionFormat.write(new)  # a model a file can hold
    changes = diff_reflections(BASE, new)
    found = [
        c for c in changes if (c.record, c.name, c.member) == (record, name, member)
        and words in c.what
    ]  # fmt: skip
    assert found, [c.line() for c in changes]
    assert found[0].breaking is is_breaking, found[0].line()
    if not is_breaking:  # a compatible edit breaks nothing anywhere
        assert not any(c.breaking for c in changes), [c.line() for c in changes]
    assert found[0].line().startswith(f"shaders/s.hlsl: {found[0].kind}: {record}")


def test_equal_reflections_have_no_changes() -> None:
    assert diff_reflections(BASE, BASE) == []


def _write(path: Path, model: ShaderReflection) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(ReflectionFormat.write(model))
    return path


def test_the_command_on_files_exits_1_when_anything_breaks(tmp_path: Path, capsys: Capture) -> None:
    old = _write(tmp_path / "old.reflection", BASE)
    moved = _write(tmp_path / "moved.reflection", _resource("Frame", slots=_slots(0, 3))(BASE))
    padded = _write(
        tmp_path / "padded.reflection",
        _resource("Frame", layout=_frame(TINT, SCALE, COUNT, ("Flags", 24, _scalar(U))))(BASE),
    )
    assert main(["reflection", "diff", str(old), str(moved)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "shaders/s.hlsl: breaking: resource Frame: SpirV slot moved: set 0 binding 0 -> "
        "set 0 binding 3"
    )
    assert out[-1] == "2 breaking, 0 compatible"
    assert main(["reflection", "diff", str(old), str(padded)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "shaders/s.hlsl: compatible: resource Frame member Flags: added at offset 24, inside the "
        "old size 32",
        "0 breaking, 1 compatible",
    ]
    assert main(["reflection", "diff", "--json", str(old), str(moved)]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["format"] == "oneshader-reflection-diff" and document["breaking"] == 2
    assert document["changes"][1] == {
        "shader": "shaders/s.hlsl",
        "record": "resource",
        "name": "Frame",
        "member": "",
        "class": "breaking",
        "change": "Wgsl slot moved: set 0 binding 0 -> set 0 binding 3",
    }


def test_the_command_on_folders_pairs_files_by_path(tmp_path: Path, capsys: Capture) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    _write(old / "a" / "s.reflection", BASE)
    _write(new / "a" / "s.reflection", _spec(default=7)(BASE))
    _write(old / "gone.reflection", BASE)
    _write(new / "b" / "new.reflection", BASE)
    assert main(["reflection", "diff", str(old), str(new)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "a/s.reflection: compatible: spec Drag: default bits 0 -> 7",
        "b/new.reflection: compatible: shader: added",
        "gone.reflection: breaking: shader: removed (no reflection in NEW)",
        "1 breaking, 2 compatible",
    ]
    (old / "gone.reflection").unlink()
    assert main(["reflection", "diff", str(old), str(new)]) == 0


def test_an_invalid_file_is_reported_at_its_position(tmp_path: Path, capsys: Capture) -> None:
    old = _write(tmp_path / "old.reflection", BASE)
    bad = tmp_path / "bad.reflection"
    bad.write_bytes(ReflectionFormat.write(BASE).replace(b"offset=16", b"offset=18"))
    assert main(["reflection", "diff", str(old), str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:" in err and "Frame.Scale: offset 18 is not aligned" in err
