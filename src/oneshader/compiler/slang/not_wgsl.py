"""What Slang writes as WGSL that is not WGSL (naga, the validator every module must pass,
refuses it), where no rewrite is sound: a positioned error in the source instead, naming the
construct. Each check reads Slang's WGSL to know the construct is there, and the source to say
where."""

from __future__ import annotations

from oneshader.compiler.emitted.common import demangle
from oneshader.compiler.emitted.wgsl import (
    emulates_integer_matrices,
    functions_without_return,
    local_buffer,
    reached_identifiers,
    read_wgsl_shared,
    workgroup_pointer_function,
)
from oneshader.compiler.slang.facts import TargetFacts
from oneshader.compiler.source.query import Stream
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
        or _multi_dimensional_lanes(src, code, facts)
    )


_LANE_CALLS = ("WaveGetLaneIndex", "QuadReadLaneAt", "WaveIsFirstLane")


def _multi_dimensional_lanes(src: SourceSet, code: bytes, facts: TargetFacts) -> Diagnostic | None:
    """A compute entry point of a workgroup of more than one dimension that reads the lane
    index (``WaveGetLaneIndex``, and the WGSL helpers of ``QuadReadLaneAt``/``WaveIsFirstLane``:
    ``@builtin(subgroup_invocation_id)``), which naga takes in one-dimensional workgroups only
    ("Workgroup size is multi dimensional"): an error at the first such call."""
    if b"subgroup_invocation_id" not in code:
        return None
    module = read_wgsl_shared(code)
    for e in facts.entries:
        emitted = module.entries.get(e.name) or module.entries.get(f"{e.name}_0")
        if e.stage is not Stage.Compute or emitted is None:
            continue
        if "subgroup_invocation_id" not in emitted.helpers or sorted(e.workgroup)[1] <= 1:
            continue
        message = (
            f"WGSL: the lane index (WaveGetLaneIndex; QuadReadLaneAt and WaveIsFirstLane read "
            f"it on WGSL) in compute entry point '{e.name}' of workgroup {e.workgroup}: naga "
            "takes it in one-dimensional workgroups only; use numthreads(N, 1, 1) or build "
            "without the wgsl target"
        )
        for st in src.streams():
            for k in st.calls(_LANE_CALLS):
                line, col = st.line_col(k)
                return src.error_in(st.path, line, col, message, Code.NOT_ON_TARGET)
        return src.error_in(src.path, 0, 0, message, Code.NOT_ON_TARGET)
    return None


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
    for s in src.streams():
        for i in s.calls(("WaveIsFirstLane",)):
            line, col = s.line_col(i)
            return src.error_in(
                s.path, line, col, f"{message} ('WaveIsFirstLane')", Code.NOT_ON_TARGET
            )
    return src.error_in(src.path, 0, 0, message, Code.NOT_ON_TARGET)


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
        home = src.function_file(entry)
        start = src.function(entry)
        paths = [home, *(p for p in src.include_order() if p != home)]
        for i, path in enumerate(paths):
            s = src.stream(path)
            calls = [k for k in s.calls(used) if s.is_(k - 1, ".")]
            after = s.offset_of(start.line, 1) if i == 0 and start else 0
            found = next((k for k in calls if s.start(k) >= after), calls[0] if calls else None)
            if found is not None:
                line, col = s.line_col(found)
                return src.error_in(path, line, col, message, Code.NOT_ON_TARGET)
        return src.error_in(src.path, 0, 0, message, Code.NOT_ON_TARGET)
    return None


