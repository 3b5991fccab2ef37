"""A cold build without the compile server starts its zygote before reading its configuration,
and its pool forks the workers from that one (buildtask/early.py); other builds start none early."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from build_helpers import BuildRun, fork_path_only

from oneshader.buildtask import early
from oneshader.buildtask.state import STATE_NAME
from oneshader.compiler.process.zygote import Zygote


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Zygote | None]:
    """What each ``early.start`` of the CLI returned."""
    seen: list[Zygote | None] = []
    real = early.start

    def spy(argv: list[str]) -> Zygote | None:
        seen.append(real(argv))
        return seen[-1]

    monkeypatch.setattr(early, "start", spy)
    return seen


@fork_path_only
def test_a_cold_build_forks_its_workers_from_the_zygote_started_early(
    project: Path, build: BuildRun, started: list[Zygote | None]
) -> None:
    status, out, _ = build("-j", "2")
    assert status == 0 and " 0 failed" in out
    (zygote,) = started
    assert zygote is not None and zygote.forks >= 1 and zygote.starts == 1
    assert zygote.pid is None  # closed with the build's pool
    status, _, _ = build("--force")  # a build with a state: it may compile nothing
    assert status == 0 and started[1] is None


@fork_path_only
def test_no_early_zygote_with_the_server_or_for_another_command(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert early.start(["reflection", "show", "x"]) is None
    assert early.start(["build", "--watch"]) is None
    monkeypatch.setenv("ONESHADER_SERVER", "60")
    assert early.start(["build"]) is None


@fork_path_only
def test_an_early_zygote_a_build_did_not_adopt_ends_at_once(
    project: Path, build: BuildRun, started: list[Zygote | None]
) -> None:
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text().replace('out = "out"', 'out = "out"\njobs = "x"')
    )
    status, _, err = build()
    assert status == 2 and "OS2004" in err
    (zygote,) = started
    assert zygote is not None and zygote.forks == 0 and zygote.pid is None


def test_the_early_guess_looks_for_the_state_the_build_keeps() -> None:
    """``early`` names the state file itself (importing :mod:`.state` would cost the guess what
    it saves): the two names must stay one."""
    assert early.STATE_FILE == STATE_NAME


def test_starting_a_compiler_imports_no_request_types() -> None:
    """What runs before the early zygote is spawned (policy, zygote) and what the zygote imports
    before Slang's session starts (worker_child) load neither the request and result types nor
    the diagnostics: each would delay the first compile (~40 ms)."""
    code = (
        "import sys\n"
        "import oneshader.compiler.process.policy, oneshader.compiler.process.zygote\n"
        "import oneshader.compiler.process.worker_child\n"
        "heavy = ('oneshader.compiler.api', 'oneshader.diagnostics', 'oneshader.reflection')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""
    from oneshader import compiler

    assert compiler.CompileOptions.__module__ == "oneshader.compiler.api"  # still importable
    with pytest.raises(AttributeError):
        compiler.NotAName  # noqa: B018
