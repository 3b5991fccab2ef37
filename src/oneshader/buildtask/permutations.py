"""Variants that would compile to the same bytes, compiled once (permutations make many).

 defines reach the compiler only through Slang's preprocessor, so two variants
of a file whose defines differ only in macros the preprocessor never sees compile to the same
bytes. A macro is *read* when its name appears as an identifier anywhere in the text, as written
(every ``#if`` branch), of a file some variant's compile includes (each variant's include closure
with its own defines: a file only one variant includes counts for all), or when any of them pastes
tokens (``##``, which can make any name); a macro named nowhere cannot change what the
preprocessor gives Slang, in any branch. Variants equal in every read macro (and
every other option) are compiled once and each writes the outputs under its own name; a
reflection names the file, not the variant, so the bytes are those of its own compile.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from oneshader.buildtask.sources import ShaderJob, options_doc

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read_names(job: ShaderJob) -> frozenset[str] | None:
    """Every identifier in the text of ``job``'s file and of every file it can include, or None
    when any pastes tokens (any name may then be made) or the files cannot be read."""
    from oneshader.compiler import source_files

    found = source_files(
        str(job.source), job.source_name, job.options.include_dirs, job.options.defines
    )
    if found is None:  # a missing include, not UTF-8...: the compile reports it, unshared
        return None
    names: set[str] = set()
    for text in found[1]:
        if "##" in text:
            return None
        names.update(_IDENTIFIER.findall(text))
    return frozenset(names)


def _read_by_any(jobs: list[ShaderJob]) -> frozenset[str] | None:
    """The names read in any of ``jobs``' include closures; None when any cannot be read."""
    names: set[str] = set()
    for job in jobs:
        read = read_names(job)
        if read is None:
            return None
        names |= read
    return frozenset(names)


def shared_compiles(jobs: Iterable[ShaderJob]) -> list[list[ShaderJob]]:
    """The jobs grouped by what they compile: each group's first job is compiled, and its result
    serves the others. Only variants of one file are grouped (a file's names are read once)."""
    by_file: dict[object, list[ShaderJob]] = {}
    for job in jobs:
        by_file.setdefault(job.source, []).append(job)
    groups: list[list[ShaderJob]] = []
    for same_file in by_file.values():
        names = _read_by_any(same_file) if len(same_file) > 1 else None
        if names is None:
            groups.extend([j] for j in same_file)
            continue
        by_effect: dict[str, list[ShaderJob]] = {}
        for job in same_file:
            read = tuple((n, v) for n, v in job.options.defines if n in names)
            effect = replace(job.options, defines=read)
            key = repr(sorted(options_doc(effect, job.source.parent).items()))
            by_effect.setdefault(key, []).append(job)
        groups.extend(by_effect.values())
    return groups
