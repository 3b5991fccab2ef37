"""Settings for some shader files only: ``[tool.oneshader.variants]`` and
``[tool.oneshader.file-targets]``, keyed by a path or a glob relative to the project.

A glob's ``*`` and ``?`` stay within one folder, ``**`` spans any number of folders
(``shaders/**/*.hlsl``). A file named by its exact path takes its own rule over any glob; two
globs with different rules for one file are an error naming both, never a silent choice.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from oneshader.fsutil import named_path
from oneshader.reflection.model import Target

__all__ = ["FileRule", "Variant", "glob_regex", "is_glob", "permutation_variants", "rule_for"]

VARIANT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VALUE = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True)
class Variant:
    """One named way to compile a file: its defines, over the project's."""

    name: str
    defines: tuple[tuple[str, str], ...] = ()


def permutation_variants(axes: Mapping[str, object]) -> tuple[Variant, ...] | str:
    """``[tool.oneshader.permutations]``: the product of ``axes`` (name -> values) as named
    variants, or why it cannot be: values are integers, booleans (1/0) or names of letters,
    digits and ``_`` (they make file names).

    A permutation's name is made from its values, axis by axis in the declared order: the axis
    in lower case followed by the value, joined by ``_`` (``FOG = [0, 1]``, ``SHADOWS = ["off",
    "pcf"]`` give ``fog0_shadowsoff``, ``fog0_shadowspcf``, ``fog1_shadowsoff``,
    ``fog1_shadowspcf``)."""
    rows: list[list[tuple[str, str]]] = []
    for axis, values in axes.items():
        if not isinstance(values, list) or not values:
            return f"axis {axis!r} must be a non-empty list of values"
        row = []
        for v in values:
            if isinstance(v, bool):
                v = int(v)
            text = str(v)
            if isinstance(v, float) or not isinstance(v, int | str) or not _VALUE.fullmatch(text):
                return (
                    f"axis {axis!r}: value {v!r} must be an integer or letters, digits and _ "
                    "(it names files and Python modules)"
                )
            row.append((axis, text))
        if len({t for _, t in row}) != len(row):
            return f"axis {axis!r} lists a value twice"
        rows.append(row)
    variants = []
    for combo in itertools.product(*rows):
        name = "_".join(f"{axis.lower()}{value}" for axis, value in combo)
        if not VARIANT_NAME.fullmatch(name):
            return f"permutation name {name!r} is not a name"
        variants.append(Variant(name, tuple(combo)))
    return tuple(variants)


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
    permutations: bool = False  # ``variants`` are the product of [tool.oneshader.permutations]

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
