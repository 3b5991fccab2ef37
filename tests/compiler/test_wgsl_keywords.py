"""WGSL keywords that HLSL lets a name be (``var``, ``let``, ``loop``, ``fn``, ...) as the names
Slang keeps in WGSL (constant-buffer members, spec constants, resources) or as member and
varying names: renamed in the WGSL only where a name stands, so naga accepts the module and it
runs; the reflection keeps the HLSL names the host writes by."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from verify_support import dispatch

from module_validation import device, wgsl_errors
from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import CompileResult
from oneshader.compiler.emitted.wgsl_names import WGSL_KEYWORDS, WGSL_RESERVED
from oneshader.reflection.model import Target

SOURCE = """\
[[vk::constant_id(0)]] const float loop = 2.0;
cbuffer Frame { float4 var; float let; uint override; };
struct Pair { float alias; float enable; };
RWStructuredBuffer<float> fn;

float twice(Pair p) { return p.alias + p.enable; }

[shader("compute")]
[numthreads(1, 1, 1)]
void main()
{
    Pair p;
    p.alias = let;
    p.enable = let;
    fn[0] = var.x * loop + twice(p) + override;
}
"""


def _build(tmp_path: Path) -> CompileResult:
    path = tmp_path / "keywords.hlsl"
    path.write_text(SOURCE)
    targets = (Target.SpirV, Target.Msl, Target.Wgsl)
    result = compile_file(str(path), CompileOptions(targets=targets, source_name="keywords.hlsl"))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def test_the_reflection_keeps_the_hlsl_names(tmp_path: Path) -> None:
    r = _build(tmp_path).reflection
    assert r is not None
    frame = next(x for x in r.resources if x.name == "Frame")
    assert frame.layout is not None
    assert [(m.name, m.offset) for m in frame.layout.members] == [
        ("var", 0),
        ("let", 16),
        ("override", 20),
    ]
    assert [s.name for s in r.spec_constants] == ["loop"]
    assert "fn" in [x.name for x in r.resources]


def test_the_module_runs_on_the_software_adapter(tmp_path: Path) -> None:
    import wgpu

    result = _build(tmp_path)
    r = result.reflection
    assert r is not None
    wgsl = next(o.data.decode() for o in result.outputs if o.target is Target.Wgsl)
    assert ".var_0" in wgsl and "override loop_0" in wgsl
    dev = device()
    usage = wgpu.BufferUsage
    out = dev.create_buffer(size=4, usage=usage.STORAGE | usage.COPY_SRC)
    frame = dev.create_buffer_with_data(
        data=struct.pack("<4ffI8x", 1.5, 0, 0, 0, 0.25, 7), usage=usage.UNIFORM
    )
    module = dev.create_shader_module(code=wgsl)
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"}
    )
    groups: dict[int, list[dict[str, Any]]] = {}
    for name, buf in (("fn", out), ("Frame", frame)):
        record = next(x for x in r.resources if x.name == name)
        slot = next(s for s in record.slots if s.target is Target.Wgsl)
        groups.setdefault(slot.set, []).append(
            {"binding": slot.binding, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        )
    dispatch(pipeline, groups, 1)
    (value,) = struct.unpack("<f", bytes(dev.queue.read_buffer(out)))
    assert value == 1.5 * 2.0 + 0.25 + 0.25 + 7


# Every name WGSL reserves, as HLSL can spell it (Slang takes ``new`` and ``operator`` as its own
# keywords): each one a constant-buffer member (a name Slang keeps in WGSL).
RESERVED_NAMES = sorted((WGSL_RESERVED | set(WGSL_KEYWORDS)) - {"new", "operator"})


def test_naga_refuses_every_listed_name() -> None:
    """The list is WGSL's: naga refuses each word as a name (so none is renamed for nothing)."""
    for word in [*WGSL_RESERVED, *WGSL_KEYWORDS, "_", "__x"]:
        code = (
            f"var<private> {word} : u32;\n@compute @workgroup_size(1) fn main() {{ {word} = 1u; }}"
        )
        assert wgsl_errors(code), word


