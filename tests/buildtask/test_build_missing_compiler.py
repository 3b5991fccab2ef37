"""Without slangpy, a build stops with OS3004 and says how to install the compiler: with pip
for ``oneshader build``, in ``[build-system] requires`` for the packaging hook."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from build_helpers import BuildRun
from test_build_hatch_hook import make_package

import oneshader.compiler.slang.capi as slang
from oneshader.buildtask.state import STATE_NAME


@pytest.fixture
def no_slangpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slang, "_slangpy_folder", lambda: None)


@pytest.mark.usefixtures("no_slangpy")
def test_build_without_the_compiler_is_one_coded_error(project: Path, build: BuildRun) -> None:
    status, out, err = build("--no-server")
    assert status == 2
    assert err.startswith("oneshader build: error OS3004: cannot start the compiler:")
    assert "pip install 'oneshader[compiler]'" in err
    assert "failed" not in out  # no shader is blamed for it
    assert not (project / "out" / STATE_NAME).exists()


def test_the_packaging_hook_names_build_system_requires(tmp_path: Path) -> None:
    root = make_package(tmp_path / "pkg")
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "slangpy.py").write_text("raise ImportError('not here')\n")  # shadows the real one
    env = dict(os.environ, PYTHONPATH=str(fake))
    result = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", "dist"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    text = result.stdout + result.stderr
    assert result.returncode != 0
    assert "error OS3004: cannot start the compiler" in text
    assert "[build-system]" in text and "pip install" not in text
