"""Positioned messages for users, in one format that editors and CI annotate.

Every error a user can cause is a :class:`UserError` carrying one or more :class:`Diagnostic`;
the CLI prints them with :meth:`Diagnostic.format` and sets the exit status; tracebacks mean bugs.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


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
