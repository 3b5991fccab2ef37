"""What DXC builds and Slang alone refuses, seen on real Vulkan HLSL (issue 10): a
``[[vk::builtin("PointSize")]]`` in a pixel shader's input, a texture or sampler on the other
one of the ``t``/``s`` register letters, HLSL's ``class``. Each builds as DXC builds it, or is a
positioned error where DXC's module would be invalid."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_execution import _dispatch

from module_validation import device, disassembled
from oneshader.compiler import CompileOptions, CompileResult, EntryPointSpec, compile_file
from oneshader.compiler.api import BindRegister, RegisterShift
from oneshader.diagnostics import Diagnostic
from oneshader.reflection.model import BuiltIn, ShaderReflection, Stage, Target

ALL = (Target.SpirV, Target.Msl, Target.Wgsl)


def _build(
    tmp_path: Path,
    source: str,
    stage: Stage | None = Stage.Pixel,
    targets: tuple[Target, ...] = ALL,
    **options: object,
) -> CompileResult:
    (tmp_path / "s.hlsl").write_text(source)
    entries = () if stage is None else (EntryPointSpec("main", stage),)
    opts = CompileOptions(targets=targets, source_name="s.hlsl", entry_points=entries, **options)  # type: ignore[arg-type]
    return compile_file(str(tmp_path / "s.hlsl"), opts)


def _ok(result: CompileResult) -> CompileResult:
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def _reflection(result: CompileResult) -> ShaderReflection:
    assert result.reflection is not None
    return result.reflection


def _errors(result: CompileResult) -> list[Diagnostic]:
    return [d for d in result.diagnostics if d.is_error]


def _code(result: CompileResult, target: Target) -> bytes:
    return next(o.data for o in result.outputs if o.target is target)


# -- PointSize in a pixel shader's input --------------------------------------------------------

_SHARED_STRUCT = """\
struct VSOut
{
    float4 Pos : SV_POSITION;
    [[vk::location(0)]] float4 Color : COLOR0;
    [[vk::builtin("PointSize")]] float Size : PSIZE;
    [[vk::location(1)]] float Fade : TEXCOORD0;
};
"""

_PIXEL_INPUTS = {
    "member": _SHARED_STRUCT
    + "float4 main(VSOut input) : SV_TARGET { return input.Color * input.Fade; }\n",
    "nested": """\
struct Sprite
{
    [[vk::location(0)]] float4 Color : COLOR0;
    [[vk::builtin("PointSize")]] float Size : PSIZE;
    [[vk::location(1)]] float Fade : TEXCOORD0;
};
struct VSOut { float4 Pos : SV_POSITION; Sprite sprite; };
float4 main(VSOut input) : SV_TARGET { return input.sprite.Color * input.sprite.Fade; }
""",
    "parameter": """\
float4 main([[vk::builtin("PointSize")]] float size : PSIZE, float4 pos : SV_Position,
            [[vk::location(0)]] float4 Color : COLOR0,
            [[vk::location(1)]] float Fade : TEXCOORD0) : SV_TARGET
{
    return Color * Fade;
}
""",
    "last parameter": """\
float4 main(float4 pos : SV_Position, [[vk::location(0)]] float4 Color : COLOR0,
            [[vk::location(1)]] float Fade : TEXCOORD0,
            [[vk::builtin("PointSize")]] float size : PSIZE) : SV_TARGET
{
    return Color * Fade;
}
""",
}


@pytest.mark.parametrize("spelling", sorted(_PIXEL_INPUTS))
def test_a_pixel_input_point_size_is_no_input_as_in_dxc(tmp_path: Path, spelling: str) -> None:
    """DXC makes no stage variable of it (Vulkan has no point size in the fragment stage): the
    other inputs keep their locations, and no target's code or reflection has it."""
    result = _ok(_build(tmp_path, _PIXEL_INPUTS[spelling]))
    (entry,) = _reflection(result).entry_points
    inputs = {v.name: (v.location, v.builtin) for v in entry.inputs}
    assert inputs == {
        "Pos" if spelling in ("member", "nested") else "pos": (None, BuiltIn.Position),
        "Color": (0, BuiltIn.None_),
        "Fade": (1, BuiltIn.None_),
    }
    spirv = disassembled(_code(result, Target.SpirV))
    assert "BuiltIn PointSize" not in spirv and "Location 2" not in spirv
    assert b"point_size" not in _code(result, Target.Msl)
    assert not result.diagnostics  # DXC says nothing either


