"""Text patches of emitted MSL: oneshader's argument indices (arrays of textures and samplers
too), the entry points' vertex inputs and fragment outputs (varyings are matched by
``[[user(...)]]`` semantics, not numbers), and packed or aligned vector members where they give
HLSL's layout.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from oneshader.compiler.emitted.common import demangle, emitted_name, emitted_pattern
from oneshader.compiler.emitted.msl import msl_semantic, unattributed_inputs_read
from oneshader.compiler.patch.common import patch_struct, struct_body, with_bare_result
from oneshader.compiler.source.rewrite import INSTANCE_MARKER, postfix_start
from oneshader.compiler.source.scanner import comma_spans
from oneshader.reflection.model import BuiltIn, Interpolation, ScalarKind, Stage, StageVariable


def _relocate_fields(body: str, attr: str, wanted: dict[str, int]) -> str:
    """``name_0 [[attribute(n)]]`` (or ``color``) fields of a struct body, renumbered."""

    def msl(fm: re.Match[str]) -> str:
        location = wanted.get(demangle(fm.group(1)), int(fm.group(3)))
        return f"{fm.group(1)}{fm.group(2)}[[{attr}({location})]]"

    return re.sub(rf"(\w+)(\s*)\[\[{attr}\((\d+)\)\]\]", msl, body)


def _vertex_inputs(body: str, wanted: dict[str, int]) -> str:
    """A vertex entry point's ``[[stage_in]]`` fields at the reflection's attributes. Slang's
    Metal gives a member of a struct parameter that carries a semantic (``S s : X``) whose own
    semantic differs from the one it takes from the struct (``float1 i : III``, or any member
    after the first) ``[[user(...)]]``, which is no vertex input: made ``[[attribute(n)]]``."""

    def user(fm: re.Match[str]) -> str:
        location = wanted.get(demangle(fm.group(1)))
        if location is None:
            return fm.group(0)
        return f"{fm.group(1)}{fm.group(2)}[[attribute({location})]]"

    body = re.sub(r"(\w+)(\s*)\[\[user\([^)]*\)\]\]", user, body)
    return _relocate_fields(body, "attribute", wanted)


def _entry_match(text: str, entry: str, kind: str) -> re.Match[str] | None:
    """``[[kind]] ReturnType entry(parameters) {`` of an entry point (Slang names ``main``
    ``main_0``)."""
    names = (entry, f"{entry}_0") if entry == "main" else (entry,)
    for name in names:
        m = re.search(
            rf"\[\[{kind}\]\]\s*(\w+)\s+{re.escape(name)}\s*\((.*?)\)\s*\{{", text, re.DOTALL
        )
        if m:
            return m
    return None


def relocate_msl(
    text: str, entry: str, stage: Stage, ins: dict[str, int], outs: dict[str, int]
) -> str:
    """Metal: vertex inputs ([[attribute(n)]]) and fragment outputs ([[color(n)]]); varyings
    are matched by [[user(...)]] semantics, not numbers."""
    kind = {Stage.Vertex: "vertex", Stage.Pixel: "fragment"}.get(stage)
    m = _entry_match(text, entry, kind) if kind else None
    if m is None:
        return text
    if stage is Stage.Vertex:
        sm = re.search(r"(\w+)\s+\w+\s*\[\[stage_in\]\]", m.group(2))
        if sm:
            text = patch_struct(text, sm.group(1), lambda body: _vertex_inputs(body, ins))
    else:
        text = patch_struct(text, m.group(1), lambda body: _relocate_fields(body, "color", outs))
    return text


def instance_varyings_msl(text: str) -> str:
    """The varyings that went to Slang as :data:`rewrite.INSTANCE_MARKER` (``SV_InstanceID``
    between the stages) named by their semantic again, as Metal matches varyings by name."""
    return text.replace(f"[[user({INSTANCE_MARKER}", "[[user(SV_INSTANCEID")


def centroid_msl(text: str, entry: str, inputs: Sequence[StageVariable]) -> str:
    """A fragment entry point's ``centroid`` inputs, which Slang's Metal qualifies
    ``center_perspective`` (``center_no_perspective``), given ``centroid_perspective``."""
    names = {v.name for v in inputs if v.interp is Interpolation.Centroid}
    m = _entry_match(text, entry, "fragment") if names else None
    sm = re.search(r"(\w+)\s+\w+\s*\[\[stage_in\]\]", m.group(2)) if m else None
    if sm is None:
        return text

    def field(fm: re.Match[str]) -> str:
        if demangle(fm.group(3)) not in names:
            return fm.group(0)
        return f"[[centroid_{fm.group(1)}]]{fm.group(2)}{fm.group(3)}"

    pattern = re.compile(r"\[\[center_(perspective|no_perspective)\]\]([^;\[]*?\b)(\w+)(?=\s*\[\[)")
    return patch_struct(text, sm.group(1), lambda body: pattern.sub(field, body))


# Slang's attribute of a bare result, its located form, the built-ins' (``bare_result_msl``).
_RESULT_ATTRIBUTES = (
    r"\[\[color\(\d+\)\]\]",
    "[[color({})]]",
    {BuiltIn.Depth: "[[depth(any)]]", BuiltIn.SampleMask: "[[sample_mask]]"},
)


def bare_result_msl(text: str, entry: str, output: StageVariable) -> str:
    """A fragment entry point that returns a bare value (``float main() : SV_Depth``) gets from
    Slang's Metal a ``pixelOutput_0`` struct whose one member is ``[[color(0)]]`` whatever the
    semantic; it is given the reflection's colour index, or the built-in Slang writes for the
    same output inside a struct."""
    m = _entry_match(text, entry, "fragment")
    return text if m is None else with_bare_result(text, m.group(1), output, _RESULT_ATTRIBUTES)


def unposition_msl(text: str, entry: str, output: StageVariable) -> str:
    """A vertex entry point that returns a bare value with a user semantic (``float main() : A``)
    gets from Slang's Metal a ``vertexOutput`` struct whose one member is ``[[position]]``, the
    semantic dropped (a position of the wrong type where it is not a float4, and no varying for
    the next stage). That member is given back the varying's ``[[user(...)]]`` that Slang
    writes for the same output inside a struct (and ``[[flat]]``, which Metal needs on an
    integer)."""
    m = _entry_match(text, entry, "vertex")
    if m is None:
        return text
    smooth = output.scalar in (ScalarKind.Float, ScalarKind.Float16, ScalarKind.Float64)
    flat = "" if smooth and output.interp is not Interpolation.Flat else "[[flat]] "

    def user(body: str) -> str:
        return re.sub(
            r"^(\s*)(\w[\w<>, ]*\s+\w+\s*)\[\[position\]\]",
            lambda fm: f"{fm.group(1)}{flat}{fm.group(2)}[[user({msl_semantic(output)})]]",
            body,
            count=1,
            flags=re.MULTILINE,
        )

    return patch_struct(text, m.group(1), user)


_INDEX_ATTRIBUTE = re.compile(r"\[\[(buffer|texture|sampler)\((\d+)\)\]\]")


def renumber_msl(text: str, indices: dict[str, tuple[str, int]]) -> str:
    """Every ``name_N [[buffer|texture|sampler(n)]]`` argument given oneshader's index for it."""
    indices = {emitted_name(name): index for name, index in indices.items()}

    def index_of(emitted: str) -> tuple[str, int] | None:
        # a resource's own name first: ``rw_img_mip_5`` is not Slang's suffix of ``rw_img_mip``
        return indices.get(emitted) or indices.get(demangle(emitted))

    # Each ``[[buffer(n)]]`` (texture, sampler) and the name before it, blanks between: found
    # from the attribute, the name walked back over (``\w+\s*``; a pattern led by the name is
    # tried at every word of the module, fifty times slower).
    parts: list[str] = []
    at = 0
    for m in _INDEX_ATTRIBUTE.finditer(text):
        end = m.start()
        while end and text[end - 1].isspace():
            end -= 1
        start = end
        while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        want = index_of(text[start:end]) if start < end else None
        if want is None or want[0] != m.group(1):
            continue
        parts += (text[at : m.start()], f"[[{m.group(1)}({want[1]})]]")
        at = m.end()
    text = "".join(parts) + text[at:]

    def array_index(m: re.Match[str]) -> str:
        want = index_of(m.group(2))
        if want is None:
            return m.group(0)
        return f"{m.group(1)} [[{want[0]}({want[1]})]]"

    # Slang gives a Metal argument that is an array (of textures, of samplers) no index.
    return re.sub(
        r"(array<(?:texture|depth|sampler)[^;{}()]*?(?:\([^;{}()]*\)[^;{}()]*?)*>\s+(\w+))(?=\s*[,)])",
        array_index,
        text,
    )


def metal_vectors(text: str, resource: str, vectors: list[tuple[tuple[str, ...], bool]]) -> str:
    """Metal's vector members at the given paths (member names from the struct of the argument
    ``resource``) declared packed (True: ``packed_float3``, 12 bytes, 4-aligned, HLSL's layout;
    every read converted back to the vector type, as Metal code does) or aligned (False:
    ``float4`` for Slang's ``packed_float4``, which converts on assignment)."""
    param = re.search(
        rf"(\w+)\s+(?:constant|device|const\s+device)\s*\*\s*{emitted_pattern(resource)}\s*\[\[",
        text,
    )
    if param is None:
        return text
    packed: dict[str, str] = {}  # emitted member name -> its unpacked type
    for path, pack in vectors:
        struct_name = param.group(1)
        if not path and not pack:  # the element itself (StructuredBuffer<float3x2>)
            text = _aligned_array(text, struct_name)
            text = _aligned_pointers(text, struct_name)
        for i, member in enumerate(path):
            body = struct_body(text, struct_name)
            if body is None:
                break
            decl = re.search(
                rf"(?m)^\s*(?:array<\s*)?(?P<type>\w+)[^;\n]*?\s"
                rf"(?P<name>{emitted_pattern(member)})\s*;",
                body.group(1),
            )
            if decl is None:
                break
            if i + 1 < len(path):
                struct_name = _array_element(text, decl.group("type"))
                continue
            vector = decl.group("type")
            start = body.start(1) + decl.start("type")
            if pack and re.fullmatch(r"[a-z]+[234]", vector):
                text = text[:start] + f"packed_{vector}" + text[start + len(vector) :]
                packed[decl.group("name")] = vector
            elif not pack and vector.startswith("packed_"):
                text = text[:start] + vector[len("packed_") :] + text[start + len(vector) :]
            elif not pack:
                text = _aligned_array(text, vector)
    for name, vector in packed.items():
        text = _unpacked_reads(text, name, vector)
    return text


def _aligned_pointers(text: str, vector: str) -> str:
    """Every pointer to Slang's ``packed_float3`` (``vector``) declared aligned (``float3
    device*``): a buffer of such elements (the entry point's argument, the copy Slang keeps in
    its context struct, a helper that takes the buffer), its elements then 16 bytes apart,
    std430's stride. Slang reads them through ``float3(...)`` and writes ``packed_float3``
    values, which Metal converts; it takes no pointer to a packed struct member."""
    if not vector.startswith("packed_"):
        return text
    return re.sub(
        rf"\b{vector}(\s+(?:const\s+)?(?:device|constant)\s*\*)",
        rf"{vector[len('packed_') :]}\1",
        text,
    )


def _array_element(text: str, name: str) -> str:
    """The element struct of Slang's wrapper of an array of structs (``struct _Array_natural_T2_0
    { array<T_natural_0, int(2)> data_3; };``), at any depth; else ``name`` itself."""
    while name.startswith("_Array_"):
        body = struct_body(text, name)
        inner = body and re.fullmatch(
            r"\s*array<\s*(\w+)\s*,\s*int\(\d+\)\s*>\s+\w+\s*;\s*", body.group(1)
        )
        if not inner or struct_body(text, inner.group(1)) is None:
            break
        name = inner.group(1)
    return name


def _unpacked_reads(text: str, member: str, vector: str) -> str:
    """Each ``expr.member``/``expr->member`` read in function bodies wrapped as
    ``vector(expr.member)``; writes (an assignment follows) and addresses are left alone."""
    out: list[str] = []
    last = 0
    for m in re.finditer(rf"(?:\.|->)\s*{re.escape(member)}\b", text):
        start = postfix_start(text, m.start())
        after = text[m.end() :]
        if re.match(r"\s*(?:\.\s*[xyzwrgba]+\s*)?(?:[-+*/%&|^]|<<|>>)?=(?!=)", after):
            continue
        if text[:start].rstrip().endswith("&") and not text[:start].rstrip().endswith("&&"):
            continue
        out.append(text[last:start])
        out.append(f"{vector}({text[start : m.end()]})")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _aligned_array(text: str, wrapper: str) -> str:
    """Slang's wrapper of an array in a Metal structured buffer (``struct _Array_natural_..
    { array<packed_float3, int(4)> data_0; };``), or of a matrix's vectors (``struct
    _MatrixStorage_float3x2_ColMajornatural_0 { array<packed_float3, int(2)> data_0; };``), with
    aligned elements (``float3``: 16 bytes apart, std430's stride); through wrappers of arrays
    of such wrappers too. Slang's reads convert to ``float3`` or take components, and its
    writes assign a ``packed_float3``, which Metal converts to the aligned type; a whole array
    it assigns from a local (``->data_0 = _S2;``, a matrix written whole) is given that type."""
    body = struct_body(text, _array_element(text, wrapper))
    if body is None:
        return text
    m = re.fullmatch(r"\s*array<\s*packed_(\w+)\s*,\s*int\(\d+\)\s*>\s+(\w+)\s*;\s*", body.group(1))
    if m is None:
        return text
    start = body.start(1) + m.start(1) - len("packed_")
    text = text[:start] + text[start + len("packed_") :]
    for local in set(re.findall(rf"(?:->|\.)\s*{m.group(2)}\s*=\s*(\w+)\s*;", text)):
        text = re.sub(
            rf"\barray<\s*packed_{m.group(1)}(\s*,\s*int\(\d+\)\s*>\s+{local}\s*=)",
            rf"array<{m.group(1)}\1",
            text,
        )
    return text


def clip_distances_msl(text: str, entry: str, stage: Stage, names: set[str]) -> str:
    """Slang's Metal for SV_ClipDistance (``names``, by source name): a vertex output member
    ``float x [[]];``, given Metal's ``[[clip_distance]]``; a pixel input, an unattributed
    fragment parameter (which Metal refuses), left out where the body never names it (the
    checks before refused one it reads)."""
    kind = {Stage.Vertex: "vertex", Stage.Pixel: "fragment"}.get(stage)
    m = _entry_match(text, entry, kind) if kind else None
    if m is None:
        return text
    if stage is Stage.Vertex:

        def attribute(body: str) -> str:
            def one(fm: re.Match[str]) -> str:
                if demangle(fm.group(2)) not in names:
                    return fm.group(0)
                return f"{fm.group(1)}{fm.group(2)} [[clip_distance]];"

            return re.sub(r"(\bfloat\s+)(\w+)\s*\[\[\]\]\s*;", one, body)

        return patch_struct(text, m.group(1), attribute)
    read = unattributed_inputs_read(text.encode(), entry)
    params = [text[a:b].strip() for a, b in comma_spans(text, m.start(2), m.end(2))]
    kept = [p for p in params if "[[" in p or _last_name(p) not in names - read]
    if len(kept) == len(params):
        return text
    return text[: m.start(2)] + ", ".join(kept) + text[m.end(2) :]


def _last_name(param: str) -> str:
    names = re.findall(r"\w+", param)
    return demangle(names[-1]) if names else ""
