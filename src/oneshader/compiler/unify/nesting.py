"""The nesting limit of buffer layouts, checked where the compiler can point at the source.

A reflection whose types nest deeper than :data:`~oneshader.reflection.validate.MAX_DEPTH`
levels is refused by its readers (``reflection check``, the generator, the runtime bindings):
the compiler holds the same limit, so a shader that builds always has a usable reflection.
"""

from __future__ import annotations

from collections.abc import Sequence

from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Code, Collector, Diagnostic
from oneshader.reflection.model import PushBlock, Resource, TypeKind, TypeLayout
from oneshader.reflection.validate import MAX_DEPTH, too_deep


def check_nesting(
    src: SourceSet, params: Sequence[Resource | PushBlock], problems: Collector
) -> None:
    """An error (OS1045) for each parameter whose layout nests past the limit, at the struct
    whose member goes past it (else at the parameter's declaration)."""
    for param in params:
        chain = too_deep(param.layout) if param.layout is not None else None
        if chain is None:
            continue
        owner = next(
            (t for t in reversed(chain[:-1]) if t.kind is TypeKind.Struct and t.name), None
        )
        message = (
            f"'{param.name}' nests structs and arrays more than {MAX_DEPTH} levels deep"
            + (f" (in struct {owner.name})" if owner else "")
            + f": at most {MAX_DEPTH} levels are supported (the reflection format's limit)"
        )
        problems.add(_at(src, param.name, owner, message))


def _at(src: SourceSet, name: str, owner: TypeLayout | None, message: str) -> Diagnostic:
    """The error at ``owner``'s struct declaration, else at the parameter's."""
    if owner is not None:
        for path, scanned in src.sources.items():
            sdef = scanned.structs.get(owner.name)
            if sdef is not None:
                return src.error_in(path, sdef.line, sdef.column, message, Code.NESTED_TOO_DEEP)
    decl = src.declarations().get(name)
    if decl is not None:
        return src.at_decl(decl, message, Code.NESTED_TOO_DEEP)
    return src.error(src.name, 0, 0, message, Code.NESTED_TOO_DEEP)
