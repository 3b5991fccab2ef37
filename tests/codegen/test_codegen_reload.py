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


def _module_file(folder: Path, model: Any, tail: str = "") -> Path:
    """A generated module of ``model`` written as ``folder/reloaded_<n>/shader.py`` (a package
    of its own per test, so imports do not meet)."""
    from oneshader.codegen import render_module

    path = folder / "shader.py"
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(render_module(model, "shader") + tail)
    if path.stat().st_mtime_ns <= before:
        os.utime(path, ns=(before + 10_000_000, before + 10_000_000))
    return path


def _import(tmp_path: Path, model: Any) -> tuple[ModuleType, Path]:
    package = f"reloaded_{abs(hash(tmp_path)) % 10**8}"
    folder = tmp_path / package
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    _module_file(folder, model)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(f"{package}.shader"), folder
    finally:
        sys.path.remove(str(tmp_path))


def _moved(model: Any) -> Any:
    """``model`` with its first resource in another binding: a breaking change."""
    from dataclasses import replace

    first = model.resources[0]
    slots = tuple(replace(s, binding=s.binding + 7) for s in first.slots)
    return replace(model, resources=(replace(first, slots=slots), *model.resources[1:]))


def _recoloured(model: Any) -> Any:
    """``model`` with a spec constant's default changed: a compatible change."""
    from dataclasses import replace

    spec = model.spec_constants[0]
    rest = model.spec_constants[1:]
    return replace(model, spec_constants=(replace(spec, default=spec.default + 1), *rest))


def test_a_module_that_fails_half_way_leaves_the_running_one_whole(tmp_path: Path) -> None:
    import codegen_samples as samples

    module, folder = _import(tmp_path, samples.particles())
    shader, cls, names = module.SHADER, module.Particle, set(vars(module))
    watch = Reloader(module)
    _module_file(folder, _recoloured(samples.particles()), "\nraise RuntimeError('late')\n")
    assert watch.poll() is False
    assert watch.error is not None and "RuntimeError: late" in watch.error
    assert module.SHADER is shader and module.Particle is cls and set(vars(module)) == names
    _module_file(folder, _recoloured(samples.particles()))
    assert watch.poll() is True, watch.error
    assert module.SHADER is not shader and module.Particle is not cls
    assert module.SHADER.reflection == _recoloured(samples.particles())
    assert [c.line() for c in watch.changes] == [
        "shaders/particles.hlsl: compatible: spec Gravity: default bits 1092416963 -> 1092416964"
    ]


def test_a_breaking_reload_is_refused_unless_the_program_accepts_it(tmp_path: Path) -> None:
    import codegen_samples as samples

    module, folder = _import(tmp_path, samples.particles())
    shader = module.SHADER
    watch = Reloader(module)
    _module_file(folder, _moved(samples.particles()))
    assert watch.poll() is False
    assert watch.error is not None and "refused a reload that breaks the ABI" in watch.error
    assert "resource Particles: SpirV slot moved: set 0 binding 0 -> set 0 binding 7" in (
        watch.error
    )
    assert module.SHADER is shader  # still whole and usable
    assert module.BindGroup0 is not None and module.SHADER.reflection == samples.particles()

    eager = Reloader(module, accept_breaking=True)
    _module_file(folder, _moved(_recoloured(samples.particles())))
    assert eager.poll() is True and eager.error is None
    assert module.SHADER.reflection == _moved(_recoloured(samples.particles()))
    assert any(c.breaking for c in eager.changes)