def test_a_pixel_shader_reading_point_size_is_an_error_where_it_reads(tmp_path: Path) -> None:
    source = _SHARED_STRUCT + "float4 main(VSOut input) : SV_TARGET { return input.Size; }\n"
    result = _build(tmp_path, source)
    assert not result.ok
    (err,) = _errors(result)
    assert (err.code, err.line, err.column) == ("OS1011", 8, 53)
    assert "'Size' is read by the pixel shader" in err.message


def test_a_point_size_parameter_read_is_an_error_where_it_reads(tmp_path: Path) -> None:
    source = _PIXEL_INPUTS["parameter"].replace("Color * Fade", "Color * size")
    (err,) = _errors(_build(tmp_path, source))
    assert (err.code, err.line, err.column) == ("OS1011", 5, 20)


def test_a_struct_both_stages_share_in_one_file_is_an_error_at_the_attribute(
    tmp_path: Path,
) -> None:
    """One source for both entry points: the member cannot be left out of the pixel input only."""
    source = _SHARED_STRUCT + (
        '[shader("vertex")] VSOut vs(float4 p : POSITION0)\n'
        "{ VSOut o; o.Pos = p; o.Color = p; o.Size = 1.0; o.Fade = 1.0; return o; }\n"
        '[shader("pixel")] float4 ps(VSOut input) : SV_TARGET { return input.Color; }\n'
    )
    (err,) = _errors(_build(tmp_path, source, stage=None, targets=(Target.SpirV,)))
    assert (err.code, err.line, err.column) == ("OS1011", 5, 7)
    assert "'vs'" in err.message and "own input struct" in err.message


def test_the_vertex_shader_still_writes_the_point_size(tmp_path: Path) -> None:
    """The vertex side of the same struct, in its own file, keeps its PointSize output."""
    source = _SHARED_STRUCT + (
        "VSOut main(float4 p : POSITION0)\n"
        "{ VSOut o; o.Pos = p; o.Color = p; o.Size = 1.0; o.Fade = 1.0; return o; }\n"
    )
    result = _ok(_build(tmp_path, source, stage=Stage.Vertex, targets=(Target.SpirV,)))
    (entry,) = _reflection(result).entry_points
    assert BuiltIn.PointSize in {v.builtin for v in entry.outputs}


_MISPLACED = {
    "BaseInstance as a pixel input": (
        Stage.Pixel,
        "struct PSIn { float4 Pos : SV_POSITION; [[vk::location(0)]] float4 Color : COLOR0;\n"
        '  [[vk::builtin("BaseInstance")]] uint Base : BASE; };\n'
        "float4 main(PSIn input) : SV_TARGET { return input.Color; }\n",
        "a pixel shader's input: DXC takes BaseInstance only as a vertex shader's input",
    ),
    "PointSize as a vertex input": (
        Stage.Vertex,
        "float4 main(float4 p : POSITION0,\n"
        '  [[vk::builtin("PointSize")]] float s : PSIZE) : SV_Position { return p * s; }\n',
        "a vertex shader's input: DXC takes PointSize only as a vertex shader's output or a "
        "pixel shader's input",
    ),
}


@pytest.mark.parametrize("case", sorted(_MISPLACED))
def test_a_builtin_where_dxc_refuses_it_is_one_error_at_the_attribute(
    tmp_path: Path, case: str
) -> None:
    """DXC's own rule, said once for every target (Slang named the semantic oneshader rewrote
    the attribute to, and WGSL's lack of the built-in came first)."""
    stage, source, said = _MISPLACED[case]
    (err,) = _errors(_build(tmp_path, source, stage=stage))
    assert (err.code, err.line, err.column) == ("OS1011", 2, 5)
    assert said in err.message


