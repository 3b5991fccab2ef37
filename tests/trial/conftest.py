"""The trial project, built once per session: the portable shaders from ``[tool.oneshader]``
(``oneshader build`` with no arguments, bindings included), and each shader a target refuses
built again for the targets that take it, into its own OUT and bindings folder."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from trial_helpers import ALL, TARGETS, Project, make_project, oneshader


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    root = tmp_path_factory.mktemp("trialgame")
    make_project(root)
    built = oneshader(root, "build", "-q")
    assert built.returncode == 0, built.stdout + built.stderr
    portable = sum(targets == ALL for targets in TARGETS.values())
    assert f"{portable} built, 0 up to date, 0 failed" in built.stdout
    proj = Project(root)
    for shader, targets in TARGETS.items():
        if targets == ALL:
            continue
        result = oneshader(
            root, "build", f"shaders/{shader}.hlsl", "-q", "--targets", ",".join(targets),
            "-o", str(proj.out(shader)), "--bindings", str(proj.gen(shader)),
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
    yield proj
    for name in [m for m in sys.modules if m.split(".")[0].startswith(("trialgen", "gen_"))]:
        del sys.modules[name]
