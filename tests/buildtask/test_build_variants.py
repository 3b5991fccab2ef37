"""Shader variants ([tool.oneshader.variants]) and per-file targets ([tool.oneshader.file-targets]):
each variant is built, cached and verified as a shader of its own."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from build_helpers import BuildRun, summary_counts

from oneshader.reflection.format import ReflectionFormat

FOG = """// A compute kernel whose constant buffer and code depend on FOG and QUALITY.
#ifndef QUALITY
#define QUALITY 1
#endif
#ifndef FOG
#define FOG 0
#endif
cbuffer Frame : register(b0)
{
    float4 tint;
#if FOG
    float4 fogColor;
#endif
};
RWStructuredBuffer<float4> Data : register(u1);

[shader("compute")]
[numthreads(8, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    float4 c = tint * QUALITY;
#if FOG
    c += fogColor;
#endif
    Data[id.x] = c;
}
"""

VARIANTS = (
    "\n[tool.oneshader.variants]\n"
    '"shaders/fx/Fog.hlsl" = { fog = { FOG = "1" }, hq = { QUALITY = "4" }, '
    'fog_hq = { FOG = "1", QUALITY = 4 } }\n'
)


@pytest.fixture
def fog_project(project: Path) -> Path:
    (project / "shaders/fx").mkdir()
    (project / "shaders/fx/Fog.hlsl").write_text(FOG)
    with (project / "pyproject.toml").open("a") as f:
        f.write(VARIANTS)
    return project


def spirv_val(path: Path) -> None:
    tool = Path(sys.executable).parent / "spirv-val"
    done = subprocess.run(
        [str(tool), "--target-env", "vulkan1.2", str(path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_each_variant_has_its_own_outputs_and_layout(fog_project: Path, build: BuildRun) -> None:
    status, out, err = build("--no-server")
    assert status == 0, err
    outs = fog_project / "out/fx"
    names = sorted(p.name for p in outs.iterdir())
    assert names == sorted(
        f"Fog.{v}.{ext}"
        for v in ("fog", "hq", "fog_hq")
        for ext in ("spv", "metal", "wgsl", "reflection")
    )  # no plain Fog.* outputs: a file with variants is built as its variants only
    sizes = {}
    for variant in ("fog", "hq", "fog_hq"):
        model = ReflectionFormat.read_file(outs / f"Fog.{variant}.reflection")
        assert model.source == "shaders/fx/Fog.hlsl"
        (frame,) = [r for r in model.resources if r.name == "Frame"]
        assert frame.layout is not None
        sizes[variant] = frame.layout.size
        spirv_val(outs / f"Fog.{variant}.spv")
    assert sizes == {"fog": 32, "hq": 16, "fog_hq": 32}
    assert summary_counts(out) == (8, 0, 0)  # 5 shaders + 3 variants


def test_variants_are_cached_one_by_one(fog_project: Path, build: BuildRun) -> None:
    assert build("--no-server")[0] == 0
    assert summary_counts(build("--no-server")[1]) == (0, 8, 0)
    pyproject = fog_project / "pyproject.toml"
    text = pyproject.read_text()
    outs = fog_project / "out/fx"
    before = {p.name: p.stat().st_mtime_ns for p in outs.glob("*.spv")}
    pyproject.write_text(text.replace('hq = { QUALITY = "4" }', 'hq = { QUALITY = "8" }'))
    status, out, _ = build("--no-server")
    assert status == 0 and summary_counts(out) == (1, 7, 0)  # only hq's defines changed
    after = {p.name: p.stat().st_mtime_ns for p in outs.glob("*.spv")}
    assert [n for n in sorted(before) if before[n] != after[n]] == ["Fog.hq.spv"]
    # a variant dropped loses its outputs; without variants the file builds plain again
    pyproject.write_text(text.replace(', fog_hq = { FOG = "1", QUALITY = 4 }', ""))
    assert build("--no-server")[0] == 0
    assert not list((fog_project / "out/fx").glob("Fog.fog_hq.*"))
    pyproject.write_text(text.replace(VARIANTS, ""))
    status, out, _ = build("--no-server")
    assert status == 0
    assert sorted(p.name for p in (fog_project / "out/fx").iterdir()) == [
        "Fog.metal",
        "Fog.reflection",
        "Fog.spv",
        "Fog.wgsl",
    ]


def test_a_failing_variant_fails_alone_and_says_which(fog_project: Path, build: BuildRun) -> None:
    (fog_project / "shaders/fx/Fog.hlsl").write_text(FOG.replace("c += fogColor;", "c += nope;"))
    status, out, err = build("--no-server")
    assert status == 1
    assert "failed: shaders/fx/Fog.hlsl [fog], shaders/fx/Fog.hlsl [fog_hq]" in out
    errors = [line for line in err.splitlines() if ": error" in line]
    assert len(errors) == 2 and all("shaders/fx/Fog.hlsl:" in e for e in errors)
    assert {e.rsplit("[variant ", 1)[1] for e in errors} == {"fog]", "fog_hq]"}
    assert (fog_project / "out/fx/Fog.hq.spv").is_file()


def test_file_targets_by_glob(project: Path, build: BuildRun) -> None:
    with (project / "pyproject.toml").open("a") as f:
        f.write('\n[tool.oneshader.file-targets]\n"shaders/K*.hlsl" = ["wgsl"]\n')
    assert build("--no-server")[0] == 0
    assert sorted(p.name for p in (project / "out").glob("K0.*")) == ["K0.reflection", "K0.wgsl"]
    assert (project / "out/Sprite.spv").is_file()
    model = ReflectionFormat.read_file(project / "out/K1.reflection")
    assert [t.name for t in model.targets] == ["Wgsl"]


def test_variants_by_glob_and_an_exact_path_wins(fog_project: Path, build: BuildRun) -> None:
    with (fog_project / "pyproject.toml").open("a") as f:
        f.write('"shaders/K*.hlsl" = { two = { SCALE = "2" }, nine = { SCALE = "9" } }\n')
        f.write('"shaders/K1.hlsl" = { one = { SCALE = "1" } }\n')
    assert build("--no-server")[0] == 0
    out = fog_project / "out"
    assert {p.name for p in out.glob("K*.spv")} == {"K0.two.spv", "K0.nine.spv", "K1.one.spv"}


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        ('"shaders/fx/Gone.hlsl" = { a = {} }', "'shaders/fx/Gone.hlsl', which is not a file"),
        ('"shaders/**/Nothing*.hlsl" = { a = {} }', "matches no file"),
        ('"/abs/*.hlsl" = { a = {} }', "a glob must be relative to the project"),
        ('"shaders/fx/Fog.hlsl" = { "with space" = {} }', "variant name 'with space'"),
        ('"shaders/fx/Fog.hlsl" = { a = { "bad name" = 1 } }', "bad define 'bad name'"),
        ('"shaders/fx/Fog.hlsl" = { a = 3 }', "variant 'a' must be a table"),
        ('"shaders/fx/Fog.hlsl" = {}', "must be a table: name ="),
    ],
)
def test_bad_variants_are_positioned(
    project: Path, build: BuildRun, table: str, fragment: str
) -> None:
    (project / "shaders/fx").mkdir()
    (project / "shaders/fx/Fog.hlsl").write_text(FOG)
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text() + "\n[tool.oneshader.variants]\n" + table + "\n"
    pyproject.write_text(text)
    status, _, err = build("--no-server")
    assert status == 2
    line = len(text.splitlines())
    assert err.startswith(f"pyproject.toml:{line}:1: error OS2004: "), err
    assert fragment in err


def test_two_globs_for_one_file_and_colliding_stems_are_errors(
    fog_project: Path, build: BuildRun
) -> None:
    pyproject = fog_project / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(text + '"shaders/K*.hlsl" = { a = {} }\n"shaders/*0.hlsl" = { b = {} }\n')
    status, _, err = build("--no-server")
    assert status == 2 and "'shaders/K*.hlsl' and 'shaders/*0.hlsl' both match K0.hlsl" in err
    pyproject.write_text(text)
    (fog_project / "shaders/fx/Fog.hq.hlsl").write_text(FOG)  # writes what Fog's hq writes
    status, _, err = build("--no-server")
    assert status == 2 and "would both write" in err and "[hq]" in err


SHARED = """// Variants that share one struct (Light) and differ in another (Frame).
struct Light { float4 color; float3 direction; float reach; };
StructuredBuffer<Light> Lights : register(t2);
""" + FOG.replace("float4 c = tint * QUALITY;", "float4 c = tint * QUALITY + Lights[0].color;")


def test_bindings_share_the_common_layout_once_and_show_what_differs(
    fog_project: Path,
    build: BuildRun,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    (fog_project / "shaders/fx/Fog.hlsl").write_text(SHARED)
    status, _, err = build("--no-server", "--bindings", "gen")
    assert status == 0, err
    package = fog_project / "gen/fx/Fog"
    assert sorted(p.name for p in package.iterdir()) == [
        "__init__.py",
        "fog.py",
        "fog_hq.py",
        "hq.py",
    ]
    monkeypatch.syspath_prepend(str(fog_project))
    import importlib

    def forget_gen() -> None:  # "gen" is a name other tests import from their own folders
        for name in [n for n in sys.modules if n == "gen" or n.startswith("gen.")]:
            del sys.modules[name]

    forget_gen()
    request.addfinalizer(forget_gen)
    fog = importlib.import_module("gen.fx.Fog")
    assert list(fog.VARIANTS) == ["fog", "hq", "fog_hq"]
    assert fog.VARIANTS["hq"].STEM == "Fog.hq"  # the module of Fog.hq.reflection
    assert fog.SHARED_STRUCTS == ("Light",)
    assert fog.Light is fog.VARIANTS["fog"].Light and fog.LightArray.__name__ == "LightArray"
    assert fog.Light(reach=2.0).reach == 2.0
    assert fog.DIFFERENT == {
        "struct Frame": (("fog", "fog_hq"), ("hq",)),
        "resource Frame": (("fog", "fog_hq"), ("hq",)),
    }
    sizes = {v: m.Frame.size for v, m in fog.VARIANTS.items()}
    assert sizes == {"fog": 32, "hq": 16, "fog_hq": 32}
    bin_dir = Path(sys.executable).parent
    fmt = subprocess.run(
        [str(bin_dir / "ruff"), "format", "--check", "--line-length", "100", str(package)],
        capture_output=True,
        text=True,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    (fog_project / "use.py").write_text(
        "from gen.fx import Fog\n\nlight: Fog.Light = Fog.Light(reach=1.0)\n"
        "frame = Fog.VARIANTS['hq']\n"
    )
    typed = subprocess.run(
        [str(bin_dir / "mypy"), "--strict", "--no-incremental", "use.py", "gen"],
        cwd=fog_project,
        capture_output=True,
        text=True,
    )
    assert typed.returncode == 0, typed.stdout + typed.stderr


def test_a_wheel_carries_every_variant_and_the_variant_package(tmp_path: Path) -> None:
    from test_build_hatch_hook import build_wheel, make_package

    root = make_package(
        tmp_path / "pkg",
        extra='bindings = "src/shaderpkg/generated"\n'
        "[tool.hatch.build.hooks.oneshader.variants]\n"
        '"shaders/fx/Fog.hlsl" = { fog = { FOG = "1" }, hq = { QUALITY = "4" } }\n',
    )
    (root / "shaders/fx/Fog.hlsl").write_text(FOG)
    result = build_wheel(root)
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = (root / "dist").glob("shaderpkg-0.1.0-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for variant in ("fog", "hq"):
        assert f"shaderpkg/compiled/fx/Fog.{variant}.spv" in names
        assert f"shaderpkg/generated/fx/Fog/{variant}.py" in names
    assert "shaderpkg/generated/fx/Fog/__init__.py" in names
    assert not any(n.startswith("shaderpkg/compiled/fx/Fog.") and n.count(".") == 1 for n in names)
