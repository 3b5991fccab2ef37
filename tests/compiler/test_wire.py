"""Compile requests and results as plain data: exact round trips, and nothing else accepted."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import BindRegister, CompileResult, EntryPointSpec, RegisterShift
from oneshader.compiler.process.wire import (
    decode_request,
    decode_result,
    encode_request,
    encode_result,
)
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import Stage, Target

CORPUS = Path(__file__).parent.parent / "corpus"


def test_requests_and_results_round_trip() -> None:
    options = CompileOptions(
        targets=(Target.SpirV, Target.Wgsl),
        source_name="shaders/\tодин.hlsl",
        include_dirs=("inc",),
        defines=(("A", "1"), ("B", "")),
        entry_points=(EntryPointSpec("main", Stage.Compute),),
        shifts=(RegisterShift("b", 10, None), RegisterShift("t", 2, 1)),
        bind_registers=(BindRegister("t3", 0, 7, 1),),
        row_major=True,
    )
    assert decode_request(encode_request("/a/b.hlsl", options)) == ("/a/b.hlsl", options)
    result = compile_file(str(CORPUS / "sprite.hlsl"), CompileOptions(source_name="s.hlsl"))
    assert result.ok and result.inputs and result.outputs and result.reflection is not None
    decoded = decode_result(encode_result(result))
    assert decoded == result
    assert decoded.reflection_file == ReflectionFormat.write(result.reflection)
    failed = compile_file(str(CORPUS / "errors" / "syntax.hlsl"), CompileOptions())
    assert decode_result(encode_result(failed)) == failed


def test_a_result_carries_its_files_as_they_are() -> None:
    """The reflection and the outputs follow the JSON head as bytes (no base64 to make and
    undo on each side, a third fewer bytes to copy)."""
    result = compile_file(str(CORPUS / "sprite.hlsl"), CompileOptions(source_name="s.hlsl"))
    assert result.reflection is not None
    frame = encode_result(result)
    files = [ReflectionFormat.write(result.reflection), *(o.data for o in result.outputs)]
    assert frame.endswith(b"".join(files))
    assert len(frame) < sum(map(len, files)) + 2048


def _frame(head: dict[str, object] | bytes, body: bytes = b"") -> bytes:
    """A result frame: its head's length, its head, the bytes the head announces."""
    if isinstance(head, dict):
        head = json.dumps({**_EMPTY, **head}).encode()
    return struct.pack("<I", len(head)) + head + body


_EMPTY = {"diagnostics": [], "reflection": None, "outputs": [], "inputs": [], "crashed": False}
_SPIRV = {"outputs": [["spirv", 3]]}


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"\x01\x00",
        b"\xff" * 9,  # a head longer than the frame
        _frame(b"[]"),
        _frame(b"\xff"),
        _frame(b"[" * 100_000),
        _frame({"crashed": 0}),
        _frame({"diagnostics": [[1, 2, 3, "error", "m", "", ""]]}),
        _frame({"reflection": 16}, b"not a reflection"),
        _frame({"reflection": 2}, b"\xff\xfe"),
        _frame({"reflection": -2}, b"ab"),
        _frame(_SPIRV, b"ab"),  # shorter than announced
        _frame(_SPIRV, b"abcd"),  # bytes no length announces
        _frame({"outputs": [["spirv", -1]]}, b"a"),
        _frame({"outputs": [["spirv", True]]}, b"a"),
        _frame({"outputs": [["spirv", "3"]]}, b"abc"),
        _frame({"outputs": [["spirv", 1.0]]}, b"a"),
        _frame({"outputs": [["spirv", 2**70]]}, b"abc"),
        _frame({"outputs": [["spirv", 2**64 - 1], ["wgsl", 4]]}, b"abc"),
        _frame({"outputs": [["vulkan", 3]]}, b"abc"),
        _frame({"outputs": [["spirv", 3, 0]]}, b"abc"),
        _frame({"x": 1}),
        _frame({})[:-1],
        _frame({}) + b"\0",
    ],
)
def test_any_other_result_is_a_value_error(bad: bytes) -> None:
    with pytest.raises(ValueError):
        decode_result(bad)


def test_the_hostile_frames_differ_from_a_good_one_only_where_they_say() -> None:
    assert decode_result(_frame({})) == CompileResult()
    (spirv,) = decode_result(_frame(_SPIRV, b"abc")).outputs
    assert (spirv.target, spirv.data) == (Target.SpirV, b"abc")


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"[]",
        b"\xff",
        b"[" * 100_000,
        b'{"path":"x.hlsl"}',
        b'{"path":1,"options":{}}',
        b'{"path":"x.hlsl","options":{},"x":1}',
    ],
)
def test_any_other_request_is_a_value_error(bad: bytes) -> None:
    with pytest.raises(ValueError):
        decode_request(bad)


def test_a_request_with_a_wrong_type_is_refused() -> None:
    doc = json.loads(encode_request("x.hlsl", CompileOptions()))
    doc["options"]["targets"] = ["spirv", "vulkan"]
    with pytest.raises(ValueError):
        decode_request(json.dumps(doc).encode())
