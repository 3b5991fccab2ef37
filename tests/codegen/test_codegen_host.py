"""The host helpers without a GPU: stage checks, vertex buffer packing, per-object arrays, typed
constructors, field docstrings, workgroup counts and the embedded code."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
from pathlib import Path
from typing import Any

import codegen_samples as samples
import numpy as np
import pytest

from oneshader.bindings import from_reflection, load
from oneshader.bindings.runtime import LinkError, check_link
from oneshader.cli import main
from oneshader.codegen import generate
from oneshader.codegen.render import render_module
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import (
    BuiltIn,
    EntryPoint,
    Interpolation,
    ScalarKind,
    ShaderReflection,
    Stage,
    StageVariable,
    Target,
    VertexFormat,
)


def _var(name: str, location: int, components: int, **kw: object) -> StageVariable:
    return StageVariable(name, name.upper(), location=location, components=components, **kw)  # type: ignore[arg-type]


def _stages(
    outputs: tuple[StageVariable, ...], inputs: tuple[StageVariable, ...]
) -> ShaderReflection:
    position = StageVariable("Position", "SV_Position", builtin=BuiltIn.Position, components=4)
    return ShaderReflection(
        source="pair.hlsl",
        targets=(Target.Wgsl,),
        entry_points=(
            EntryPoint("VS", Stage.Vertex, outputs=(position, *outputs)),
            EntryPoint("PS", Stage.Pixel, inputs=(position, *inputs)),
        ),
    )


@pytest.mark.parametrize(
    ("outputs", "inputs", "message"),
    [
        ((_var("uv", 0, 2),), (_var("uv", 0, 3),), r"PS UV \(location 0\) as float3 is read, but "
         r"pair\.hlsl VS UV \(location 0\) as float2 is written"),
        ((_var("uv", 0, 4),), (_var("uv", 0, 2),), r"as float2 is read, but .* as float4"),
        ((_var("id", 1, 1, scalar=ScalarKind.UInt),), (_var("id", 1, 1, scalar=ScalarKind.Int),),
         r"as int is read, but .* as uint is written"),
        ((_var("uv", 0, 2),), (_var("uv", 1, 2),), r"is read, but VS writes no location 1"),
        ((_var("c", 0, 4, interp=Interpolation.Flat),), (_var("c", 0, 4),),
         r"read with Default interpolation, .* written with Flat"),
    ],
)  # fmt: skip
def test_check_link_names_both_sides(
    outputs: tuple[StageVariable, ...], inputs: tuple[StageVariable, ...], message: str
) -> None:
    b = from_reflection(_stages(outputs, inputs), "pair")
    with pytest.raises(LinkError, match=message):
        check_link(b.entry("VS"), b.entry("PS"))


def test_check_link_accepts_what_matches() -> None:
    """HLSL's ``linear`` is the default interpolation, integers are flat either way; unread
    vertex outputs are fine."""
    outputs = (
        _var("c", 0, 4, interp=Interpolation.Linear),
        _var("id", 1, 1, scalar=ScalarKind.UInt, interp=Interpolation.Flat),
        _var("extra", 3, 1),
    )
    inputs = (_var("c", 0, 4), _var("id", 1, 1, scalar=ScalarKind.UInt))  # integers: flat
    b = from_reflection(_stages(outputs, inputs), "pair")
    check_link(b.entry("VS"), b.entry("PS"))
    with pytest.raises(ValueError, match="takes a Vertex and a Pixel entry"):
        check_link(b.entry("PS"), b.entry("VS"))


def test_vertex_buffers_pack_each_buffer_as_webgpu_requires() -> None:
    inputs = (
        _var("pos", 0, 3, format=VertexFormat.Float32x3),
        _var("col", 1, 4, format=VertexFormat.Unorm8x4),
        _var("half", 2, 1, format=VertexFormat.Float16),
        _var("shift", 3, 2, format=VertexFormat.Float32x2),
        _var("id", 4, 1, scalar=ScalarKind.UInt, format=VertexFormat.Uint32),
    )
    model = ShaderReflection(
        source="v.hlsl",
        targets=(Target.Wgsl,),
        entry_points=(EntryPoint("VS", Stage.Vertex, stride=32, inputs=inputs),),
    )
    vs = from_reflection(model, "v").entry("VS")
    per_vertex = vs.vertex_buffer("half", "col", "pos")
    assert per_vertex.layout == {
        "array_stride": 20,
        "step_mode": "vertex",
        "attributes": [
            {"format": "float16", "offset": 0, "shader_location": 2},
            {"format": "unorm8x4", "offset": 4, "shader_location": 1},
            {"format": "float32x3", "offset": 8, "shader_location": 0},
        ],
    }
    per_instance = vs.instance_buffer("shift", "id")
    assert per_instance.stride == 12 and per_instance.layout["step_mode"] == "instance"
    data = per_vertex.zeros(2)
    data["col"] = [[1, 2, 3, 4], [5, 6, 7, 8]]
    data["half"] = [0.5, 2.0]
    raw = data.tobytes()
    assert len(raw) == 40 and raw[4:8] == bytes([1, 2, 3, 4])
    assert np.frombuffer(raw[20:22], np.float16)[0] == 2.0
    assert vs.vertex_buffers(per_vertex, per_instance) == [per_vertex.layout, per_instance.layout]
    with pytest.raises(ValueError, match="'pos' is in vertex buffers 0 and 1"):
        vs.vertex_buffers(per_vertex, vs.instance_buffer("pos", "shift", "id"))
    assert len(vs.vertex_buffers()) == 1  # the reflection's one interleaved buffer


def test_per_object_arrays_are_aligned_and_offsets_step_by_the_stride() -> None:
    b = from_reflection(samples.particles(), "particles")
    params = b.struct("Params")
    assert params.size == 16
    objs = b.Params.array(3, align=256)
    assert objs.nbytes == 768 and [objs.byte_offset(i) for i in range(3)] == [0, 256, 512]
    objs.Count = [1, 2, 3]
    objs[2].Dt = 0.5
    raw = objs.to_bytes()
    assert np.frombuffer(raw[516:520], np.uint32)[0] == 3
    assert np.frombuffer(raw[512:516], np.float32)[0] == 0.5
    assert objs.copy().to_bytes() == raw
    assert b.Params.array(3, align=4).nbytes == 48  # already aligned: no padding
    with pytest.raises(IndexError):
        objs.byte_offset(3)
    with pytest.raises(ValueError, match="align must be a positive int"):
        b.Params.array(1, align=0)
    with pytest.raises(ValueError, match=r"ParamsArray\.Count holds uint32 integers, got list"):
        objs.Count = [1.5, 2, 3]  # numpy would store 1


def test_constructors_take_the_fields_as_typed_keywords() -> None:
    b = from_reflection(samples.particles(), "particles")
    params = inspect.signature(b.Params.__init__).parameters
    assert list(params) == ["self", "Dt", "Count"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in list(params.values())[1:])
    assert params["Dt"].annotation == "float | None" and params["Count"].annotation == "int | None"
    lights = inspect.signature(b.Lights.__init__).parameters
    assert lights["Items"].annotation == "LightArray | None"
    assert lights["Normal"].annotation == "_b.ArrayLike | None"
    assert b.Params(Count=2).Count == 2 and b.Params(Count=None).Count == 0
    with pytest.raises(TypeError, match="unexpected keyword argument 'Cont'"):
        b.Params(Cont=2)


def test_fields_carry_their_hlsl_type_as_docstring() -> None:
    source = render_module(samples.particles(), "particles")
    tree = ast.parse(source)
    docs: dict[str, dict[str, str]] = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        body = cls.body
        for stmt, after in itertools.pairwise(body):
            if isinstance(stmt, ast.Assign) and isinstance(after, ast.Expr):
                name = stmt.targets[0]
                assert isinstance(name, ast.Name) and isinstance(after.value, ast.Constant)
                docs.setdefault(cls.name, {})[name.id] = after.value.value
    assert docs["Lights"] == {
        "Normal": "float3x3 at byte 0.",
        "Items": "Light[3] at byte 48.",
        "Count": "uint at byte 144.",
        "Enabled": "bool at byte 148.",
    }
    assert docs["LightsArray"] == docs["Lights"]


def test_workgroups_round_up() -> None:
    main = from_reflection(samples.particles(), "particles").entry("main")
    assert main.workgroups(1) == (1, 1, 1)
    assert main.workgroups(64) == (1, 1, 1)
    assert main.workgroups(65, 2, 3) == (2, 2, 3)
    assert main.workgroups(0) == (0, 1, 1)
    with pytest.raises(ValueError, match="is a Vertex entry point"):
        from_reflection(samples.sprite(), "sprite").entry("VSMain").workgroups(4)


@pytest.mark.invalid_modules("planted code files: their bytes are embedded, never run")
def test_generated_module_embeds_the_code_beside_its_reflection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = dataclasses.replace(samples.sprite(), targets=(Target.SpirV, Target.Wgsl))
    out = tmp_path / "out"
    out.mkdir()
    path = out / "sprite.reflection"
    path.write_bytes(ReflectionFormat.write(model))
    wgsl = "// \"quotes\", ''' and \\ and é\n@vertex fn VSMain() {}\n"
    spirv = bytes(range(256)) * 3
    (out / "sprite.wgsl").write_text(wgsl, "utf-8")
    (out / "sprite.spv").write_bytes(spirv)
    (gen,) = [p for p in generate([path], tmp_path / "gen") if p.name == "sprite.py"]
    text = gen.read_text("utf-8")
    assert text.isascii() and str(tmp_path) not in text  # escaped; no machine path
    bindings = load(path)
    assert bindings.shader.code() == wgsl and bindings.shader.code(Target.SpirV) == spirv
    generate([path], tmp_path / "gen2")
    assert (tmp_path / "gen2" / "sprite.py").read_text("utf-8") == text  # deterministic

    assert main(["generate", str(path), "-o", str(tmp_path / "gen"), "--check"]) == 0
    (out / "sprite.wgsl").write_text(wgsl + "// changed\n", "utf-8")
    assert main(["generate", str(path), "-o", str(tmp_path / "gen"), "--check"]) == 1
    assert "sprite.py: differs" in capsys.readouterr().err

    (out / "sprite.wgsl").unlink()  # without the file, the module says what is missing
    with pytest.raises(LookupError, match="no Wgsl code was embedded"):
        load(path).shader.code()


class _Device:
    """Records the buffers asked for: create_buffer's checks come before any GPU call."""

    def __init__(self) -> None:
        self.made: list[bytes] = []

    def create_buffer_with_data(self, *, data: memoryview, usage: int) -> bytes:
        self.made.append(bytes(data))
        return self.made[-1]


