"""Positioned messages for users, in the formats that editors and CI annotate.

Every error a user can cause is a :class:`UserError` carrying one or more :class:`Diagnostic`;
the CLI prints them through a :class:`Reporter` (gcc lines by default, msvc lines or JSON lines
with ``--diagnostics-format``) and sets the exit status; tracebacks mean bugs.
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TextIO


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True)
class Diagnostic:
    """``line``/``column`` are 1-based; 0 means unknown (the position is then left out)."""

    file: str
    line: int
    column: int
    severity: Severity
    message: str
    code: str = ""
    excerpt: str = ""

    def format(self, *, with_excerpt: bool = False) -> str:
        """The gcc form, ``file:line:col: error CODE: message`` (see :class:`Reporter`)."""
        return GCC.render(self) if with_excerpt else GCC.render(self, excerpt=False)

    def to_json(self) -> dict[str, object]:
        """The fields of ``--diagnostics-format json`` (docs/build.md has the schema)."""
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
        }

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


DIAGNOSTIC_FORMATS = ("gcc", "msvc", "json")

# SGR sequences, as gcc and clang colour their diagnostics.
_BOLD, _RESET = "\x1b[1m", "\x1b[0m"
_COLORS = {
    Severity.ERROR: "\x1b[1;31m",
    Severity.WARNING: "\x1b[1;35m",
    Severity.NOTE: "\x1b[1;36m",
}
_CARET = "\x1b[1;32m"


def wants_color(stream: TextIO) -> bool:
    """Colour only for a terminal, and never when ``NO_COLOR`` is set (no-color.org) or the
    terminal is ``dumb``."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@dataclass(frozen=True)
class Reporter:
    """How diagnostics are written: ``gcc`` (``file:line:col: error CODE: message`` and an
    excerpt), ``msvc`` (``file(line,col): error CODE: message``, what Visual Studio's and
    Azure's matchers read) or ``json`` (one object per line, for tools); ``color`` adds SGR
    colours to the first two."""

    style: str = "gcc"
    color: bool = False

    @classmethod
    def for_stream(cls, style: str, stream: TextIO) -> Reporter:
        if style not in DIAGNOSTIC_FORMATS:
            raise ValueError(f"unknown diagnostics format {style!r}")
        return cls(style, style != "json" and wants_color(stream))

    def render(self, d: Diagnostic, *, excerpt: bool = True) -> str:
        if self.style == "json":
            return json.dumps(d.to_json(), ensure_ascii=False)
        where = d.file
        if self.style == "msvc":
            if d.line:
                where += f"({d.line},{d.column})" if d.column else f"({d.line})"
        elif d.line:
            where += f":{d.line}" + (f":{d.column}" if d.column else "")
        kind = d.severity.value + (f" {d.code}" if d.code else "")
        if self.color:
            where = f"{_BOLD}{where}{_RESET}"
            kind = f"{_COLORS[d.severity]}{kind}{_RESET}"
        text = f"{where}: {kind}: {d.message}"
        if excerpt and d.excerpt:
            shown = d.excerpt
            if self.color:
                code, _, caret = shown.rpartition("\n")
                bar, sep, mark = caret.rpartition("| ")
                shown = f"{code}\n{bar}{sep}{_CARET}{mark}{_RESET}" if sep else shown
            text += "\n" + shown
        return text

    def plain(self, text: str, file: str = "") -> str:
        """A message that is no diagnostic (a note of the build, a file reformatted): as is,
        or as a JSON note so that every line of a JSON stream parses."""
        if self.style != "json":
            return text
        return self.render(Diagnostic(file, 0, 0, Severity.NOTE, text))

    def print(self, diagnostics: Iterable[Diagnostic], stream: TextIO) -> None:
        for d in diagnostics:
            stream.write(self.render(d) + "\n")
        stream.flush()


GCC = Reporter()


def source_excerpt(text: str, line: int, column: int) -> str:
    """The source line at ``line`` with a caret under ``column``, for showing under a diagnostic."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    src = lines[line - 1].expandtabs(4)
    caret = " " * max(column - 1, 0) + "^"
    return f"  {line:>4} | {src}\n       | {caret}"


class UserError(Exception):
    """An error caused by input, reported without a traceback."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(d.format() for d in self.diagnostics))

    @classmethod
    def at(cls, file: str, line: int, column: int, message: str, code: str = "") -> UserError:
        return cls([Diagnostic(file, line, column, Severity.ERROR, message, code)])
