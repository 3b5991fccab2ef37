"""What the user watches while a build runs: a live line on a terminal, else plain lines."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from oneshader.diagnostics import Diagnostic, Reporter, printable


def wants_live_line(stream: TextIO, quiet: bool) -> bool:
    """A live progress line only on an interactive terminal, never in CI or with --quiet."""
    if quiet or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


FROM_CACHE = "from cache"  # the verdict of a shader the shared cache gave


class Progress:
    """Progress on ``stream``: a live line (done/total, current file, elapsed) on a terminal,
    otherwise one plain line per compiled shader (none with ``quiet``); diagnostics always go to
    ``errors`` as ``reporter`` writes them (gcc lines, coloured on a terminal, by default),
    clearing the live line first."""

    def __init__(
        self,
        stream: TextIO | None = None,
        errors: TextIO | None = None,
        *,
        quiet: bool = False,
        live: bool | None = None,
        reporter: Reporter | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.errors = errors if errors is not None else sys.stderr
        self.reporter = reporter or Reporter.for_stream("gcc", self.errors)
        self.quiet = quiet
        self.live = wants_live_line(self.stream, quiet) if live is None else live
        self.total = 0
        self.done = 0
        self.cached = 0  # of ``done``, taken from the shared cache (marked on the live line)
        self.started = time.perf_counter()
        self.running: dict[str, float] = {}
        self._shown = False

    def begin(self, total: int) -> None:
        self.total, self.done, self.cached = total, 0, 0
        self.started = time.perf_counter()
        self.running.clear()

    def _clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False

    def _draw(self) -> None:
        if not self.live or not self.total:
            return
        current = next(iter(self.running), "")
        elapsed = time.perf_counter() - self.started
        import shutil  # not imported by a build that draws no progress line (a no-op)

        width = shutil.get_terminal_size((80, 24)).columns
        cached = f", {self.cached} from cache" if self.cached else ""
        line = f"[{self.done}/{self.total}{cached}] {elapsed:5.1f}s {printable(current)}"
        self.stream.write("\r\x1b[K" + line[: max(width - 1, 10)])
        self.stream.flush()
        self._shown = True

    def start(self, name: str) -> None:
        self.running[name] = time.perf_counter()
        self._draw()

    def finish(self, name: str, verdict: str, seconds: float) -> None:
        self.running.pop(name, None)
        self.done += 1
        self.cached += verdict == FROM_CACHE
        if self.live:
            self._draw()
        elif not self.quiet:
            shown = printable(name)
            self.stream.write(f"[{self.done}/{self.total}] {verdict} {shown} ({seconds:.2f}s)\n")
            self.stream.flush()

    def tick(self) -> None:
        self._draw()

    def diagnostic(self, diag: Diagnostic) -> None:
        self._error_line(self.reporter.render(diag))

    def message(self, text: str) -> None:
        """A line for the user (a note, a wait); never lost under the live line."""
        self._error_line(self.reporter.plain(text))

    def _error_line(self, text: str) -> None:
        self._clear()
        self.errors.write(text + "\n")
        self.errors.flush()
        self._draw()

    def summary(self, text: str) -> None:
        self._clear()
        self.stream.write(printable(text) + "\n")
        self.stream.flush()
