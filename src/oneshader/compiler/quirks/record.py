"""What a quirk record holds (the registry: ``quirks/__init__.py``)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oneshader.compiler.source.lexer import Token
from oneshader.compiler.source.query import Edit, Stream
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.reflection.model import ScalarKind, Stage, Target

EVERY_TARGET = frozenset(Target)
NOT_SPIRV = frozenset({Target.Msl, Target.Wgsl})


@dataclass(frozen=True)
class Probe:
    """A compute shader (entry ``main``) that needs the quirk on ``target``: plain Slang, given
    it, fails, writes a module its validator refuses, or (``still``) says ``still`` in its
    diagnostics or its code, as long as the quirk is needed."""

    source: str
    target: Target
    still: str = ""


@dataclass(frozen=True)
class Refusal:
    """A construct a target lacks, refused at the first token that asks for it in a file.
    ``trigger`` finds that token in a file's tokens as compiled and gives it with the
    construct as written; ``message`` may name ``{token}``."""

    id: str
    targets: frozenset[Target]
    trigger: Callable[[Stream], tuple[Token, str] | None]
    message: Callable[[Target], str]
    doc: str
    probe: Probe | None  # None: a gap of oneshader's own (the reflection format), not Slang's
    sixteen_bit: bool = False  # only under -enable-16bit-types
    # the scalar types the construct is (``int64_t``: Int64, UInt64): given, the refusal stands
    # only where Slang fails on the target, its code holds such a type, or the reflection
    # does (a resource's layout); where Slang dropped the construct as dead code (a local never
    # read), the module is the shader as written and it builds (``refusals.unless_dead``)
    scalars: frozenset[ScalarKind] = frozenset()


@dataclass(frozen=True)
class Rewrite:
    """An edit of the text handed to Slang. ``plan`` is the trigger: what the edit needs for a
    target (a hashable value; falsy: the rewrite does not apply), worked out once a compile;
    ``edits`` gives the edits of one file as offset spans of the stream it is given (the
    file's text as compiled, with the edits of the records before applied only up to the last
    record that ``reads_edited``), which one loop applies together with the other records'
    (``rewrites.rewritten``). ``reads_edited``: the record reads what the records before it
    made (the loop applies the edits gathered so far and lexes the text again first); ``text``
    instead of ``edits``: a rewrite of the whole text (it reads the edited text too).
    ``prelude`` is what it defines before the main file (helpers), in ``rank`` order.
    ``per_target``: the plan reads the target or the padding (worked out for each target; any
    other record's plan once a compile, for every target)."""

    id: str
    targets: frozenset[Target]
    doc: str
    plan: Callable[[Context], Hashable]
    edits: Callable[[SourceSet, Path, Stream, Any], Sequence[Edit]] | None = None
    text: Callable[[SourceSet, Path, str, Any], str] | None = None
    reads_edited: bool = False
    prelude: Callable[[Any], str] | None = None
    rank: int = 0
    probe: Probe | None = None
    per_target: bool = False


@dataclass(frozen=True)
class SharedWarning:
    """A warning a shared request may give and still be used (``slang.request.compile_together``
    keeps such a request): one of Slang's front end (its lexer and preprocessor, parser,
    semantic checks, and the checks of the module's IR before any target's passes), given once
    for a request whatever its targets, so each target gets it as a request of its own gives
    it; or (``only``) one of a single target's own passes, which that target alone gets (the
    others' own requests do not give it). ``code`` is Slang's (``E`` and the number),
    ``emitted`` where Slang emits it, ``probe`` a shader (entry ``main`` of ``stage``) that
    gets the warning, and only it, on every target or on ``only``
    (tests/compiler/test_shared_request.py)."""

    code: str
    name: str
    emitted: str
    probe: str
    stage: Stage = Stage.Compute
    only: Target | None = None


@dataclass(frozen=True)
class Context:
    """What a rewrite's trigger may ask: the source, the target, the padding members and the
    entry points' stages."""

    src: SourceSet
    target: Target
    pads: tuple[Any, ...]
    stages: tuple[tuple[str, Any], ...]
