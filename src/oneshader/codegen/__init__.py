"""Reflection files -> typed Python modules, without the compiler (standard library only).

:func:`generate` is what ``oneshader generate`` and ``oneshader build --bindings`` call. The
functions here import their modules when called, so that the runtime (which shares
:mod:`oneshader.codegen.names` and :mod:`oneshader.codegen.scalars`) does not load the
generator. Dependencies run one way: the runtime (``oneshader.bindings``) imports from here,
never the reverse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from oneshader.codegen.names import stem_of

if TYPE_CHECKING:
    from oneshader.codegen.shared import SharedGroup
    from oneshader.reflection.model import ShaderReflection, Target

__all__ = ["generate", "plan", "render_file", "render_module", "stem_of"]


def generate(
    reflection_files: Sequence[Path],
    out_dir: Path,
    *,
    root: Path | None = None,
    stale: Mapping[Path, str] | None = None,
    shared: Sequence[SharedGroup] = (),
) -> list[Path]:
    """Write one module per reflection file (and ``__init__.py``) into ``out_dir``; files whose
    content is unchanged are not touched. Every output path, in order; a UserError (naming the
    files) and nothing written if any file is bad. With ``root`` (the build's output folder), a
    file's folders below it become subpackages; without, all modules share ``out_dir``.
    ``stale`` maps the reflection files of shaders whose latest build failed (these are their
    last good outputs) to the errors, which their modules carry as ``STALE``. ``shared``
    declares bind groups shared across shaders (checked equal; one layout and class)."""
    from oneshader.codegen import files

    return files.generate(reflection_files, out_dir, root=root, stale=stale, shared=shared)


def plan(
    reflection_files: Sequence[Path],
    root: Path | None = None,
    shared: Sequence[SharedGroup] = (),
) -> dict[str, bytes]:
    """{path in the output folder: content}, without writing (for ``--check``)."""
    from oneshader.codegen import files

    return files.plan(reflection_files, root, shared=shared)


def render_module(
    reflection: ShaderReflection,
    stem: str,
    code: Mapping[Target, str | bytes] | None = None,
    stale: str | None = None,
    shared: Mapping[int, tuple[str, int]] | None = None,
) -> str:
    """The source of one module (embedding ``code``, the built code by target; ``stale``, why
    the latest build failed); LayoutError for a layout no host struct can have."""
    from oneshader.codegen import render

    return render.render_module(reflection, stem, code, stale, shared)


def render_file(path: Path, reflection: ShaderReflection) -> str:
    """:func:`render_module` for a file's reflection, with problems as UserErrors naming it."""
    from oneshader.codegen import files

    return files.render_file(path, reflection)
