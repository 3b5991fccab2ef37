"""What Slang writes as WGSL that is not WGSL (naga, the validator every module must pass,
refuses it), where no rewrite is sound: a positioned error in the source instead, naming the
construct. Each check reads Slang's WGSL to know the construct is there, and the source to say
where."""

from __future__ import annotations

import re

from oneshader.compiler.emitted.common import demangle
from oneshader.compiler.emitted.wgsl import reached_identifiers
from oneshader.compiler.slang.facts import TargetFacts
from oneshader.compiler.source.scanner import closing, line_col, line_offsets, strip_comments
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Code, Diagnostic
from oneshader.reflection.model import Stage


def wgsl_refusal(src: SourceSet, code: bytes, facts: TargetFacts) -> Diagnostic | None:
    """The first construct of the shader whose WGSL (``code``) naga would refuse, or None."""
    return (
        _subgroup_operations(src, code)
        or _compute_sampling(src, code, facts)
        or _workgroup_arguments(src, code)
        or _buffer_locals(src, code)
        or _integer_matrix_products(src, code)
        or _endless_functions(src, code)
    )


_FIRST_LANE_CALL = re.compile(r"\b(WaveIsFirstLane)\s*\(")


def _subgroup_operations(src: SourceSet, code: bytes) -> Diagnostic | None:
    """Wave and quad intrinsics build on WGSL through its subgroups extension (the entry's
    features say Subgroups, the device's 'subgroup' feature), but for ``WaveIsFirstLane``:
    Slang writes ``subgroupElect()``, which the naga wgpu-py ships does not know; an error at
    the first call."""
    if b"subgroupElect" not in code:
        return None
    message = (
        "WGSL: WaveIsFirstLane is WGSL's subgroupElect, which the WGSL validator oneshader "
        "trusts (naga, as wgpu-py ships it) does not know; write "
        "'WaveReadLaneFirst(WaveGetLaneIndex()) == WaveGetLaneIndex()' or build without the "
        "wgsl target"
    )
    first = next(src.matches(_FIRST_LANE_CALL), None)
    if first is None:
        return src.error_in(src.path, 0, 0, message, Code.NOT_ON_TARGET)
    path, found = first
    line, col = line_col(strip_comments(src.texts[path]), found.start(1))
    return src.error_in(path, line, col, f"{message} ('{found.group(1)}')", Code.NOT_ON_TARGET)


# WGSL's sampling with implicit derivatives (fragment shaders only) and the HLSL methods that
# Slang writes as them.
_IMPLICIT_LOD = {
    "textureSample": "Sample",
    "textureSampleBias": "SampleBias",
    "textureSampleCompare": "SampleCmp",
}


def _compute_sampling(src: SourceSet, code: bytes, facts: TargetFacts) -> Diagnostic | None:
    """``Sample``/``SampleBias``/``SampleCmp`` reached from a compute entry point (HLSL's
    compute-shader derivatives): WGSL samples with implicit derivatives in fragment shaders only
    (naga: "operations forbidden at this stage"), and a fixed level would change the result. An
    error at the first such call after the entry point's start (else the first in the files)."""

    computes = [e.name for e in facts.entries if e.stage is Stage.Compute]
    if not computes:
        return None
    reached = reached_identifiers(code, computes)
    for entry in computes:
        used = sorted({_IMPLICIT_LOD[n] for n in reached[entry] if n in _IMPLICIT_LOD})
        if not used:
            continue
        message = (
            f"WGSL: {'/'.join(used)} in compute entry point '{entry}': WGSL samples with "
            "implicit derivatives in fragment shaders only; use SampleLevel (SampleCmpLevelZero, "
            "SampleGrad) or build without the wgsl target"
        )
        call = re.compile(rf"\.\s*({'|'.join(used)})\s*\(")
        home = src.function_file(entry)
        start = src.function(entry)
        paths = [home, *(p for p in src.include_order() if p != home)]
        for i, path in enumerate(paths):
            text = strip_comments(src.texts[path])
            after = line_offsets(text)[start.line - 1] if i == 0 and start else 0
            found = call.search(text, after) or (call.search(text) if i == 0 else None)
            if found is not None:
                line, col = line_col(text, found.start(1))
                return src.error_in(path, line, col, message, Code.NOT_ON_TARGET)
        return src.error_in(src.path, 0, 0, message, Code.NOT_ON_TARGET)
    return None


_WORKGROUP_PARAMETER = re.compile(r"\bfn\s+(\w+)\s*\([^)]*:\s*ptr<workgroup\b")
_GROUPSHARED = re.compile(r"\bgroupshared\b[^;]*?\b(\w+)\s*(?:\[[^\]]*\]\s*)*;")


def _workgroup_arguments(src: SourceSet, code: bytes) -> Diagnostic | None:
    """A ``groupshared`` variable passed as an ``out``/``inout`` argument: Slang's WGSL passes a
    ``ptr<workgroup, T>``, which naga (the validator) does not let into a function. An error
    at the first call of that function with a groupshared argument (else at the function)."""
    found = _WORKGROUP_PARAMETER.search(code.decode("utf-8", "replace"))
    if found is None:
        return None
    function = demangle(found.group(1))
    texts = {p: strip_comments(src.texts[p]) for p in src.include_order()}
    shared = {m.group(1) for t in texts.values() for m in _GROUPSHARED.finditer(t)}
    message = (
        f"WGSL: a groupshared variable passed to an out/inout parameter of '{function}': "
        "Slang passes a workgroup pointer, which WGSL's validator (naga) does not let into a "
        "function; copy it into a local, pass that, and copy it back, or build without the "
        "wgsl target"
    )
    call = re.compile(rf"(?<![\w.:]){re.escape(function)}\s*\(([^;]*)")
    for path, text in texts.items():
        for m in call.finditer(text):
            arg = next((a for a in re.finditer(r"\w+", m.group(1)) if a.group(0) in shared), None)
            if arg is not None:
                line, col = line_col(text, m.start(1) + arg.start())
                return src.error_in(
                    path, line, col, f"{message} ('{arg.group(0)}')", Code.NOT_ON_TARGET
                )
    where = src.function(function)
    return src.error_in(
        src.function_file(function),
        where.line if where else 0,
        where.column if where else 0,
        message,
        Code.NOT_ON_TARGET,
    )


