"""Every compile option crosses every process boundary: the wire carries CompileOptions by its
fields, so a compile in a forked worker, a private zygote's worker and the compile server's
worker gives what the same compile gives in this process (``-Zpr`` was once dropped there)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import pytest

from oneshader.buildtask.sources import options_key
from oneshader.compiler import CompileOptions, CompileResult, compile_file
from oneshader.compiler.api import BindRegister, EntryPointSpec, RegisterShift
from oneshader.compiler.process.plain import from_plain, to_plain
from oneshader.compiler.process.server import CompileServer
from oneshader.compiler.process.wire import decode_request, encode_request
from oneshader.compiler.process.worker import CompilerWorker
from oneshader.compiler.process.zygote import Zygote
from oneshader.reflection.model import Stage, Target

# No [shader] attribute (the options pick one of two entry points), a define it needs, an include
# found through an include folder, a matrix whose layout -Zpr changes, registers moved by a
# shift or (every one of them) by an explicit binding, a minimum-precision float that
# -enable-16bit-types makes a half.
SHADER = """#include "every_inc.hlsli"
cbuffer Params : register(b0)
{
    float4x4 Transform;
};
Texture2D<float4> Tex : register(t0);
RWStructuredBuffer<float4> Out : register(u1);
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    min16float k = (min16float)Out[0].x;  // half with -enable-16bit-types
    Out[id.x] = mul(Transform, Tex.Load(int3(0, 0, 0))) * SCALE * INCLUDED * k;
}
[numthreads(2, 1, 1)]
void Other(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = float4(1.0, 2.0, 3.0, 4.0);
}
"""

# One non-default value per field of CompileOptions; a field added there and not here fails
# test_every_field_is_given_a_non_default_value.
EVERY = CompileOptions(
    targets=(Target.Wgsl, Target.SpirV),
    source_name="shaders/every.hlsl",
    include_dirs=("include",),
    defines=(("SCALE", "3.0"),),
    entry_points=(EntryPointSpec("Main", Stage.Compute),),
    shifts=(RegisterShift("t", 4, None),),
    bind_registers=(
        BindRegister("b0", 0, 0, 1),
        BindRegister("t0", 0, 3, 1),
        BindRegister("u1", 0, 9, 2),
    ),
    row_major=True,
    enable_16bit_types=True,
    dxc_placement=True,
)
# Explicit bindings take every register, leaving shifts nothing to move: the shifts are seen
# without them.
SHIFTED = dataclasses.replace(EVERY, bind_registers=())
# Without shifts or bindings, DXC's placement puts b0 and t0 on one binding (OS3001); the
# default lays the classes out one after another.
PLACED = dataclasses.replace(EVERY, bind_registers=(), shifts=())


@pytest.fixture
def shader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "shaders").mkdir()
    (tmp_path / "include").mkdir()
    (tmp_path / "shaders" / "every.hlsl").write_text(SHADER)
    (tmp_path / "include" / "every_inc.hlsli").write_text("#define INCLUDED 2.0\n")
    monkeypatch.chdir(tmp_path)  # the include folder is relative, as a build passes it
    return str(tmp_path / "shaders" / "every.hlsl")


def test_every_field_is_given_a_non_default_value() -> None:
    default = CompileOptions()
    for field in dataclasses.fields(CompileOptions):
        assert getattr(EVERY, field.name) != getattr(default, field.name), field.name


def test_each_option_changes_the_in_process_result(shader: str) -> None:
    """The shader sees every option: a boundary that dropped any of them would show."""
    for field in dataclasses.fields(CompileOptions):
        if field.name in ("include_dirs", "defines"):
            continue  # without them the shader does not build at all: also a difference
        if field.name == "dxc_placement":  # seen where no shift or binding is given
            exact = compile_file(shader, PLACED)
            assert [d.code for d in exact.diagnostics] == ["OS3001"]
            assert compile_file(shader, dataclasses.replace(PLACED, dxc_placement=False)).ok
            continue
        options = SHIFTED if field.name == "shifts" else EVERY
        every = compile_file(shader, options)
        assert every.ok, every.diagnostics
        other = compile_file(shader, dataclasses.replace(options, **{field.name: field.default}))
        assert (other.reflection, other.outputs) != (every.reflection, every.outputs), field.name
    for name in ("include_dirs", "defines"):
        assert not compile_file(shader, dataclasses.replace(EVERY, **{name: ()})).ok, name


def _same(result: CompileResult, expected: CompileResult) -> None:
    assert result.ok and not result.crashed
    assert result.reflection == expected.reflection
    assert result.outputs == expected.outputs
    assert result == expected


def test_every_option_crosses_every_process_boundary(shader: str, runtime: Path) -> None:
    expected = [compile_file(shader, options) for options in (EVERY, SHIFTED)]
    with CompilerWorker() as worker:  # a forked worker of its own private zygote
        for options, result in zip((EVERY, SHIFTED), expected, strict=True):
            _same(worker.compile(shader, options), result)
        exact = compile_file(shader, PLACED)
        assert worker.compile(shader, PLACED).diagnostics == exact.diagnostics
    with Zygote(memory_limit=2 << 30) as zygote, CompilerWorker(zygote=zygote) as worker:
        for options, result in zip((EVERY, SHIFTED), expected, strict=True):
            _same(worker.compile(shader, options), result)
    server = CompileServer.for_this_process(idle_seconds=60)
    assert server is not None
    with Zygote(server.connect) as zygote, CompilerWorker(zygote=zygote) as worker:
        for options, result in zip((EVERY, SHIFTED), expected, strict=True):
            _same(worker.compile(shader, options), result)
    assert server.started  # this compile went through the server, not a private zygote


def test_the_request_holds_every_field_by_name() -> None:
    doc = json.loads(encode_request("x.hlsl", EVERY))
    assert set(doc["options"]) == {f.name for f in dataclasses.fields(CompileOptions)}
    assert doc["options"]["row_major"] is True
    assert decode_request(encode_request("x.hlsl", EVERY)) == ("x.hlsl", EVERY)


_SPEC = EntryPointSpec("x", Stage.Vertex)


class _Mode(Enum):
    A = "a"
    B = "b"


@dataclass(frozen=True)
class _Later(CompileOptions):
    """CompileOptions with fields added later, of every shape the wire carries."""

    mode: _Mode = _Mode.A
    level: int | None = None
    pairs: tuple[tuple[str, int], ...] = ()
    spec: EntryPointSpec = _SPEC


def test_a_field_added_later_is_carried_without_a_change_to_the_wire() -> None:
    later = _Later(row_major=True, mode=_Mode.B, level=3, pairs=(("a", 1),))
    plain = to_plain(later)
    assert json.loads(json.dumps(plain)) == plain  # plain data
    assert from_plain(plain, _Later) == later


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("row_major", 1),
        ("row_major", "true"),
        ("level", True),
        ("level", "3"),
        ("mode", "c"),
        ("pairs", [["a", 1, 2]]),
        ("pairs", [["a", "1"]]),
        ("spec", ["x", "vertex"]),
        ("targets", ["spirv", "vulkan"]),
    ],
)
def test_an_ill_typed_field_is_refused(field: str, value: object) -> None:
    plain = to_plain(_Later())
    assert isinstance(plain, dict)
    plain[field] = value
    with pytest.raises(ValueError):
        from_plain(plain, _Later)


def test_an_unknown_or_missing_field_is_refused() -> None:
    plain = to_plain(EVERY)
    assert isinstance(plain, dict)
    with pytest.raises(ValueError):
        from_plain({**plain, "unknown": 1}, CompileOptions)
    del plain["row_major"]
    with pytest.raises(ValueError):
        from_plain(plain, CompileOptions)


def test_a_type_the_wire_cannot_carry_fails_the_first_encode() -> None:
    @dataclass(frozen=True)
    class _Unplain(CompileOptions):
        ratio: float = 0.5

    with pytest.raises(TypeError):
        to_plain(_Unplain())

    @dataclass(frozen=True)
    class _Unset(CompileOptions):
        ratio: float | None = None  # never set: still a type the wire cannot carry

    with pytest.raises(TypeError):
        to_plain(_Unset())


def test_every_option_changes_the_build_key(tmp_path: Path) -> None:
    """The incremental key holds every field too (a field it left out would leave a build's
    outputs as they were when that option changed)."""
    base = options_key(CompileOptions(), tmp_path)
    for field in dataclasses.fields(CompileOptions):
        changed = dataclasses.replace(CompileOptions(), **{field.name: getattr(EVERY, field.name)})
        assert options_key(changed, tmp_path) != base, field.name
    moved = dataclasses.replace(EVERY, include_dirs=(str(tmp_path / "include"),))
    elsewhere = dataclasses.replace(EVERY, include_dirs=(str(tmp_path / "b" / "include"),))
    assert options_key(moved, tmp_path) == options_key(elsewhere, tmp_path / "b")
