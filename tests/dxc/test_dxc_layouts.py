"""Buffer layouts of the DXC corpus held to DXC's Offset and ArrayStride decorations, on every
target the case builds for (one layout for all targets; the cross-check holds each module to
the reflection)."""

from __future__ import annotations

import pytest
from dxc_build import built_or_allowed_failure
from dxc_cases import BUILDING, Case, case_id

from oneshader.reflection.model import Target, TypeKind, TypeLayout

with_layouts = pytest.mark.parametrize(
    "case", [c for c in BUILDING if c.offsets or c.strides], ids=case_id
)


def _member(layout: TypeLayout | None, path: str) -> tuple[int, TypeLayout]:
    """The offset (within its parent) and type of the member at ``Block.a.b``."""
    assert layout is not None
    offset, t = 0, layout
    for name in path.split(".")[1:]:
        while t.kind is TypeKind.Array and t.element is not None:
            t = t.element
        found = [m for m in t.members if m.name == name]
        assert found, f"{path}: no member {name!r} (has {[m.name for m in t.members]})"
        offset, t = found[0].offset, found[0].type
    return offset, t


@with_layouts
@pytest.mark.parametrize("target", list(Target), ids=lambda t: t.name)
def test_layouts_are_dxcs(case: Case, target: Target) -> None:
    built = built_or_allowed_failure(case, target)
    if built is None:
        return
    for path, want in case.offsets.items():
        layout = built.resource(path.split(".")[0]).layout
        assert _member(layout, path)[0] == want, f"{path} offset on {target.name}"
    for path, want in case.strides.items():
        t = _member(built.resource(path.split(".")[0]).layout, path)[1]
        assert t.kind is TypeKind.Array, f"{path} is no array"
        assert t.stride == want, f"{path} array stride on {target.name}"
