"""What to build: the shader files under the configured sources, each with its compile options,
its place in OUT and the key of everything that affects its outputs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path

from oneshader.buildtask.config import BuildConfig
from oneshader.buildtask.filerules import FileRule, Variant, rule_for
from oneshader.buildtask.stages import SHADER_SUFFIXES, entry_for_file
from oneshader.compiler.api import CompileOptions
from oneshader.compiler.process.plain import to_plain
from oneshader.diagnostics import Code, UserError
from oneshader.fsutil import display_path, file_kind


@dataclass(frozen=True)
class ShaderJob:
    """One shader to build: a file, or one variant of it. ``stem`` is its place in OUT without
    suffix (``ui/Sprite``, ``ui/Fog.hq`` for the variant ``hq``), forward slashes; ``key``
    digests its options, so a changed option makes it stale."""

    source: Path
    source_name: str
    stem: str
    options: CompileOptions
    key: str
    variant: str = ""

    @property
    def label(self) -> str:
        """How progress lines and the summary name it: ``shaders/Fog.hlsl [hq]``."""
        return f"{self.source_name} [{self.variant}]" if self.variant else self.source_name


def project_name(path: str | Path, root: Path) -> str:
    """The name a file has in reflections, diagnostics and the state: relative to the project.
    ``path`` may be a string, as the compiler names the files it read (one Path less each)."""
    p, r = str(path), str(root)
    # a file below the root, both absolute, nothing to normalize (no "." or ".." part, no "//",
    # no "/" at the end): the rest of the path, as os.path.relpath would give it
    below = (
        p.startswith(r)
        and p[len(r) : len(r) + 1] == "/"
        and "/." not in p
        and "//" not in p
        and p[-1] != "/"
    )
    if below and os.sep == "/" and r[:1] == "/" and not r.endswith("/"):
        return p[len(r) + 1 :]
    return display_path(path, root)


def walk_shaders(folder: Path, skip: Path | None = None) -> list[Path]:
    """The shader files under ``folder`` in a stable order, past hidden folders and ``skip``."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and here / d != skip)
        found.extend(here / f for f in sorted(filenames) if f.endswith(SHADER_SUFFIXES))
    return found


def walk_folders(folder: Path, skip: Path | None = None) -> list[str]:
    """The folders :func:`walk_shaders` looks in (a file added to or removed from one changes
    its mtime: what the no-op record watches)."""
    found: list[str] = []
    for dirpath, dirnames, _ in os.walk(folder):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and here / d != skip)
        found.append(dirpath)
    return found


def options_key(options: CompileOptions, root: Path) -> str:
    """A digest of the options, with paths relative to the project so that moving it is free.
    Every field of :class:`CompileOptions` counts, as the process wire carries it
    (``process.plain``): an option added there rebuilds what it changes without a change here."""
    shared = _shared_options_json(options, root)
    doc = f"{json.dumps(options.source_name)}\0{shared}"
    return hashlib.sha256(doc.encode()).hexdigest()[:32]


_SHARED_FIELDS = tuple(
    f.name for f in dataclasses.fields(CompileOptions) if f.name != "source_name"
)
_shared_json: dict[tuple[object, ...], str] = {}


def _shared_options_json(options: CompileOptions, root: Path) -> str:
    """The options every shader of a build shares (all but its ``source_name``), as JSON: made
    once per build, not once per shader (a no-op build's time goes to its shaders' keys
    otherwise)."""
    shared = (root, *(getattr(options, f) for f in _SHARED_FIELDS))
    text = _shared_json.get(shared)
    if text is None:
        if len(_shared_json) >= 64:  # a long --watch with options edited now and then
            _shared_json.clear()
        doc = options_doc(replace(options, source_name=""), root)
        text = _shared_json[shared] = json.dumps(doc, sort_keys=True)
    return text


