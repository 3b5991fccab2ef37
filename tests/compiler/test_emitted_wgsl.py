"""The WGSL reader on hand-written modules: WGSL's layout rules, attributes, entry interfaces."""

from __future__ import annotations

import struct

import pytest

from oneshader.compiler.emitted.common import EmittedCodeError
from oneshader.compiler.emitted.wgsl import read_wgsl
from oneshader.reflection.model import BuiltIn, Interpolation, MatrixPacking, ScalarKind, TypeKind


def _read(text: str):  # type: ignore[no-untyped-def]
    return read_wgsl(text.encode(), ".wgsl")


def _members(layout):  # type: ignore[no-untyped-def]
    return {m.name: (m.offset, m.type) for m in layout.members}


def test_struct_offsets_follow_wgsl_rules() -> None:
    m = _read(
        """
        struct S_0 {
            a_0 : vec3<f32>,   // 0, size 12, align 16
            b_0 : f32,         // 12
            c_0 : vec2<f32>,   // 16
            d_0 : vec3f,       // 32 (align 16)
            e_0 : array<vec3<f32>, 2>,  // 48, stride 16
            f_0 : mat3x3<f32>, // 80, size 48
            g_0 : f16,         // 128
        };
        @group(1) @binding(2) var<storage, read> buf_0 : S_0;
        """
    )
    (res,) = m.resources["buf"]
    assert (res.set, res.binding, res.space) == (1, 2, "storage")
    mem = _members(res.layout)
    assert {k: v[0] for k, v in mem.items()} == {
        "a": 0, "b": 12, "c": 16, "d": 32, "e": 48, "f": 80, "g": 128
    }  # fmt: skip
    assert mem["e"][1].stride == 16 and mem["e"][1].length == 2
    mat = mem["f"][1]
    assert (mat.kind, mat.mstride, mat.size, mat.packing) == (
        TypeKind.Matrix,
        16,
        48,
        MatrixPacking.RowMajor,
    )
    assert mem["g"][1].scalar is ScalarKind.Float16
    assert res.layout.size == 144  # 130 rounded up to the struct's alignment of 16


def test_align_and_size_attributes_are_honoured() -> None:
    m = _read(
        """
        struct P_0 { @align(16) x_0 : f32, @size(20) y_0 : f32, z_0 : u32 };
        @binding(0) @group(0) var<uniform> p_0 : P_0;
        """
    )
    lay = m.resources["p"][0].layout
    assert [(mm.name, mm.offset) for mm in lay.members] == [("x", 0), ("y", 4), ("z", 24)]
    assert lay.size == 32


def test_slang_wrappers_read_as_matrix_and_array() -> None:
    m = _read(
        """
        struct _MatrixStorage_float2x3_ColMajorstd140_0 {
            @align(16) data_0 : array<vec4<f32>, i32(3)>
        };
        struct _Array_std140_float4_0 { @align(16) data_1 : array<vec4<f32>, i32(4)> };
        struct B_std140_0 {
            @align(16) m_0 : _MatrixStorage_float2x3_ColMajorstd140_0,
            @align(16) w_0 : _Array_std140_float4_0,
            @align(4) t_0 : f32,
        };
        @binding(3) @group(0) var<uniform> B_0 : B_std140_0;
        """
    )
    mem = _members(m.resources["B"][0].layout)
    mat = mem["m"][1]
    assert (mat.rows, mat.cols, mat.packing, mat.mstride, mat.size) == (
        2,
        3,
        MatrixPacking.ColumnMajor,
        16,
        48,
    )
    assert mem["w"][0] == 48 and mem["w"][1].kind is TypeKind.Array and mem["w"][1].length == 4
    assert mem["t"][0] == 112


