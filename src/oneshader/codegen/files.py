"""Reflection files in, module files out.

A module's name comes from its reflection file's stem (mangled, see :mod:`oneshader.codegen.names`),
never from the source name inside the file, so no file can make the generator write outside
``out_dir``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from oneshader.codegen.names import identifier, stem_of
from oneshader.codegen.render import render_module
from oneshader.codegen.shared import SharedGroup, assign
from oneshader.codegen.variants import render_variants, variant_of
from oneshader.diagnostics import Code, Diagnostic, Severity, UserError
from oneshader.fsutil import display_path, read_beside, read_file, write_many_if_changed
from oneshader.reflection.model import ShaderReflection, Target
from oneshader.reflection.validate import LayoutError, read_checked

__all__ = ["built_code", "generate", "plan", "read_unit", "render_file", "stem_of"]

_TRIES = 3
_WAIT_SECONDS = 0.05  # before reading a reflection again that a build has removed for a moment


def _code_beside(path: Path) -> bool:
    """Whether code files of ``path``'s shader are there: a reflection missing beside them is
    being rewritten by a build (docs/build.md), not a name mistyped."""
    stem = stem_of(path)
    return any((path.parent / f"{stem}{t.suffix}").exists() for t in Target)


def built_code(path: Path, model: ShaderReflection) -> dict[Target, str | bytes]:
    """The code the build wrote beside a reflection file, for the targets wgpu runs (WGSL,
    SPIR-V): what a generated module embeds, so it needs no path to find its code. A target
    whose file is missing is left out (its module then says so when asked for it)."""
    out: dict[Target, str | bytes] = {}
    stem = stem_of(path)
    for target in (Target.Wgsl, Target.SpirV):
        if target not in model.targets:
            continue
        try:  # bounded, and never blocking on a FIFO put in the code's place
            data = read_file(path.parent / f"{stem}{target.suffix}")
        except FileNotFoundError:
            continue
        out[target] = data if target is Target.SpirV else data.decode("utf-8", "replace")
    return out


def read_unit(path: Path) -> tuple[ShaderReflection, dict[Target, str | bytes]]:
    """A reflection file and the code built beside it (:func:`built_code`), read as one unit:
    read again when the reflection changed while its code was read (a build running beside),
    a UserError naming the file (OS2005) when it keeps changing; so a module never embeds the
    code of one build with the reflection of another."""
    name = os.fspath(path)

    def model_and_code(data: bytes) -> tuple[ShaderReflection, dict[Target, str | bytes]]:
        model = read_checked(data, file=name)
        return model, built_code(path, model)

    for attempt in range(_TRIES):
        try:
            unit = read_beside(path, model_and_code)
        except FileNotFoundError as err:
            if err.filename != name or not _code_beside(path):
                raise UserError.at(name, 0, 0, f"cannot read: {err.strerror or err}") from None
            unit = None  # removed by a build writing its code files: it comes back after them
            time.sleep(_WAIT_SECONDS * (attempt + 1))
        except OSError as err:
            where = err.filename if isinstance(err.filename, str) else name
            raise UserError.at(where, 0, 0, f"cannot read: {err.strerror or err}") from None
        if unit is not None:
            return unit[1]
    raise UserError.at(
        name,
        0,
        0,
        f"changed or went missing {_TRIES} times while the code files beside it were read "
        "(a build is writing them); generate again when it is done",
        Code.OUTPUTS_CHANGING,
    )


def render_file(
    path: Path,
    model: ShaderReflection,
    stale: str | None = None,
    code: Mapping[Target, str | bytes] | None = None,
    shared: Mapping[int, tuple[str, int]] | None = None,
) -> str:
    """The module source for one file, embedding ``code`` (by default the code built beside
    it; :func:`read_unit` reads both as one unit) (``stale``: why the shader's latest build
    failed, these being its last good outputs); a layout no host struct can have is a
    UserError."""
    try:
        embedded = built_code(path, model) if code is None else code
        return render_module(model, stem_of(path), embedded, stale, shared)
    except LayoutError as err:
        raise UserError([_problem(path, str(err))]) from None


def _problem(path: Path, message: str) -> Diagnostic:
    """A problem of a whole file (no line: it is not in the file's text)."""
    return Diagnostic(str(path), 0, 0, Severity.ERROR, message)


def _module_path(
    path: Path, root: Path | None, variant: tuple[str, str] | None = None
) -> tuple[str, ...] | str:
    """The mangled package folders and module name for one file, or a problem; the variant
    ``(stem, name)`` of a shader is the module ``name`` in the package ``stem``."""
    folders: tuple[str, ...] = ()
    if root is not None:
        try:
            rel = path.resolve().relative_to(root.resolve())
        except ValueError:
            return f"is not inside the root folder {root}"
        folders = tuple(identifier(part, ("__init__",)) for part in rel.parent.parts)
    names = variant or (stem_of(path),)
    return (*folders, *(identifier(n, ("__init__",)) for n in names))


def _init(names: list[str]) -> bytes:
    body = "".join(f'    "{n}",\n' for n in names)
    text = (
        "# generated by oneshader; do not edit\n"
        '"""Bindings generated from reflection files, one module per shader."""\n\n'
        + (f"__all__ = [\n{body}]\n" if names else "__all__: list[str] = []\n")
    )
    return text.encode("utf-8")


def plan(
    reflection_files: Sequence[Path],
    root: Path | None = None,
    stale: Mapping[Path, str] | None = None,
    shared: Sequence[SharedGroup] = (),
) -> dict[str, bytes]:
    """{path in the output folder (with /): content} for these reflection files, in order, plus
    an ``__init__.py`` per package; every problem of every file in one UserError.

    Without ``root`` every module lands in the output folder itself; with it, a file's folders
    below ``root`` become (mangled) subpackages, so ``ui/blit`` and ``post/blit`` can coexist."""
    out: dict[str, bytes] = {}
    origin: dict[tuple[str, ...], Path] = {}  # module -> its file, in order
    first_in: dict[tuple[str, ...], tuple[str, ...]] = {}  # package -> its first module
    packages: dict[tuple[str, ...], set[str]] = {(): set()}
    shaders: dict[tuple[str, ...], list[tuple[str, str, ShaderReflection]]] = {}  # variants
    problems: list[Diagnostic] = []
    units: list[tuple[Path, tuple[str, ...], ShaderReflection, Mapping[Target, str | bytes]]] = []
    for path in reflection_files:
        try:
            model, code = read_unit(path)
        except UserError as err:
            problems.extend(err.diagnostics)
            continue
        variant = variant_of(stem_of(path), model)
        where = _module_path(path, root, variant)
        if isinstance(where, str):
            problems.append(_problem(path, where))
            continue
        dotted = ".".join(where)
        if where in origin:
            problems.append(
                _problem(path, f"makes the module {dotted!r}, as {origin[where]} does; rename one")
            )
            continue
        # A module where a package is, or a package where a module is: at most one such module
        # exists, since these checks keep every name either a module or a package.
        clash = first_in.get(where) or next(
            (where[:i] for i in range(1, len(where)) if where[:i] in origin), None
        )
        if clash is not None:
            problems.append(
                _problem(
                    path, f"makes {dotted!r}, which clashes with the package of {origin[clash]}"
                )
            )
            continue
        origin[where] = path
        for i in range(len(where)):
            packages.setdefault(where[:i], set()).add(where[i])
            first_in.setdefault(where[:i], where)
        if variant is not None:
            shaders.setdefault(where[:-1], []).append((variant[1], where[-1], model))
        units.append((path, where, model, code))
    groups = assign(shared, [(u[0], u[2]) for u in units]) if shared else {}
    for path, where, model, unit_code in units:
        try:
            text = render_file(path, model, (stale or {}).get(path), unit_code, groups.get(path))
            out["/".join(where) + ".py"] = text.encode("utf-8")
        except UserError as err:
            problems.extend(err.diagnostics)
    if problems:
        raise UserError(problems)
    for pkg in sorted(packages):
        variants = shaders.get(pkg)
        init = (
            render_variants(variants[0][2].source, variants).encode("utf-8")
            if variants
            else _init(sorted(packages[pkg]))
        )
        out["/".join((*pkg, "__init__.py"))] = init
    return out


def generate(
    reflection_files: Sequence[Path],
    out_dir: Path,
    *,
    root: Path | None = None,
    stale: Mapping[Path, str] | None = None,
    shared: Sequence[SharedGroup] = (),
) -> list[Path]:
    """Write one module per reflection file (and the packages' ``__init__.py``) into
    ``out_dir``; files whose content is unchanged are not touched. Returns every output path.
    ``stale`` maps the reflection files of shaders whose latest build failed to the errors;
    ``shared`` declares the bind groups shaders share (codegen.shared)."""
    files = plan([Path(p) for p in reflection_files], root, stale, shared)
    out_dir = Path(out_dir)
    try:
        write_many_if_changed((out_dir / name, data) for name, data in files.items())
    except OSError as err:  # not a folder, read-only, full: no module was replaced
        where = display_path(err.filename if err.filename else out_dir)
        raise UserError.at(
            where, 0, 0, f"cannot write: {err.strerror or err}", Code.OUTPUT_NOT_WRITABLE
        ) from None
    return [out_dir / name for name in files]