def _workgroup_arguments(src: SourceSet, code: bytes) -> Diagnostic | None:
    """A ``groupshared`` variable passed as an ``out``/``inout`` argument: Slang's WGSL passes a
    ``ptr<workgroup, T>``, which naga (the validator) does not let into a function. An error
    at the first call of that function with a groupshared argument (else at the function)."""
    found = workgroup_pointer_function(code)
    if found is None:
        return None
    function = demangle(found)
    shared = {n for n, d in src.declarations().items() if "groupshared" in d.modifiers}
    message = (
        f"WGSL: a groupshared variable passed to an out/inout parameter of '{function}': "
        "Slang passes a workgroup pointer, which WGSL's validator (naga) does not let into a "
        "function; copy it into a local, pass that, and copy it back, or build without the "
        "wgsl target"
    )
    for s in src.streams():
        for i in s.calls((function,)):
            if not s.free(i) or s.is_(i - 1, ":"):
                continue
            k = i + 2  # the arguments, to the statement's end
            while k < len(s) and s.tokens[k].text != ";":
                if s.tokens[k].kind == "id" and s.tokens[k].text in shared:
                    line, col = s.line_col(k)
                    return src.error_in(
                        s.path, line, col, f"{message} ('{s.tokens[k].text}')", Code.NOT_ON_TARGET
                    )
                k += 1
    where = src.function(function)
    return src.error_in(
        src.function_file(function),
        where.line if where else 0,
        where.column if where else 0,
        message,
        Code.NOT_ON_TARGET,
    )


_BUFFERS = frozenset(
    {"StructuredBuffer", "RWStructuredBuffer", "ByteAddressBuffer", "RWByteAddressBuffer"}
)


def _declares(s: Stream, i: int, name: str) -> int:
    """For a buffer type at ``i`` (``StructuredBuffer<T>``, ``ByteAddressBuffer``): the index
    of ``name`` declared with it, or -1."""
    k = i + 1
    if s.is_(k, "<"):  # to the '>' the name follows (in the statement)
        k += 1
        while k < len(s) and not (s.tokens[k].text.endswith(">") and s.is_(k + 1, name)):
            if s.tokens[k].text in (";", "{", "}"):
                return -1
            k += 1
        k += 1
    return k if s.is_(k, name) and s.at(k).kind == "id" else -1


def _buffer_locals(src: SourceSet, code: bytes) -> Diagnostic | None:
    """A local variable of a buffer type (assigned one global buffer or another): Slang's WGSL
    declares it ``var<storage>`` in the function, which WGSL does not allow (locals are in the
    function address space). An error at the local's declaration (else at the file)."""
    found = local_buffer(code)
    if found is None:
        return None
    name = demangle(found)
    message = (
        f"WGSL: '{name}' is a local variable of a buffer type: WGSL has buffers only as "
        "module-scope variables (Slang declares a storage variable in the function, which is "
        "not WGSL); index the global buffers directly, or build without the wgsl target"
    )
    declared = src.declarations().get(name)
    for s in src.streams():
        for i in s.words(_BUFFERS):
            k = _declares(s, i, name)
            if k < 0:
                continue
            if declared is not None and declared.line == s.line_col(i)[0]:
                continue  # the global of that name
            line, col = s.line_col(k)
            return src.error_in(s.path, line, col, message, Code.NOT_ON_TARGET)
    return src.error_in(src.path, 0, 0, message, Code.NOT_ON_TARGET)


# HLSL's integer (and bool) matrix types, and the element types ``matrix<T, R, C>`` takes.
_INT_SCALARS = ("int", "uint", "min16int", "min16uint", "int32_t", "uint32_t", "bool")
_INT_MATRICES = frozenset(f"{t}{r}x{c}" for t in _INT_SCALARS for r in "1234" for c in "1234")
_INT_ELEMENTS = ("int", "uint", "bool", "min16int", "min16uint")


def _int_matrix(s: Stream, i: int) -> int:
    """The index just past an integer matrix type at ``i`` (``int3x3``; ``matrix<uint,``: its
    element type's ``,``), or -1."""
    t = s.at(i)
    if t.kind == "id" and t.text in _INT_MATRICES:
        return i + 1
    element = s.at(i + 2)
    if t.text == "matrix" and s.is_(i + 1, "<") and element.text.startswith(_INT_ELEMENTS):
        return i + 4 if element.kind == "id" and s.is_(i + 3, ",") else -1
    return -1


