"""Bind groups shared across shaders (``[tool.oneshader.shared-groups]``): which shaders share
which WGSL group, checked to be the same group in every one of them (standard library only).

A shared group is declared once, by name, with its group index and the shaders (globs of the
source names the build records) that share it. Every such shader's group must hold the same
resources (name, type, count, binding, layout); their stages may differ, and the one bind group
layout all of them use is visible to every stage any of them uses it in.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from oneshader.diagnostics import Code, Diagnostic, Severity, UserError
from oneshader.reflection.model import PushBlock, Resource, ShaderReflection, Stage, Target

__all__ = ["SharedGroup", "assign", "from_pyproject", "make_group"]

VISIBILITY = {Stage.Vertex: 1, Stage.Pixel: 2, Stage.Compute: 4}  # GPUShaderStage


@dataclass(frozen=True)
class SharedGroup:
    """One declaration: ``name`` (a Python identifier for the bind group class's registry),
    the WGSL ``group``, the ``shaders`` (globs of source names), and where it was declared."""

    name: str
    group: int
    shaders: tuple[str, ...]
    file: str = ""
    line: int = 0
    column: int = 0

    def error(self, message: str) -> UserError:
        return UserError(
            [
                Diagnostic(
                    self.file, self.line, self.column, Severity.ERROR, message, Code.BAD_CONFIG
                )
            ]
        )

    def matches(self, model: ShaderReflection) -> bool:
        return any(fnmatch.fnmatchcase(model.source, p) for p in self.shaders)


def make_group(
    name: str, spec: object, file: str = "", line: int = 0, column: int = 0
) -> SharedGroup | str:
    """One ``NAME = { group = N, shaders = [globs] }`` entry, or what is wrong with it."""
    group = spec.get("group") if isinstance(spec, dict) else None
    shaders = spec.get("shaders") if isinstance(spec, dict) else None
    if (
        not isinstance(spec, dict)
        or set(spec) != {"group", "shaders"}
        or not isinstance(group, int)
        or isinstance(group, bool)
        or group < 0
        or not isinstance(shaders, list)
        or not shaders
        or not all(isinstance(x, str) and x for x in shaders)
        or not name.isidentifier()
    ):
        return (
            f"shared group {name!r} must be NAME = {{ group = N, shaders = "
            '["shaders/*.hlsl", ...] }} (NAME a Python identifier)'
        )
    return SharedGroup(name, group, tuple(shaders), file, line, column)


def from_pyproject(path: Path) -> tuple[SharedGroup, ...]:
    """``[tool.oneshader.shared-groups]`` of a pyproject.toml, for ``oneshader generate`` (which
    reads no other setting of the build): () when the file or the table is absent; a bad entry
    is a UserError at its line."""
    import tomllib

    from oneshader.fsutil import read_file

    try:
        text = read_file(path).decode("utf-8")
        data = tomllib.loads(text)
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise UserError.at(str(path), 0, 0, f"cannot read [tool.oneshader]: {err}") from None
    raw = data.get("tool", {}).get("oneshader", {}).get("shared-groups", {})
    lines = text.splitlines()
    out = []
    for name, spec in raw.items() if isinstance(raw, dict) else []:
        line = next(
            (i + 1 for i, x in enumerate(lines) if re.match(rf'\s*"?{re.escape(name)}"?\s*=', x)),
            0,
        )
        made = make_group(name, spec, str(path), line, 1 if line else 0)
        if isinstance(made, str):
            raise UserError.at(str(path), line, 1 if line else 0, made)
        out.append(made)
    return tuple(out)


# (name, Wgsl binding, what else must agree, the record)
_Entry = tuple[str, int, object, Resource | PushBlock]


def _entries(model: ShaderReflection, group: int) -> dict[str, _Entry]:
    records: list[Resource | PushBlock] = [*model.resources, *model.push_blocks]
    out: dict[str, _Entry] = {}
    for r in records:
        for s in r.slots:
            if s.target is Target.Wgsl and s.set == group:
                if isinstance(r, Resource):
                    what: object = (r.kind, r.rtype, r.count, r.layout, r.format, r.depth)
                else:
                    what = ("push", r.layout)
                out[r.name] = (r.name, s.binding, what, r)
    return out


def _differs(a: _Entry, b: _Entry) -> str:
    """The first difference, as ``reflection diff`` names it (the member and what changed)."""
    if a[1] != b[1]:
        return f"binding {a[1]} in one, {b[1]} in the other"
    from oneshader.reflection.abi import diff_reflections

    def alone(r: Resource | PushBlock) -> ShaderReflection:
        if isinstance(r, Resource):
            return ShaderReflection("", resources=(replace(r, stages=(), slots=()),))
        return ShaderReflection("", push_blocks=(replace(r, stages=(), slots=()),))

    changes = diff_reflections(alone(a[3]), alone(b[3]))
    if not changes:
        return "its type differs"
    first = changes[0]
    return f"{first.member + ': ' if first.member else ''}{first.what}"


def _stages(model: ShaderReflection, names: Sequence[str]) -> int:
    flags = 0
    records: list[Resource | PushBlock] = [*model.resources, *model.push_blocks]
    for r in records:
        if r.name in names:
            for stage in r.stages:
                flags |= VISIBILITY[stage]
    return flags


def assign(
    groups: Sequence[SharedGroup], models: Sequence[tuple[Path, ShaderReflection]]
) -> dict[Path, dict[int, tuple[str, int]]]:
    """{reflection file: {group index: (shared name, visibility)}} for the shaders that share a
    group; a UserError at the declaration for a shader whose group is not the first one's (or
    that lacks it), naming both shaders and the resource."""
    out: dict[Path, dict[int, tuple[str, int]]] = {}
    for g in groups:
        members = [(p, m) for p, m in models if g.matches(m)]
        if not members:
            continue
        first = members[0][1]
        want = _entries(first, g.group)
        if not want:
            raise g.error(f"shared group {g.name!r}: {first.source} has no WGSL group {g.group}")
        visibility = 0
        for _, model in members:
            have = _entries(model, g.group)
            for name in sorted(want.keys() | have.keys()):
                a, b = want.get(name), have.get(name)
                if a is None or b is None or a[:3] != b[:3]:
                    why = (
                        f"only {first.source if b is None else model.source} declares it"
                        if a is None or b is None
                        else _differs(a, b)
                    )
                    raise g.error(
                        f"shared group {g.name!r} (group {g.group}) differs between "
                        f"{first.source} and {model.source} at {name!r}: {why}"
                    )
            visibility |= _stages(model, list(have))
        for path, _ in members:
            out.setdefault(path, {})[g.group] = (g.name, visibility)
    return out
