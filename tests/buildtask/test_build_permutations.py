"""[tool.oneshader.permutations]: the product of declared axes with generated names, beside
named variants; variants whose preprocessed sources agree are compiled once, and their outputs
are the bytes of their own compiles."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from build_helpers import BuildRun, summary_counts

from oneshader.cli import main

LIT = """RWStructuredBuffer<float> Data;

[shader("compute")]
[numthreads(8, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    float v = Data[id.x] * QUALITY;
#if FOG
    v = v * 0.5 + 1.0;
#endif
    Data[id.x] = v;%s
}
"""

PYPROJECT = """[project]
name = "p"
version = "0"

[tool.oneshader]
sources = ["shaders"]
out = "out"
targets = ["spirv", "wgsl"]

[tool.oneshader.permutations]
"shaders/lit.hlsl" = %s
%s"""

AXES = '{ FOG = [0, 1], QUALITY = [1, 2, 4], SHADOWS = ["off", "pcf"] }'


def project(root: Path, axes: str = AXES, extra: str = "", body: str = "") -> Path:
    (root / "shaders").mkdir(parents=True)
    (root / "shaders" / "lit.hlsl").write_text(LIT % body)
    (root / "pyproject.toml").write_text(PYPROJECT % (axes, extra))
    return root


@pytest.fixture
def lit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = project(tmp_path / "proj")
    monkeypatch.chdir(root)
    return root


def shared(stdout: str) -> int:
    line = [x for x in stdout.splitlines() if x.startswith("oneshader build:")][-1]
    if "shared a compile" not in line:
        return 0
    words = line.replace(",", "").split()
    return int(words[words.index("of") - 1])


NAMES = [f"fog{f}_quality{q}_shadows{s}" for f in (0, 1) for q in (1, 2, 4) for s in ("off", "pcf")]


def test_the_product_is_built_with_generated_names(lit: Path, build: BuildRun) -> None:
    status, out, err = build("--no-server")
    assert status == 0, err
    assert summary_counts(out) == (12, 0, 0)
    made = sorted(p.name for p in (lit / "out").iterdir() if not p.name.startswith("."))
    assert made == sorted(f"lit.{n}.{ext}" for n in NAMES for ext in ("spv", "wgsl", "reflection"))
    # SHADOWS changes nothing the preprocessor gives: each pair differing in it compiled once
    assert shared(out) == 6
    for name in NAMES[::2]:
        twin = name.replace("shadowsoff", "shadowspcf")
        for ext in ("spv", "wgsl", "reflection"):
            assert (lit / f"out/lit.{name}.{ext}").read_bytes() == (
                lit / f"out/lit.{twin}.{ext}"
            ).read_bytes()
    # and QUALITY, which the code reads, makes different code
    assert (lit / "out/lit.fog0_quality1_shadowsoff.spv").read_bytes() != (
        lit / "out/lit.fog0_quality2_shadowsoff.spv"
    ).read_bytes()
    status, out, _ = build("--no-server")
    assert summary_counts(out) == (0, 12, 0)  # each variant is recorded as its own


def test_a_shared_compile_writes_the_bytes_of_the_variants_own_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The variant served by another's compile, built alone (a named variant, nothing to share
    with), writes the same bytes."""
    together = project(tmp_path / "together")
    alone = project(
        tmp_path / "alone",
        axes="{ FOG = [1], QUALITY = [2] }",
        extra='\n[tool.oneshader.variants]\n"shaders/lit.hlsl" = '
        '{ only = { FOG = "1", QUALITY = "2", SHADOWS = "pcf" } }\n',
    )
    for root in (together, alone):
        monkeypatch.chdir(root)
        assert main(["build", "--no-server", "-q"]) == 0
    capsys.readouterr()
    for ext in ("spv", "wgsl", "reflection"):
        assert (together / f"out/lit.fog1_quality2_shadowspcf.{ext}").read_bytes() == (
            alone / f"out/lit.only.{ext}"
        ).read_bytes()


@pytest.mark.parametrize(
    ("body", "alike"),
    [
        # SHADOWS named where the preprocessor does not carry it into the source: shared
        ("  // SHADOWS: not yet", 6),
        ('\n#include "shadows.hlsli"', 6),
        ("\n#define CAT(a, b) a##b", 6),
        ("\n#if defined(SHADOWS)\n  Data[0] = 1;\n#endif", 6),
        # the preprocessed source differs: compiled apart
        ("\n#define off 0\n#define pcf 1\n  Data[1] = SHADOWS;", 0),
        ('\n#include "pcf.hlsli"', 0),
    ],
    ids=["comment", "include-tests-other", "paste", "defined-in-all", "expanded", "branch"],
)
def test_variants_share_a_compile_exactly_when_their_preprocessed_sources_agree(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    body: str,
    alike: int,
) -> None:
    """The shared-compile test is the preprocessor's output, not the names in the text: a
    define in a comment, tested by no #if taken, or defined in every variant changes nothing;
    one that an expansion carries or an #if branch follows makes its own compile."""
    root = project(tmp_path / "proj", body=body)
    (root / "shaders" / "shadows.hlsli").write_text("#if SHADOWS_pcf\n#endif // SHADOWS\n")
    (root / "shaders" / "pcf.hlsli").write_text(
        "#define pcf 1\n#if SHADOWS == pcf\nstatic const int Soft = 1;\n#endif\n"
    )
    monkeypatch.chdir(root)
    assert main(["build", "--no-server", "-q"]) == 0
    out = capsys.readouterr().out
    assert summary_counts(out) == (12, 0, 0) and shared(out) == alike


def test_a_define_tested_only_under_a_branch_not_taken_is_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """FOG_DENSITY is read only under #if FOG: the FOG = 0 variants share one compile, the
    FOG = 1 variants are compiled apart, and each writes what its own compile writes."""
    root = project(
        tmp_path / "proj",
        axes="{ FOG = [0, 1], QUALITY = [1], FOG_DENSITY = [1, 2] }",
        body="\n#if FOG\n  Data[2] = FOG_DENSITY;\n#endif",
    )
    monkeypatch.chdir(root)
    assert main(["build", "--no-server", "-q"]) == 0
    out = capsys.readouterr().out
    assert summary_counts(out) == (4, 0, 0) and shared(out) == 1
    spv = {
        n: (root / f"out/lit.{n}.spv").read_bytes()
        for n in (
            "fog0_quality1_fog_density1",
            "fog0_quality1_fog_density2",
            "fog1_quality1_fog_density1",
            "fog1_quality1_fog_density2",
        )
    }
    assert spv["fog0_quality1_fog_density1"] == spv["fog0_quality1_fog_density2"]
    assert spv["fog1_quality1_fog_density1"] != spv["fog1_quality1_fog_density2"]


def test_permutations_beside_named_variants_and_their_bindings(
    lit: Path,
    build: BuildRun,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    text = (lit / "pyproject.toml").read_text()
    (lit / "pyproject.toml").write_text(
        text.replace(AXES, "{ FOG = [0, 1], QUALITY = [true] }")
        + '\n[tool.oneshader.variants]\n"shaders/lit.hlsl" = { hq = { QUALITY = "8" } }\n'
    )
    status, out, err = build("--no-server", "--bindings", "gen")
    assert status == 0, err
    assert summary_counts(out) == (3, 0, 0)
    package = lit / "gen/lit"
    assert sorted(p.name for p in package.iterdir()) == [
        "__init__.py",
        "fog0_quality1.py",
        "fog1_quality1.py",
        "hq.py",
    ]
    monkeypatch.syspath_prepend(str(lit))

    def forget_gen() -> None:
        for name in [n for n in sys.modules if n == "gen" or n.startswith("gen.")]:
            del sys.modules[name]

    forget_gen()
    request.addfinalizer(forget_gen)
    module = importlib.import_module("gen.lit")
    assert list(module.VARIANTS) == ["hq", "fog0_quality1", "fog1_quality1"]


@pytest.mark.parametrize(
    ("axes", "message"),
    [
        ("{ FOG = [0.5] }", "value 0.5 must be an integer or letters, digits and _"),
        ("{ FOG = [] }", "axis 'FOG' must be a non-empty list of values"),
        ('{ FOG = ["a b"] }', "value 'a b' must be an integer"),
        ("{ FOG = [1, 1] }", "axis 'FOG' lists a value twice"),
        ('{ "9X" = [1] }', "bad define name '9X'"),
        ("[1, 2]", "must be a table: DEFINE = [values...]"),
    ],
)
def test_bad_permutations_are_reported_at_their_key(
    lit: Path, capsys: pytest.CaptureFixture[str], axes: str, message: str
) -> None:
    text = (lit / "pyproject.toml").read_text()
    (lit / "pyproject.toml").write_text(text.replace(AXES, axes))
    assert main(["build", "--no-server"]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml:11:1: error OS2004: permutations of 'shaders/lit.hlsl'" in err, err
    assert message in err


def test_a_permutation_named_as_a_variant_is_a_usage_error(
    lit: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (lit / "pyproject.toml").read_text()
    (lit / "pyproject.toml").write_text(
        text.replace(AXES, "{ FOG = [1] }")
        + '\n[tool.oneshader.variants]\n"shaders/lit.hlsl" = { fog1 = { FOG = "1" } }\n'
    )
    assert main(["build", "--no-server"]) == 2
    assert "would both write" in capsys.readouterr().err
