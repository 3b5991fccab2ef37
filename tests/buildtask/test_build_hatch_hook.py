"""The hatchling hook: building a tiny project's wheel compiles its shaders into the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from build_helpers import CORPUS, kernel

from oneshader.reflection.format import ReflectionFormat

PYPROJECT = """[build-system]
requires = ["hatchling", "oneshader"]
build-backend = "hatchling.build"

[project]
name = "shaderpkg"
version = "0.1.0"

[tool.hatch.build.targets.wheel]
packages = ["src/shaderpkg"]

[tool.hatch.build.hooks.oneshader]
sources = ["shaders"]
out = "src/shaderpkg/compiled"
{extra}
"""


def make_package(root: Path, extra: str = "") -> Path:
    (root / "src/shaderpkg").mkdir(parents=True)
    (root / "src/shaderpkg/__init__.py").write_text("")
    (root / "shaders/fx").mkdir(parents=True)
    (root / "shaders/fx/Blur.hlsl").write_text(kernel("Blur").replace("SCALE", "1u"))
    (root / "shaders/Sprite.hlsl").write_text((CORPUS / "sprite.hlsl").read_text())
    (root / ".gitignore").write_text("src/shaderpkg/compiled/\nsrc/shaderpkg/generated/\n")
    (root / "pyproject.toml").write_text(PYPROJECT.format(extra=extra))
    return root


def build_wheel(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", "dist"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_wheel_contains_the_compiled_shaders_and_bindings(tmp_path: Path) -> None:
    root = make_package(tmp_path / "pkg", extra='bindings = "src/shaderpkg/generated"\n')
    result = build_wheel(root)
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = (root / "dist").glob("shaderpkg-0.1.0-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for stem in ("shaderpkg/compiled/fx/Blur", "shaderpkg/compiled/Sprite"):
        for suffix in (".spv", ".metal", ".reflection"):
            assert stem + suffix in names, (stem + suffix, sorted(names))
    assert "shaderpkg/compiled/fx/Blur.wgsl" in names or any(
        n.startswith("shaderpkg/compiled/fx/Blur.") and n.endswith(".wgsl") for n in names
    )
    assert not any(n.endswith((".oneshader-state.json", ".oneshader.lock")) for n in names)
    generated = {"__init__.py", "Sprite.py", "fx/__init__.py", "fx/Blur.py"}  # OUT's folders
    assert {f"shaderpkg/generated/{n}" for n in generated} <= names
    data = zipfile.ZipFile(wheel).read("shaderpkg/compiled/fx/Blur.reflection")
    assert ReflectionFormat.read(data).source == "shaders/fx/Blur.hlsl"
    # the installed bindings carry their code: imported from the wheel itself (a zip), in a
    # folder that holds nothing of the build, the module gives the wheel's WGSL
    wgsl = zipfile.ZipFile(wheel).read("shaderpkg/compiled/Sprite.wgsl").decode()
    check = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from shaderpkg.generated import Sprite; "
        "assert Sprite.SHADER.code() == sys.argv[2], 'embedded code differs'"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    used = subprocess.run(
        [sys.executable, "-c", check, str(wheel), wgsl],
        cwd=elsewhere, capture_output=True, text=True,
    )  # fmt: skip
    assert used.returncode == 0, used.stderr


def test_a_failing_shader_fails_the_wheel_with_its_diagnostic(tmp_path: Path) -> None:
    root = make_package(tmp_path / "pkg")
    (root / "shaders/Broken.hlsl").write_text((CORPUS / "errors/syntax.hlsl").read_text())
    result = build_wheel(root)
    assert result.returncode != 0
    assert "shaders/Broken.hlsl:8:18: error" in result.stdout + result.stderr
    assert not list(root.glob("dist/*.whl"))


def test_a_shader_broken_after_a_good_build_still_fails_the_wheel(tmp_path: Path) -> None:
    """Its last good outputs stay in OUT (for a running program), marked stale: the next
    wheel build compiles it again and fails, rather than packaging the old code."""
    root = make_package(tmp_path / "pkg")
    assert build_wheel(root).returncode == 0
    for wheel in root.glob("dist/*.whl"):
        wheel.unlink()
    (root / "shaders/Sprite.hlsl").write_text((CORPUS / "errors/syntax.hlsl").read_text())
    result = build_wheel(root)
    assert result.returncode != 0
    assert "shaders/Sprite.hlsl:8:18: error" in result.stdout + result.stderr  # as Broken's
    assert (root / "src/shaderpkg/compiled/Sprite.spv").is_file()  # the last good build
    assert not list(root.glob("dist/*.whl"))


def test_a_bad_hook_setting_is_positioned(tmp_path: Path) -> None:
    root = make_package(tmp_path / "pkg", extra='targets = ["dx12"]\n')
    result = build_wheel(root)
    assert result.returncode != 0
    assert "pyproject.toml:15:1: error OS2004: 'targets' must list" in result.stdout + result.stderr


def test_an_out_that_cannot_be_written_fails_the_wheel_at_that_file(tmp_path: Path) -> None:
    root = make_package(tmp_path / "pkg")
    (root / "src/shaderpkg/compiled").write_text("a file where OUT should be a folder")
    result = build_wheel(root)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and not list(root.glob("dist/*.whl"))
    assert "src/shaderpkg/compiled: error OS2003: cannot write:" in output
    assert "NotADirectoryError" not in output  # the message, not the raw OS error, surfaces
