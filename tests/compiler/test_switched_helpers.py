"""Helpers one text gives every target (``rewrite.SWITCHED``): a call goes through a dispatch
forced inline whose ``__target_switch`` calls the helper where a target needs it and Slang's own
intrinsic elsewhere, so the targets share one Slang request, and each target's code is, byte for
byte, what the text made for it alone gave (Slang's own ``clip`` on SPIR-V, the helper on WGSL
and Metal)."""

from __future__ import annotations

from pathlib import Path

from request_support import each_as_alone, read_source

from oneshader.compiler import compile_file
from oneshader.compiler.api import CompileOptions
from oneshader.compiler.slang import capi as S
from oneshader.compiler.slang import library
from oneshader.compiler.slang.request import (
    _entries,
    _request_args,
    compile_together,
    slang_source,
)
from oneshader.compiler.source import rewrite
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.reflection.model import Stage, Target

ALL = [Target.SpirV, Target.Msl, Target.Wgsl]

# clip of a scalar, a vector and a matrix, a value computed before a branch and used after it
# (a helper's inlined result would lose its name there), a discard of the shader's own.
_PIXEL = """Texture2D<float4> Albedo : register(t0);
SamplerState Linear : register(s1);
cbuffer Frame : register(b2) { float2x2 bounds; float cut; };
float4 main(float2 uv : TEXCOORD0) : SV_Target {
    float4 c = Albedo.Sample(Linear, uv);
    float glow = length(uv) * cut;
    clip(c.a - 0.5);
    if (glow > 4) discard;
    clip(uv - 0.25);
    clip(bounds);
    return c * glow;
}
"""


def _own_text(src: SourceSet, target: Target) -> str:
    """The text each target was given before the dispatch: Slang's own ``clip`` on SPIR-V
    (with the matrix overload), the helper ``oneshader_clip`` on WGSL and Metal."""
    if target is Target.SpirV:
        prelude, call = rewrite.MATRIX_CLIP.format(name="clip"), "clip("
    else:
        prelude, call = rewrite.HELPERS["clip"][1], "oneshader_clip("
    body = src.texts[src.path].replace("clip(", call)
    return f'{prelude}\n#line 1 "{src.line_name(src.path)}"\n{body}'


def _plain(src: SourceSet, options: CompileOptions, target: Target, text: str) -> bytes:
    lib = library()
    req = S.Request(
        lib, _request_args(src, options, [target], text), (str(src.path), text), _entries(options)
    )
    try:
        result = req.compile()
        assert result.ok, result.diagnostics
        return result.code
    finally:
        req.close()


def test_clip_is_one_text_and_one_request_for_every_target(
    tmp_path: Path, compiles: list[int]
) -> None:
    src, options = read_source(tmp_path, _PIXEL, Stage.Pixel)
    texts = {slang_source(src, t) for t in ALL}
    assert len(texts) == 1 and "oneshader_target_clip(c.a - 0.5)" in texts.pop()
    together = compile_together(library(), src, options, ALL)
    assert list(together) == ALL and len(compiles) == 1
    each_as_alone(src, options, together)


def test_each_targets_code_is_what_its_own_text_gave(tmp_path: Path) -> None:
    src, options = read_source(tmp_path, _PIXEL, Stage.Pixel)
    together = compile_together(library(), src, options, ALL)
    for target in ALL:
        own = _plain(src, options, target, _own_text(src, target))
        code = together[target].code
        # (WGSL's code is read back with its reserved words renamed: none here)
        assert code == own, target
    msl = together[Target.Msl].code.decode()
    assert "oneshader_clip_0(" in msl and "glow_0" in msl
    assert b"oneshader" not in together[Target.SpirV].code


def test_a_users_own_clip_is_left_alone(tmp_path: Path) -> None:
    text = (
        _PIXEL.replace(
            "float4 main(", "void clip(float2x2 m) { if (m[0][0] < 0) discard; }\nfloat4 main("
        )
        .replace("clip(c.a - 0.5);", "")
        .replace("clip(uv - 0.25);", "")
    )
    src, _ = read_source(tmp_path, text, Stage.Pixel)
    for target in ALL:
        assert "oneshader_target_clip" not in slang_source(src, target)


def test_an_error_at_a_dispatched_call_names_the_intrinsic_as_written(tmp_path: Path) -> None:
    text = (
        "struct S { float x; };\n"
        "float4 main(float2 uv : TEXCOORD0) : SV_Target {\n"
        "    S s; s.x = uv.x;\n    clip(s);\n    return float4(uv, 0, 1);\n}\n"
    )
    src, options = read_source(tmp_path, text, Stage.Pixel)
    result = compile_file(str(src.path), options)
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors and all((d.line, d.column) == (4, 9) for d in errors)
    assert all("'clip'" in d.message and "oneshader" not in d.message for d in errors)


def test_a_value_returning_dispatch_still_loses_its_variables_name(tmp_path: Path) -> None:
    """Why ``rewrite.SWITCHED`` holds void helpers only: Slang's WGSL and Metal name a forced
    inline function's result used past a branch ``_S<n>`` instead of its variable's name, so a
    dispatch for ``fwidth`` (Metal's helper) would change the code of the targets it dispatches
    to Slang's own. When this fails, value-returning helpers may share one text too."""
    body = (
        "float4 main(float2 uv : TEXCOORD0) : SV_Target {\n"
        "    float d = length(uv);\n    float w = {call}(d);\n"
        "    if (d > 0.5) discard;\n    return float4(w, w, 1, 1);\n}\n"
    )
    src, options = read_source(tmp_path, body.replace("{call}", "fwidth"), Stage.Pixel)
    dispatch = "[ForceInline] float oneshader_target_fwidth(float x) { return fwidth(x); }\n"
    own = _plain(src, options, Target.Wgsl, body.replace("{call}", "fwidth")).decode()
    inlined = dispatch + body.replace("{call}", "oneshader_target_fwidth")
    through = _plain(src, options, Target.Wgsl, inlined).decode()
    assert "var w_0 : f32" in own and "var w_0 : f32" not in through
