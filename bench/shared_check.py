"""Does a shared Slang request give what one request per target gives? (``corpus.py
--shared-check``)

oneshader makes one request for the targets whose rewritten source is the same text
(``slang.request.compile_together``) and reads each target's code and facts from it. This
compares, shader by shader, what that request gives each target (code, facts, warnings)
with what the target's own first request gives (``_compile_once``, as ``compile_target``
makes it when there is no shared request, with the same padding): any difference is a fact
of one target leaking into another's. ``--serve`` answers one JSON request a line (corpus.py's
crash-isolated servers)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any

from oneshader.compiler.api import CompileOptions, EntryPointSpec, RegisterShift, stage_from_name
from oneshader.compiler.quirks.refusals import refused as lacking
from oneshader.compiler.slang import library
from oneshader.compiler.slang.request import CompiledTarget, _compile_once, compile_together
from oneshader.compiler.source.precheck import check_request, check_targets, precheck
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Collector, UserError
from oneshader.reflection.model import Target


def options_of(request: dict[str, Any]) -> CompileOptions:
    """The compile options a corpus.py request describes (``CompileOptions`` fields this
    version of oneshader lacks are left out)."""
    fields = CompileOptions.__dataclass_fields__
    extra = {k: bool(request[k]) for k in ("enable_16bit_types",) if k in fields and request.get(k)}
    return CompileOptions(
        targets=tuple(Target(t) for t in request["targets"]),
        source_name=request["name"],
        include_dirs=tuple(request.get("include_dirs", ())),
        defines=tuple((n, v) for n, v in request.get("defines", ())),
        entry_points=tuple(
            EntryPointSpec(n, stage_from_name(s)) for n, s in request.get("entries", ())
        ),
        shifts=tuple(RegisterShift(c, n, s) for c, n, s in request.get("shifts", ())),
        row_major=bool(request.get("row_major")),
        **extra,  # type: ignore[arg-type]
    )


def _differences(target: Target, shared: CompiledTarget, alone: CompiledTarget) -> list[str]:
    out = []
    if shared.code != alone.code:
        out.append(f"{target.value}: code differs")
    if shared.facts != alone.facts:
        a, b = asdict(shared.facts), asdict(alone.facts)
        keys = [k for k in a if a[k] != b[k]]
        out.append(f"{target.value}: facts differ ({', '.join(keys)})")
    if [d.format() for d in shared.warnings] != [d.format() for d in alone.warnings]:
        codes = [" ".join(d.code for d in c.warnings) or "none" for c in (shared, alone)]
        out.append(f"{target.value}: warnings differ (shared: {codes[0]}; alone: {codes[1]})")
    return out


def check(request: dict[str, Any]) -> dict[str, Any]:
    """{"shared": targets compiled by a shared request, "differences": [...]}."""
    options = options_of(request)
    src = SourceSet(request["path"], options.source_name, options.include_dirs, options.defines)
    problems = Collector()
    try:
        check_targets(src, options, problems)
        problems.check()
        src.read()
        check_request(src, options, problems)
        problems.check()
        refused = precheck(
            src, options, problems, lacking(src, options.targets, options.enable_16bit_types)
        )
    except UserError:
        return {"shared": [], "differences": []}
    wanted = [t for t in Target if t in options.targets and t not in refused]
    lib = library()
    together = compile_together(lib, src, options, wanted)
    differences = []
    for target, shared in together.items():
        # (the padding WGSL's and Metal's shared first request had: ``request._padded_first``)
        alone, errors = _compile_once(lib, src, options, target, shared.pads.values())
        if alone is None:
            differences.append(
                f"{target.value}: a request of its own fails: "
                + "; ".join(d.format().splitlines()[0] for d in errors[:2])
            )
            continue
        differences += _differences(target, shared, alone)
    return {"shared": [t.value for t in together], "differences": differences}


def serve() -> None:
    for line in sys.stdin:
        try:
            answer = check(json.loads(line))
        except Exception as err:  # a bug in the check itself: one line, the next request runs
            answer = {"shared": [], "differences": [f"check failed: {type(err).__name__}: {err}"]}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
