"""One Slang request for the targets given the same source text (``compile_together``): each
target's code and facts are those of a request of its own, and a request that does not compile
every target cleanly (but for warnings of Slang's front end, ``quirks.shared``) leaves each
target to its own request (its own errors and warnings)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from request_support import each_as_alone, read_source

from oneshader.compiler import driver
from oneshader.compiler.api import CompileOptions, EntryPointSpec
from oneshader.compiler.driver import compile_file
from oneshader.compiler.quirks.record import SharedWarning
from oneshader.compiler.quirks.shared import SHARED_CODES, SHARED_WARNINGS
from oneshader.compiler.slang import capi as S
from oneshader.compiler.slang import library, request
from oneshader.compiler.slang.messages import SUPPRESSED
from oneshader.compiler.slang.request import _compile_once, compile_target, compile_together
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Severity
from oneshader.reflection.model import Stage, Target

ALL = [Target.SpirV, Target.Msl, Target.Wgsl]

# Resources of several kinds, a struct in a constant buffer, a spec constant, vertex inputs and
# outputs: the facts each target reads from its reflection differ (Metal's argument indices
# and C layout, WGSL's bindings).
_VERTEX = """struct Light { float3 dir; float power; };
cbuffer Frame : register(b0) { float4x4 mvp; Light light; float2 scale; };
StructuredBuffer<float4> Offsets : register(t1);
Texture2D<float4> Albedo : register(t2);
SamplerState Linear : register(s3);
[[vk::constant_id(3)]] const uint Mode = 2;
struct VSIn { float3 pos : POSITION; float2 uv : TEXCOORD0; uint id : SV_VertexID; };
struct VSOut { float4 pos : SV_Position; float4 color : COLOR0; };
VSOut main(VSIn i) {
    VSOut o;
    float4 tex = Albedo.SampleLevel(Linear, i.uv * scale, 0);
    o.pos = mul(mvp, float4(i.pos, 1) + Offsets[i.id]);
    o.color = tex * light.power * (Mode == 2 ? 1.0 : 0.5);
    return o;
}
"""


def test_one_request_gives_each_target_what_its_own_request_gives(
    tmp_path: Path, compiles: list[int]
) -> None:
    src, options = read_source(tmp_path, _VERTEX, Stage.Vertex)
    together = compile_together(library(), src, options, ALL)
    assert list(together) == ALL and len(compiles) == 1
    alone = each_as_alone(src, options, together)
    assert all(together[t].warnings == alone[t].warnings == [] for t in ALL)
    assert len(compiles) == 4
    # the facts differ by target, so each came from its own target's reflection
    assert together[Target.Msl].facts != together[Target.Wgsl].facts


def test_reflection_of_a_later_target_is_that_targets(tmp_path: Path) -> None:
    """``Request.reflection(i)``: the program layout of target i; 0 is ``spGetReflection``."""
    lib = library()
    path = str(tmp_path / "a.vert.hlsl")
    args = ["-target", "spirv", "-target", "metal", "-matrix-layout-column-major"]
    req = S.Request(lib, args, (path, _VERTEX), [("main", S.STAGE_VERTEX)], targets=2)
    try:
        assert req.compile().ok
        spirv, metal = req.reflection(0), req.reflection(1)
        assert spirv and metal and spirv != metal
        assert req.reflection(1) == metal  # the same layout when asked again
        spirv_code, metal_code = req.code(0), req.code(1)
        assert spirv_code is not None and spirv_code[:4] == b"\x03\x02\x23\x07"
        assert metal_code is not None and b"#include <metal_stdlib>" in metal_code
    finally:
        req.close()


def test_requests_leave_no_garbage_for_the_cycle_collector(tmp_path: Path) -> None:
    """A request's command line (a ctypes array) and COM calls make no reference cycle: a
    ctypes array type made at each request would be one, freed only by the cycle collector."""
    lib = library()
    path = str(tmp_path / "a.vert.hlsl")
    args = ["-target", "spirv", "-target", "metal", "-matrix-layout-column-major"]

    def one() -> None:
        req = S.Request(lib, args, (path, _VERTEX), [("main", S.STAGE_VERTEX)], targets=2)
        try:
            assert req.compile().ok and req.reflection(1) and req.code(1)
        finally:
            req.close()

    one()
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            one()
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_targets_given_other_source_text_get_their_own_request(
    tmp_path: Path, compiles: list[int]
) -> None:
    # 'linear' is blanked for Metal and WGSL only: SPIR-V's text differs, theirs are equal
    text = _VERTEX.replace("float4 color : COLOR0", "linear float4 color : COLOR0")
    src, options = read_source(tmp_path, text, Stage.Vertex)
    together = compile_together(library(), src, options, ALL)
    assert list(together) == [Target.Msl, Target.Wgsl] and len(compiles) == 1
    for target in (Target.Msl, Target.Wgsl):
        alone, _ = compile_target(library(), src, options, target)
        assert alone is not None and together[target].code == alone.code


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the Slang requests made (``capi.Request`` creations)."""
    made: list[int] = []
    real = S.Request.__init__

    def counted(self: S.Request, *args: Any, **kwargs: Any) -> None:
        made.append(1)
        real(self, *args, **kwargs)

    monkeypatch.setattr(S.Request, "__init__", counted)
    yield made


