"""The MSL reader's layout rules held against a C compiler: Metal lays structs out by C's rules
with its own vector types (``floatN`` aligned to its size, ``float3`` taking 16 bytes,
``packed_floatN`` aligned to the scalar). Random Metal structs are mirrored into C with those
types, gcc's ``offsetof``/``sizeof`` are the oracle (Metal itself cannot be compiled here)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneshader.compiler.emitted.msl import read_msl
from oneshader.reflection.model import TypeKind, TypeLayout

_CC = shutil.which("gcc") or shutil.which("cc")

_SCALARS = {
    "float": "float",
    "int": "int",
    "uint": "unsigned",
    "half": "_Float16",
    "short": "short",
}
_SIZES = {"float": 4, "int": 4, "uint": 4, "half": 2, "short": 2}


@dataclass(frozen=True)
class _T:
    msl: str  # the Metal spelling
    c: str  # the C type name (typedef'd in the prelude)


def _prelude() -> str:
    lines = ["#include <stddef.h>", "#include <stdio.h>"]
    for s, c in _SCALARS.items():
        size = _SIZES[s]
        for n in (2, 3, 4):
            vec = (4 if n == 3 else n) * size
            lines.append(
                f"typedef struct {{ {c} v[{n}]; }} __attribute__((aligned({vec}))) {s}{n}_t;"
            )
            lines.append(f"typedef struct {{ {c} v[{n}]; }} packed_{s}{n}_t;")
        lines.append(f"typedef {c} {s}_t;")
        for cols in (2, 3, 4):
            for rows in (2, 3, 4):
                if s in ("float", "half"):
                    lines.append(f"typedef struct {{ {s}{rows}_t c[{cols}]; }} {s}{cols}x{rows}_t;")
    return "\n".join(lines)


_NAMES = list(_SCALARS)
_LEAVES = st.one_of(
    st.sampled_from(_NAMES).map(lambda s: _T(s, f"{s}_t")),
    st.builds(lambda s, n: _T(f"{s}{n}", f"{s}{n}_t"), st.sampled_from(_NAMES), st.integers(2, 4)),
    st.builds(
        lambda s, n: _T(f"packed_{s}{n}", f"packed_{s}{n}_t"),
        st.sampled_from(["float", "int", "half"]),
        st.integers(2, 4),
    ),
    st.builds(
        lambda s, c, r: _T(f"{s}{c}x{r}", f"{s}{c}x{r}_t"),
        st.sampled_from(["float", "half"]),
        st.integers(2, 4),
        st.integers(2, 4),
    ),
)


@st.composite
def _structs(draw: st.DrawFn) -> tuple[str, str, list[tuple[str, ...]]]:
    """Metal source, C source, and the member paths to compare (``S.m1``, ``S.m2.i0``...)."""
    inner = draw(st.lists(_LEAVES, min_size=1, max_size=3))
    outer: list[tuple[str, _T, int]] = []  # (kind, type, array length or 0)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["leaf", "leaf", "array", "inner", "inner_array"]))
        t = draw(_LEAVES)
        outer.append((kind, t, draw(st.integers(1, 3))))
    msl = ["struct Inner_0 {"] + [f"    {t.msl} i{k}_0;" for k, t in enumerate(inner)] + ["};"]
    c = ["typedef struct {"] + [f"    {t.c} i{k};" for k, t in enumerate(inner)] + ["} Inner;"]
    msl.append("struct S_0 {")
    c.append("typedef struct {")
    paths: list[tuple[str, ...]] = [(f"i{k}",) for k in range(len(inner))]
    outer_paths: list[tuple[str, ...]] = []
    for k, (kind, t, n) in enumerate(outer):
        if kind == "leaf":
            msl.append(f"    {t.msl} m{k}_0;")
            c.append(f"    {t.c} m{k};")
        elif kind == "array":
            msl.append(f"    array<{t.msl}, int({n})> m{k}_0;")
            c.append(f"    {t.c} m{k}[{n}];")
        elif kind == "inner":
            msl.append(f"    Inner_0 m{k}_0;")
            c.append(f"    Inner m{k};")
        else:
            msl.append(f"    array<Inner_0, int({n})> m{k}_0;")
            c.append(f"    Inner m{k}[{n}];")
        outer_paths.append((f"m{k}",))
    msl += ["};", "[[kernel]] void K(S_0 device* s_1 [[buffer(0)]]) {}"]
    c.append("} S;")
    return "\n".join(msl), "\n".join(c), outer_paths + [("inner", *p) for p in paths]


def _gcc_layout(c_source: str, paths: list[tuple[str, ...]], folder: Path) -> dict[str, int]:
    prints = ['printf("sizeof %zu\\n", sizeof(S));', 'printf("inner %zu\\n", sizeof(Inner));']
    for p in paths:
        struct_name, field = ("Inner", p[1]) if p[0] == "inner" else ("S", p[0])
        key = ".".join(p)
        prints.append(f'printf("{key} %zu\\n", offsetof({struct_name}, {field}));')
    program = f"{_prelude()}\n{c_source}\nint main(void) {{\n" + "\n".join(prints) + "\n}\n"
    (folder / "l.c").write_text(program)
    assert _CC is not None
    subprocess.run([_CC, "-std=c11", "-o", str(folder / "l"), str(folder / "l.c")], check=True)
    out = subprocess.run([str(folder / "l")], capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def _inner_layout(layout: TypeLayout) -> TypeLayout | None:
    for m in layout.members:
        t = m.type.element if m.type.kind is TypeKind.Array else m.type
        if t is not None and t.kind is TypeKind.Struct:
            return t
    return None


@pytest.mark.skipif(_CC is None, reason="needs a C compiler (gcc is on every machine of this kind)")
@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(_structs())
def test_offsets_and_sizes_match_c(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, str, list[tuple[str, ...]]]
) -> None:
    msl, c_source, paths = case
    want = _gcc_layout(c_source, paths, tmp_path_factory.mktemp("msl"))
    (res,) = read_msl(msl.encode()).resources["s"]
    layout = res.layout
    assert layout is not None
    got = {f"m{k}": m.offset for k, m in enumerate(layout.members)}
    got["sizeof"] = layout.size
    assert res.stride == want["sizeof"]
    inner = _inner_layout(layout)
    if inner is not None:
        got["inner"] = inner.size
        got.update({f"inner.{m.name}": m.offset for m in inner.members})
    for key, value in got.items():
        assert value == want[key], (key, value, want[key], msl)
