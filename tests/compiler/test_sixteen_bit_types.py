"""DXC's -enable-16bit-types (``CompileOptions.enable_16bit_types``): the minimum-precision types
are the 16-bit types they stand for on every target, ``__HLSL_ENABLE_16_BIT`` is defined, and a
float literal cast with asfloat16 is a half, as FidelityFX's 16-bit variants are written."""

from __future__ import annotations

from pathlib import Path

import pytest

from module_validation import spirv_errors
from oneshader.compiler import CompileOptions, CompileResult, compile_file
from oneshader.compiler.api import EntryPointSpec
from oneshader.reflection.model import DeviceFeatures, Stage, Target

HALF = """RWStructuredBuffer<float> Out : register(u0);
[numthreads(8, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
#if __HLSL_ENABLE_16_BIT
    min16float2 h = (min16float2)Out[id.x];
    Out[id.x] = h.x * h.y;
#else
    Out[id.x] = 3;
#endif
}
"""
INT = """RWStructuredBuffer<int> Out : register(u0);
[numthreads(8, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    min16int i = (min16int)Out[id.x];
    Out[id.x] = i * 2;
}
"""
# FidelityFX's ffx_core_gpu_common_half.h: E39999 "ambiguous call to 'asfloat16' with
# arguments of type (float)" (int16_t, uint16_t and half all take Slang's float literal)
LITERAL = """RWStructuredBuffer<uint> Out : register(u0);
[numthreads(8, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    uint16_t x = (uint16_t)Out[id.x];
    float16_t one = asfloat16(x * asuint16(asfloat16(1.0)));
    float16_t2 two = asfloat16(asuint16(float16_t2(asfloat16(1.0), asfloat16(2.0))));
    Out[id.x] = asuint16(one + two.y) + (uint)asint16(-1.0);
}
"""


def _compile(tmp_path: Path, text: str, target: Target, sixteen: bool) -> CompileResult:
    (tmp_path / "s.hlsl").write_text(text)
    options = CompileOptions(
        (target,),
        "s.hlsl",
        entry_points=(EntryPointSpec("main", Stage.Compute),),
        enable_16bit_types=sixteen,
    )
    return compile_file(str(tmp_path / "s.hlsl"), options)


@pytest.mark.parametrize("target", list(Target))
@pytest.mark.parametrize("sixteen", [False, True])
def test_min16float_is_half_only_with_the_option(
    target: Target, sixteen: bool, tmp_path: Path
) -> None:
    result = _compile(tmp_path, HALF, target, sixteen)
    assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
    (entry,) = result.reflection.entry_points
    (code,) = result.outputs
    if target is Target.SpirV:
        assert spirv_errors(code.data) == ""
        assert (DeviceFeatures.Float16 in entry.features) is sixteen
    elif target is Target.Wgsl:
        assert (b"enable f16;" in code.data) is sixteen
        assert (entry.features == DeviceFeatures.Float16) is sixteen
    else:
        assert (b"half" in code.data) is sixteen
        assert entry.features == DeviceFeatures(0)  # Metal's half needs no device feature


def test_min16int_is_refused_on_wgsl_with_the_option(tmp_path: Path) -> None:
    """16-bit integers exist on SPIR-V and Metal; WGSL has none: a positioned error."""
    assert _compile(tmp_path, INT, Target.Wgsl, False).ok
    result = _compile(tmp_path, INT, Target.Wgsl, True)
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert (error.line, error.column, error.code) == (5, 5, "OS1003")
    assert "min16int" in error.message and "-enable-16bit-types" in error.message
    spirv = _compile(tmp_path, INT, Target.SpirV, True)
    assert spirv.ok and spirv.reflection is not None
    assert DeviceFeatures.Int16 in spirv.reflection.entry_points[0].features


def test_asfloat16_of_a_float_literal_is_a_half(tmp_path: Path) -> None:
    result = _compile(tmp_path, LITERAL, Target.SpirV, True)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert spirv_errors(result.outputs[0].data) == ""


# The name pasted by a macro Slang expands (oneshader hands such a macro on as written)
PASTED = """#define MIN16(t) min16##t
RWStructuredBuffer<float> Out : register(u0);
[numthreads(8, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    MIN16(float2) h = (MIN16(float2))Out[id.x];
    Out[id.x] = h.x * h.y;
}
"""


@pytest.mark.parametrize("sixteen", [False, True])
def test_min_precision_defines_reach_a_pasted_name(sixteen: bool, tmp_path: Path) -> None:
    """A request leaves the min-precision defines out only where its text cannot name those
    types: a name made by ``##`` still gets them (and, with the option, is a half)."""
    result = _compile(tmp_path, PASTED, Target.SpirV, sixteen)
    assert result.ok and result.reflection is not None, [d.format() for d in result.diagnostics]
    (entry,) = result.reflection.entry_points
    assert (DeviceFeatures.Float16 in entry.features) is sixteen