_LOCAL_BUFFER = re.compile(r"(?m)^[ \t]+var<(?:storage|uniform)\b[^>]*>\s*(\w+)")
_BUFFER_DECLARATION = (
    r"\b(?:RW)?(?:StructuredBuffer|ByteAddressBuffer)\b(?:\s*<[^;{{}}]*?>)?\s+{name}\b"
)


def _buffer_locals(src: SourceSet, code: bytes) -> Diagnostic | None:
    """A local variable of a buffer type (assigned one global buffer or another): Slang's WGSL
    declares it ``var<storage>`` in the function, which WGSL does not allow (locals are in the
    function address space). An error at the local's declaration (else at the file)."""
    found = _LOCAL_BUFFER.search(code.decode("utf-8", "replace"))
    if found is None:
        return None
    name = demangle(found.group(1))
    message = (
        f"WGSL: '{name}' is a local variable of a buffer type: WGSL has buffers only as "
        "module-scope variables (Slang declares a storage variable in the function, which is "
        "not WGSL); index the global buffers directly, or build without the wgsl target"
    )
    declaration = re.compile(_BUFFER_DECLARATION.format(name=re.escape(name)))
    for path in src.include_order():
        text = strip_comments(src.texts[path])
        for m in declaration.finditer(text):
            if (
                name in src.declarations()
                and src.declarations()[name].line == line_col(text, m.start())[0]
            ):
                continue  # the global of that name
            line, col = line_col(text, m.end() - len(name))
            return src.error_in(path, line, col, message, Code.NOT_ON_TARGET)
    return src.error_in(src.path, 0, 0, message, Code.NOT_ON_TARGET)


_INT_MATRIX = (
    r"\b(?:u?int|min16u?int|u?int32_t|bool)[1-4]x[1-4]\b"
    r"|\bmatrix\s*<\s*(?:u?int|bool|min16u?int)\w*\s*,"
)
_INT_MATRIX_DECLARED = re.compile(rf"(?:{_INT_MATRIX})[^;(]*?\b(\w+)\s*[;=,)\[:]")
_INT_MATRIX_EMULATED = re.compile(r"array<vec[234]<(?:i32|u32|bool)>,\s*i32\([234]\)>")
_MUL = re.compile(r"(?<![\w.:])mul\s*\(")


def _integer_matrix_products(src: SourceSet, code: bytes) -> Diagnostic | None:
    """``mul`` with an integer matrix: WGSL has float matrices only, Slang writes an integer
    matrix as an array of vectors and its product as ``vector * array``, which is not WGSL.
    An error at the first such ``mul`` (only where the WGSL holds such arrays)."""
    if not _INT_MATRIX_EMULATED.search(code.decode("utf-8", "replace")):
        return None
    texts = {p: strip_comments(src.texts[p]) for p in src.include_order()}
    names = {m.group(1) for t in texts.values() for m in _INT_MATRIX_DECLARED.finditer(t)}
    for path, text in texts.items():
        for m in _MUL.finditer(text):
            close = closing(text, m.end() - 1)
            args = text[m.end() : close - 1 if close > 0 else len(text)]
            words = set(re.findall(r"\w+", args))
            if re.search(_INT_MATRIX, args) or words & names:
                line, col = line_col(text, m.start())
                return src.error_in(
                    path,
                    line,
                    col,
                    "WGSL: mul with an integer matrix: WGSL has float matrices only (Slang "
                    "writes the product of its array of vectors, which is not WGSL); multiply "
                    "float matrices, or build without the wgsl target",
                    Code.NOT_ON_TARGET,
                )
    return None


_RESULT_FUNCTION = re.compile(r"\bfn\s+(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*->[^{]*\{")
_ENDLESS_LOOP = re.compile(r"\b(?:for\s*\(\s*[^;]*;\s*;|while\s*\(\s*(?:true|1)\s*\))")


def _endless_functions(src: SourceSet, code: bytes) -> Diagnostic | None:
    """A function with a result that never returns (an endless loop with no ``break`` or
    ``return``): Slang's WGSL drops the loop and leaves the function without a ``return``,
    which WGSL refuses. An error at the first endless loop (else at the function)."""
    wgsl = code.decode("utf-8", "replace")
    for m in _RESULT_FUNCTION.finditer(wgsl):
        i = closing(wgsl, m.end() - 1)
        if re.search(r"\breturn\b", wgsl[m.end() : i if i > 0 else len(wgsl)]):
            continue
        function = demangle(m.group(1))
        message = (
            f"WGSL: '{function}' never returns (an endless loop without break or return): "
            "Slang writes it without a return, which WGSL refuses; give the loop an exit, or "
            "build without the wgsl target"
        )
        home = src.function_file(function)
        text = strip_comments(src.texts[home])
        start = src.function(function)
        after = line_offsets(text)[start.line - 1] if start else 0
        loop = _ENDLESS_LOOP.search(text, after)
        if loop is not None:
            line, col = line_col(text, loop.start())
            return src.error_in(home, line, col, message, Code.NOT_ON_TARGET)
        line, col = (start.line, start.column) if start else (0, 0)
        return src.error_in(home, line, col, message, Code.NOT_ON_TARGET)
    return None
