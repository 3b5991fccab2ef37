"""What a build prints for tools: diagnostics in gcc, msvc or JSON form, naming files relative
to the current folder, coloured only on a terminal without NO_COLOR."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from build_helpers import CORPUS, kernel

from oneshader.buildtask.builder import BuildReport
from oneshader.cli import main
from oneshader.diagnostics import Diagnostic, Reporter, Severity, wants_color

Capture = pytest.CaptureFixture[str]


def break_include(project: Path) -> None:
    """ui/Lit includes inc/common.hlsli, which includes inc/math.hlsli: break the last."""
    math = project / "shaders/ui/inc/math.hlsli"
    math.write_text(math.read_text().replace("return color.rgb", "return color.rgb +"))


def errors_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if ": error" in line]


def test_paths_are_relative_to_the_current_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    (project / "shaders/ui/Broken.hlsl").write_text((CORPUS / "errors/syntax.hlsl").read_text())
    break_include(project)
    assert main(["build", "-q", "--no-server"]) == 1
    at_root = errors_of(capsys.readouterr().err)
    assert any(re.match(r"shaders/ui/Broken\.hlsl:\d+:\d+: error E", e) for e in at_root), at_root
    assert any(e.startswith("shaders/ui/inc/math.hlsli:") for e in at_root), at_root
    monkeypatch.chdir(project / "shaders/ui")  # an editor's terminal in a subfolder
    assert main(["build", "-q", "--no-server", "--force"]) == 1
    below = errors_of(capsys.readouterr().err)
    assert [e.removeprefix("shaders/ui/") for e in at_root] == below
    for line in below:
        assert (project / "shaders/ui" / line.split(":")[0]).is_file()


def test_msvc_and_json_formats(project: Path, capsys: Capture) -> None:
    (project / "shaders/Broken.hlsl").write_text((CORPUS / "errors/syntax.hlsl").read_text())
    assert main(["build", "-q", "--no-server", "--diagnostics-format", "msvc"]) == 1
    msvc = errors_of(capsys.readouterr().err)
    assert len(msvc) == 1 and re.match(r"shaders/Broken\.hlsl\(\d+,\d+\): error E", msvc[0])
    assert main(["build", "-q", "--no-server", "--diagnostics-format", "json"]) == 1
    err = capsys.readouterr().err
    records = [json.loads(line) for line in err.splitlines()]  # every line is one object
    (error,) = [r for r in records if r["severity"] == "error"]
    assert error["file"] == "shaders/Broken.hlsl" and error["line"] > 0
    assert error["code"].startswith("E") and error["column"] > 0
    assert set(error) == {"file", "line", "column", "severity", "code", "message"}


def test_configuration_errors_follow_the_format(project: Path, capsys: Capture) -> None:
    (project / "pyproject.toml").write_text('[tool.oneshader]\nsources = ["shaders"]\nout = 3\n')
    assert main(["build", "--diagnostics-format", "json"]) == 2
    (record,) = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert (record["file"], record["line"], record["code"]) == ("pyproject.toml", 3, "OS2004")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert wants_color(Terminal()) and not wants_color(io.StringIO())
    (project / "shaders/Broken.hlsl").write_text((CORPUS / "errors/syntax.hlsl").read_text())
    for no_color, coloured in (("", True), ("1", False)):
        monkeypatch.setenv("NO_COLOR", no_color)
        terminal = Terminal()
        monkeypatch.setattr("sys.stderr", terminal)
        assert main(["build", "-q", "--no-server", "--force"]) == 1
        text = terminal.getvalue()
        assert ("\x1b[1;31merror" in text) is coloured
        assert ("\x1b[" in text) is coloured
    monkeypatch.setenv("NO_COLOR", "")
    assert not Reporter.for_stream("json", Terminal()).color  # JSON is never coloured


def test_messages_that_are_no_diagnostics_stay_json() -> None:
    json_reporter = Reporter("json")
    note = json.loads(json_reporter.plain("note: started a compile server", "x"))
    assert note == {
        "file": "x",
        "line": 0,
        "column": 0,
        "severity": "note",
        "code": "",
        "message": "note: started a compile server",
    }
    d = Diagnostic("a.hlsl", 3, 0, Severity.WARNING, "w", "E1")
    assert Reporter("msvc").render(d) == "a.hlsl(3): warning E1: w"
    assert Reporter("gcc").render(d) == "a.hlsl:3: warning E1: w"


KERNEL = kernel("Odd")


@pytest.mark.parametrize("style", ["gcc", "msvc", "json"])
def test_control_characters_never_reach_the_terminal(
    project: Path, capsys: Capture, style: str
) -> None:
    """A shader's ``#error`` text, a file's name: an ESC in either (a sequence that retitles the
    window or rewrites the screen) is printed escaped, in every format, progress lines too."""
    weird = project / "shaders" / "Od\x1bd.hlsl"
    weird.write_text("#error bad \x1b]0;owned\x07 news\n" + KERNEL)
    status = main(["build", "--diagnostics-format", style, "-j", "1", "shaders/Od\x1bd.hlsl"])
    out, err = capsys.readouterr()
    assert status == 1
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "\\x1b]0;owned\\x07 news" in err.replace("\\\\", "\\")
    assert "Od\\x1bd.hlsl" in out


def test_the_summary_names_shaders_in_sorted_order() -> None:
    """The report's lists hold shaders in the order their compiles ended, which two workers
    make differ from build to build; the summary a user (or a CI log diff) reads does not."""
    report = BuildReport(
        failed=["b.hlsl", "z.hlsl", "a.hlsl", "y.hlsl", "m.hlsl"],
        crashed=["z.hlsl", "y.hlsl"],
        timed_out=["m.hlsl"],
    )
    lines = report.summary().splitlines()[1:]
    assert lines == [
        "  compiler crashed on: y.hlsl, z.hlsl",
        "  over the time limit: m.hlsl",
        "  failed: a.hlsl, b.hlsl",
    ]