def test_scalar_and_short_vector_arrays_in_vec4_slots_read_as_declared() -> None:
    """Slang's WGSL stores ``float W[3]`` of a constant buffer as ``array<vec4<f32>, 3>`` and reads
    ``.x``: the host sees a float at offset 0 of each 16-byte slot, so the array is read as an
    array of the declared scalar (or short vector) with the slot's stride."""
    m = _read(
        """
        struct _Array_std140_float3_0 { @align(16) data_0 : array<vec4<f32>, i32(3)> };
        struct _Array_std140_uint2_0 { @align(16) data_1 : array<vec4<u32>, i32(2)> };
        struct _Array_std140_vectorx3Cfloatx2C2x3E2_0 {
            @align(16) data_2 : array<vec4<f32>, i32(2)>
        };
        struct _Array_std140_vectorx3Cfloatx2C4x3E2_0 {
            @align(16) data_3 : array<vec4<f32>, i32(2)>
        };
        struct C_std140_0 {
            @align(16) W : _Array_std140_float3_0,
            @align(16) U : _Array_std140_uint2_0,
            @align(16) V : _Array_std140_vectorx3Cfloatx2C2x3E2_0,
            @align(16) F : _Array_std140_vectorx3Cfloatx2C4x3E2_0,
        };
        @binding(0) @group(0) var<uniform> C_0 : C_std140_0;
        """
    )
    mem = _members(m.resources["C"][0].layout)
    w, u, v, f = (mem[n][1] for n in "WUVF")
    assert (mem["W"][0], mem["U"][0], mem["V"][0], mem["F"][0]) == (0, 48, 80, 112)
    assert (w.length, w.stride, w.element.kind, w.element.scalar) == (
        3,
        16,
        TypeKind.Scalar,
        ScalarKind.Float,
    )
    assert (u.element.kind, u.element.scalar, u.stride) == (TypeKind.Scalar, ScalarKind.UInt, 16)
    assert (v.element.kind, v.element.rows, v.stride) == (TypeKind.Vector, 2, 16)
    assert (f.element.kind, f.element.rows, f.element.size) == (TypeKind.Vector, 4, 16)


def test_runtime_array_gives_element_and_stride() -> None:
    m = _read(
        """
        struct E_std430_0 { @align(16) p_0 : vec3<f32>, @align(4) q_0 : f32, r_0 : vec2<f32> };
        @binding(0) @group(0) var<storage, read_write> Items_0 : array<E_std430_0>;
        @binding(1) @group(0) var<storage, read> Raw_0 : array<u32>;
        """
    )
    items = m.resources["Items"][0]
    assert items.stride == 32 and items.layout.size == 32
    assert m.resources["Raw"][0].stride == 4


def test_handles_formats_and_overrides() -> None:
    m = _read(
        """
        @binding(4) @group(2) var Img_0 : texture_storage_2d<rgba8unorm, write>;
        @binding(5) @group(2) var S_0 : sampler_comparison;
        @id(3) override Scale_0 : f32 = 1.5f;
        @id(1) override Count_0 : i32 = i32(-2);
        @id(0) override On_0 : bool = true;
        override Free_0 : u32 = 4u;
        """
    )
    img = m.resources["Img"][0]
    assert (img.space, img.set, img.binding, img.format) == ("handle", 2, 4, "rgba8")
    assert m.resources["S"][0].binding == 5
    spec = m.spec_constants
    assert spec["Scale_0"].index == 3
    assert spec["Scale_0"].default == struct.unpack("<I", struct.pack("<f", 1.5))[0]
    assert spec["Count_0"].default == 0xFFFFFFFE
    assert spec["On_0"].default == 1
    assert "Free_0" not in spec  # no @id: not a pipeline-overridable constant by number


def test_entry_points_interfaces_and_reached_globals() -> None:
    m = _read(
        """
        @binding(0) @group(0) var<uniform> A_0 : vec4<f32>;
        @binding(1) @group(0) var<uniform> B_0 : vec4<f32>;
        struct In_0 {
            @location(0) pos_0 : vec2<f32>,
            @interpolate(flat) @location(3) id_0 : u32,
            @interpolate(linear, centroid) @location(1) c_0 : vec2<f32>,
        };
        struct Out_0 { @builtin(position) p_0 : vec4<f32>, @location(0) uv_0 : vec2<f32> };
        fn helper_0() -> vec4<f32> { return B_0; }
        @vertex fn VS(i : In_0, @builtin(vertex_index) vid_0 : u32) -> Out_0 {
            var o : Out_0; o.p_0 = helper_0(); return o;
        }
        @compute @workgroup_size(8, 4) fn CS(@builtin(local_invocation_index) gi_0 : u32) {
            _ = A_0;
        }
        @fragment fn PS() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
        """
    )
    vs = m.entries["VS"]
    assert vs.stage == "vertex" and vs.uses == frozenset({"B"})
    assert [(v.name, v.location) for v in vs.inputs if v.builtin is None] == [
        ("pos", 0),
        ("id", 3),
        ("c", 1),
    ]
    assert vs.inputs[1].interp == frozenset({Interpolation.Flat})
    assert vs.inputs[2].interp == frozenset({Interpolation.NoPerspective, Interpolation.Centroid})
    assert any(v.builtin is BuiltIn.VertexId for v in vs.inputs)
    assert [v.builtin for v in vs.outputs] == [BuiltIn.Position, None]
    cs = m.entries["CS"]
    assert cs.workgroup == (8, 4, 1) and cs.uses == frozenset({"A"})
    assert cs.inputs[0].builtin is BuiltIn.GroupIndex
    assert m.entries["PS"].outputs[0].location == 0 and m.entries["PS"].stage == "pixel"


