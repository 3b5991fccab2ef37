"""Variants that compile to the same bytes, compiled once (permutations make many).

Defines reach nothing of a compile but the preprocessor, so two variants of a file whose
options differ only in their defines, and whose preprocessed sources are the same (the source
model's tokens with their origins: ``compiler.preprocessed_digest``), compile to the same bytes:
a define that no ``#if`` of the variant tests and no expanded token carries. Each group is
compiled once and each variant writes the outputs under its own name; a reflection names the
file, not the variant, so the bytes are those of its own compile.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from oneshader.buildtask.sources import ShaderJob, options_doc


def shared_compiles(jobs: Iterable[ShaderJob]) -> list[list[ShaderJob]]:
    """The jobs grouped by what they compile: each group's first job is compiled, and its result
    serves the others. Only variants of one file are grouped; a variant whose files cannot be
    read is compiled alone (its compile reports why)."""
    from oneshader.compiler import preprocessed_digest

    by_file: dict[object, list[ShaderJob]] = {}
    for job in jobs:
        by_file.setdefault(job.source, []).append(job)
    groups: list[list[ShaderJob]] = []
    for same_file in by_file.values():
        if len(same_file) == 1:
            groups.append(same_file)
            continue
        by_effect: dict[str, list[ShaderJob]] = {}
        for job in same_file:
            digest = preprocessed_digest(str(job.source), job.source_name, job.options)
            if digest is None:
                groups.append([job])
                continue
            rest = options_doc(replace(job.options, defines=()), job.source.parent)
            by_effect.setdefault(repr((digest, sorted(rest.items()))), []).append(job)
        groups.extend(by_effect.values())
    return groups
