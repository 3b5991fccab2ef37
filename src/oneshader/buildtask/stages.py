"""The entry point of a file written for DXC, which marks none (``float4 main(...)`` with the stage
on DXC's command line): DXC's ``-E NAME -T PROFILE`` for the files of one build, or the stage
from the file's name (``[tool.oneshader.stages]``, and the names engines use: ``.vsh``,
``.vert.hlsl``, ...), ``main`` the entry point.

A file that marks its entry points with ``[shader("...")]`` keeps them unless ``-E``/``-T`` or
``[tool.oneshader.entry-points]`` name its entry points (the command line wins, then the file's
own entry, then a name pattern).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from oneshader.compiler.api import EntryPointSpec, stage_from_name
from oneshader.reflection.model import Stage

__all__ = [
    "DEFAULT_ENTRY",
    "DEFAULT_PATTERNS",
    "SHADER_SUFFIXES",
    "StageRule",
    "entry_for_file",
    "stage_from_profile",
]

DEFAULT_ENTRY = "main"

# File names that say their stage, as engines name files (applied after the project's own).
DEFAULT_PATTERNS: tuple[tuple[str, Stage], ...] = (
    ("*.vsh", Stage.Vertex),
    ("*.psh", Stage.Pixel),
    ("*.csh", Stage.Compute),
    ("*.vert.hlsl", Stage.Vertex),
    ("*.frag.hlsl", Stage.Pixel),
    ("*.comp.hlsl", Stage.Compute),
    ("*.vs.hlsl", Stage.Vertex),
    ("*.ps.hlsl", Stage.Pixel),
    ("*.cs.hlsl", Stage.Compute),
)
# What a folder given as a source is searched for.
SHADER_SUFFIXES = (".hlsl", ".vsh", ".psh", ".csh")

_PROFILE = re.compile(r"(vs|ps|cs)_(\d+)_(\d+|x)", re.IGNORECASE)
_PROFILE_STAGES = {"vs": Stage.Vertex, "ps": Stage.Pixel, "cs": Stage.Compute}
_MARKED = re.compile(rb"\[\s*shader\s*\(")


@dataclass(frozen=True)
class StageRule:
    """``pattern`` (a file name glob, or a glob of the project-relative path when it holds a
    ``/``) gives the file's entry point ``entry`` of ``stage``."""

    pattern: str
    stage: Stage
    entry: str = DEFAULT_ENTRY

    def matches(self, path: Path, name: str) -> bool:
        return self._matches(path.name, name)

    def _matches(self, file_name: str, name: str) -> bool:
        return fnmatch.fnmatchcase(name if "/" in self.pattern else file_name, self.pattern)


_DEFAULT_RULES = tuple(StageRule(p, s) for p, s in DEFAULT_PATTERNS)
# each pattern is "*" and an ending: a name without one of these endings matches none of them
_DEFAULT_ENDINGS = tuple(p.removeprefix("*") for p, _ in DEFAULT_PATTERNS)


def stage_from_profile(profile: str) -> Stage:
    """DXC's target profile (``vs_6_0``, ``ps_5_1``, ``cs_6_6``) to a stage; a stage name
    (``vertex``, ``pixel``, ``compute``, ``vs``...) is taken too."""
    m = _PROFILE.fullmatch(profile.strip())
    if m:
        return _PROFILE_STAGES[m.group(1).lower()]
    try:
        return stage_from_name(profile)
    except ValueError:
        raise ValueError(
            f"unknown profile {profile!r}: expected vs_6_0, ps_6_0 or cs_6_0 (any shader "
            "model; oneshader builds vertex, pixel and compute stages)"
        ) from None


def entry_for_file(
    path: Path,
    name: str,
    rules: Sequence[StageRule],
    *,
    defaults: bool = True,
) -> tuple[EntryPointSpec, ...]:
    """The entry point a name pattern gives ``path`` (``name`` its project-relative path), when
    the file marks none with ``[shader("...")]``; () otherwise."""
    file_name = path.name
    rule = next((r for r in rules if r._matches(file_name, name)), None)
    if rule is None and defaults and file_name.endswith(_DEFAULT_ENDINGS):
        rule = next((r for r in _DEFAULT_RULES if r._matches(file_name, name)), None)
    if rule is None or _marks_entries(path):
        return ()
    return (EntryPointSpec(rule.entry, rule.stage),)


def _marks_entries(path: Path) -> bool:
    try:
        return _MARKED.search(path.read_bytes()) is not None
    except OSError:
        return False  # the compile reports the unreadable file
