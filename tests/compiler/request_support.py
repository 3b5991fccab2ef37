"""A small shader read as the requests read it (for the tests of Slang's requests)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from oneshader.compiler.api import CompileOptions, EntryPointSpec
from oneshader.compiler.slang import library
from oneshader.compiler.slang.request import CompiledTarget, compile_target
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.reflection.model import Stage, Target


def read_source(tmp_path: Path, text: str, stage: Stage) -> tuple[SourceSet, CompileOptions]:
    """``text`` as the file ``a.<stage>.hlsl``, read, and the options of its entry ``main``."""
    name = f"a.{'frag' if stage is Stage.Pixel else 'vert'}.hlsl"
    path = tmp_path / name
    path.write_text(text)
    src = SourceSet(str(path), name, ())
    src.read()
    return src, CompileOptions(entry_points=(EntryPointSpec("main", stage),))


def each_as_alone(
    src: SourceSet, options: CompileOptions, together: Mapping[Target, CompiledTarget]
) -> dict[Target, CompiledTarget]:
    """Each target of a shared request compiled in a request of its own, asserted to give the
    same code and facts (the rule a shared request keeps); the compiles alone, by target."""
    alone: dict[Target, CompiledTarget] = {}
    for target, shared in together.items():
        own, errors = compile_target(library(), src, options, target)
        assert own is not None and not errors
        assert shared.code == own.code and shared.facts == own.facts
        alone[target] = own
    return alone
