"""``oneshader build --depfile FILE``: make rules naming each output's source and includes,
read by real make and ninja to decide when to build again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from build_helpers import CORPUS, BuildRun

from oneshader.buildtask.depfile import freshen_outputs, make_escape
from oneshader.buildtask.state import BuildState, ShaderRecord, Stamp


def rules(text: str) -> dict[str, list[str]]:
    """{target: prerequisites} of a depfile (the make syntax it writes)."""
    out: dict[str, list[str]] = {}
    for rule in text.replace("\\\n", " ").splitlines():
        targets, _, deps = rule.partition(":")
        for t in targets.split():
            out[t] = deps.split()
    return out


def test_each_output_names_its_source_includes_and_pyproject(
    project: Path, build: BuildRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, _, _ = build("--no-server", "--depfile", "deps.d")
    assert status == 0
    found = rules((project / "deps.d").read_text())
    assert found["out/ui/Lit.spv"] == [
        "shaders/ui/Lit.hlsl",
        "shaders/ui/inc/common.hlsli",
        "shaders/ui/inc/math.hlsli",
        "pyproject.toml",
    ]
    for suffix in (".metal", ".wgsl", ".reflection"):
        assert found["out/ui/Lit" + suffix] == found["out/ui/Lit.spv"]
    assert found["out/K0.spv"] == ["shaders/K0.hlsl", "pyproject.toml"]
    assert {t.rsplit(".", 1)[0] for t in found} == {
        "out/Sprite",
        "out/ui/Lit",
        "out/NoMarkup",
        "out/K0",
        "out/K1",
    }
    monkeypatch.chdir(project / "shaders")  # paths follow the current folder
    status, _, _ = build("--no-server", "--depfile", "../deps.d")
    below = rules((project / "deps.d").read_text())
    assert below["../out/ui/Lit.spv"][0] == "ui/Lit.hlsl"
    assert all((project / "shaders" / d).is_file() for deps in below.values() for d in deps)


def test_a_failed_shader_has_no_rule(project: Path, build: BuildRun) -> None:
    (project / "shaders/Broken.hlsl").write_text((CORPUS / "errors/syntax.hlsl").read_text())
    status, _, _ = build("--no-server", "--depfile", "deps.d")
    assert status == 1
    found = rules((project / "deps.d").read_text())
    assert "out/K0.spv" in found and not any("Broken" in t for t in found)


def test_a_freshened_output_is_saved_with_its_new_time(tmp_path: Path) -> None:
    """Also in a state saved before (a save writes a record it wrote before only if replaced)."""
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "A.hlsl").write_text("source")
    (out / "A.out").write_bytes(b"code")
    old = time.time_ns() - 10**10
    os.utime(out / "A.out", ns=(old, old))
    output = Stamp("A.out", old, 4, "cd")
    state = BuildState(
        "tool", {"A": ShaderRecord("A.hlsl", "k", [Stamp("A.hlsl", 1, 6, "ab")], [output])}
    )
    state.save(out)
    assert freshen_outputs(state, tmp_path, out, None)
    state.save(out)
    now = (out / "A.out").stat().st_mtime_ns
    assert now > old and BuildState.load(out)[0].shaders["A"].outputs[0].mtime_ns == now


def test_make_escapes() -> None:
    assert make_escape("a b#c$d") == "a\\ b\\#c$$d"


def _touch_later(path: Path) -> None:
    """Save without a change, after the outputs were written."""
    time.sleep(0.02)
    os.utime(path)


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_make_rebuilds_after_an_include_changes(project: Path) -> None:
    command = f"{sys.executable} -m oneshader build -q --no-server --depfile deps.d"
    (project / "Makefile").write_text(
        f"out/ui/Lit.spv:\n\t{command}\n-include deps.d\n", encoding="utf-8"
    )

    def make(*args: str) -> int:
        return subprocess.run(["make", *args], cwd=project, capture_output=True).returncode

    assert make() == 0
    assert make("-q") == 0  # up to date: the depfile's prerequisites are all older
    _touch_later(project / "shaders/ui/inc/math.hlsli")
    assert make("-q") == 1  # a transitive include moved: make wants to build again
    assert make() == 0 and make("-q") == 0  # the unchanged outputs got the time, not a build


@pytest.mark.skipif(shutil.which("ninja") is None, reason="ninja is not installed")
def test_ninja_reads_the_depfile(project: Path) -> None:
    command = f"{sys.executable} -m oneshader build -q --no-server --depfile deps.d"
    (project / "build.ninja").write_text(
        f"rule oneshader\n  command = {command}\n  depfile = deps.d\n  deps = gcc\n"
        "build out/ui/Lit.spv out/K0.spv: oneshader\n",
        encoding="utf-8",
    )

    def ninja() -> str:
        done = subprocess.run(
            ["ninja", "-d", "explain"], cwd=project, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    assert "oneshader build" in ninja()
    assert "no work to do" in ninja()
    _touch_later(project / "shaders/ui/inc/common.hlsli")
    assert "common.hlsli" in ninja()  # explained as the reason for building again
    assert "no work to do" in ninja()
