"""The command line as a whole: ``python -m oneshader`` and the help of every option."""

from __future__ import annotations

import argparse
import subprocess
import sys

from oneshader import __version__
from oneshader.cli import make_parser


def test_python_dash_m_oneshader_runs_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "oneshader", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"oneshader {__version__}"


def _subparsers(
    parser: argparse.ArgumentParser, path: str = "oneshader"
) -> dict[str, argparse.ArgumentParser]:
    found = {path: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(_subparsers(sub, f"{path} {name}"))
    return found


def test_every_option_has_help_text() -> None:
    missing = [
        f"{command} {'/'.join(action.option_strings) or action.dest}"
        for command, parser in _subparsers(make_parser()).items()
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert missing == []


def test_quiet_help_says_what_quiet_does() -> None:
    build = _subparsers(make_parser())["oneshader build"]
    quiet = next(a for a in build._actions if "-q" in a.option_strings)
    assert quiet.help is not None and "summary" in quiet.help