def test_directives_and_consts_at_module_scope() -> None:
    m = _read(
        """
        enable f16;
        diagnostic(off, derivative_uniformity);
        const N_0 : i32 = i32(3);
        const_assert N_0 > 2;
        alias Vec_0 = vec4<f32>;
        struct S_0 { v_0 : array<Vec_0, N_0> };
        @group(0) @binding(0) var<uniform> u_0 : S_0;
        @compute @workgroup_size(N_0, 1, 1) fn K() { _ = u_0; }
        """
    )
    assert m.enables == {"f16"}
    (u,) = m.resources["u"]
    assert u.layout.members[0].type.length == 3 and u.layout.size == 48
    assert m.entries["K"].workgroup == (3, 1, 1)


def test_garbage_is_a_reader_error() -> None:
    with pytest.raises(EmittedCodeError, match=r"\(line 3\)"):
        _read("enable f16;\n\nstruct S { a : vec3<f32>, b : };")
    with pytest.raises(EmittedCodeError):
        _read("struct S { a : vec3<f32> ")
    with pytest.raises(EmittedCodeError):
        _read("@group(0) @binding(0) var<uniform> x : Unknown_0;")


def test_atomics_are_four_byte_integers_to_the_host() -> None:
    m = _read(
        """
        struct Bin_std430_0 { @align(4) n_0 : atomic<u32>, @align(4) w_0 : f32, d_0 : atomic<i32> };
        @binding(0) @group(0) var<storage, read_write> Counters_0 : array<atomic<u32>>;
        @binding(1) @group(0) var<storage, read_write> Bins_0 : array<Bin_std430_0>;
        var<workgroup> Local_0 : array<atomic<u32>, 4>;
        """
    )
    counters = m.resources["Counters"][0]
    assert counters.stride == 4
    assert (counters.layout.kind, counters.layout.scalar) == (TypeKind.Scalar, ScalarKind.UInt)
    assert (counters.layout.size, counters.layout.align) == (4, 4)
    bins = m.resources["Bins"][0]
    mem = _members(bins.layout)
    assert {k: v[0] for k, v in mem.items()} == {"n": 0, "w": 4, "d": 8}
    assert mem["n"][1].scalar is ScalarKind.UInt and mem["d"][1].scalar is ScalarKind.Int
    assert bins.stride == 12


def test_atomic_of_a_non_integer_has_no_layout() -> None:
    with pytest.raises(EmittedCodeError, match="atomic<f32>"):
        _read("@binding(0) @group(0) var<storage, read_write> x_0 : array<atomic<f32>>;")


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("a /* x */ b // c\n d", ["a", "b", "d"]),
        ("foo // a comment at the end", ["foo"]),  # no token after the last skipped text
        ("a /**/", ["a"]),
        ("x /* unterminated", ["x", "/", "*", "unterminated"]),  # not a comment: operators
        ("1.5e3f 0x1Fu .5 3h a->b", ["1.5e3f", "0x1Fu", ".5", "3h", "a", "->", "b"]),
        ("", []),
    ],
)
def test_tokens_skip_comments_and_space(text: str, tokens: list[str]) -> None:
    from oneshader.compiler.emitted.wgsl import _Parser

    parser = _Parser(text)
    assert parser.toks == tokens
    assert [text[at : at + len(t)] for at, t in zip(parser.starts, tokens, strict=True)] == tokens


@pytest.mark.parametrize("text", ["a\n$ b", "a // c\n$", "a\n/* b */ $"])
def test_a_character_wgsl_lacks_is_named_with_its_line(text: str) -> None:
    with pytest.raises(EmittedCodeError, match=r"unexpected character '\$' on line 2"):
        _read(text)


def test_bodies_left_untokenized_read_the_same() -> None:
    """Where every brace is code, a function's body is read for its names alone, by a regular
    expression; they are the names its tokens hold (a number's letters are none: ``1.e5``),
    and an error after a body still counts its line among every token."""
    from oneshader.compiler.emitted.wgsl import _Parser

    text = (
        "struct S_0 { @location(0) a_0 : vec4<f32>, };\n"
        "fn f_0(x_0 : f32) -> f32 { let e5 = 1.0e5f; return x_0 * 1.e5 + v1.x + .5f; }\n"
        "@fragment fn main(s_0 : S_0) -> @location(0) vec4<f32> { if (true) { return s_0.a_0; }\n"
        "return vec4<f32>(f_0(2.f)); }\n"
    )
    fast, whole = _Parser(text), _Parser(text, bodies=True)
    assert fast.blocks and not whole.blocks
    parsed = fast.parse()
    assert parsed == whole.parse()
    assert parsed.functions["f_0"].idents == {"e5", "return", "x_0", "v1", "x", "let"}
    with pytest.raises(EmittedCodeError, match=r"\(line 5\)"):
        _read(text + "struct T { b : };")
