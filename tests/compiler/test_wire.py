"""Compile requests and results as plain data: exact round trips, and nothing else accepted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oneshader.compiler import CompileOptions, compile_file
from oneshader.compiler.api import BindRegister, EntryPointSpec, RegisterShift
from oneshader.compiler.process.wire import (
    decode_request,
    decode_result,
    encode_request,
    encode_result,
)
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
    assert result.ok and result.inputs and result.outputs
    assert decode_result(encode_result(result)) == result
    failed = compile_file(str(CORPUS / "errors" / "syntax.hlsl"), CompileOptions())
    assert decode_result(encode_result(failed)) == failed


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"[]",
        b"\xff",
        b"[" * 100_000,
        b'{"diagnostics":[],"reflection":null,"outputs":[],"inputs":[],"crashed":0}',
        b'{"diagnostics":[[1,2,3,"error","m","",""]],"reflection":null,"outputs":[],'
        b'"inputs":[],"crashed":false}',
        b'{"diagnostics":[],"reflection":"not a reflection","outputs":[],"inputs":[],'
        b'"crashed":false}',
        b'{"diagnostics":[],"reflection":null,"outputs":[["spirv","!!"]],"inputs":[],'
        b'"crashed":false}',
        b'{"diagnostics":[],"reflection":null,"outputs":[],"inputs":[],"crashed":false,"x":1}',
    ],
)
def test_anything_else_is_a_value_error(bad: bytes) -> None:
    with pytest.raises(ValueError):
        decode_result(bad)
    with pytest.raises(ValueError):
        decode_request(bad)


def test_a_request_with_a_wrong_type_is_refused() -> None:
    doc = json.loads(encode_request("x.hlsl", CompileOptions()))
    doc["options"]["targets"] = ["spirv", "vulkan"]
    with pytest.raises(ValueError):
        decode_request(json.dumps(doc).encode())
