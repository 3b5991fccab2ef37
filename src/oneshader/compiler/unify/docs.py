"""The comment written beside each struct member in the source, for the generated docstrings.

``float4x4 Transform; // clip-space transform`` gives member ``Transform`` the doc
``clip-space transform``: the text of a ``//`` comment after the member's ``;`` on its line. Only
that comment counts (a comment above may describe several members, or be code commented out);
the layout itself, which the bytes decide, is never touched.
"""

from __future__ import annotations

import operator
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from oneshader.compiler.source.scanner import Field, StructDef
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.reflection.model import PushBlock, Resource, TypeKind, TypeLayout

__all__ = ["with_member_docs"]

_R = TypeVar("_R", Resource, PushBlock)

MAX_DOC = 200  # characters kept of one comment


def _trailing_comment(lines: list[str], f: Field) -> str:
    if not 0 < f.line <= len(lines):
        return ""
    line = lines[f.line - 1]
    end = line.find(";", max(f.column - 1, 0))
    if end < 0:
        return ""
    rest = line[end + 1 :].strip()
    if not rest.startswith("//"):
        return ""
    doc = " ".join(rest.lstrip("/").split())
    return doc if len(doc) <= MAX_DOC else doc[: MAX_DOC - 3] + "..."


class _Docs:
    def __init__(self, src: SourceSet) -> None:
        self.src = src
        # one struct used twice: one result (by identity: a layout's hash walks all of it;
        # the keys are nodes of the resources' layouts, alive while this lives)
        self.done: dict[int, TypeLayout] = {}
        self.lines: dict[Path, list[str]] = {}

    def _owner(self, name: str) -> tuple[StructDef, list[str]] | None:
        for path, scanned in self.src.sources.items():
            found = scanned.structs.get(name)
            if found is not None and found.kind in ("struct", "cbuffer", "tbuffer"):
                return found, self._lines(Path(path))
        return None

    def _lines(self, path: Path) -> list[str]:
        """A file's lines, split once (per member, the square of a cbuffer's size)."""
        if path not in self.lines:
            self.lines[path] = self.src.written.get(path, "").splitlines()  # comments as written
        return self.lines[path]

    def layout(self, t: TypeLayout) -> TypeLayout:
        """``t`` with its members' docs (``t`` itself where none is new: layouts are frozen)."""
        if t.kind is TypeKind.Array and t.element is not None:
            element = self.layout(t.element)
            return t if element is t.element else replace(t, element=element)
        if t.kind is not TypeKind.Struct:
            return t
        done = self.done.get(id(t))
        if done is not None:
            return done
        owner = self._owner(t.name) if t.name else None
        members = []
        for m in t.members:
            f = owner[0].field(m.name) if owner else None
            doc = (_trailing_comment(owner[1], f) if owner and f else "") or m.doc
            inner = self.layout(m.type)
            same = inner is m.type and doc == m.doc
            members.append(m if same else replace(m, type=inner, doc=doc))
        kept = all(map(operator.is_, members, t.members))
        out = t if kept else replace(t, members=tuple(members))
        self.done[id(t)] = out
        return out


def with_member_docs(
    src: SourceSet, resources: list[Resource], pushes: list[PushBlock]
) -> tuple[list[Resource], list[PushBlock]]:
    """The resources and push blocks with their struct members' comments as docs (each
    itself where its layout gains none)."""
    docs = _Docs(src)

    def documented(r: _R) -> _R:
        layout = docs.layout(r.layout) if r.layout else r.layout
        return r if layout is r.layout else replace(r, layout=layout)

    return [documented(r) for r in resources], [documented(p) for p in pushes]
