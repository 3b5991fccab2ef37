"""A compile leaves no reference cycle among oneshader's objects: what it made is freed by
reference counting when the compile returns. A cycle (a closure that calls itself, holding the
source set) keeps every token of the shader for the cycle collector, which then walks them all:
~0.35 ms a shader in a worker, and the memory until it runs."""

from __future__ import annotations

import gc
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path

from verify_support import CORPUS, corpus_options, manifest_shaders

from oneshader.compiler import CompileOptions, CompileResult, compile_file

# The walks the manifest's shaders do not all reach: a struct placed by [[vk::offset]] inside
# another that asks for one too (padding beyond the prediction, WGSL and Metal), a bool in a
# cbuffer (WGSL holds it as uint), storage images of two texel types (SPIR-V's formats
# patched), a struct after a scalar in a cbuffer (Metal padded to std140), a header included.
EXTRA = """\
#include "extra.hlsli"
struct Inner { float a; [[vk::offset(8)]] float b; };
struct Outer { float x; [[vk::offset(32)]] Inner inner; };
cbuffer Params : register(b0) { Outer outer; bool enabled; float s; Inner after; };
RWTexture2D<float4> color_out;
RWTexture2D<float2> motion_out;

[numthreads(8, 8, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    float v = enabled ? outer.inner.b + after.a : s * SCALE;
    color_out[id.xy] = float4(v, 0, 0, 1);
    motion_out[id.xy] = float2(v, outer.x);
}
"""


def _own(o: object) -> bool:
    """Whether ``o`` is oneshader's: an instance of its classes, or one of its functions."""
    if isinstance(o, types.FunctionType):
        return o.__module__.startswith("oneshader")
    return type(o).__module__.startswith("oneshader")


def _cycles(work: Callable[[], object]) -> list[str]:
    """The names of oneshader's objects and functions that only the cycle collector would
    have freed after ``work``."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        work()
        gc.collect()
        own = (o for o in gc.garbage if _own(o))
        return sorted({getattr(o, "__qualname__", type(o).__qualname__) for o in own})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


def test_corpus_compiles_leave_no_cycles() -> None:
    def work() -> None:
        for shader in manifest_shaders():
            compile_file(str(CORPUS / shader["file"]), corpus_options(shader["file"]))

    found = _cycles(work)
    assert found == [], ", ".join(found)


def test_padding_and_patches_leave_no_cycles(tmp_path: Path) -> None:
    (tmp_path / "extra.hlsli").write_text("#define SCALE 2.0\n")
    (tmp_path / "extra.hlsl").write_text(EXTRA)
    results: list[CompileResult] = []

    def work() -> None:
        results.append(compile_file(str(tmp_path / "extra.hlsl"), CompileOptions()))

    found = _cycles(work)
    assert found == [], ", ".join(found)
    assert results[0].ok, [d.format() for d in results[0].diagnostics]


def test_workers_collect_less() -> None:
    """A worker's collector runs less often than Python's default, over what the imports
    did not make (frozen), as a compile's objects form no cycles."""
    code = (
        "import gc; from oneshader.compiler.process import worker_child; "
        "worker_child.prepare(); print(gc.get_threshold()[0], gc.get_freeze_count())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    threshold, frozen = map(int, out.stdout.split())
    assert threshold > gc.get_threshold()[0]
    assert frozen > 1000
