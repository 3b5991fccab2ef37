"""Every corpus shader that must build: it compiles, spirv-val passes, naga accepts the WGSL, and
the cross-check finds no disagreement, having really compared what the code shows."""

from __future__ import annotations

import pytest
from verify_support import CORPUS, compile_exec, compiled, manifest_shaders

from module_validation import spirv_errors, wgsl_errors, without_f16
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
            assert note.startswith("Metal: entry") and "workgroup size" in note, note


@pytest.mark.parametrize("file", _SHADERS)
def test_spirv_validates(file: str) -> None:
    spv = [o for o in _result(file).outputs if o.target is Target.SpirV]
    if not spv:
        assert "spirv" not in next(s for s in manifest_shaders() if s["file"] == file)["targets"]
        return
    (out,) = spv
    assert spirv_errors(out.data) == ""


@pytest.mark.parametrize("file", _SHADERS)
def test_naga_accepts_wgsl(file: str) -> None:
    wgsl = [o for o in _result(file).outputs if o.target is Target.Wgsl]
    targets = next(s for s in manifest_shaders() if s["file"] == file)["targets"]
    assert bool(wgsl) == ("wgsl" in targets)
    for out in wgsl:
        assert wgsl_errors(out.data.decode("utf-8"), file + out.suffix) == ""


def test_f16_fallback_keeps_the_rest_checked() -> None:
    """naga on the llvmpipe adapter refuses ``enable f16``; the validator reads f16 as f32."""
    rewritten = without_f16(
        "enable f16;\nstruct S { @align(2) a : f16 };\n"
        "var<private> x : vec2<f16> = vec2h(1.5h, 2h);"
    )
    assert "f16" not in rewritten and "1.5f" in rewritten and "vec2f" in rewritten
    assert "@align" not in rewritten and "var<private> x : vec2<f32>" in rewritten


_EXEC = sorted(p.name for p in (CORPUS / "exec").glob("*.hlsl"))


@pytest.mark.parametrize("name", _EXEC)
def test_exec_shaders_are_valid_too(name: str) -> None:
    result = compile_exec(name)
    assert check(result.reflection, result.outputs).mismatches == []
    for out in result.outputs:
        if out.target is Target.SpirV:
            assert spirv_errors(out.data) == ""
        else:
            assert wgsl_errors(out.data.decode("utf-8"), name) == ""
