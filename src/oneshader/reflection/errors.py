"""The one error the reflection reader raises."""

from __future__ import annotations

from oneshader.diagnostics import Diagnostic, Severity, UserError


class ReflectionFormatError(UserError):
    """A reflection file breaks the format; ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, line: int, column: int, file: str = "<reflection>") -> None:
        self.message = message
        self.line = line
        self.column = column
        self.file = file
        super().__init__([Diagnostic(file, line, column, Severity.ERROR, message)])
