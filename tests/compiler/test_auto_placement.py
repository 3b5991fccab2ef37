"""The default placement (docs/dxc-compatibility.md "Default placement"): register classes that
DXC would put on one binding (``b0``, ``t0``, ``u0``: OS3001 until the user learns DXC's shift
options) are laid out one after another, b, t, s, u, as ``-fvk-*-shift`` would; DXC's exact
placement is ``dxc_placement`` (``--placement dxc``), and any explicit shift or bind-register
places as DXC does."""

from __future__ import annotations

from pathlib import Path

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import BindRegister, CompileResult, RegisterShift
from oneshader.reflection.model import Target

BODY = """
[shader("compute")]
[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{{
{body}
}}
"""
CLASHING = """\
cbuffer Params : register(b0) { float Factor; uint Count; };
cbuffer More : register(b1) { float Bias; };
StructuredBuffer<float> Input : register(t0);
Texture2D<float4> Image : register(t1);
SamplerState Nearest : register(s0);
RWStructuredBuffer<float> Output : register(u0);
""" + BODY.format(
    body="    if (id.x < Count) Output[id.x] = Input[id.x] * Factor + Bias"
    " + Image.SampleLevel(Nearest, float2(0, 0), 0).x;"
)


def _build(tmp_path: Path, text: str, **options: object) -> CompileResult:
    path = tmp_path / "a.hlsl"
    path.write_text(text)
    opts = CompileOptions(targets=(Target.SpirV, Target.Wgsl), source_name="a.hlsl", **options)  # type: ignore[arg-type]
    return compile_file(str(path), opts)


def _slots(result: CompileResult, target: Target = Target.SpirV) -> dict[str, tuple[int, int]]:
    assert result.reflection is not None, [d.format() for d in result.diagnostics]
    return {
        r.name: next((s.set, s.binding) for s in r.slots if s.target is target)
        for r in result.reflection.resources
    }


def test_colliding_classes_are_laid_out_one_after_another(tmp_path: Path) -> None:
    result = _build(tmp_path, CLASHING)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert _slots(result) == {
        "Params": (0, 0),
        "More": (0, 1),
        "Input": (0, 2),  # t after the highest b
        "Image": (0, 3),
        "Nearest": (0, 4),  # s after the highest t
        "Output": (0, 5),  # u after the highest s
    }
    wgsl = _slots(result, Target.Wgsl)
    assert len(set(wgsl.values())) == len(wgsl)


def test_dxc_placement_is_one_option_away(tmp_path: Path) -> None:
    result = _build(tmp_path, CLASHING, dxc_placement=True)
    assert [d.code for d in result.diagnostics if d.is_error][:1] == ["OS3001"]


def test_explicit_options_place_as_dxc(tmp_path: Path) -> None:
    shifts = (RegisterShift("t", 10), RegisterShift("s", 20), RegisterShift("u", 30))
    result = _build(tmp_path, CLASHING, shifts=shifts)
    assert _slots(result) == {
        "Params": (0, 0),
        "More": (0, 1),
        "Input": (0, 10),
        "Image": (0, 11),
        "Nearest": (0, 20),
        "Output": (0, 30),
    }
    # a shift of one class only: the others are DXC's, and b0/u0 clash as in DXC
    only_t = _build(tmp_path, CLASHING, shifts=(RegisterShift("t", 10),))
    assert "OS3001" in [d.code for d in only_t.diagnostics]
    binds = tuple(
        BindRegister(r, 0, n, 0) for n, r in enumerate(("b0", "b1", "t0", "t1", "s0", "u0"))
    )
    assert list(_slots(_build(tmp_path, CLASHING, bind_registers=binds)).values()) == [
        (0, n) for n in range(6)
    ]


def test_classes_that_do_not_collide_keep_dxcs_numbers(tmp_path: Path) -> None:
    text = """\
cbuffer Params : register(b0) { float Factor; };
Texture2D<float4> Image : register(t1);
SamplerState Nearest : register(s1);
RWStructuredBuffer<float> Output : register(u2);
""" + BODY.format(body="    Output[id.x] = Image.SampleLevel(Nearest, float2(0, 0), 0).x * Factor;")
    result = _build(tmp_path, text)
    assert _slots(result) == _slots(_build(tmp_path, text, dxc_placement=True))
    # the texture and the sampler on one SPIR-V binding: DXC's combined pair, no collision
    assert _slots(result) == {
        "Params": (0, 0),
        "Image": (0, 1),
        "Nearest": (0, 1),
        "Output": (0, 2),
    }


def test_each_space_is_laid_out_on_its_own(tmp_path: Path) -> None:
    text = """\
cbuffer Params : register(b0) { float Factor; };
RWStructuredBuffer<float> Output : register(u0);
StructuredBuffer<float> Input : register(t0, space1);
RWStructuredBuffer<float> Other : register(u3, space1);
""" + BODY.format(body="    Output[id.x] = Input[id.x] * Factor; Other[id.x] = 1;")
    assert _slots(_build(tmp_path, text)) == {
        "Params": (0, 0),
        "Output": (0, 1),
        "Input": (1, 0),  # no collision in space 1: DXC's numbers
        "Other": (1, 3),
    }


def test_a_file_with_vk_binding_places_itself(tmp_path: Path) -> None:
    text = "[[vk::binding(5)]] Texture2D<float4> Extra;\n" + CLASHING.replace(
        "Image.SampleLevel", "Extra.SampleLevel(Nearest, float2(0, 0), 0).x + Image.SampleLevel"
    )
    assert "OS3001" in [d.code for d in _build(tmp_path, text).diagnostics]


def test_a_clash_with_an_unread_resource_stays_dxcs(tmp_path: Path) -> None:
    """Every shader that built with DXC's placement builds the same: an unread texture on a
    buffer's binding is dropped with OS3010 as before, and nothing moves."""
    text = """\
cbuffer Params : register(b0) { float Factor; };
Texture2D<float4> Old : register(t0);
RWStructuredBuffer<float> Output : register(u1);
""" + BODY.format(body="    Output[id.x] = Factor;")
    auto, dxc = _build(tmp_path, text), _build(tmp_path, text, dxc_placement=True)
    assert auto.ok and auto.reflection == dxc.reflection
    assert [d.code for d in auto.diagnostics] == ["OS3010"]
    assert auto.outputs == dxc.outputs