def test_create_buffer_refuses_an_array_that_is_not_the_structs_by_name() -> None:
    b = from_reflection(samples.particles(), "particles")
    particles, device = b.resources.Particles, _Device()
    good = b.Particle.array(4).data
    particles.create_buffer(device, good)  # the generated dtype, whatever its field names
    plain = np.zeros(4, np.dtype({"names": ["p", "m", "v"], "formats": [
        ("<f4", 3), "<f4", ("<f4", 3)], "offsets": [0, 12, 16], "itemsize": 32}))  # fmt: skip
    particles.create_buffer(device, plain)
    assert len(device.made) == 2 and device.made[1] == bytes(128)
    wrong_type = np.zeros(4, np.dtype({"names": ["Position", "Mass", "Velocity"], "formats": [
        ("<f4", 3), "<f8", ("<f4", 3)], "offsets": [0, 12, 20], "itemsize": 32}))  # fmt: skip
    with pytest.raises(TypeError, match=r"'Particles': the array's dtype is not Particle's: "
                       r"field 'Mass' is float64 at offset 12 \('Mass' in the array\), the "
                       r"shader reads float32 at offset 12"):  # fmt: skip
        particles.create_buffer(device, wrong_type)
    moved = np.zeros(4, np.dtype({"names": ["Position", "Mass", "Velocity"], "formats": [
        ("<f4", 3), "<f4", ("<f4", 3)], "offsets": [0, 16, 20], "itemsize": 32}))  # fmt: skip
    with pytest.raises(TypeError, match=r"field 'Mass' is float32 at offset 16, the shader "
                       r"reads float32 at offset 12"):  # fmt: skip
        particles.create_buffer(device, moved)
    with pytest.raises(TypeError, match="it has no fields"):
        particles.create_buffer(device, np.zeros(32, np.float32))
    with pytest.raises(TypeError, match=r"strides \(64,\) are not contiguous"):
        particles.create_buffer(device, b.Particle.array(8).data[::2])
    lights = b.resources.Lights  # a constant buffer; nested structs compare by bytes too
    lights.create_buffer(device, b.Lights().data)
    assert len(device.made) == 3


