"""The SPIR-V reader on a hand-assembled module (spirv-as from the test extra) and bad input."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from module_validation import tool
from oneshader.compiler.emitted.common import EmittedCodeError
from oneshader.compiler.emitted.spirv import features_of, read_spirv
from oneshader.reflection.model import BuiltIn, DeviceFeatures, MatrixPacking, TypeKind

_ASM = """
               OpCapability Shader
               OpCapability Float16
               OpCapability StorageBuffer16BitAccess
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "CS" %Params %Items %pc %gid
               OpExecutionMode %main LocalSize 16 2 1
               OpName %Params "Params"
               OpName %ParamsT "SLANG_ParameterGroup_Params_std140"
               OpMemberName %ParamsT 0 "M"
               OpMemberName %ParamsT 1 "W"
               OpMemberName %ParamsT 2 "T"
               OpName %Items "Items"
               OpName %ItemT "Item_std430"
               OpMemberName %ItemT 0 "p"
               OpMemberName %ItemT 1 "h"
               OpName %pc "pc"
               OpName %PcT "PC_std430"
               OpMemberName %PcT 0 "n"
               OpName %Scale "Scale"
               OpName %Img "Img"
               OpDecorate %ParamsT Block
               OpMemberDecorate %ParamsT 0 Offset 0
               OpMemberDecorate %ParamsT 0 ColMajor
               OpMemberDecorate %ParamsT 0 MatrixStride 16
               OpMemberDecorate %ParamsT 1 Offset 48
               OpMemberDecorate %ParamsT 2 Offset 96
               OpDecorate %arr3 ArrayStride 16
               OpDecorate %Params DescriptorSet 1
               OpDecorate %Params Binding 2
               OpMemberDecorate %ItemT 0 Offset 0
               OpMemberDecorate %ItemT 1 Offset 12
               OpDecorate %rtarr ArrayStride 16
               OpDecorate %SB Block
               OpMemberDecorate %SB 0 Offset 0
               OpDecorate %Items DescriptorSet 0
               OpDecorate %Items Binding 5
               OpDecorate %PcT Block
               OpMemberDecorate %PcT 0 Offset 0
               OpDecorate %Scale SpecId 7
               OpDecorate %Img DescriptorSet 0
               OpDecorate %Img Binding 1
               OpDecorate %gid BuiltIn GlobalInvocationId
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
       %half = OpTypeFloat 16
       %uint = OpTypeInt 32 0
    %v3float = OpTypeVector %float 3
    %v4float = OpTypeVector %float 4
     %v3uint = OpTypeVector %uint 3
       %mat3 = OpTypeMatrix %v4float 3
     %uint_3 = OpConstant %uint 3
       %arr3 = OpTypeArray %float %uint_3
    %ParamsT = OpTypeStruct %mat3 %arr3 %v3float
      %ItemT = OpTypeStruct %v3float %half
      %rtarr = OpTypeRuntimeArray %ItemT
         %SB = OpTypeStruct %rtarr
        %PcT = OpTypeStruct %uint
      %Scale = OpSpecConstant %float 2.5
        %img = OpTypeImage %float 2D 0 0 0 2 Rgba16f
   %ptr_img = OpTypePointer UniformConstant %img
 %ptr_params = OpTypePointer Uniform %ParamsT
     %ptr_sb = OpTypePointer StorageBuffer %SB
     %ptr_pc = OpTypePointer PushConstant %PcT
    %ptr_gid = OpTypePointer Input %v3uint
     %Params = OpVariable %ptr_params Uniform
      %Items = OpVariable %ptr_sb StorageBuffer
         %pc = OpVariable %ptr_pc PushConstant
        %Img = OpVariable %ptr_img UniformConstant
        %gid = OpVariable %ptr_gid Input
       %main = OpFunction %void None %fn
      %label = OpLabel
               OpReturn
               OpFunctionEnd