# -- t and s register letters -------------------------------------------------------------------

_LETTERS = """\
Texture2D albedo : register(s1, space1);
SamplerState albedoSampler : register(t1, space1);
Texture2D shadow : register(t3);
SamplerComparisonState shadowSampler : register(T2);

float4 main(float2 uv : TEXCOORD0) : SV_Target
{
    return albedo.Sample(albedoSampler, uv) * shadow.SampleCmp(shadowSampler, uv, 0.5);
}
"""


def _spirv_slots(result: CompileResult) -> dict[str, tuple[int, int]]:
    return {
        r.name: next((s.set, s.binding) for s in r.slots if s.target is Target.SpirV)
        for r in _reflection(result).resources
    }


def test_textures_and_samplers_take_either_letter_as_in_dxc(tmp_path: Path) -> None:
    """DXC takes ``t`` or ``s`` for both (its Sema: "'t' or 's'"), the number and space as
    written; Slang refused the other letter (E31222)."""
    result = _ok(_build(tmp_path, _LETTERS))
    assert _spirv_slots(result) == {
        "albedo": (1, 1),
        "albedoSampler": (1, 1),
        "shadow": (0, 3),
        "shadowSampler": (0, 2),
    }
    assert not result.diagnostics


def test_the_letter_as_written_picks_the_shift(tmp_path: Path) -> None:
    """DXC shifts by the register's letter, not the resource's kind (vk.binding.cl.shift)."""
    shifts = (RegisterShift("t", 10, None), RegisterShift("s", 20, None))
    result = _ok(_build(tmp_path, _LETTERS, targets=(Target.SpirV,), shifts=shifts))
    assert _spirv_slots(result) == {
        "albedo": (1, 21),
        "albedoSampler": (1, 11),
        "shadow": (0, 13),
        "shadowSampler": (0, 12),
    }


def test_bind_register_maps_the_letter_as_written(tmp_path: Path) -> None:
    """As DXC's vk.binding.cl.register.sampler: a Texture2D on s10, bound by ``s10 0 1 2``."""
    source = (
        "Texture2D Texture : register(s10);\nSamplerState Sampler : register(s0);\n"
        "float4 main() : SV_Target { return Texture.Sample(Sampler, float2(0.1, 0.2)); }\n"
    )
    binds = (BindRegister("s10", 0, 1, 2), BindRegister("s0", 0, 0, 0))
    result = _ok(_build(tmp_path, source, targets=(Target.SpirV,), bind_registers=binds))
    assert _spirv_slots(result) == {"Texture": (2, 1), "Sampler": (0, 0)}


def test_a_letter_dxc_refuses_stays_an_error(tmp_path: Path) -> None:
    """Only the t/s pair is lenient in DXC: a texture on ``u0`` is its error and Slang's."""
    source = (
        "Texture2D t : register(u0);\nfloat4 main() : SV_Target { return t.Load(int3(0, 0, 0)); }\n"
    )
    (err,) = _errors(_build(tmp_path, source, targets=(Target.SpirV,)))
    assert (err.code, err.line) == ("E31222", 1)


# -- HLSL's class -------------------------------------------------------------------------------

_CLASS = """\
RWStructuredBuffer<uint> results : register(u0);

class Counter
{
    uint step;
    uint next(uint v) { return v + step; }
};

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    Counter a;
    a.step = 2;
    Counter b = a;
    b.step = 5;
    results[0] = a.next(10);
    results[1] = b.next(10);
}
"""


