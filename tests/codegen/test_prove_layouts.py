"""``oneshader prove-layouts`` on the software adapter: every buffer struct of tests/corpus agrees
with its generated numpy view on the device, and a layout broken on purpose is caught, naming
the member, the target and both offsets."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from oneshader.bindings.probe import probe_source
from oneshader.compiler import compile_file
from oneshader.prove import prove_file
from oneshader.reflection.model import ShaderReflection, StructMember, Target, TypeLayout

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
ROOT = CORPUS.parents[1]


def _swap(layout: TypeLayout, a: str, b: str) -> TypeLayout:
    at = {m.name: m.offset for m in layout.members}
    swapped = {a: at[b], b: at[a]}
    members = tuple(replace(m, offset=swapped.get(m.name, m.offset)) for m in layout.members)
    return replace(layout, members=members)


def _broken(resource: str, member: str, other: str) -> Any:
    """The reflection the bindings are made from, with two members' places swapped: what a
    layout bug in the compiler or the generator would look like to the host (a layout that
    passes every check, only not the device's)."""

    def edit(model: ShaderReflection) -> ShaderReflection:
        res = tuple(
            replace(r, layout=_swap(r.layout, member, other))
            if r.name == resource and r.layout is not None
            else r
            for r in model.resources
        )
        return replace(model, resources=res)

    return edit


def test_every_buffer_struct_of_the_corpus_agrees_on_the_device(gpu_device: Any) -> None:
    proven, members = 0, 0
    for path in [*sorted(CORPUS.glob("*.hlsl")), *sorted((CORPUS / "exec").glob("*.hlsl"))]:
        problems, notes = prove_file(path, gpu_device, compile_file)
        assert problems == [], problems
        done = [n for n in notes if n.endswith(": ok")]
        proven += len(done)
        members += sum(int(n.split(" buffers, ")[1].split(" ")[0]) for n in done)
    assert proven >= 25 and members >= 700, (proven, members)


@pytest.mark.parametrize(
    ("resource", "member", "other", "expected"),
    [
        (  # written by the probe (a RW structured buffer), read back through the bindings
            "Results",
            "Id",
            "Dot",
            "tests/corpus/compute_layout.hlsl: resource Results member Id: Wgsl: the device "
            "wrote it at offset 16, the bindings read offset 20",
        ),
        (  # written through the bindings (a constant buffer), read by the probe
            "Params",
            "Scale",
            "Bias",
            "tests/corpus/compute_layout.hlsl: resource Params member Scale.x: Wgsl: the "
            "bindings wrote offset 16, the device read offset 0",
        ),
    ],
)
def test_a_layout_broken_on_purpose_fails(
    gpu_device: Any, resource: str, member: str, other: str, expected: str, monkeypatch: Any
) -> None:
    monkeypatch.chdir(ROOT)
    path = Path("tests/corpus/compute_layout.hlsl")
    broken = _broken(resource, member, other)
    problems, _ = prove_file(path, gpu_device, compile_file, broken=broken)
    assert expected in problems, problems
    assert expected.replace("Wgsl:", "SpirV:") in problems, problems  # SPIR-V, run by naga
    assert all(f"member {member}" in p or f"member {other}" in p for p in problems), problems


def test_the_probes_name_every_member_and_read_blocks_as_globals() -> None:
    result = compile_file(
        str(CORPUS / "compute_layout.hlsl"),
        __import__("oneshader.compiler", fromlist=["CompileOptions"]).CompileOptions(
            targets=(Target.Wgsl,), source_name="c.hlsl"
        ),
    )
    assert result.reflection is not None
    source = probe_source(result.reflection)
    params = next(p for p in source.probes if p.name == "Params")
    assert not params.writes and params.leaves[0].hlsl == "Scale.x"  # cbuffer members: globals
    assert [x.path for x in params.leaves if x.path.startswith("Transform")][:2] == [
        "Transform[0][0]",
        "Transform[0][1]",
    ]
    results = next(p for p in source.probes if p.name == "Results")
    assert results.writes and results.leaves[-1].hlsl == "Results[0].Uv.y"
    assert "_os_probe_out[0] = (float)(Scale.x);" in source.hlsl
    assert len({x.sentinel for x in results.leaves}) == len(results.leaves)  # all distinct
    assert StructMember  # the model types used above


def test_the_command_runs_on_the_opengl_fallback() -> None:
    """The OpenGL llvmpipe adapter (what wgpu falls back to without Mesa's Vulkan driver)."""
    env = {**os.environ, "WGPU_BACKEND_TYPE": "OpenGL"}
    result = subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "prove-layouts", "tests/corpus/compute_layout.hlsl",
         "tests/corpus/structs.hlsl", "tests/corpus/half_types.hlsl"],
        cwd=ROOT, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("proving layouts on ") and lines[0].endswith("(OpenGL)")
    assert "tests/corpus/compute_layout.hlsl: 3 buffers, 48 members on SpirV, Wgsl: ok" in lines
    assert "tests/corpus/half_types.hlsl: 1 buffers, 8 members on no target: not run" in lines
    assert any("structs.hlsl" in x and x.endswith(": ok") for x in lines)
