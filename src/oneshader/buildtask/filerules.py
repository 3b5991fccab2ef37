"""Settings for some shader files only: ``[tool.oneshader.variants]`` and
``[tool.oneshader.file-targets]``, keyed by a path or a glob relative to the project.

A glob's ``*`` and ``?`` stay within one folder, ``**`` spans any number of folders
(``shaders/**/*.hlsl``). A file named by its exact path takes its own rule over any glob; two
globs with different rules for one file are an error naming both, never a silent choice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from oneshader.fsutil import named_path
from oneshader.reflection.model import Target

__all__ = ["FileRule", "Variant", "glob_regex", "is_glob", "rule_for"]

VARIANT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Variant:
    """One named way to compile a file: its defines, over the project's."""

    name: str
    defines: tuple[tuple[str, str], ...] = ()


def is_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A whole-path expression for a glob: ``*``/``?`` within a folder, ``**`` across folders,
    ``[...]`` a character class."""
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            out += "[" + ("^" + re.escape(body[1:]) if body[0] in "!^" else re.escape(body)) + "]"
            i = end
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out)


@dataclass(frozen=True)
class FileRule:
    """What a ``pattern`` (a path or glob, relative to ``base``) sets for the files it names:
    ``variants`` or ``targets``."""

    pattern: str
    base: Path
    variants: tuple[Variant, ...] = ()
    targets: tuple[Target, ...] | None = None

    @cached_property
    def _regex(self) -> re.Pattern[str]:
        return glob_regex(self.pattern.removeprefix("./"))

    def matches(self, path: Path) -> bool:
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return False
        if not is_glob(self.pattern):
            return named_path(self.base / self.pattern) == path
        return self._regex.fullmatch(rel) is not None


def rule_for(path: Path, rules: Sequence[FileRule]) -> FileRule | str | None:
    """The rule for ``path``: its exact path's, else the one glob's that matches; a message when
    two globs match (None when none does)."""
    exact = [r for r in rules if not is_glob(r.pattern) and r.matches(path)]
    if exact:
        return exact[-1]
    found = [r for r in rules if is_glob(r.pattern) and r.matches(path)]
    if len(found) > 1:
        return (
            f"'{found[0].pattern}' and '{found[1].pattern}' both match {path.name}: "
            "name the file itself to choose"
        )
    return found[0] if found else None
