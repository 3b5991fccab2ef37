"""The frozen records a compile makes by the hundred (the reflection's, the emitted readers')
are built by ``model.record``'s ``__init__``, which sets an instance's fields in one step: the
same constructor as the dataclass's own (parameters, defaults, order), the same records."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from typing import Any

import pytest

from oneshader.compiler.emitted import common, wgsl
from oneshader.reflection import model

RECORDS = [
    cls
    for module in (model, common, wgsl)
    for cls in vars(module).values()
    if isinstance(cls, type)
    and cls.__module__ == module.__name__
    and dataclasses.is_dataclass(cls)
    and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
]


def _plain(cls: type) -> Any:
    """``cls`` as a plain frozen dataclass of the same fields (the dataclass's own init)."""
    fields = [
        (f.name, Any, dataclasses.field(default=f.default, compare=f.compare))
        for f in dataclasses.fields(cls)
    ]
    return dataclasses.make_dataclass(cls.__name__, fields, frozen=True)


def test_the_records_are_found() -> None:
    names = {cls.__name__ for cls in RECORDS}
    assert {"TypeLayout", "StructMember", "EmittedVariable", "WgslType"} <= names


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_a_record_sets_its_fields_in_one_step(cls: type) -> None:
    assert "__dict__" in cls.__init__.__code__.co_consts  # (the dataclass's own sets each)
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_a_record_takes_what_the_dataclass_takes(cls: type) -> None:
    ours = inspect.signature(cls.__init__).parameters
    theirs = inspect.signature(_plain(cls).__init__).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()
    ]


def test_a_record_is_the_same_record() -> None:
    vec = model.TypeLayout(model.TypeKind.Vector, model.ScalarKind.Float, rows=3, size=12)
    member = model.StructMember("m", 16, vec, doc="a doc")
    block = model.TypeLayout(model.TypeKind.Struct, name="B", size=32, members=(member,))
    assert vars(vec) == {f.name: getattr(vec, f.name) for f in dataclasses.fields(vec)}
    assert list(vars(vec)) == [f.name for f in dataclasses.fields(vec)]
    assert vec == model.TypeLayout(model.TypeKind.Vector, model.ScalarKind.Float, 3, size=12)
    assert hash(member) == hash(model.StructMember("m", 16, vec))  # the doc compares not
    assert dataclasses.replace(block, size=48).size == 48
    assert pickle.loads(pickle.dumps(block)) == block
    with pytest.raises(dataclasses.FrozenInstanceError):
        vec.rows = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        model.StructMember("m", 16)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        model.Slot(model.Target.SpirV, 0, 1, 2)  # type: ignore[call-arg]
    variable = common.EmittedVariable("v", "v_0", location=2)
    assert (variable.builtin, variable.interp, variable.span) == (None, frozenset(), 1)


def test_a_record_refuses_what_its_init_would_skip() -> None:
    @dataclasses.dataclass(frozen=True)
    class Checked:
        n: int

        def __post_init__(self) -> None:
            assert self.n >= 0

    with pytest.raises(TypeError, match="__post_init__"):
        model.record(Checked)