"""


@pytest.fixture(scope="module")
def binary(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    folder = tmp_path_factory.mktemp("spv")
    src = folder / "t.spvasm"
    src.write_text(_ASM)
    out = folder / "t.spv"
    subprocess.run(
        [tool("spirv-as"), "--target-env", "spv1.5", str(src), "-o", str(out)], check=True
    )
    return Path(out).read_bytes()


def test_header_and_capabilities(binary: bytes) -> None:
    m = read_spirv(binary)
    assert m.version == (1, 5)
    assert m.capabilities == {"Shader", "Float16", "StorageBuffer16BitAccess"}
    assert features_of(m.capabilities) == DeviceFeatures.Float16 | DeviceFeatures.StorageBuffer16


def test_uniform_block_layout_and_slot(binary: bytes) -> None:
    (params,) = read_spirv(binary).resources["Params"]
    assert (params.space, params.set, params.binding) == ("Uniform", 1, 2)
    mem = {m.name: m for m in params.layout.members}
    mat = mem["M"].type
    # SPIR-V ColMajor mat3 of vec4 is Slang's HLSL row_major float3x4.
    assert (mat.kind, mat.rows, mat.cols, mat.packing, mat.mstride, mat.size) == (
        TypeKind.Matrix,
        3,
        4,
        MatrixPacking.RowMajor,
        16,
        48,
    )
    assert (mem["W"].offset, mem["W"].type.stride, mem["W"].type.length) == (48, 16, 3)
    assert mem["T"].offset == 96
    assert params.layout.size == 112  # extent 108 rounded to std140's 16


def test_storage_buffer_element_push_spec_image(binary: bytes) -> None:
    m = read_spirv(binary)
    (items,) = m.resources["Items"]
    assert (items.set, items.binding, items.stride) == (0, 5, 16)
    assert [(x.name, x.offset) for x in items.layout.members] == [("p", 0), ("h", 12)]
    (pc,) = m.resources["pc"]
    assert pc.space == "PushConstant" and pc.binding is None
    (img,) = m.resources["Img"]
    assert (img.space, img.binding, img.format) == ("UniformConstant", 1, "rgba16f")
    scale = m.spec_constants["Scale"]
    assert scale.index == 7 and scale.default == struct.unpack("<I", struct.pack("<f", 2.5))[0]


def test_entry_point(binary: bytes) -> None:
    cs = read_spirv(binary).entries["CS"]
    assert cs.stage == "compute" and cs.workgroup == (16, 2, 1)
    assert cs.uses == {"Params", "Items", "pc"}
    assert [v.builtin for v in cs.inputs] == [BuiltIn.DispatchThreadId]


def test_big_endian_module_reads_the_same(binary: bytes) -> None:
    words = struct.unpack(f"<{len(binary) // 4}I", binary)
    swapped = struct.pack(f">{len(words)}I", *words)
    assert read_spirv(swapped).resources.keys() == read_spirv(binary).resources.keys()


@pytest.mark.parametrize("data", [b"", b"\x00" * 20, b"\x03\x02\x23\x07" + b"\x00" * 17])
def test_not_spirv_is_a_reader_error(data: bytes) -> None:
    with pytest.raises(EmittedCodeError):
        read_spirv(data)


def test_truncated_instruction_is_a_reader_error(binary: bytes) -> None:
    with pytest.raises(EmittedCodeError):
        read_spirv(binary[:20] + struct.pack("<I", (50 << 16) | 17))


_LOCAL_SIZE_ID = """
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %a "A"
               OpEntryPoint GLCompute %b "B"
               OpExecutionModeId %a LocalSizeId %c4 %c2 %c1
               OpExecutionModeId %b LocalSizeId %s8 %c1 %c1
               OpDecorate %s8 SpecId 3
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
         %c4 = OpConstant %uint 4
         %c2 = OpConstant %uint 2
         %c1 = OpConstant %uint 1
         %s8 = OpSpecConstant %uint 8
          %a = OpFunction %void None %fn
         %la = OpLabel
               OpReturn
               OpFunctionEnd
          %b = OpFunction %void None %fn
         %lb = OpLabel
               OpReturn
               OpFunctionEnd
"""


@pytest.mark.invalid_modules("a hand-written LocalSizeId module (SPIR-V 1.5 without maintenance4)")
def test_local_size_id(tmp_path: Path) -> None:
    src = tmp_path / "l.spvasm"
    src.write_text(_LOCAL_SIZE_ID)
    out = tmp_path / "l.spv"
    subprocess.run(
        [tool("spirv-as"), "--target-env", "spv1.5", str(src), "-o", str(out)], check=True
    )
    m = read_spirv(out.read_bytes())
    assert m.entries["A"].workgroup == (4, 2, 1)
    assert m.entries["B"].workgroup is None  # sized by a spec constant: the host decides
    assert [s.index for s in m.spec_constants.values()] == [3]
