"""The DXC corpus and what DXC's rules give for it, written down by hand.

Every (set, binding) here follows DXC's SPIR-V back end with its default options
(docs/dxc-compatibility.md states the rules): ``register(xN, spaceM)`` is set M, binding N
whatever the class x; ``[[vk::binding(b, s)]]`` wins and is never shifted; ``-fvk-x-shift``
adds to class-x registers of a space; ``-fvk-bind-register`` replaces the mapping; a counter
without ``[[vk::counter_binding]]`` takes the lowest free binding of its buffer's set once all
explicit bindings are taken, in the order DXC creates counters (append/consume buffers at their
declaration, RW structured buffers at their first counter use). Locations follow DXC too:
``[[vk::location]]`` where given, ``SV_TargetN`` is location N, everything else in declaration
order. Nothing here is produced by running oneshader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from oneshader.compiler.api import BindRegister, RegisterShift
from oneshader.reflection.model import Stage, Target

SHADERS = Path(__file__).parent / "shaders"

V, P, C = Stage.Vertex, Stage.Pixel, Stage.Compute


@dataclass(frozen=True, eq=False)
class Case:
    """One corpus file: its stage, options, and DXC's answer (compared by identity).

    ``slots`` maps every declared resource to DXC's SPIR-V (set, binding); ``counters`` the
    resources that have a hidden counter to the counter's (set, binding). ``unused`` are declared
    but not read by ``main``. ``inputs``/``outputs`` map ``SEMANTIC<index>`` to DXC's location
    (None: not checked); ``builtins`` the SPIR-V BuiltIn names the stage variables must carry.
    ``offsets`` maps a member path (``Block.member.member``) to DXC's Offset, ``strides`` an
    array member's path to DXC's ArrayStride (the one layout every target shares).
    ``may_fail`` maps a target to why it may be unable to express the file: there the build
    must either succeed with everything checked, or fail with an error positioned in the file
    that names the target. ``error`` is set for files that must not build anywhere: the message
    must contain every one of those words, at the line marked ``EXPECT-ERROR``, for every target
    in ``error_targets``.
    """

    file: str
    stage: Stage
    slots: dict[str, tuple[int, int]]
    counters: dict[str, tuple[int, int]] = field(default_factory=dict)
    unused: frozenset[str] = frozenset()
    shifts: tuple[RegisterShift, ...] = ()
    bind_registers: tuple[BindRegister, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    inputs: dict[str, int] | None = None
    outputs: dict[str, int] | None = None
    builtins: frozenset[str] = frozenset()
    offsets: dict[str, int] = field(default_factory=dict)
    strides: dict[str, int] = field(default_factory=dict)
    may_fail: dict[Target, str] = field(default_factory=dict)
    error: tuple[str, ...] = ()
    error_targets: frozenset[Target] = frozenset(Target)

    @property
    def path(self) -> Path:
        return SHADERS / self.file

    @property
    def id(self) -> str:
        return self.file.removesuffix(".hlsl")

    def used(self) -> set[str]:
        return set(self.slots) - set(self.unused)


def _shift(cls: str, n: int, space: int | None) -> RegisterShift:
    return RegisterShift(register_class=cls, shift=n, space=space)


CASES: tuple[Case, ...] = (
    Case(
        "vs_basic.hlsl",
        V,
        {"PerFrame": (0, 0), "PerObject": (0, 1)},
        inputs={"POSITION0": 0, "NORMAL0": 1, "TEXCOORD0": 2},
        outputs={"TEXCOORD0": 0, "COLOR0": 1},
    ),
    Case(
        "ps_pair.hlsl",
        P,
        {"albedo": (0, 0), "albedoSampler": (0, 0)},
        inputs={"TEXCOORD0": 0},
        outputs={"SV_TARGET0": 0},
    ),
    Case(
        "ps_pairs_spaces.hlsl",
        P,
        {
            "baseColor": (0, 1),
            "baseSampler": (0, 1),
            "shadowMap": (1, 0),
            "shadowSampler": (1, 0),
            "Material": (2, 0),
        },
        inputs={"TEXCOORD0": 0, "TEXCOORD1": 1},
    ),
    Case(
        "ps_unused.hlsl",
        P,
        {
            "diffuseMap": (0, 0),
            "diffuseSampler": (0, 0),
            "detailMap": (0, 1),
            "detailSampler": (0, 1),
            "neverUsed": (0, 4),
            "Unused": (0, 2),
            "Params": (0, 3),
        },
        unused=frozenset({"detailMap", "detailSampler", "neverUsed", "Unused"}),
    ),
    Case(
        "ps_unused.hlsl",
        P,
        {
            "diffuseMap": (0, 0),
            "diffuseSampler": (0, 0),
            "detailMap": (0, 1),
            "detailSampler": (0, 1),
            "neverUsed": (0, 4),
            "Unused": (0, 2),
            "Params": (0, 3),
        },
        unused=frozenset({"neverUsed", "Unused"}),
        defines=(("USE_DETAIL", "1"),),
    ),
    Case(
        "cs_counter.hlsl",
        C,
        {"aliveList": (0, 0), "particles": (0, 1)},
        counters={"aliveList": (0, 2)},
    ),
    Case(
        "cs_counter_holes.hlsl",
        C,
        {"Params": (0, 0), "visible": (0, 2), "culled": (0, 3)},
        counters={"visible": (0, 1), "culled": (0, 4)},
    ),
    Case(
        "cs_counter_order.hlsl",
        C,
        {"early": (0, 3), "late": (0, 4), "events": (0, 5)},
        counters={"events": (0, 0), "late": (0, 1), "early": (0, 2)},
    ),
    Case(
        "cs_auto_binding.hlsl",
        C,
        {"hits": (0, 0), "points": (0, 2), "Params": (0, 3)},
        counters={"hits": (0, 1)},
    ),
    Case(
        "cs_counter_binding.hlsl",
        C,
        {"items": (1, 1), "Params": (1, 0)},
        counters={"items": (1, 5)},
        may_fail={Target.Msl: "a uint3 after a uint: Metal's offset differs (OS2001)"},
    ),
    Case(
        "cs_append_consume.hlsl",
        C,
        {"survivors": (0, 0), "candidates": (0, 1), "Params": (0, 2)},
        counters={"survivors": (0, 3), "candidates": (0, 4)},
    ),
    Case(
        "cs_shifts.hlsl",
        C,
        {
            "Params": (0, 0),
            "src": (0, 10),
            "dst": (0, 20),
            "linearClamp": (0, 30),
            "lut": (0, 11),
        },
        shifts=(_shift("t", 10, None), _shift("u", 20, None), _shift("s", 30, 0)),
    ),
    Case(
        "ps_shift_spaces.hlsl",
        P,
        {
            "colorTex": (0, 10),
            "colorSampler": (0, 10),
            "maskTex": (1, 21),
            "maskSampler": (1, 2),
            "Tint": (0, 0),
        },
        shifts=(_shift("t", 10, 0), _shift("t", 20, 1), _shift("s", 10, 0)),
    ),
    Case(
        "cs_vk_binding.hlsl",
        C,
        {"outputImage": (1, 3), "inputImage": (0, 7), "history": (0, 11), "Params": (0, 0)},
        shifts=(_shift("u", 10, None), _shift("t", 10, None)),
    ),
    Case(
        "cs_bind_register.hlsl",
        C,
        {"Params": (3, 4), "inputs": (0, 1), "weights": (0, 2), "outputs": (2, 0)},
        bind_registers=(
            BindRegister(register="b0", space=0, binding=4, set=3),
            BindRegister(register="t0", space=0, binding=1, set=0),
            BindRegister(register="t0", space=1, binding=2, set=0),
            BindRegister(register="u0", space=0, binding=0, set=2),
        ),
    ),
    Case(
        "vs_location.hlsl",
        V,
        {"Camera": (0, 0)},
        inputs={"POSITION0": 3, "COLOR0": 0, "TEXCOORD0": 5},
        outputs={"COLOR0": 2, "TEXCOORD0": 4},
    ),
    Case(
        "ps_location.hlsl",
        P,
        {"tex": (0, 1), "samp": (0, 1)},
        inputs={"COLOR0": 2, "TEXCOORD0": 4},
        outputs={"SV_TARGET0": 0},
    ),
    Case(
        "ps_mrt.hlsl",
        P,
        {"gAlbedo": (0, 0), "gSampler": (0, 0)},
        inputs={"TEXCOORD0": 0, "TEXCOORD5": 1},
        outputs={"SV_TARGET0": 0, "SV_TARGET2": 2},
    ),
    Case(
        "vs_pointsize.hlsl",
        V,
        {"Camera": (0, 0)},
        inputs={"POSITION0": 0, "COLOR0": 1},
        outputs={"COLOR0": 0},
        builtins=frozenset({"PointSize"}),
        may_fail={Target.Wgsl: "WGSL has no point-size built-in (points are always 1 pixel)"},
    ),
    Case(
        "vs_draw_params.hlsl",
        V,
        {"Camera": (0, 0), "instanceOffsets": (0, 1)},
        inputs={"POSITION0": 0},
        outputs={"COLOR0": 0},
        builtins=frozenset({"BaseInstance", "BaseVertex"}),
        may_fail={Target.Wgsl: "WGSL has no draw-parameter built-ins"},
    ),
    Case(
        "vs_start_instance.hlsl",
        V,
        {"Camera": (0, 0), "instanceOffsets": (0, 1)},
        inputs={"POSITION0": 0},
        outputs={"COLOR0": 0},
        builtins=frozenset({"BaseInstance", "BaseVertex"}),
        may_fail={Target.Wgsl: "WGSL has no draw-parameter built-ins"},
    ),
    Case(
        "cs_rw_texture.hlsl",
        C,
        {
            "source": (0, 0),
            "sourceSampler": (0, 0),
            "destination": (0, 2),
            "exposureIn": (0, 1),
            "statsOut": (0, 3),
        },
    ),
    Case(
        "cs_typed_buffers.hlsl",
        C,
        {"palette": (0, 2), "histogram": (0, 3), "Params": (0, 1)},
        may_fail={Target.Wgsl: "WGSL has no typed (texel) buffers"},
    ),
    Case(
        "ps_texture_kinds.hlsl",
        P,
        {
            "layers": (0, 0),
            "layersSampler": (0, 0),
            "environment": (0, 1),
            "environmentSampler": (0, 1),
            "volume": (0, 2),
            "volumeSampler": (0, 2),
            "noise": (0, 3),
        },
        inputs={"TEXCOORD0": 0, "TEXCOORD1": 1},
    ),
    Case(
        "ps_texture_array.hlsl",
        P,
        {"materials": (0, 2), "materialSampler": (0, 1), "Params": (0, 0)},
        may_fail={
            Target.Msl: "Slang emits arrays of textures without their [[texture(n)]]",
            Target.Wgsl: "Slang emits binding arrays that naga rejects",
        },
    ),
    Case(
        "vs_heightmap.hlsl",
        V,
        {"heightMap": (0, 0), "heightSampler": (0, 0), "Terrain": (0, 1)},
        inputs={"POSITION0": 0},
        outputs={"TEXCOORD0": 0},
    ),
    Case(
        "cs_spaces.hlsl",
        C,
        {"Frame": (0, 0), "meshData": (1, 0), "skinned": (2, 0), "Bones": (3, 0)},
    ),
    Case(
        "ps_constant_buffer_t.hlsl",
        P,
        {"sun": (1, 3), "Surface": (0, 0), "normalMap": (0, 2), "normalSampler": (0, 2)},
    ),
    Case(
        "ps_combined_attr.hlsl",
        P,
        {"sprite": (0, 1), "spriteSampler": (0, 1), "Fade": (0, 0)},
    ),
    Case(
        "cs_vk_offset.hlsl",
        C,
        {"params": (0, 0), "results": (0, 1)},
        may_fail={
            Target.Msl: "Slang's Metal ignores [[vk::offset]]",
            Target.Wgsl: "Slang's WGSL ignores [[vk::offset]]",
        },
    ),
    Case(
        "vs_fullscreen.hlsl",
        V,
        {},
        outputs={"TEXCOORD0": 0},
    ),
    Case(
        "cs_row_major_array.hlsl",
        C,
        {"Skin": (0, 0), "results": (0, 1)},
        offsets={"Skin.bones": 16, "Skin.b": 80, "Skin.pose": 96, "Skin.pose.joints": 16},
        strides={"Skin.bones": 32, "Skin.pose.joints": 32},
    ),
    Case(
        "cs_pack_matrix.hlsl",
        C,
        {"Rows": (0, 0), "Columns": (0, 1), "results": (0, 2)},
        offsets={
            "Rows.afterRows": 64,
            "Rows.byColumns": 80,
            "Rows.afterColumns": 128,
            "Columns.afterDefault": 48,
        },
    ),
    Case(
        "ps_space_only.hlsl",
        P,
        {"albedo": (1, 1), "albedoSampler": (1, 2), "normals": (1, 0), "Params": (2, 0)},
    ),
    Case(
        "ps_combined_shift.hlsl",
        P,
        {"pairedSampler": (0, 10), "paired": (0, 10), "plainSampler": (0, 20)},
        shifts=(_shift("t", 10, 0), _shift("s", 20, 0)),
    ),
    Case(
        "ps_rasterizer_ordered.hlsl",
        P,
        {"counts": (0, 0), "accum": (0, 1), "image": (0, 2)},
        may_fail={Target.Wgsl: "WGSL has no rasterizer-ordered views"},
    ),
    Case(
        "cs_namespace.hlsl",
        C,
        {"first": (0, 0), "lights": (0, 1), "casters": (0, 2), "last": (0, 3)},
    ),
    Case(
        "cs_derived_struct.hlsl",
        C,
        {"Params": (0, 0), "results": (0, 1)},
        offsets={"Params.material.base.color": 0, "Params.material.extra": 16, "Params.tail": 32},
    ),
    Case(
        "cs_int_matrix.hlsl",
        C,
        {"Params": (0, 0), "results": (0, 1)},
        offsets={"Params.cells": 0, "Params.scale": 32},
    ),
    Case(
        "cs_bitfields.hlsl",
        C,
        {"Params": (0, 0), "results": (0, 1)},
        offsets={
            "Params.flags.$bit_field_backing_0": 0,
            "Params.flags.$bit_field_backing_1": 4,
            "Params.flags.$bit_field_backing_2": 8,
            "Params.tail": 16,
        },
    ),
    Case(
        "cs_attribute_list.hlsl",
        C,
        {"items": (3, 5)},
        counters={"items": (3, 10)},
    ),
    Case(
        "ps_cbuffer_resources.hlsl",
        P,
        {
            "Params": (0, 0),
            "albedo": (0, 1),
            "albedoSampler": (0, 2),
            "Material": (0, 3),
            "pointSampler": (0, 4),
        },
        offsets={"Material.scale": 0},
    ),
    Case(
        "ps_struct_of_resources.hlsl",
        P,
        {
            "material.albedo": (0, 0),
            "material.albedoSampler": (0, 1),
            "$Globals": (0, 2),
            "detail": (0, 3),
        },
    ),
    Case(
        "ps_struct_after_array.hlsl",
        P,
        {"layers": (0, 0), "pair.tex": (0, 3), "pair.samp": (0, 4), "detail": (0, 5)},
        may_fail={Target.Wgsl: "WGSL has no arrays of resources ('layers')"},
    ),
    Case(
        "ps_struct_array_fields.hlsl",
        P,
        {"atlas.pages": (0, 0), "atlas.samplers": (0, 2), "detail": (0, 5)},
        may_fail={
            Target.Msl: "Slang emits Metal resource arrays in a struct without their indices",
            Target.Wgsl: "WGSL has no arrays of resources",
        },
    ),
    Case(
        "ps_struct_array.hlsl",
        P,
        {"pairs": (0, 0)},
        error=("pairs", "array of structs of resources"),
    ),
    Case(
        "cs_counter_array.hlsl",
        C,
        {"queues": (1, 0)},
        counters={"queues": (1, 1)},
        may_fail={
            Target.Msl: "Slang emits arrays of buffers without their [[buffer(n)]]",
            Target.Wgsl: "WGSL has no arrays of buffers",
        },
    ),
    Case(
        "cs_counter_parameter.hlsl",
        C,
        {"queue": (0, 0)},
        error=("IncrementCounter", "target", "global"),
    ),
    Case(
        "cs_int_matrix_column.hlsl",
        C,
        {"Params": (0, 0), "results": (0, 1)},
        error=("column-major", "row_major"),
    ),
    Case(
        "vs_truncation.hlsl",
        V,
        {"PerObject": (0, 0)},
        error=("mul", "float3"),
    ),
    Case(
        "cs_clash.hlsl",
        C,
        {"Params": (0, 0), "values": (0, 0), "results": (0, 1)},
        error=("Params", "values"),
        # Metal numbers buffers on its own, so the two need not meet there.
        error_targets=frozenset({Target.SpirV, Target.Wgsl}),
    ),
)

BUILDING = tuple(c for c in CASES if not c.error)
FAILING = tuple(c for c in CASES if c.error)


def case_id(case: Case) -> str:
    return case.id + ("+" + ",".join(k for k, _ in case.defines) if case.defines else "")
