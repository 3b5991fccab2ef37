"""``oneshader reflection show --json``: the model as JSON, field for field as documented."""

from __future__ import annotations

import dataclasses
import enum
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from reflection_strategies import models

from oneshader.cli import main
from oneshader.reflection import model
from oneshader.reflection.json_export import JSON_FORMAT, to_json

GOLDEN = Path(__file__).parent / "golden" / "sprite.reflection"
DOC = (Path(__file__).parents[2] / "docs" / "reflection-format.md").read_text(encoding="utf-8")
RECORDS = [
    model.ShaderReflection,
    model.Resource,
    model.Slot,
    model.TypeLayout,
    model.StructMember,
    model.PushBlock,
    model.SpecConstant,
    model.SpecSlot,
    model.EntryPoint,
    model.StageVariable,
]


def _json_section() -> str:
    start = DOC.index("## JSON: `oneshader reflection show --json FILE`")
    return DOC[start : DOC.index("\n## ", start + 1)]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
def test_the_schema_lists_every_field_in_order(record: type) -> None:
    m = re.search(rf"^- `{record.__name__}`: (.*?)(?=\n- |\n\n)", _json_section(), re.M | re.S)
    assert m is not None, record.__name__
    assert re.findall(r"`([a-z_]+)`", m.group(1)) == [f.name for f in dataclasses.fields(record)]


def _keys_match_the_model(value: object, data: Any) -> None:
    """Walk the model and its JSON together: every record an object with exactly its fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        assert list(data) == [f.name for f in dataclasses.fields(value)]
        for f in dataclasses.fields(value):
            _keys_match_the_model(getattr(value, f.name), data[f.name])
    elif isinstance(value, model.DeviceFeatures):
        assert data == [f.name for f in model.DeviceFeatures if f in value]
    elif isinstance(value, tuple):
        assert isinstance(data, list) and len(data) == len(value)
        for v, d in zip(value, data, strict=True):
            _keys_match_the_model(v, d)
    elif isinstance(value, model.BuiltIn | model.VertexFormat):
        assert data == value.token
    elif isinstance(value, enum.Enum):
        assert data == value.name
    else:
        assert data == value


@settings(max_examples=30, deadline=None)
@given(models())
def test_the_json_mirrors_any_model(m: model.ShaderReflection) -> None:
    doc = json.loads(json.dumps(to_json(m)))
    assert doc["format"] == JSON_FORMAT and doc["version"] == 1
    _keys_match_the_model(m, doc["shader"])


def test_show_json_prints_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reflection", "show", "--json", str(GOLDEN)]) == 0
    doc = json.loads(capsys.readouterr().out)
    frame = doc["shader"]["resources"][0]
    assert frame["name"] == "Frame" and frame["slots"] == [
        {"target": "SpirV", "set": 0, "binding": 0}
    ]
    weights = frame["layout"]["members"][1]
    assert (weights["name"], weights["offset"], weights["type"]["stride"]) == ("Weights", 80, 16)
    assert doc["shader"]["entry_points"][0]["outputs"][0]["location"] is None
    assert main(["reflection", "show", "--json", str(GOLDEN)]) == 0
    assert json.loads(capsys.readouterr().out) == doc  # deterministic


def test_show_json_refuses_what_check_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.reflection"
    bad.write_text(GOLDEN.read_text().replace("offset=80", "offset=81"))
    assert main(["reflection", "show", "--json", str(bad)]) == 1
    out = capsys.readouterr()
    assert out.out == "" and f"{bad}:10:36: error:" in out.err
