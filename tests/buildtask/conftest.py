"""Fixtures of the build tests: a small shader project, and the build command run in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_helpers import BuildRun, make_project

from oneshader.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def build(capsys: pytest.CaptureFixture[str]) -> BuildRun:
    """Run ``oneshader build ARGS`` in-process in the cwd: (status, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        status = main(["build", "-q", *args])
        out, err = capsys.readouterr()
        return status, out, err

    return run
