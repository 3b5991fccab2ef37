"""docs/reflection-format.md stays true to the code: every record's attributes in written order,
every enum member."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oneshader.reflection import model
from oneshader.reflection.format import _ATTRS, _token

DOC = (Path(__file__).parents[2] / "docs" / "reflection-format.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    """The text under the first '### ' heading that starts with ``title``."""
    start = DOC.index(f"\n### {title}")
    end = DOC.find("\n### ", start + 1)
    return DOC[start : end if end >= 0 else len(DOC)]


HEADINGS = {
    "source": "`source`",
    "targets": "`targets`",
    "resource": "`resource`",
    "slot": "`slot` (under `resource`",
    "counter": "`slot` (under `resource`",
    "specslot": "`slot` (under `spec`)",
    "type": "`type`",
    "member": "`member`",
    "push": "`push`",
    "spec": "`spec`",
    "entry": "`entry`",
    "features": "`features`",
    "input": "`input`, `output`",
    "output": "`input`, `output`",
    "uses": "`uses`",
    "pushuse": "`uses`",
    "specuse": "`uses`",
}


@pytest.mark.parametrize("kind", sorted(_ATTRS))
def test_each_record_documents_its_attributes_in_written_order(kind: str) -> None:
    rows = re.findall(r"^\| `([a-z]+)` \|", section(HEADINGS[kind]), flags=re.M)
    assert rows == [key for key, _ in _ATTRS[kind]]


ENUMS = [
    model.Target,
    model.Stage,
    model.ResourceKind,
    model.ResourceTypeKind,
    model.ScalarKind,
    model.TypeKind,
    model.MatrixPacking,
    model.BuiltIn,
    model.VertexFormat,
    model.Interpolation,
]


@pytest.mark.parametrize("enum_type", ENUMS, ids=lambda e: e.__name__)
def test_each_enum_lists_all_members_in_order(enum_type: type) -> None:
    m = re.search(rf"^- \*\*{enum_type.__name__}\*\*: (.*?)(?=\n- |\n\n)", DOC, flags=re.M | re.S)
    assert m is not None
    listed = [t.strip() for t in m.group(1).replace("\n", " ").split(",")]
    assert listed == [_token(member) for member in enum_type]


def test_device_features_bits() -> None:
    m = re.search(r"\*\*DeviceFeatures\*\* \(.*?\): (.*?)\n\n", DOC, flags=re.S)
    assert m is not None
    listed = [t.strip() for t in m.group(1).replace("\n", " ").split(",")]
    assert listed == [f"{int(f)} {f.name}" for f in model.DeviceFeatures]
