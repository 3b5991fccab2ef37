"""Hot reload on the software adapter: a running program picks up a rebuilt shader through its
generated module, and a failed build keeps the last good outputs and module (marked stale)
without crashing the program; the build still fails until the shader compiles."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from oneshader.bindings import Reloader, load

SHADER = """\
RWStructuredBuffer<float> Data;

[shader("compute")]
[numthreads(64, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{{
    if (id.x < 100)
        Data[id.x] = Data[id.x] * {factor};
}}
"""
N = 100


def _write(path: Path, text: str) -> None:
    """Rewrite ``path`` and make sure its mtime moves (coarse clocks)."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    if path.stat().st_mtime_ns <= before:
        os.utime(path, ns=(before + 10_000_000, before + 10_000_000))


def _build(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "build", "shaders", "-q", "--targets", "wgsl",
         "-o", "out", "--bindings", "reloadbind"],
        cwd=project, capture_output=True, text=True,
    )  # fmt: skip


def _run(module: ModuleType, device: Any) -> np.ndarray:
    """Make a pipeline from the module as it is now, run it over 0..N-1, return the result."""
    entry = module.entries.Main
    data = module.resources.Data.create_buffer(device, np.arange(N, dtype=np.float32))
    pipeline = module.SHADER.create_compute_pipeline(device, entry)
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipeline)
    module.BindGroup0(device, Data=data).set(cp)
    entry.dispatch(cp, N)
    cp.end()
    device.queue.submit([enc.finish()])
    return np.frombuffer(device.queue.read_buffer(data), np.float32)


def test_a_running_program_reloads_rebuilt_shaders_and_survives_a_failed_build(
    tmp_path: Path, gpu_device: Any
) -> None:
    project = tmp_path / "project"
    source = project / "shaders" / "scale.hlsl"
    source.parent.mkdir(parents=True)
    _write(source, SHADER.format(factor="2.0"))
    result = _build(project)
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(project))
    try:
        module = importlib.import_module("reloadbind.scale")
    finally:
        sys.path.remove(str(project))
    watcher = Reloader(module)
    base = np.arange(N, dtype=np.float32)
    np.testing.assert_array_equal(_run(module, gpu_device), base * 2)
    assert watcher.poll() is False and watcher.error is None  # nothing new yet

    _write(source, SHADER.format(factor="3.0"))
    assert _build(project).returncode == 0
    assert watcher.poll() is True, watcher.error
    np.testing.assert_array_equal(_run(module, gpu_device), base * 3)

    _write(source, SHADER.format(factor="3.0 +"))  # a typo
    failed = _build(project)
    assert failed.returncode == 1 and "shaders/scale.hlsl:" in failed.stderr
    assert (project / "out" / "scale.wgsl").is_file()  # the last good outputs stay
    assert watcher.poll() is False
    assert watcher.error is not None and watcher.error.startswith("shaders/scale.hlsl:8:")
    assert watcher.error == module.STALE
    np.testing.assert_array_equal(_run(module, gpu_device), base * 3)  # still the last good
    assert load(project / "out" / "scale.reflection").shader.code() == module.SHADER.code()
    again = _build(project)  # marked stale: retried, and failing, every build
    assert again.returncode == 1 and "1 failed" in again.stdout

    _write(source, SHADER.format(factor="4.0"))
    assert _build(project).returncode == 0
    assert watcher.poll() is True and watcher.error is None and module.STALE is None
    np.testing.assert_array_equal(_run(module, gpu_device), base * 4)


def test_bindings_made_in_memory_cannot_be_watched(tmp_path: Path) -> None:
    import codegen_samples as samples

    from oneshader.bindings import from_reflection

    with pytest.raises(ValueError, match="has no module file to watch"):
        Reloader(from_reflection(samples.sprite(), "sprite").module)