RESERVED_SOURCE = (
    "[[vk::constant_id(0)]] const uint __k = 3;\n"
    "[[vk::binding(2)]] cbuffer _ { uint face_width; uint __pad; }\n"
    f"cbuffer Words {{ {' '.join(f'uint {w};' for w in RESERVED_NAMES)} }}\n"
    "struct __S { uint __m; uint _; uint pad_; uint a__b; };\n"
    "StructuredBuffer<__S> __in;\n"
    "RWStructuredBuffer<uint> Out;\n"
    "uint __helper(uint __x) { uint _ = __x + 1; return _; }\n"
    '[shader("compute")]\n'
    "[numthreads(1, 1, 1)]\n"
    "void main(uint3 __id : SV_DispatchThreadID)\n"
    "{\n"
    "    __S s = __in[0];\n"
    "    Out[__id.x] = __helper(face_width) * 1000 + __pad * 100 + __k * 10\n"
    "        + s.__m + s._ * 2 + s.pad_ * 4 + s.a__b * 8\n"
    f"        + {' + '.join(RESERVED_NAMES)};\n"
    "}\n"
)


def _build_reserved(tmp_path: Path) -> CompileResult:
    path = tmp_path / "reserved.hlsl"
    path.write_text(RESERVED_SOURCE)
    targets = (Target.SpirV, Target.Msl, Target.Wgsl)
    result = compile_file(str(path), CompileOptions(targets=targets, source_name="reserved.hlsl"))
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


def test_every_reserved_name_builds_and_the_reflection_keeps_it(tmp_path: Path) -> None:
    """``_``, ``__x`` and the whole reserved list as kept names (resources, members, a spec
    constant) and as names Slang scrubs (``__m`` -> ``_m_0``): a module naga accepts (the
    suite's hook validates it) and a reflection with the source's names."""
    r = _build_reserved(tmp_path).reflection
    assert r is not None
    words = next(x for x in r.resources if x.name == "Words")
    assert words.layout is not None
    assert [m.name for m in words.layout.members] == RESERVED_NAMES
    assert [m.offset for m in words.layout.members] == [4 * i for i in range(len(RESERVED_NAMES))]
    under = next(x for x in r.resources if x.name == "_")
    assert under.layout is not None
    assert [m.name for m in under.layout.members] == ["face_width", "__pad"]
    element = next(x for x in r.resources if x.name == "__in").layout
    assert element is not None
    assert [m.name for m in element.members] == ["__m", "_", "pad_", "a__b"]
    assert [s.name for s in r.spec_constants] == ["__k"]


def test_the_reserved_names_module_runs(tmp_path: Path) -> None:
    import wgpu

    result = _build_reserved(tmp_path)
    r = result.reflection
    assert r is not None
    wgsl = next(o.data.decode() for o in result.outputs if o.target is Target.Wgsl)
    assert "var<uniform> oneshader__0 :" in wgsl and "override oneshader__k_0" in wgsl
    dev = device()
    usage = wgpu.BufferUsage
    count = len(RESERVED_NAMES)
    data = {
        "Out": dev.create_buffer(size=4, usage=usage.STORAGE | usage.COPY_SRC),
        "_": dev.create_buffer_with_data(data=struct.pack("<4I", 7, 5, 0, 0), usage=usage.UNIFORM),
        "Words": dev.create_buffer_with_data(
            data=struct.pack(f"<{count}I", *([1] * count)) + bytes(-4 * count % 16),
            usage=usage.UNIFORM,
        ),
        "__in": dev.create_buffer_with_data(
            data=struct.pack("<4I", 1, 1, 1, 1), usage=usage.STORAGE
        ),
    }
    module = dev.create_shader_module(code=wgsl)
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"}
    )
    groups: dict[int, list[dict[str, Any]]] = {}
    for name, buf in data.items():
        record = next(x for x in r.resources if x.name == name)
        slot = next(s for s in record.slots if s.target is Target.Wgsl)
        groups.setdefault(slot.set, []).append(
            {"binding": slot.binding, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        )
    dispatch(pipeline, groups, 1)
    (value,) = struct.unpack("<I", bytes(dev.queue.read_buffer(data["Out"])))
    assert value == 8 * 1000 + 5 * 100 + 3 * 10 + (1 + 2 + 4 + 8) + count
