"""``--watch`` survives errors between saves; the progress line and the plain lines."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import pytest
from build_helpers import CORPUS, kernel

from oneshader.buildtask import command
from oneshader.buildtask.progress import Progress
from oneshader.cli import make_parser
from oneshader.diagnostics import Diagnostic, Severity


def test_watch_rebuilds_on_save_and_survives_errors(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(command, "WATCH_POLL_SECONDS", 0.02)
    k0 = project / "shaders/K0.hlsl"
    statuses: list[int] = []
    edits = [
        lambda: k0.write_text((CORPUS / "errors/syntax.hlsl").read_text()),  # break it
        lambda: (project / "pyproject.toml").write_text("[tool.oneshader\n"),  # break the config
        lambda: (project / "pyproject.toml").write_text(
            '[tool.oneshader]\nsources = ["shaders"]\nout = "out"\ndefines = { SCALE = "1" }\n'
            '[tool.oneshader.entry-points]\n"shaders/NoMarkup.hlsl" = '
            '[{ name = "main", stage = "compute" }]\n'
        ),  # repair the config, which changes a define: everything is rebuilt
        lambda: k0.write_text(kernel("K0", 9)),  # fix the shader
    ]

    def on_round(n: int, status: int) -> None:
        statuses.append(status)
        if n <= len(edits):
            edits[n - 1]()

    args = make_parser().parse_args(["build", "--watch", "-q"])
    final = command.watch(args, project, rounds=5, on_round=on_round)
    out = capsys.readouterr()
    assert statuses == [0, 1, 2, 1, 0]
    assert final == 0
    summaries = [line for line in out.out.splitlines() if line.startswith("oneshader build:")]
    assert [s.split(" in ")[0] for s in summaries] == [
        "oneshader build: 5 built, 0 up to date, 0 failed",
        "oneshader build: 0 built, 4 up to date, 1 failed",  # K0 keeps its last good outputs
        "oneshader build: 4 built, 0 up to date, 1 failed",
        "oneshader build: 1 built, 4 up to date, 0 failed",
    ]
    assert "pyproject.toml:1:" in out.err  # the broken config was reported, positioned
    assert (project / "out/K0.reflection").is_file()


def test_a_save_during_a_build_is_not_lost(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A save that lands after the build read the shader is a change for the next round (the
    watch compares with the stamps the build read, not with those when it ended)."""
    k0 = project / "shaders/K0.hlsl"
    real_run_once = command.run_once
    rounds: list[str] = []

    def run_once(*args: Any, **kwargs: Any) -> Any:
        report = real_run_once(*args, **kwargs)
        rounds.append(k0.read_text())
        if len(rounds) == 1:
            k0.write_text(kernel("K0", 7))  # saved while the first build ends
        return report

    monkeypatch.setattr(command, "run_once", run_once)
    # were the save lost, the watch would wait for ever: a broken config a while later ends it
    # with another status than the one asserted
    rescue = threading.Timer(
        20, lambda: (project / "pyproject.toml").write_text("[tool.oneshader\n")
    )
    rescue.start()
    try:
        args = make_parser().parse_args(["build", "--watch", "-q"])
        final = command.watch(args, project, rounds=2)
    finally:
        rescue.cancel()
    assert final == 0
    assert rounds[1] == kernel("K0", 7)
    summaries = [ln for ln in capsys.readouterr().out.splitlines() if "oneshader build:" in ln]
    assert summaries[1].startswith("oneshader build: 1 built, 4 up to date, 0 failed")


def test_live_line_on_a_terminal() -> None:
    stream, errors = io.StringIO(), io.StringIO()
    p = Progress(stream, errors, live=True)
    p.begin(2)
    p.start("shaders/A.hlsl")
    p.finish("shaders/A.hlsl", "built", 0.1)
    p.diagnostic(Diagnostic("shaders/B.hlsl", 3, 4, Severity.ERROR, "oops", "E1"))
    p.summary("oneshader build: 1 built")
    text = stream.getvalue()
    assert "\r\x1b[K[0/2]" in text and "shaders/A.hlsl" in text and "[1/2]" in text
    assert text.endswith("\r\x1b[Koneshader build: 1 built\n")  # the live line is cleared first
    assert errors.getvalue() == "shaders/B.hlsl:3:4: error E1: oops\n"


def test_plain_lines_in_ci_and_nothing_per_shader_when_quiet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CI", "1")
    stream = io.StringIO()
    p = Progress(stream, io.StringIO())
    assert not p.live
    p.begin(1)
    p.start("shaders/A.hlsl")
    p.finish("shaders/A.hlsl", "built", 0.25)
    assert stream.getvalue() == "[1/1] built shaders/A.hlsl (0.25s)\n"
    quiet = io.StringIO()
    q = Progress(quiet, io.StringIO(), quiet=True)
    q.begin(1)
    q.finish("shaders/A.hlsl", "built", 0.25)
    q.summary("done")
    assert quiet.getvalue() == "done\n"
