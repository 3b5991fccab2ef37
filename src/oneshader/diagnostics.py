"""Positioned messages for users, in the formats that editors and CI annotate.

Every error a user can cause is a :class:`UserError` carrying one or more :class:`Diagnostic`;
the CLI prints them through a :class:`Reporter` (gcc lines by default, msvc lines or JSON lines
with ``--diagnostics-format``) and sets the exit status; tracebacks mean bugs.
"""

from __future__ import annotations

import enum
import functools
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final, TextIO


class Code:
    """oneshader's diagnostic codes, one name each, for the compiler (docs/compiler.md "Errors a
    target gives") and the build (docs/build.md); Slang's own codes (``E.....``) pass through."""

    # The compiler: what the source asks that a target cannot give.
    NO_TARGETS: Final = "OS1000"
    TYPE_NOT_EMITTED: Final = "OS1001"
    APPEND_CONSUME_AS_PARAMETER: Final = "OS1002"
    NOT_ON_TARGET: Final = "OS1003"
    LOOSE_UNIFORM_NOT_GATHERED: Final = "OS1004"
    ENTRY_POINT_NOT_FOUND: Final = "OS1005"
    NO_ENTRY_POINTS: Final = "OS1006"
    UNKNOWN_RESOURCE_TYPE: Final = "OS1007"
    RESOURCE_ARRAY: Final = "OS1008"
    UNSUPPORTED_STAGE: Final = "OS1009"
    VK_OFFSET: Final = "OS1010"
    VK_BUILTIN: Final = "OS1011"
    COMPARED_AND_SAMPLED: Final = "OS1012"
    UNREADABLE_DECLARATION: Final = "OS1013"
    NO_VERTEX_FORMAT: Final = "OS1014"
    WGSL_INTERLOCKED: Final = "OS1015"
    STAGE_LINK: Final = "OS1016"
    VERTEX_WITHOUT_POSITION: Final = "OS1017"
    LOCATION_CLASH: Final = "OS1020"
    SUBPASS_INPUT: Final = "OS1021"
    OUT_PARAMETERS: Final = "OS1022"
    STRUCT_OF_RESOURCES: Final = "OS1030"
    NON_FLOAT_COLUMN_MAJOR: Final = "OS1031"
    UNREADABLE_SOURCE: Final = "OS1040"
    ABSOLUTE_INCLUDE: Final = "OS1041"
    PREPROCESSOR: Final = "OS1042"  # #error, an #if or a macro the preprocessor cannot read
    NESTED_TOO_DEEP: Final = "OS1045"
    IDENTIFIER_TOO_LONG: Final = "OS1046"
    LINE_OUT_OF_RANGE: Final = "OS1047"
    # The compiler: layouts and slots.
    NOT_PORTABLE: Final = "OS2001"
    SLOT_CLASH: Final = "OS3001"
    REGISTER_NOT_BOUND: Final = "OS3002"
    UNUSED_ON_TAKEN_SLOT: Final = "OS3010"  # a warning
    # The compiler: its own failures.
    CROSSCHECK_MISMATCH: Final = "OS9000"
    COMPILER_CRASHED: Final = "OS9001"
    INTERNAL_ERROR: Final = "OS9002"
    # The build.
    BAD_CONFIG: Final = "OS2004"
    BAD_USAGE: Final = "OS2002"
    OUTPUT_NOT_WRITABLE: Final = "OS2003"
    OUTPUTS_CHANGING: Final = "OS2005"  # generate: a build keeps rewriting a shader's outputs
    REFLECTION_NOT_WRITTEN: Final = "OS3003"
    NO_COMPILER: Final = "OS3004"
    WORKER_FAILED: Final = "OS9003"
    TIME_LIMIT: Final = "OS9004"


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

# What a terminal acts on rather than shows: C0 controls (ESC starts a sequence that can move
# the cursor, retitle the window or rewrite what was printed), DEL and the C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab escaped (``\\x1b``): what a
    shader's ``#error``, a file name or a reflection put in a message reaches a terminal as
    text, never as a command to it."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


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
        d = replace(d, file=printable(d.file), message=printable(d.message))
        d = replace(d, excerpt=printable(d.excerpt), code=printable(d.code))
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
            return printable(text)
        return self.render(Diagnostic(file, 0, 0, Severity.NOTE, text))

    def print(self, diagnostics: Iterable[Diagnostic], stream: TextIO) -> None:
        for d in diagnostics:
            stream.write(self.render(d) + "\n")
        stream.flush()


GCC = Reporter()


_EXCERPT_WIDTH = 160  # characters of a long source line shown around the column


def source_excerpt(text: str, line: int, column: int) -> str:
    """The source line at ``line`` with a caret under ``column``, for showing under a diagnostic
    (lines as ``str.splitlines`` counts them, found without splitting the text again for each
    diagnostic of a file)."""
    starts, ends = _line_spans(text)
    if not 1 <= line <= len(starts):
        return ""
    src = text[starts[line - 1] : ends[line - 1]].expandtabs(4)
    at = max(column - 1, 0)
    if len(src) > _EXCERPT_WIDTH:  # a window around the column, not a megabyte of line
        start = max(0, min(at - _EXCERPT_WIDTH // 2, len(src) - _EXCERPT_WIDTH))
        head = "..." if start else ""
        tail = "..." if start + _EXCERPT_WIDTH < len(src) else ""
        src = head + src[start : start + _EXCERPT_WIDTH] + tail
        at += len(head) - start
    caret = " " * at + "^"
    return f"  {line:>4} | {src}\n       | {caret}"


# What str.splitlines ends a line at.
_LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


@functools.lru_cache(maxsize=4)  # the few files whose diagnostics are being made
def _line_spans(text: str) -> tuple[list[int], list[int]]:
    """Where each line of ``text`` starts and ends (without its line break)."""
    starts, ends = [0], []
    for m in _LINE_BREAK.finditer(text):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(text))
    if starts[-1] == len(text):  # no last line after a final line break (nor in "")
        starts.pop()
        ends.pop()
    return starts, ends


class UserError(Exception):
    """An error caused by input, reported without a traceback."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(d.format() for d in self.diagnostics))

    @classmethod
    def at(cls, file: str, line: int, column: int, message: str, code: str = "") -> UserError:
        return cls([Diagnostic(file, line, column, Severity.ERROR, message, code)])


class Collector:
    """The errors of one run, added by each step as it finds them: the caller that runs the
    steps checks it at each step's end (:meth:`check`), so that a step reports all its errors
    at once and no step runs on a failed one."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics.extend(diagnostics)

    @property
    def failed(self) -> bool:
        return any(d.is_error for d in self.diagnostics)

    def check(self) -> None:
        """The step boundary: raise what was collected if any of it is an error."""
        if self.failed:
            raise UserError(self.diagnostics)