def test_create_buffer_refuses_another_scalar_for_a_buffer_of_scalars() -> None:
    model = samples.one_buffer(samples.vector(4))
    b = from_reflection(model, "b")
    device = _Device()
    b.resources.B.create_buffer(device, np.zeros((2, 4), np.float32))
    with pytest.raises(TypeError, match=r"'B': the array holds float64, the shader reads float32"):
        b.resources.B.create_buffer(device, np.zeros((2, 4)))


def _vertex_entry(inputs: tuple[StageVariable, ...]) -> Any:
    """The entry ``VS`` of a shader that reads these vertex inputs (each packed by name)."""
    model = ShaderReflection(
        source="v.hlsl",
        targets=(Target.Wgsl,),
        entry_points=(EntryPoint("VS", Stage.Vertex, stride=32, inputs=inputs),),
    )
    return from_reflection(model, "v").entry("VS")


def test_vertex_fields_refuse_values_numpy_would_truncate() -> None:
    inputs = (
        _var("pos", 0, 2, format=VertexFormat.Float32x2),
        _var("ident", 1, 1, scalar=ScalarKind.UInt, format=VertexFormat.Uint32),
        _var("col", 2, 4, format=VertexFormat.Unorm8x4),
    )
    vs = _vertex_entry(inputs)
    data = vs.vertex_buffer("pos", "ident", "col").zeros(2)
    data["pos"] = [[0.5, 1.5], [2.5, 3.5]]  # a float attribute takes floats
    data["ident"] = [3.0, 4.0]  # whole numbers are exact
    with pytest.raises(TypeError, match=r"'ident' is uint32 \(integers\): float64 values that are "
                       "not whole numbers would be truncated"):  # fmt: skip
        data["ident"] = [1.5, 2.0]
    with pytest.raises(TypeError, match=r"'col' is uint8: values from -1 to 300 do not fit"):
        data["col"] = [[-1, 0, 0, 0], [300, 0, 0, 0]]
    with pytest.raises(TypeError, match=r"'col' is uint8 .* would be truncated"):
        data["col"] = [[0.5, 1, 1, 1], [1, 1, 1, 1]]  # a unorm written as a 0..1 float
    with pytest.raises(TypeError, match="'ident' is uint32"):
        data["ident"][1] = 0.25  # a view of one field is checked too
    assert data["ident"].tolist() == [3, 4] and data["col"].max() == 0


