"""The DXC corpus built for every target and held to DXC's rules (issue 6).

SPIR-V: the reflection's slots and the module's DescriptorSet/Binding decorations are DXC's,
and spirv-val passes. WGSL: every resource has a distinct (group, binding) that the code
declares, and naga accepts the module. MSL: indices are distinct per argument kind and the code
declares them. Locations, built-ins, counters, unused resources and the two error cases have
their own tests.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from dxc_build import (
    Built,
    build,
    built_or_allowed_failure,
    positioned_error_naming_target,
    slot_of,
)
from dxc_cases import BUILDING, CASES, FAILING, Case, case_id
from dxc_readers import (
    msl_arguments,
    msl_attributes,
    msl_colors,
    msl_has_attribute,
    read_spirv,
    spirv_resource_name,
    wgsl_entries,
    wgsl_globals,
)

from module_validation import spirv_errors, wgsl_errors
from oneshader.compiler.emitted.common import emitted_name
from oneshader.reflection.model import BuiltIn, ResourceTypeKind, StageVariable, Target

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)

building = pytest.mark.parametrize("case", BUILDING, ids=case_id)
with_locations = pytest.mark.parametrize(
    "case",
    [c for c in BUILDING if c.inputs is not None or c.outputs is not None],
    ids=case_id,
)

_MSL_KIND = {
    **{k: "buffer" for k in ResourceTypeKind if "Buffer" in k.name},
    **{k: "texture" for k in ResourceTypeKind if "Texture" in k.name},
    ResourceTypeKind.Buffer: "texture",
    ResourceTypeKind.RWBuffer: "texture",
    ResourceTypeKind.TextureBuffer: "buffer",
    ResourceTypeKind.SamplerState: "sampler",
    ResourceTypeKind.SamplerComparisonState: "sampler",
}


def _one(built: Built, target: Target) -> bytes:
    files = built.code.get(target, ())
    assert len(files) == 1, f"expected one {target.name} output, got {len(files)}"
    return files[0]


def _key(var: StageVariable) -> str:
    """``SEMANTIC<index>`` in upper case, whether or not the semantic keeps its digits."""
    base = re.sub(r"\d+$", "", var.semantic).upper()
    return f"{base}{var.index}"


# --- SPIR-V ------------------------------------------------------------------------------------


@building
def test_spirv_slots_are_dxcs(case: Case) -> None:
    built = built_or_allowed_failure(case, Target.SpirV)
    if built is None:
        return
    assert built.reflection is not None
    names = {r.name for r in built.reflection.resources}
    assert names == set(case.slots), "the reflection must hold every declared resource, used or not"
    got = {}
    for name in case.slots:
        s = slot_of(built.resource(name).slots, Target.SpirV)
        got[name] = (s.set, s.binding)
    assert got == case.slots
    counters = {}
    for r in built.reflection.resources:
        if r.counters:
            c = slot_of(r.counters, Target.SpirV)
            counters[r.name] = (c.set, c.binding)
    assert counters == case.counters


@building
def test_spirv_code_has_dxcs_decorations(case: Case) -> None:
    built = built_or_allowed_failure(case, Target.SpirV)
    if built is None:
        return
    module = read_spirv(_one(built, Target.SpirV))
    expected = {name: case.slots[name] for name in case.slots}
    expected |= {f"{name}.counter": slot for name, slot in case.counters.items()}
    allowed = set(expected.values())
    seen: dict[str, tuple[int, int]] = {}
    for var in module.descriptors():
        if var.storage == "PushConstant":
            continue
        assert var.set is not None and var.binding is not None, (
            f"descriptor {var.name!r} lacks DescriptorSet/Binding (invalid for Vulkan)"
        )
        slot = (var.set, var.binding)
        assert slot in allowed, f"{var.name!r} at {slot} is not a binding DXC gives"
        seen[spirv_resource_name(var)] = slot
    for name, slot in expected.items():
        if name in seen:
            assert seen[name] == slot, f"{name}: code has {seen[name]}, DXC gives {slot}"
        elif name.removesuffix(".counter") in case.used():
            # A used resource (or its counter) must be in the code; match by slot when the
            # compiler names the variable differently.
            assert slot in seen.values(), f"{name} at {slot} is missing from the SPIR-V"


@building
def test_spirv_val_passes(case: Case) -> None:
    built = built_or_allowed_failure(case, Target.SpirV)
    if built is None:
        return
    assert spirv_errors(_one(built, Target.SpirV)) == ""


@building
@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_uses_name_exactly_what_main_reads(case: Case, target: Target) -> None:
    built = built_or_allowed_failure(case, target)
    if built is None:
        return
    assert built.reflection is not None
    (entry,) = built.reflection.entry_points
    assert set(entry.uses) == case.used()


@pytest.mark.parametrize("case", [c for c in BUILDING if set(ALL) - set(c.may_fail)], ids=case_id)
def test_all_targets_at_once_keep_dxcs_spirv_slots(case: Case) -> None:
    targets = tuple(t for t in ALL if t not in case.may_fail)
    built = build(case, targets)
    assert built.reflection is not None, "; ".join(d.format() for d in built.errors)
    assert built.reflection.targets == targets
    for name, slot in case.slots.items():
        s = slot_of(built.resource(name).slots, Target.SpirV)
        assert (s.set, s.binding) == slot, name
        assert {x.target for x in built.resource(name).slots} == set(targets), name


# --- WGSL --------------------------------------------------------------------------------------


@building
def test_wgsl_slots_distinct_and_declared(case: Case) -> None:
    built = built_or_allowed_failure(case, Target.Wgsl)
    if built is None:
        return
    assert built.reflection is not None
    slots: dict[str, tuple[int, int]] = {}
    for r in built.reflection.resources:
        s = slot_of(r.slots, Target.Wgsl)
        slots[r.name] = (s.set, s.binding)
        if r.counters:
            c = slot_of(r.counters, Target.Wgsl)
            slots[f"{r.name}.counter"] = (c.set, c.binding)
    clashes = [slot for slot, n in Counter(slots.values()).items() if n > 1]
    assert not clashes, f"WGSL (group, binding) used twice: {clashes} in {slots}"
    declared = wgsl_globals(_one(built, Target.Wgsl).decode())
    code_slots = {g.name: (g.group, g.binding) for g in declared if g.group is not None}
    for g in declared:
        if g.group is not None:
            assert (g.group, g.binding) in slots.values(), (
                f"WGSL declares {g} unknown to reflection"
            )
    for name in case.used():
        spelled = emitted_name(name)  # a struct's field x.f is the global x_f in WGSL
        assert spelled in code_slots, f"{name} is used but not declared in the WGSL"
        assert code_slots[spelled] == slots[name], f"{name}: WGSL has {code_slots[spelled]}"


@building
def test_wgsl_counters_sit_at_dxcs_counter_bindings(case: Case) -> None:
    """The documented WGSL rule: a counter (the companion ``X_counter``) takes the group/binding
    of X's SPIR-V counter, DXC's."""
    built = built_or_allowed_failure(case, Target.Wgsl)
    if built is None:
        return
    assert built.reflection is not None
    got = {
        r.name: (c.set, c.binding)
        for r in built.reflection.resources
        for c in r.counters
        if c.target is Target.Wgsl
    }
    assert got == case.counters
    declared = wgsl_globals(_one(built, Target.Wgsl).decode())
    code_slots = {g.name: (g.group, g.binding) for g in declared if g.group is not None}
    for name, slot in case.counters.items():
        assert code_slots.get(f"{name}_counter") == slot, (name, code_slots)


@building
def test_wgsl_accepted_by_naga(case: Case) -> None:
    built = built_or_allowed_failure(case, Target.Wgsl)
    if built is None:
        return
    assert built.code.get(Target.Wgsl), "no WGSL output"
    for data in built.code[Target.Wgsl]:
        assert wgsl_errors(data.decode(), case.file) == "", f"naga rejects the WGSL of {case.file}"


# --- MSL ---------------------------------------------------------------------------------------


@building
def test_msl_indices_distinct_per_kind(case: Case) -> None:
    built = built_or_allowed_failure(case, Target.Msl)
    if built is None:
        return
    assert built.reflection is not None
    taken: dict[tuple[str, int], str] = {}
    for r in built.reflection.resources:
        entries = [(_MSL_KIND[r.rtype], slot_of(r.slots, Target.Msl), r.name)]
        if r.counters:
            entries.append(("buffer", slot_of(r.counters, Target.Msl), f"{r.name}.counter"))
        for kind, slot, name in entries:
            assert slot.set == 0, f"{name}: Metal slots have set 0"
            key = (kind, slot.binding)
            assert key not in taken, f"[[{kind}({slot.binding})]] for {taken.get(key)} and {name}"
            taken[key] = name
    by_name = {name: key for key, name in taken.items()}
    args = msl_arguments(_one(built, Target.Msl).decode())
    code = {(a.kind, a.index): a.name for a in args}
    assert len(code) == len(args), f"the MSL binds two arguments to one index: {args}"
    for key in code:
        assert key in taken, f"the MSL binds [[{key[0]}({key[1]})]], unknown to the reflection"
    for name in case.used():
        assert by_name[name] in code, f"{name} is used but [[{by_name[name]}]] is not in the MSL"


# --- Locations and built-ins -------------------------------------------------------------------


def _code_line(case: Case, needle: str) -> int:
    """The first line outside comments that holds ``needle``."""
    lines = case.path.read_text().splitlines()
    return next(i for i, s in enumerate(lines, 1) if needle in s.split("//")[0])


def _located(vars: tuple[StageVariable, ...]) -> dict[str, int | None]:
    return {_key(v): v.location for v in vars if v.builtin is BuiltIn.None_}


@with_locations
@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_locations_are_dxcs(case: Case, target: Target) -> None:
    built = built_or_allowed_failure(case, target)
    if built is None:
        return
    assert built.reflection is not None
    (entry,) = built.reflection.entry_points
    if case.inputs is not None:
        assert _located(entry.inputs) == case.inputs
    if case.outputs is not None:
        assert _located(entry.outputs) == case.outputs


@with_locations
def test_spirv_locations_in_code(case: Case) -> None:
    built = built_or_allowed_failure(case, Target.SpirV)
    if built is None:
        return
    module = read_spirv(_one(built, Target.SpirV))
    if case.inputs is not None:
        got = sorted(v.location for v in module.stage_vars("Input") if v.builtin is None)
        assert got == sorted(case.inputs.values())
    if case.outputs is not None:
        got = sorted(v.location for v in module.stage_vars("Output") if v.builtin is None)
        assert got == sorted(case.outputs.values())


@with_locations
def test_wgsl_locations_in_code(case: Case) -> None:
    built = built_or_allowed_failure(case, Target.Wgsl)
    if built is None:
        return
    (entry,) = wgsl_entries(_one(built, Target.Wgsl).decode())
    if case.inputs is not None:
        assert sorted(entry.inputs) == sorted(case.inputs.values())
    if case.outputs is not None:
        assert sorted(entry.outputs) == sorted(case.outputs.values())


@with_locations
def test_msl_locations_in_code(case: Case) -> None:
    """Metal matches varyings by name; its numbered ones are vertex attributes and colours."""
    built = built_or_allowed_failure(case, Target.Msl)
    if built is None:
        return
    code = _one(built, Target.Msl).decode()
    if case.inputs is not None and case.stage.name == "Vertex":
        assert sorted(msl_attributes(code)) == sorted(case.inputs.values())
    if case.outputs is not None and case.stage.name == "Pixel":
        assert sorted(msl_colors(code)) == sorted(case.outputs.values())


POINTSIZE = next(c for c in CASES if c.file == "vs_pointsize.hlsl")


def test_pointsize_builtin_spirv() -> None:
    built = built_or_allowed_failure(POINTSIZE, Target.SpirV)
    assert built is not None and built.reflection is not None
    module = read_spirv(_one(built, Target.SpirV))
    outs = {v.builtin for v in module.stage_vars("Output")}
    assert POINTSIZE.builtins <= outs, f"SPIR-V outputs carry built-ins {outs}"
    (entry,) = built.reflection.entry_points
    assert BuiltIn.PointSize in {v.builtin for v in entry.outputs}
    sized = [v for v in entry.outputs if v.builtin is BuiltIn.PointSize]
    assert sized[0].location is None, "a built-in has no location"


def test_pointsize_builtin_msl() -> None:
    built = built_or_allowed_failure(POINTSIZE, Target.Msl)
    assert built is not None
    assert msl_has_attribute(_one(built, Target.Msl).decode(), "point_size")


def test_pointsize_builtin_wgsl_is_a_named_error() -> None:
    built = build(POINTSIZE, (Target.Wgsl,))
    assert built.reflection is None, "WGSL cannot write a point size; silence would be wrong"
    positioned_error_naming_target(POINTSIZE, built, Target.Wgsl)
    text = " ".join(d.message for d in built.errors)
    assert "PointSize" in text and "vk::builtin" in text
    assert _code_line(POINTSIZE, 'vk::builtin("PointSize")') in {d.line for d in built.errors}


# --- Unused resources, formats ------------------------------------------------------------------


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_unused_slots_do_not_move(target: Target) -> None:
    plain, detail = (c for c in BUILDING if c.file == "ps_unused.hlsl")
    a, b = build(plain, (target,)), build(detail, (target,))
    assert a.reflection is not None and b.reflection is not None
    slots_a = {r.name: r.slots for r in a.reflection.resources}
    slots_b = {r.name: r.slots for r in b.reflection.resources}
    assert slots_a == slots_b
    assert "detailMap" in b.reflection.entry_points[0].uses
    assert "detailMap" not in a.reflection.entry_points[0].uses


def test_image_format_is_reflected() -> None:
    case = next(c for c in BUILDING if c.file == "cs_rw_texture.hlsl")
    built = built_or_allowed_failure(case, Target.SpirV)
    if built is None:
        return
    assert built.resource("destination").format == "rgba8"
    assert built.resource("destination").rtype is ResourceTypeKind.RWTexture2D


def test_pair_shares_spirv_binding_but_not_wgsl() -> None:
    case = next(c for c in BUILDING if c.file == "ps_pair.hlsl")
    built = build(case, ALL)
    assert built.reflection is not None, "; ".join(d.format() for d in built.errors)
    tex, samp = built.resource("albedo"), built.resource("albedoSampler")
    st, ss = slot_of(tex.slots, Target.SpirV), slot_of(samp.slots, Target.SpirV)
    assert (st.set, st.binding) == (ss.set, ss.binding) == (0, 0)
    wt, ws = slot_of(tex.slots, Target.Wgsl), slot_of(samp.slots, Target.Wgsl)
    assert (wt.set, wt.binding) != (ws.set, ws.binding)


# --- Errors ------------------------------------------------------------------------------------


def _marked_line(case: Case) -> int:
    lines = case.path.read_text().splitlines()
    return next(i for i, s in enumerate(lines, 1) if "EXPECT-ERROR" in s)


@pytest.mark.parametrize(
    ("case", "target"),
    [(c, t) for c in FAILING for t in ALL if t in c.error_targets],
    ids=lambda x: case_id(x) if isinstance(x, Case) else x.name,
)
def test_error_cases(case: Case, target: Target) -> None:
    built = build(case, (target,))
    assert built.reflection is None, f"{case.file} must not build"
    assert built.errors
    line = _marked_line(case)
    at_line = [d for d in built.errors if d.line == line]
    assert at_line, f"no error at line {line}: " + "; ".join(d.format() for d in built.errors)
    for d in at_line:
        assert d.file.endswith(case.file)
        assert d.column > 0
    text = " ".join(d.message for d in built.errors)
    for word in case.error:
        assert word in text, f"the error should mention {word!r}: {text}"


def test_truncation_error_says_what_to_write() -> None:
    case = next(c for c in FAILING if c.file == "vs_truncation.hlsl")
    built = build(case, (Target.SpirV,))
    message = " ".join(d.message for d in built.errors if d.line == _marked_line(case))
    # What to write instead: make the truncation explicit, e.g. float4(...).xyz or float3(...).
    assert re.search(r"\.xyz|float3\(", message), message


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_vk_offset_is_honoured_or_named(target: Target) -> None:
    case = next(c for c in BUILDING if c.file == "cs_vk_offset.hlsl")
    built = built_or_allowed_failure(case, target)
    if built is None:
        text = " ".join(d.message for d in build(case, (target,)).errors)
        assert "vk::offset" in text, text
        errors = build(case, (target,)).errors
        assert _code_line(case, "vk::offset(") in {d.line for d in errors}
        return
    layout = built.resource("params").layout
    assert layout is not None
    offsets = {m.name: m.offset for m in layout.members}
    assert offsets == {"a": 0, "b": 32}


_SAMPLERS = {ResourceTypeKind.SamplerState, ResourceTypeKind.SamplerComparisonState}


@building
def test_wgsl_slots_follow_the_documented_rule(case: Case) -> None:
    """docs/dxc-compatibility.md: WGSL group/binding = SPIR-V set/binding, except the sampler of
    a texture+sampler pair, which takes the binding after the highest of its group (pairs in
    declaration order)."""
    built = built_or_allowed_failure(case, Target.Wgsl)
    if built is None:
        return
    assert built.reflection is not None
    rtypes = {r.name: r.rtype for r in built.reflection.resources}
    highest: dict[int, int] = {}
    for s, b in (*case.slots.values(), *case.counters.values()):
        highest[s] = max(highest.get(s, -1), b)
    textures = {slot for name, slot in case.slots.items() if rtypes[name] not in _SAMPLERS}
    expected = {}
    for name, (s, b) in case.slots.items():  # written in declaration order
        if rtypes[name] in _SAMPLERS and (s, b) in textures:
            highest[s] += 1
            expected[name] = (s, highest[s])
        else:
            expected[name] = (s, b)
    got = {}
    for r in built.reflection.resources:
        w = slot_of(r.slots, Target.Wgsl)
        got[r.name] = (w.set, w.binding)
    assert got == expected


_DRAW_BUILTINS = {"BaseInstance": "base_instance", "BaseVertex": "base_vertex"}
draw_params = pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.file in ("vs_draw_params.hlsl", "vs_start_instance.hlsl")],
    ids=case_id,
)


@draw_params
@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_draw_parameters_are_built_ins(case: Case, target: Target) -> None:
    """DXC's ``[[vk::builtin("BaseInstance")]]`` and HLSL's ``SV_StartInstanceLocation`` are
    built-ins, never vertex attributes; where a target has none, a named, positioned error."""
    built = built_or_allowed_failure(case, target)
    if built is None:
        errors = build(case, (target,)).errors
        source = case.path.read_text().splitlines()
        lines = {
            i for i, s in enumerate(source, 1) if re.search(r"Base|SV_Start", s.split("//")[0])
        }
        assert lines & {d.line for d in errors}, "the error must point at the declaration"
        return
    assert built.reflection is not None
    (entry,) = built.reflection.entry_points
    assert _located(entry.inputs) == case.inputs, "draw parameters became attributes"
    reflected = {v.builtin.name for v in entry.inputs}
    assert case.builtins <= reflected, f"reflection built-ins {reflected}"
    code = _one(built, target)
    if target is Target.SpirV:
        got = {v.builtin for v in read_spirv(code).stage_vars("Input")}
        assert case.builtins <= got
    elif target is Target.Msl:
        for name in case.builtins:
            assert msl_has_attribute(code.decode(), _DRAW_BUILTINS[name]), name


@draw_params
def test_draw_parameters_on_wgsl_name_the_target(case: Case) -> None:
    built = build(case, (Target.Wgsl,))
    assert built.reflection is None, "WGSL has no draw-parameter built-ins; silence would be wrong"
    positioned_error_naming_target(case, built, Target.Wgsl)