def test_a_request_with_a_front_end_warning_gives_each_target_the_warning(
    tmp_path: Path, requests: list[int]
) -> None:
    """E30081 (an implicit conversion) is Slang's front end's: the one request counts, and the
    build's warnings are those each target's own request gave before."""
    text = _VERTEX.replace("o.pos = mul(", "int cut = scale.x;\n    o.pos = cut * mul(")
    src, options = read_source(tmp_path, text, Stage.Vertex)
    together = compile_together(library(), src, options, ALL)
    assert list(together) == ALL and len(requests) == 1
    for target in ALL:
        alone, _ = compile_target(library(), src, options, target)
        assert alone is not None
        assert [d.format() for d in together[target].warnings] == [
            d.format() for d in alone.warnings
        ]
        assert [(d.code, d.line) for d in alone.warnings] == [("E30081", 12)]
    requests.clear()
    path = str(tmp_path / "a.vert.hlsl")
    result = compile_file(path, CompileOptions(entry_points=options.entry_points))
    warnings = [d for d in result.diagnostics if d.severity is Severity.WARNING]
    assert result.ok and [(d.code, d.line) for d in warnings] == [("E30081", 12)]
    assert len(requests) == 1


def test_a_request_with_another_warning_leaves_each_target_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warning not known to be the front end's (here E30081 taken out of the set) leaves
    each target to its own request."""
    monkeypatch.setattr(request, "SHARED_CODES", SHARED_CODES - {"E30081"})
    text = _VERTEX.replace("o.pos = mul(", "int cut = scale.x;\n    o.pos = cut * mul(")
    src, options = read_source(tmp_path, text, Stage.Vertex)
    assert compile_together(library(), src, options, ALL) == {}


@pytest.mark.parametrize("record", SHARED_WARNINGS, ids=lambda w: w.code)
def test_each_front_end_warning_is_every_targets_own(tmp_path: Path, record: SharedWarning) -> None:
    """Each registered warning's probe gets the warning (and only it) from one request for
    the three targets, as each target's own request gives it (every target, or the record's
    ``only``): the day Slang gives one of them otherwise (or no longer), its record is wrong
    and this says so."""
    path = tmp_path / "probe.hlsl"
    path.write_text(record.probe)
    src = SourceSet(str(path), "probe.hlsl", ())
    src.read()
    options = CompileOptions(entry_points=(EntryPointSpec("main", record.stage),))
    together = compile_together(library(), src, options, ALL)
    assert list(together) == ALL
    for target in ALL:
        alone, errors = _compile_once(library(), src, options, target, ())
        assert alone is not None and not errors
        shared = [d.format() for d in together[target].warnings]
        assert shared == [d.format() for d in alone.warnings]
        given = {record.code} if record.only in (None, target) else set()
        assert {d.code for d in together[target].warnings} == given


# A case that falls through into the next: WGSL's passes restructure it (E41026), SPIR-V's and
# Metal's reconverge it without a warning.
_FALL_THROUGH = """RWStructuredBuffer<uint> o;
[numthreads(1,1,1)]
void main(uint3 i : SV_DispatchThreadID) {
    uint x = 0;
    switch (i.x) { case 0: x += 2; case 1: x += 3; break; default: x = 7; break; }
    o[0] = x;
}
"""


def test_a_warning_of_one_targets_passes_goes_to_that_target_from_one_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, requests: list[int]
) -> None:
    """E41026 from a shared request is WGSL's alone: the build makes one request, with the
    outputs and warnings of a request per target."""
    path = tmp_path / "a.comp.hlsl"
    path.write_text(_FALL_THROUGH)
    options = CompileOptions(entry_points=(EntryPointSpec("main", Stage.Compute),))
    src = SourceSet(str(path), "a.comp.hlsl", ())
    src.read()
    together = compile_together(library(), src, options, ALL)
    assert [t for t in ALL if together[t].warnings] == [Target.Wgsl]
    requests.clear()
    shared = compile_file(str(path), options)
    assert shared.ok and len(requests) == 1
    requests.clear()
    monkeypatch.setattr(driver, "compile_together", lambda *_: {})
    alone = compile_file(str(path), options)
    assert alone.ok and len(requests) == 3
    assert [(o.suffix, o.data) for o in shared.outputs] == [
        (o.suffix, o.data) for o in alone.outputs
    ]
    assert shared.reflection == alone.reflection
    assert shared.diagnostics == alone.diagnostics
    assert [d.code for d in shared.diagnostics] == ["E41026"]


def test_a_target_that_fails_leaves_each_target_its_own_errors(tmp_path: Path) -> None:
    # a buffer parameter's length: Metal cannot ask for it (E36107), SPIR-V and WGSL can
    text = _VERTEX.replace(
        "VSOut main(",
        "uint count(StructuredBuffer<float4> b) { uint n, s; b.GetDimensions(n, s); return n; }"
        "\nVSOut main(",
    ).replace("o.pos = mul(", "o.pos = count(Offsets) * mul(")
    src, options = read_source(tmp_path, text, Stage.Vertex)
    assert compile_together(library(), src, options, ALL) == {}
    spirv, _ = compile_target(library(), src, options, Target.SpirV)
    wgsl, _ = compile_target(library(), src, options, Target.Wgsl)
    msl, errors = compile_target(library(), src, options, Target.Msl)
    assert spirv is not None and wgsl is not None and msl is None
    assert [(d.code, d.line) for d in errors] == [("E36107", 9)]


# A push block whose second member SPIR-V places by [[vk::offset]]: WGSL and Metal each need a
# second round with a padding member before it, the same text for both.
_PADDED = """struct Params { [[vk::offset(0)]] float4 a; [[vk::offset(32)]] float4 b; };
[[vk::push_constant]] Params p;
float4 main() : SV_Target { return p.a + p.b; }
"""


def test_wgsl_and_metal_pad_in_one_request_as_each_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, requests: list[int]
) -> None:
    path = tmp_path / "a.frag.hlsl"
    path.write_text(_PADDED)
    options = CompileOptions(entry_points=(EntryPointSpec("main", Stage.Pixel),))
    together = compile_file(str(path), options)
    assert together.ok and len(requests) == 2  # the shared request, then one padding round
    requests.clear()
    monkeypatch.setattr(driver, "_padded_together", lambda *_: {})
    alone = compile_file(str(path), options)
    assert alone.ok and len(requests) == 3  # each target pads in a request of its own
    assert [(o.suffix, o.data) for o in together.outputs] == [
        (o.suffix, o.data) for o in alone.outputs
    ]
    assert together.reflection == alone.reflection
    assert together.diagnostics == alone.diagnostics


# A push block whose first member SPIR-V places at 16: WGSL and Metal need 16 bytes of padding
# before it whatever their layouts (a first member sits at 0), known before any compile.
_FIRST_OFFSET = """struct Params { [[vk::offset(16)]] float4 a; float4 b; };
[[vk::push_constant]] Params p;
float4 main() : SV_Target { return p.a + p.b; }
"""
# The same struct held by another whose own member asks for an offset: the padding moves
# that struct's layout, so the guess is checked and dropped (the usual rounds follow, and
# refuse the offset as they did: each round pads both structs, and 'c' lands past 96).
_HELD = """struct Params { [[vk::offset(16)]] float4 a; float4 b; };
struct Outer { Params q; [[vk::offset(96)]] float4 c; };
[[vk::push_constant]] Outer p;
float4 main() : SV_Target { return p.q.a + p.q.b + p.c; }
"""


@pytest.mark.parametrize(
    ("text", "made", "ok"), [(_FIRST_OFFSET, 2, True), (_HELD, 6, False)], ids=["first", "held"]
)
def test_padding_known_before_a_compile_gives_what_the_rounds_give(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    requests: list[int],
    text: str,
    made: int,
    ok: bool,
) -> None:
    """WGSL's and Metal's first compile made with the padding a struct's first member asks
    for (one request for the two, SPIR-V's alone: two back ends fewer than a shared request
    and a second round): the outputs, reflection and diagnostics of the usual rounds; where
    the guess does not hold, the usual rounds from no padding."""
    path = tmp_path / "a.frag.hlsl"
    path.write_text(text)
    options = CompileOptions(entry_points=(EntryPointSpec("main", Stage.Pixel),))
    guessed = compile_file(str(path), options)
    assert len(requests) == made
    requests.clear()
    monkeypatch.setattr(request, "predicted_padding", lambda src: {})
    usual = compile_file(str(path), options)
    assert guessed.ok == usual.ok == ok
    assert [(o.suffix, o.data) for o in guessed.outputs] == [
        (o.suffix, o.data) for o in usual.outputs
    ]
    assert guessed.reflection == usual.reflection
    assert guessed.diagnostics == usual.diagnostics


def test_slang_writes_none_of_the_warnings_oneshader_answers_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(registers without vk::binding, overlapping bindings: warned of on every request of
    such a shader, read back and dropped by ``messages.parse``)"""
    src, options = read_source(tmp_path, _VERTEX, Stage.Vertex)
    written: list[str] = []
    compile_request = S.Request.compile

    def compile(self: S.Request) -> S.Compiled:
        result = compile_request(self)
        written.append(result.diagnostics)
        return result

    monkeypatch.setattr(S.Request, "compile", compile)
    compiled, errors = _compile_once(library(), src, options, Target.SpirV, ())
    assert compiled is not None and not errors
    assert written and not any(code in out for out in written for code in SUPPRESSED)
