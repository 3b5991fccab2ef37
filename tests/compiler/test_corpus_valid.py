"""Every corpus shader that must build: it compiles, spirv-val passes, naga accepts the WGSL, and
the cross-check finds no disagreement, having really compared what the code shows."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from verify_support import CORPUS, compile_exec, compiled, device, manifest_shaders, spirv_env, tool

from oneshader.compiler.verify.crosscheck import check
from oneshader.reflection.model import Target

_SHADERS = [s["file"] for s in manifest_shaders()]


def _result(file: str):  # type: ignore[no-untyped-def]
    result = compiled(file)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return result


@pytest.mark.parametrize("file", _SHADERS)
def test_reflection_matches_emitted_code(file: str) -> None:
    result = _result(file)
    report = check(result.reflection, result.outputs)
    assert report.mismatches == []
    assert report.checked > 0
    # What went unchecked must be what the code cannot show: resources no entry point uses
    # (Slang drops them) and Metal's workgroup size.
    used = {n for e in result.reflection.entry_points for n in (*e.uses, *e.pushuse)}
    for note in report.unchecked:
        if "is not in the emitted code" in note and "'" in note and "workgroup" not in note:
            name = note.split("'")[1]
            assert name not in used, note
        else:
            assert note.startswith("MSL: entry") and "workgroup size" in note, note


@pytest.mark.parametrize("file", _SHADERS)
def test_spirv_validates(file: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    spv = [o for o in _result(file).outputs if o.target is Target.SpirV]
    if not spv:
        assert "spirv" not in next(s for s in manifest_shaders() if s["file"] == file)["targets"]
        return
    (out,) = spv
    _assert_spirv_valid(out.data, tmp_path / f"shader{out.suffix}")


def _assert_spirv_valid(module: bytes, path: Path) -> None:
    """spirv-val, for the module's own Vulkan environment, passes ``module`` written at ``path``."""
    path.write_bytes(module)
    run = subprocess.run(
        [tool("spirv-val"), "--target-env", spirv_env(module), str(path)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("file", _SHADERS)
def test_naga_accepts_wgsl(file: str) -> None:
    wgsl = [o for o in _result(file).outputs if o.target is Target.Wgsl]
    targets = next(s for s in manifest_shaders() if s["file"] == file)["targets"]
    assert bool(wgsl) == ("wgsl" in targets)
    dev = device()
    for out in wgsl:
        code = out.data.decode("utf-8")
        if re.search(r"^\s*enable\s+f16\s*;", code, re.M) and "shader-f16" not in dev.features:
            # The OpenGL llvmpipe adapter has no shader-f16, so naga refuses the extension
            # outright; validate the rest by reading f16 as f32 (dropping the explicit
            # @align/@size, which were chosen for 2-byte members).
            code = _without_f16(code)
        # Raises GPUValidationError with naga's message on rejection.
        dev.create_shader_module(label=file + out.suffix, code=code)


def _without_f16(code: str) -> str:
    code = re.sub(r"^\s*enable\s+f16\s*;", "", code, flags=re.M)
    code = re.sub(r"@(?:align|size)\(\s*\d+\s*\)", "", code)
    code = re.sub(r"\bf16\b", "f32", code)
    code = re.sub(r"\bvec([234])h\b", r"vec\1f", code)
    return re.sub(r"(\d(?:\.\d*)?(?:[eE][+-]?\d+)?)h\b", r"\1f", code)


def test_f16_fallback_keeps_the_rest_checked() -> None:
    rewritten = _without_f16(
        "enable f16;\nstruct S { @align(2) a : f16 };\n"
        "var<private> x : vec2<f16> = vec2h(1.5h, 2h);"
    )
    assert "f16" not in rewritten and "1.5f" in rewritten and "vec2f" in rewritten
    assert "@align" not in rewritten and "var<private> x : vec2<f32>" in rewritten


_EXEC = sorted(p.name for p in (CORPUS / "exec").glob("*.hlsl"))


@pytest.mark.parametrize("name", _EXEC)
def test_exec_shaders_are_valid_too(name: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = compile_exec(name)
    assert check(result.reflection, result.outputs).mismatches == []
    for out in result.outputs:
        if out.target is Target.SpirV:
            _assert_spirv_valid(out.data, tmp_path / "exec.spv")
        else:
            device().create_shader_module(label=name, code=out.data.decode("utf-8"))
