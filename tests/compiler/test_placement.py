"""DXC's binding policy (``unify.placement``) on declarations scanned from source, without
Slang: precedence of vk::binding, -fvk-bind-register, register()+shift and declaration order,
and the hidden counters' bindings."""

from __future__ import annotations

from pathlib import Path

from oneshader.compiler.api import BindRegister, RegisterShift
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.compiler.unify.placement import Placement, place
from oneshader.diagnostics import Collector


def _place(
    tmp_path: Path,
    text: str,
    declared: set[str] | None = None,
    used: list[str] | None = None,
    shifts: tuple[RegisterShift, ...] = (),
    bind_registers: tuple[BindRegister, ...] = (),
) -> tuple[Placement, Collector]:
    (tmp_path / "p.hlsl").write_text(text)
    src = SourceSet(str(tmp_path / "p.hlsl"), "p.hlsl", ())
    src.read()
    decls = list(src.declarations().values())
    problems = Collector()
    placed = place(src, decls, declared or set(), used or [], shifts, bind_registers, problems)
    return placed, problems


def test_explicit_bindings_then_the_lowest_free_in_declaration_order(tmp_path: Path) -> None:
    placed, problems = _place(
        tmp_path,
        "[[vk::binding(0)]] Texture2D A;\n"
        "Texture2D B;\n"
        "[[vk::binding(2, 1)]] Texture2D C;\n"
        "Texture2D D;\n",
    )
    assert placed.bindings == {"A": (0, 0), "B": (0, 1), "C": (1, 2), "D": (0, 2)}
    assert placed.counters == {} and problems.diagnostics == []


def test_registers_take_their_space_and_the_shift_for_it(tmp_path: Path) -> None:
    shifts = (RegisterShift("t", 10, None), RegisterShift("t", 20, 2), RegisterShift("b", 5, 0))
    placed, _ = _place(
        tmp_path,
        "cbuffer P : register(b1) { float4 x; };\n"
        "Texture2D T : register(t1, space2);\n"
        "[[vk::binding(7)]] Texture2D V : register(t3);\n",
        shifts=shifts,
    )
    # the space-specific shift wins over "all"; vk::binding is never shifted
    assert placed.bindings == {"P": (0, 6), "T": (2, 21), "V": (0, 7)}


def test_bind_register_maps_each_register_and_refuses_one_it_does_not_map(
    tmp_path: Path,
) -> None:
    placed, problems = _place(
        tmp_path,
        "Texture2D A : register(t0);\nTexture2D B : register(t1);\n",
        bind_registers=(BindRegister("t0", 0, 4, 3),),
    )
    assert placed.bindings["A"] == (3, 4)
    (error,) = problems.diagnostics
    assert (error.file, error.line, error.column, error.code) == ("p.hlsl", 2, 11, "OS3002")
    assert error.message.startswith("'B' has register(t1, space0) but no --fvk-bind-register")


def test_counters_after_every_resource_in_dxc_creation_order(tmp_path: Path) -> None:
    placed, _ = _place(
        tmp_path,
        "AppendStructuredBuffer<float> Out;\n"
        "RWStructuredBuffer<float> Rw;\n"
        "[[vk::binding(0, 1)]] RWStructuredBuffer<float> Other;\n"
        "[[vk::binding(4)]] [[vk::counter_binding(9)]] ConsumeStructuredBuffer<float> In;\n",
        {"Out", "In"},
        ["Other", "Rw"],
    )
    assert placed.bindings == {"Out": (0, 0), "Rw": (0, 2), "Other": (1, 0), "In": (0, 4)}
    # Out's counter at its declaration; In's as its attribute says; RW ones by first use
    assert placed.counters == {"Out": (0, 1), "In": (0, 9), "Other": (1, 1), "Rw": (0, 3)}