def _int_matrix_names(s: Stream) -> set[str]:
    """The names declared with an integer matrix type (the first name after the type that a
    ``;``, ``=``, ``,``, ``)``, ``[`` or ``:`` follows, in the statement before any ``(``)."""
    out = set()
    for i in s.words(("matrix", *_INT_MATRICES)):
        k = _int_matrix(s, i)
        if k < 0:
            continue
        if s.tokens[i].text == "matrix":
            close = next((j for j in range(k, len(s)) if s.tokens[j].text.endswith(">")), -1)
            k = close + 1 if close >= 0 else len(s)
        while k < len(s) and s.tokens[k].text not in (";", "("):
            if s.tokens[k].kind == "id" and s.at(k + 1).text in (";", "=", ",", ")", "[", ":"):
                out.add(s.tokens[k].text)
                break
            k += 1
    return out


def _integer_matrix_products(src: SourceSet, code: bytes) -> Diagnostic | None:
    """``mul`` with an integer matrix: WGSL has float matrices only, Slang writes an integer
    matrix as an array of vectors and its product as ``vector * array``, which is not WGSL.
    An error at the first such ``mul`` (only where the WGSL holds such arrays)."""
    if not emulates_integer_matrices(code):
        return None
    names = {n for s in src.streams() for n in _int_matrix_names(s)}
    for s in src.streams():
        for i in s.calls(("mul",)):
            if not s.free(i) or s.is_(i - 1, ":"):
                continue
            close = s.closing(i + 1)
            args = range(i + 2, close - 1 if close > 0 else len(s))
            if any(_int_matrix(s, k) >= 0 or s.tokens[k].text in names for k in args):
                line, col = s.line_col(i)
                return src.error_in(
                    s.path,
                    line,
                    col,
                    "WGSL: mul with an integer matrix: WGSL has float matrices only (Slang "
                    "writes the product of its array of vectors, which is not WGSL); multiply "
                    "float matrices, or build without the wgsl target",
                    Code.NOT_ON_TARGET,
                )
    return None


def _endless_loop(s: Stream, i: int) -> bool:
    """Whether the ``for`` or ``while`` at ``i`` loops without a condition: ``for (...; ;``,
    ``while (true)``, ``while (1)``."""
    if not s.is_(i + 1, "("):
        return False
    if s.tokens[i].text == "while":
        return s.at(i + 2).text in ("true", "1") and s.is_(i + 3, ")")
    k = next((j for j in range(i + 2, len(s)) if s.tokens[j].text == ";"), -1)
    return k >= 0 and s.is_(k + 1, ";")


def _endless_functions(src: SourceSet, code: bytes) -> Diagnostic | None:
    """A function with a result that never returns (an endless loop with no ``break`` or
    ``return``): Slang's WGSL drops the loop and leaves the function without a ``return``,
    which WGSL refuses. An error at the first endless loop (else at the function)."""
    for found in functions_without_return(code)[:1]:
        function = demangle(found)
        message = (
            f"WGSL: '{function}' never returns (an endless loop without break or return): "
            "Slang writes it without a return, which WGSL refuses; give the loop an exit, or "
            "build without the wgsl target"
        )
        home = src.function_file(function)
        s = src.stream(home)
        start = src.function(function)
        after = s.offset_of(start.line, 1) if start else 0
        loop = next(
            (i for i in s.words(("for", "while")) if s.start(i) >= after and _endless_loop(s, i)),
            None,
        )
        if loop is not None:
            line, col = s.line_col(loop)
            return src.error_in(home, line, col, message, Code.NOT_ON_TARGET)
        line, col = (start.line, start.column) if start else (0, 0)
        return src.error_in(home, line, col, message, Code.NOT_ON_TARGET)
    return None