@pytest.mark.parametrize("target", [Target.SpirV, Target.Wgsl])
def test_a_class_is_a_struct_with_methods_as_in_hlsl(tmp_path: Path, target: Target) -> None:
    """Slang took ``class`` for its reference type and stopped with an internal error without a
    position (E99997) on SPIR-V; HLSL's class is a value type: the copy does not alias."""
    import wgpu

    result = _ok(_build(tmp_path, _CLASS, stage=Stage.Compute, targets=(target,)))
    usage = wgpu.BufferUsage
    results = device().create_buffer_with_data(data=bytes(8), usage=usage.STORAGE | usage.COPY_SRC)
    _dispatch(result, target, {"results": results}, 1)
    got = np.frombuffer(bytes(device().queue.read_buffer(results)), dtype=np.uint32)
    assert got.tolist() == [12, 15]


def test_enum_class_and_template_parameters_are_left_alone(tmp_path: Path) -> None:
    source = (
        "enum class Mode { A, B };\n"
        "RWStructuredBuffer<uint> results : register(u0);\n"
        "[numthreads(1, 1, 1)] void main() { results[0] = uint(Mode::B); }\n"
    )
    result = _ok(_build(tmp_path, source, stage=Stage.Compute, targets=(Target.SpirV,)))
    assert _reflection(result).entry_points[0].name == "main"


# -- SV_InstanceID between the stages -----------------------------------------------------------

_INSTANCE = """\
struct VSOut
{
    float4 Pos : SV_POSITION;
    float4 Color : COLOR0;
    uint Inst : SV_InstanceID;
};
"""


_WRITES_INSTANCE = (
    "VSOut main(uint i : SV_InstanceID)\n"
    "{ VSOut o; o.Pos = 0; o.Color = 1; o.Inst = i; return o; }\n"
)
_READS_INSTANCE = "float4 main(VSOut input) : SV_TARGET { return input.Color * input.Inst; }\n"


@pytest.mark.parametrize(
    ("stage", "entry"), [(Stage.Vertex, _WRITES_INSTANCE), (Stage.Pixel, _READS_INSTANCE)]
)
def test_an_instance_id_between_the_stages_is_an_ordinary_varying(
    tmp_path: Path, stage: Stage, entry: str
) -> None:
    """DXC passes it as an ordinary varying at a location, and so does oneshader, on every
    target (Slang wrote a built-in no target has there: SPIR-V a location its reflection
    lacked, OS9000; Metal ``[[instance_id]]`` as an output; it was OS1003)."""
    (e,) = _reflection(_ok(_build(tmp_path, _INSTANCE + entry, stage=stage))).entry_points
    side = e.outputs if stage is Stage.Vertex else e.inputs
    inst = next(v for v in side if v.name == "Inst")
    assert (inst.semantic, inst.location, inst.builtin) == ("SV_InstanceID", 1, BuiltIn.None_)


def test_the_instance_id_passed_as_the_error_says_builds(tmp_path: Path) -> None:
    source = _INSTANCE.replace("uint Inst : SV_InstanceID", "nointerpolation uint Inst : INSTANCE")
    vertex = _ok(_build(tmp_path, source + _WRITES_INSTANCE, stage=Stage.Vertex))
    (entry,) = _reflection(vertex).entry_points
    assert {v.name: (v.location, v.builtin) for v in entry.outputs}["Inst"] == (1, BuiltIn.None_)
    _ok(_build(tmp_path, source + _READS_INSTANCE))


def test_a_vk_builtin_the_reflection_has_no_record_for_says_so_on_each_target(
    tmp_path: Path,
) -> None:
    """``[[vk::builtin("HelperInvocation")]]``: SPIR-V has the built-in, the reflection format
    does not; the refusal says that (not that a target cannot express it), at the attribute."""
    source = (
        'struct PSIn { float4 c : COLOR; [[vk::builtin("HelperInvocation")]] bool h : HI; };\n'
        "float4 main(PSIn i) : SV_TARGET { return i.h ? i.c : 0; }\n"
    )
    errors = _errors(_build(tmp_path, source))
    assert [(e.code, e.line, e.column) for e in errors] == [("OS1011", 1, 35)] * 3
    assert [e.message.split(": ")[1] for e in errors] == ["SPIR-V", "Metal", "WGSL"]
    assert all("the reflection format has no record for this built-in" in e.message for e in errors)
