"""The one translation of a reflection TypeLayout into numpy: dtypes and views of members.

A struct becomes a structured dtype with explicit offsets and itemsize. Arrays whose stride is
larger than their element, and matrices whose stored vectors are padded (``mstride`` larger than
the vector), become sub-arrays of one-field records whose itemsize is the stride, so padding is
never written and every value keeps its offset. Reading a member walks into those records and,
for a column-major matrix, swaps the last two axes, so users see every matrix as m[row][col].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from oneshader.codegen.scalars import NUMPY_SCALARS
from oneshader.reflection.model import MatrixPacking, ScalarKind, TypeKind, TypeLayout
from oneshader.reflection.validate import LayoutError, check_layout, innermost, matrix_shape

__all__ = ["MemberPlan", "StructPlan", "scalar_dtype", "struct_plan"]

_PAD = "v"  # the one field of a padding record

SCALAR_DTYPES: dict[ScalarKind, np.dtype[Any]] = {
    kind: np.dtype(name).newbyteorder("<") for kind, name in NUMPY_SCALARS.items()
}


def scalar_dtype(kind: ScalarKind) -> np.dtype[Any]:
    return SCALAR_DTYPES[kind]


def _padded(elem: np.dtype[Any], stride: int, count: int) -> tuple[np.dtype[Any], int]:
    """``count`` elements at ``stride``: the dtype and how many padding records wrap them."""
    if stride == elem.itemsize:
        return np.dtype((elem, (count,))), 0
    record = np.dtype({"names": [_PAD], "formats": [elem], "offsets": [0], "itemsize": stride})
    return np.dtype((record, (count,))), 1


Nested = dict[TypeLayout, np.dtype[Any]]


def _dtype_and_unwraps(t: TypeLayout, nested: Nested) -> tuple[np.dtype[Any], int]:
    if t.kind is TypeKind.Scalar:
        return scalar_dtype(t.scalar), 0
    if t.kind is TypeKind.Vector:
        return np.dtype((scalar_dtype(t.scalar), (t.rows,))), 0
    if t.kind is TypeKind.Matrix:
        outer, inner = matrix_shape(t)
        vec = np.dtype((scalar_dtype(t.scalar), (inner,)))
        return _padded(vec, t.mstride, outer)
    if t.kind is TypeKind.Array:
        assert t.element is not None
        elem, n = _dtype_and_unwraps(t.element, nested)
        whole, m = _padded(elem, t.stride, t.length)
        return whole, n + m
    found = nested.get(t)
    if found is None:
        raise LayoutError(t.name, "no struct class was given for this nested struct")
    return found, 0


@dataclass(frozen=True)
class MemberPlan:
    """How to reach one member's values in a structured array."""

    name: str  # the Python (and numpy field) name
    offset: int
    type: TypeLayout
    unwraps: int
    transpose: bool  # column-major matrix: stored [col][row], shown [row][col]

    def view(self, data: npt.NDArray[Any]) -> npt.NDArray[Any]:
        v: npt.NDArray[Any] = data[self.name]
        for _ in range(self.unwraps):
            v = v[_PAD]
        if self.transpose:
            v = v.swapaxes(-1, -2)
        return v

    @property
    def leaf(self) -> TypeLayout:
        return innermost(self.type)


@dataclass(frozen=True)
class StructPlan:
    dtype: np.dtype[Any]
    members: tuple[MemberPlan, ...]

    def member(self, name: str) -> MemberPlan | None:
        for m in self.members:
            if m.name == name:
                return m
        return None


def struct_plan(t: TypeLayout, names: tuple[str, ...], nested: Nested) -> StructPlan:
    """The dtype and member plans of a struct layout whose members get the Python ``names``
    (the generated class's, in member order); ``nested`` gives the dtype of each struct it holds
    (that of its class, so a nested view has the field names that class reads)."""
    if t.kind is not TypeKind.Struct:
        raise TypeError(f"not a struct layout: {t.kind.name}")
    check_layout(t, t.name)
    if len(names) != len(t.members) or len(set(names)) != len(names):
        raise ValueError(f"{len(t.members)} distinct member names needed, got {names}")
    members = []
    formats = []
    for py, m in zip(names, t.members, strict=True):
        dt, unwraps = _dtype_and_unwraps(m.type, nested)
        leaf = innermost(m.type)
        transpose = leaf.kind is TypeKind.Matrix and leaf.packing is MatrixPacking.ColumnMajor
        members.append(MemberPlan(py, m.offset, m.type, unwraps, transpose))
        formats.append(dt)
    dtype = np.dtype(
        {
            "names": list(names),
            "formats": formats,
            "offsets": [m.offset for m in t.members],
            "itemsize": t.size,
        }
    )
    return StructPlan(dtype, tuple(members))
