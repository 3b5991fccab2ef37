"""DXC's binding policy (``reflect.placement``) on declarations scanned from source, without
Slang: precedence of vk::binding, -fvk-bind-register, register()+shift and declaration order,
and the hidden counters' bindings."""

from __future__ import annotations

from oneshader.compiler.api import BindRegister, RegisterShift
from oneshader.compiler.front.scanner import Declaration, scan
from oneshader.compiler.reflect.placement import place


def _decls(text: str) -> list[Declaration]:
    return scan("p.hlsl", text).declarations


def test_explicit_bindings_then_the_lowest_free_in_declaration_order() -> None:
    decls = _decls(
        "[[vk::binding(0)]] Texture2D A;\n"
        "Texture2D B;\n"
        "[[vk::binding(2, 1)]] Texture2D C;\n"
        "Texture2D D;\n"
    )
    placed = place(decls, set(), [], (), ())
    assert placed.bindings == {"A": (0, 0), "B": (0, 1), "C": (1, 2), "D": (0, 2)}
    assert placed.counters == {} and placed.problems == []


def test_registers_take_their_space_and_the_shift_for_it() -> None:
    decls = _decls(
        "cbuffer P : register(b1) { float4 x; };\n"
        "Texture2D T : register(t1, space2);\n"
        "[[vk::binding(7)]] Texture2D V : register(t3);\n"
    )
    shifts = (RegisterShift("t", 10, None), RegisterShift("t", 20, 2), RegisterShift("b", 5, 0))
    placed = place(decls, set(), [], shifts, ())
    # the space-specific shift wins over "all"; vk::binding is never shifted
    assert placed.bindings == {"P": (0, 6), "T": (2, 21), "V": (0, 7)}


def test_bind_register_maps_each_register_and_refuses_one_it_does_not_map() -> None:
    decls = _decls("Texture2D A : register(t0);\nTexture2D B : register(t1);\n")
    placed = place(decls, set(), [], (), (BindRegister("t0", 0, 4, 3),))
    assert placed.bindings["A"] == (3, 4)
    assert [(d.name, "--fvk-bind-register" in why) for d, why in placed.problems] == [("B", True)]


def test_counters_after_every_resource_in_dxc_creation_order() -> None:
    decls = _decls(
        "AppendStructuredBuffer<float> Out;\n"
        "RWStructuredBuffer<float> Rw;\n"
        "[[vk::binding(0, 1)]] RWStructuredBuffer<float> Other;\n"
        "[[vk::binding(4)]] [[vk::counter_binding(9)]] ConsumeStructuredBuffer<float> In;\n"
    )
    placed = place(decls, {"Out", "In"}, ["Other", "Rw"], (), ())
    assert placed.bindings == {"Out": (0, 0), "Rw": (0, 2), "Other": (1, 0), "In": (0, 4)}
    # Out's counter at its declaration; In's as its attribute says; RW ones by first use
    assert placed.counters == {"Out": (0, 1), "In": (0, 9), "Other": (1, 1), "Rw": (0, 3)}