class _Pass:
    def __init__(self) -> None:
        self.bound: list[tuple[int, object]] = []

    def set_vertex_buffer(self, slot: int, buffer: object) -> None:
        self.bound.append((slot, buffer))


def test_vertex_buffers_are_bound_by_name() -> None:
    inputs = (
        _var("pos", 0, 3, format=VertexFormat.Float32x3),
        _var("shift", 1, 2, format=VertexFormat.Float32x2),
    )
    vs = _vertex_entry(inputs)
    buffers = vs.buffers(geometry=vs.vertex_buffer("pos"), instances=vs.instance_buffer("shift"))
    assert buffers.slot("instances") == 1 and buffers.geometry.names == ("pos",)
    assert vs.vertex_buffers(*buffers) == [buffers.geometry.layout, buffers.instances.layout]
    rp = _Pass()
    buffers.set(rp, instances="I", geometry="G")
    assert rp.bound == [(1, "I"), (0, "G")]
    with pytest.raises(LookupError, match="VS has no vertex buffer 'geom'; it has geometry, "):
        buffers.set(rp, geom="G", instances="I")
    with pytest.raises(ValueError, match="VS: no GPU buffer given for geometry"):
        buffers.set(rp, instances="I")
    with pytest.raises(ValueError, match="VS reads shift, which no buffer holds"):
        vs.buffers(geometry=vs.vertex_buffer("pos"))
    one = _Pass()
    vs.set_vertex_buffer(one, "V")
    assert one.bound == [(0, "V")]