def options_doc(options: CompileOptions, root: Path) -> dict[str, object]:
    """Every option that changes outputs as plain data, paths relative to the project (the same
    for every checkout of it: what the shared cache's keys digest). Every field of
    :class:`CompileOptions`, by construction (``process.plain``)."""
    relative = tuple(project_name(Path(p), root) for p in options.include_dirs)
    return to_plain(replace(options, include_dirs=relative))


def _refuse_special(path: Path) -> None:
    """Only regular files are sources: reading a FIFO blocks, a link to /dev/zero never ends."""
    try:
        mode = path.stat().st_mode
    except OSError as err:
        raise UserError.at(
            display_path(path), 0, 0, f"cannot read: {err.strerror}", Code.BAD_USAGE
        ) from None
    if not stat.S_ISREG(mode):
        message = f"{file_kind(mode)}, not a regular file: only regular files are shader sources"
        raise UserError.at(display_path(path), 0, 0, message, Code.BAD_USAGE)


def discover(config: BuildConfig) -> list[ShaderJob]:
    """Every shader of the configured sources (each variant of a file with variants, no plain
    build of it), in a stable order; a missing source or two shaders landing on the same output
    is a usage error."""
    where = display_path(config.pyproject) if config.pyproject else "oneshader build"
    jobs: list[ShaderJob] = []
    by_stem: dict[str, tuple[Path, str]] = {}  # stem -> the file and variant that write it
    seen: set[Path] = set()
    for src in config.sources:
        if src.is_dir():  # walked from a resolved folder, without following links
            files = [(f, project_name(f, src)) for f in walk_shaders(src, config.out)]
        elif src.exists():
            files = [(src, src.name)]  # named as given (a link too: docs/build.md)
        else:
            raise UserError.at(
                where, 0, 0, f"no such file or folder: {display_path(src)}", Code.BAD_USAGE
            )
        for path, rel in files:
            if path in seen:
                continue
            seen.add(path)
            _refuse_special(path)
            base = rel[: -len(path.suffix)] if path.suffix else rel
            name = project_name(path, config.root)
            targets = _rule(path, config.target_rules, where)
            entry_points = (
                (config.command_entry,)
                if config.command_entry is not None
                else config.entry_points.get(path, ())
                or entry_for_file(path, name, config.stage_rules)
            )
            named = _rule(path, config.variant_rules, where)
            product = _rule(path, config.permutation_rules, where)
            variants = [*(named.variants if named else ()), *(product.variants if product else ())]
            for variant in variants or (Variant(""),):
                stem = f"{base}.{variant.name}" if variant.name else base
                other = by_stem.get(stem)
                if other is not None:
                    raise UserError.at(
                        where,
                        0,
                        0,
                        f"{_shown(path, variant.name)} and {_shown(*other)} would both write "
                        f"{display_path(config.out / stem)}.*: rename one or build them "
                        "separately",
                        Code.BAD_USAGE,
                    )
                by_stem[stem] = (path, variant.name)
                options = CompileOptions(
                    targets=targets.targets if targets and targets.targets else config.targets,
                    source_name=name,
                    include_dirs=tuple(str(p) for p in config.include_dirs),
                    defines=tuple(
                        sorted({**dict(config.defines), **dict(variant.defines)}.items())
                    ),
                    entry_points=entry_points,
                    shifts=config.shifts,
                    bind_registers=config.bind_registers,
                    row_major=config.row_major,
                    enable_16bit_types=config.enable_16bit_types,
                    dxc_placement=config.dxc_placement,
                )
                key = options_key(options, config.root)
                jobs.append(ShaderJob(path, name, stem, options, key, variant.name))
    return jobs


def _shown(path: Path, variant: str) -> str:
    return display_path(path) + (f" [{variant}]" if variant else "")


def _rule(path: Path, rules: tuple[FileRule, ...], where: str) -> FileRule | None:
    rule = rule_for(path, rules)
    if isinstance(rule, str):
        raise UserError.at(where, 0, 0, rule, Code.BAD_CONFIG)
    return rule
