"""``oneshader prove-layouts``: every buffer struct of the given shaders proven on a device.

For each shader: build it (for WGSL, as the build would), write the probes of its buffer structs
(:func:`oneshader.bindings.probe.probe_source`) into a probe file that includes the shader, build
that through the same compiler for WGSL and SPIR-V, and run the probes with wgpu against the
shader's generated bindings (:func:`oneshader.bindings.probe.run_probes`). This is the one part
beside the build that loads the compiler; the probes' planning and checking are in the bindings
and never do.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from oneshader.fsutil import display_path
from oneshader.reflection.model import ShaderReflection, Target

__all__ = ["prove_file", "prove_paths", "software_device"]

TARGETS = (Target.Wgsl, Target.SpirV)


def software_device() -> tuple[Any, str]:
    """wgpu's device on the adapter it picks (``WGPU_BACKEND_TYPE`` chooses the backend), and a
    line naming the adapter."""
    import wgpu

    adapter = wgpu.gpu.request_adapter_sync(power_preference="low-power")
    if adapter is None:
        raise RuntimeError("no wgpu adapter found")
    info = adapter.info
    wanted = [f for f in ("shader-f16",) if f in adapter.features]
    device = adapter.request_device_sync(required_features=wanted)
    return device, f"{info.get('device', '?')} ({info.get('backend_type', '?')})"


def _hlsl_files(paths: Sequence[str]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        out += sorted(path.rglob("*.hlsl")) if path.is_dir() else [path]
    return out


def _first_error(result: Any) -> str:
    errors = [d for d in result.diagnostics if d.is_error]
    return errors[0].message if errors else "the compiler crashed"


Compile = Callable[[str, Any], Any]  # compile_file's signature: (path, CompileOptions)


def prove_file(
    path: Path,
    device: Any,
    compile_file: Compile,
    *,
    include_dirs: Sequence[str] = (),
    defines: Sequence[tuple[str, str]] = (),
    targets: Sequence[Target] = TARGETS,
    broken: Any = None,
) -> tuple[list[str], list[str]]:
    """(problems, notes) of one shader, built with ``compile_file`` (a crash-safe compiler
    worker's, or the compiler's own); ``broken`` (for tests) turns the shader's reflection into
    the one the bindings are made from, to see a wrong layout caught."""
    from oneshader.bindings import from_reflection
    from oneshader.bindings.probe import probe_source, run_probes
    from oneshader.compiler import CompileOptions

    name = display_path(path)
    incs = (*include_dirs, str(path.parent))
    first = compile_file(
        str(path),
        CompileOptions(
            targets=(Target.Wgsl,), source_name=name, include_dirs=incs, defines=tuple(defines)
        ),
    )
    if not first.ok or first.reflection is None:
        return [], [f"{name}: skipped: it does not build for WGSL ({_first_error(first)})"]
    model: ShaderReflection = first.reflection
    if broken is not None:
        model = broken(model)
    source = probe_source(model)  # the offsets the bindings hold, the names HLSL has
    notes = [f"{name}: not probed: {why}" for why in source.skipped]
    if not source.probes:
        return [], [*notes, f"{name}: no buffer struct to prove"]
    with tempfile.TemporaryDirectory(prefix="oneshader-probe-") as folder:
        probe_path = Path(folder) / f"{path.stem}_probe.hlsl"
        quoted = path.name.replace("\\", "\\\\").replace('"', '\\"')  # found in path.parent
        probe_path.write_text(f'#include "{quoted}"\n{source.hlsl}', encoding="utf-8")
        probe = compile_file(
            str(probe_path),
            CompileOptions(
                targets=tuple(targets),
                source_name=f"{name} (probe)",
                include_dirs=incs,
                defines=tuple(defines),
            ),
        )
    if not probe.ok or probe.reflection is None:
        return [f"{name}: the probe did not build: {_first_error(probe)}"], notes
    code: dict[Target, str | bytes] = {}
    runs = set(targets)
    if Target.SpirV in runs and probe.reflection.push_blocks:
        runs.discard(Target.SpirV)  # naga takes SPIR-V push constants only as immediates
        notes.append(f"{name}: SPIR-V not run: it has push constants, which wgpu cannot bind")
    for output in probe.outputs:
        if output.target in runs:
            wgsl = output.target is Target.Wgsl
            code[output.target] = output.data.decode("utf-8") if wgsl else output.data
    bindings = from_reflection(model, path.stem)
    problems, refused, targets_run = run_probes(
        bindings, source, probe.reflection, code, device, name
    )
    notes += refused
    ran = [t.name for t in targets_run]
    count = sum(len(p.leaves) for p in source.probes)
    notes.append(
        f"{name}: {len(source.probes)} buffers, {count} members on "
        f"{', '.join(ran) or 'no target'}: "
        + ("MISMATCH" if problems else "ok" if ran else "not run")
    )
    return problems, notes


def prove_paths(
    paths: Sequence[str],
    *,
    include_dirs: Sequence[str] = (),
    defines: Sequence[tuple[str, str]] = (),
    targets: Sequence[Target] = TARGETS,
) -> int:
    """The command's body: 0 when every probed member agrees, 1 otherwise. Shaders are built
    in a compiler worker (a compiler crash fails that shader alone), started before wgpu's
    threads are."""
    from oneshader.compiler.process.worker import CompilerWorker

    status = 0
    with CompilerWorker(timeout=120) as worker:
        worker.start()
        device, adapter = software_device()
        print(f"proving layouts on {adapter}")
        for path in _hlsl_files(paths):
            problems, notes = prove_file(
                path,
                device,
                worker.compile,
                include_dirs=include_dirs,
                defines=defines,
                targets=targets,
            )
            for line in notes:
                print(line)
            for line in problems:
                print(f"error: {line}", file=sys.stderr)
            status |= 1 if problems else 0
    return status
