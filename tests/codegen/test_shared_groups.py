"""Bind groups shared across shaders: declared once in [tool.oneshader.shared-groups], refused at
the declaration when two shaders' groups differ, and generated as one bind-group class and one
layout object that both shaders' pipelines accept (one bind group bound in two pipelines, run on
the software adapter)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

FRAME = "cbuffer Frame : register(b0, space0) {{ float Scale; float Bias; {extra} }};\n"
SHADER = """\
RWStructuredBuffer<float> Out{n} : register(u0, space1);

[shader("compute")]
[numthreads(4, 1, 1)]
void Main{n}(uint3 id : SV_DispatchThreadID)
{{
    Out{n}[id.x] = {expr};
}}
"""
PYPROJECT = """\
[tool.oneshader]
sources = ["shaders"]
out = "out"
targets = ["wgsl"]
bindings = "sharedgen"

[tool.oneshader.shared-groups]
frame = {{ group = 0, shaders = ["shaders/*.hlsl"] }}
"""


def _project(tmp_path: Path, extra_b: str = "") -> Path:
    (tmp_path / "shaders").mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.format())
    (tmp_path / "shaders" / "a.hlsl").write_text(
        FRAME.format(extra="") + SHADER.format(n="A", expr="Scale * (id.x + 1) + Bias")
    )
    (tmp_path / "shaders" / "b.hlsl").write_text(
        FRAME.format(extra=extra_b) + SHADER.format(n="B", expr="Scale - Bias * id.x")
    )
    return tmp_path


def _build(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "build", "-q"],
        cwd=project, capture_output=True, text=True,
    )  # fmt: skip


def _run(device: Any, module: Any, entry: Any, group0: Any) -> np.ndarray:
    binding = next(b for b in module.SHADER.bindings() if b.name.startswith("Out"))
    buf = binding.create_buffer(device, size=16)
    pipeline = module.SHADER.create_compute_pipeline(device, entry)
    group1 = module.BindGroup1(device, **{binding.name: buf})
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipeline)
    group0.set(cp)  # the one bind group of the shared group, made once
    group1.set(cp)
    entry.dispatch(cp, 4)
    cp.end()
    device.queue.submit([enc.finish()])
    return np.frombuffer(device.queue.read_buffer(buf), np.float32)


def test_one_bind_group_binds_in_both_shaders_pipelines(tmp_path: Path, gpu_device: Any) -> None:
    project = _project(tmp_path)
    result = _build(project)
    assert result.returncode == 0, result.stdout + result.stderr
    check = subprocess.run(  # `oneshader generate` reads the declaration too: same modules
        [sys.executable, "-m", "oneshader.cli", "generate", "out/a.reflection",
         "out/b.reflection", "-o", "sharedgen", "--check"],
        cwd=project, capture_output=True, text=True,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    sys.path.insert(0, str(project))
    try:
        a = importlib.import_module("sharedgen.a")  # a package name no other test imports
        b = importlib.import_module("sharedgen.b")
    finally:
        sys.path.remove(str(project))
    assert a.BindGroup0 is b.BindGroup0  # one class
    assert a.SHADER.shared == {0: ("frame", 4)} == b.SHADER.shared
    layout_a = a.SHADER.layouts(gpu_device).groups[0]
    assert layout_a is b.SHADER.layouts(gpu_device).groups[0]  # one GPUBindGroupLayout
    frame = a.Frame(Scale=2.0, Bias=0.5)
    group0 = a.BindGroup0(gpu_device, Frame=a.resources.Frame.create_buffer(gpu_device, frame))
    got_a = _run(gpu_device, a, a.entries.MainA, group0)
    got_b = _run(gpu_device, b, b.entries.MainB, group0)
    np.testing.assert_array_equal(got_a, [2.5, 4.5, 6.5, 8.5])
    np.testing.assert_array_equal(got_b, [2.0, 1.5, 1.0, 0.5])


def test_shaders_whose_shared_group_differs_are_refused_at_the_declaration(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, extra_b="float Gamma;")
    result = _build(project)
    assert result.returncode != 0
    assert (
        "pyproject.toml:8:1: error OS2004: shared group 'frame' (group 0) differs between "
        "shaders/a.hlsl and shaders/b.hlsl at 'Frame': Gamma: added at offset 8, inside the "
        "old size 16"
    ) in result.stderr, result.stderr
    assert not (project / "sharedgen" / "b.py").exists()


def test_a_bad_declaration_is_refused_at_its_line(tmp_path: Path) -> None:
    project = _project(tmp_path)
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(text.replace("group = 0", 'group = "zero"'))
    result = _build(project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("pyproject.toml:8:1: error ")
    assert "shared group 'frame' must be NAME = { group = N, shaders = [" in result.stderr
