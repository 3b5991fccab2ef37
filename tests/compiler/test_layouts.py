"""One layout for all targets (``unify.layouts``) on hand-made per-target facts, without
Slang: agreement, an OS2001 at the member where targets disagree, a block's tail padding,
``[[vk::offset]]`` on SPIR-V, and what WGSL cannot hold in a buffer."""

from __future__ import annotations

from pathlib import Path

from oneshader.compiler.slang.facts import Category, ParamFacts
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.compiler.unify.layouts import one_layout
from oneshader.diagnostics import Collector, Diagnostic
from oneshader.reflection.model import ScalarKind, StructMember, Target, TypeKind, TypeLayout

_FLOAT = TypeLayout(TypeKind.Scalar, ScalarKind.Float, size=4, align=4)
_FLOAT3 = TypeLayout(TypeKind.Vector, ScalarKind.Float, rows=3, size=12, align=16)
_UINT = TypeLayout(TypeKind.Scalar, ScalarKind.UInt, size=4, align=4)
_BOOL = TypeLayout(TypeKind.Scalar, ScalarKind.Bool, size=4, align=4)


def _struct(name: str, size: int, *members: tuple[str, int, TypeLayout]) -> TypeLayout:
    fields = tuple(StructMember(n, off, t) for n, off, t in members)
    return TypeLayout(TypeKind.Struct, name=name, size=size, align=16, members=fields)


def _source(tmp_path: Path, text: str) -> SourceSet:
    (tmp_path / "l.hlsl").write_text(text)
    src = SourceSet(str(tmp_path / "l.hlsl"), "l.hlsl", ())
    src.read()
    return src


def _facts(layout: TypeLayout) -> ParamFacts:
    return ParamFacts("P", 0, Category.CONSTANT_BUFFER, 0, 0, layout=layout)


def _layout(
    tmp_path: Path, text: str, per: dict[Target, TypeLayout]
) -> tuple[TypeLayout | None, list[Diagnostic]]:
    src = _source(tmp_path, text)
    decl = src.declarations()["P"]
    problems = Collector()
    layout = one_layout(src, decl, {t: _facts(lay) for t, lay in per.items()}, problems, block=True)
    return layout, problems.diagnostics


def test_agreeing_targets_give_one_layout_with_the_largest_block_size(tmp_path: Path) -> None:
    text = "cbuffer P\n{\n    float a;\n};\n"
    spirv = _struct("P", 16, ("a", 0, _FLOAT))
    msl = _struct("P", 4, ("a", 0, _FLOAT))
    layout, errors = _layout(tmp_path, text, {Target.SpirV: spirv, Target.Msl: msl})
    assert errors == []
    assert layout is not None and layout.size == 16 and layout.members == spirv.members


def test_a_member_placed_differently_is_os2001_at_the_member(tmp_path: Path) -> None:
    text = "cbuffer P\n{\n    float3 v;\n    uint n;\n};\n"
    spirv = _struct("P", 16, ("v", 0, _FLOAT3), ("n", 12, _UINT))
    msl = _struct("P", 32, ("v", 0, _FLOAT3), ("n", 16, _UINT))
    _, errors = _layout(tmp_path, text, {Target.SpirV: spirv, Target.Msl: msl})
    (error,) = errors
    assert (error.file, error.line, error.column, error.code) == ("l.hlsl", 4, 10, "OS2001")
    assert error.message.startswith("P.n: not portable: the offset is 12 on SpirV but 16 on Msl")


def test_vk_offset_moves_the_spirv_members(tmp_path: Path) -> None:
    text = "cbuffer P\n{\n    float a;\n    [[vk::offset(16)]] float b;\n};\n"
    spirv = _struct("P", 16, ("a", 0, _FLOAT), ("b", 4, _FLOAT))
    layout, errors = _layout(tmp_path, text, {Target.SpirV: spirv})
    assert errors == []
    assert layout is not None
    assert [(m.name, m.offset) for m in layout.members] == [("a", 0), ("b", 16)]
    assert layout.size == 32
