"""Positioned messages for users, in one format that editors and CI annotate.

Every error a user can cause is a :class:`UserError` carrying one or more :class:`Diagnostic`;
the CLI prints them with :meth:`Diagnostic.format` and sets the exit status; tracebacks mean bugs.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final


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
    LOCATION_CLASH: Final = "OS1020"
    SUBPASS_INPUT: Final = "OS1021"
    STRUCT_OF_RESOURCES: Final = "OS1030"
    NON_FLOAT_COLUMN_MAJOR: Final = "OS1031"
    # The compiler: layouts and slots.
    NOT_PORTABLE: Final = "OS2001"
    SLOT_CLASH: Final = "OS3001"
    REGISTER_NOT_BOUND: Final = "OS3002"
    # The compiler: its own failures.
    CROSSCHECK_MISMATCH: Final = "OS9000"
    COMPILER_CRASHED: Final = "OS9001"
    INTERNAL_ERROR: Final = "OS9002"
    # The build (three numbers are the compiler's too, with another meaning: kept as they are
    # documented and printed).
    BAD_CONFIG: Final = "OS2001"
    BAD_USAGE: Final = "OS2002"
    OUTPUT_NOT_WRITABLE: Final = "OS2003"
    WORKER_FAILED: Final = "OS3001"
    CRASHED_SILENTLY: Final = "OS3002"
    REFLECTION_NOT_WRITTEN: Final = "OS3003"
    NO_COMPILER: Final = "OS3004"


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
        where = self.file
        if self.line:
            where += f":{self.line}"
            if self.column:
                where += f":{self.column}"
        kind = self.severity.value + (f" {self.code}" if self.code else "")
        text = f"{where}: {kind}: {self.message}"
        if with_excerpt and self.excerpt:
            text += "\n" + self.excerpt
        return text

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


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
