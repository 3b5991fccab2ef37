"""Source rewrites: where the text handed to Slang differs from the file, and why.

Each rewrite keeps line numbers, and the columns before the change, so Slang's diagnostics still
point into the user's file (docs/compiler.md lists them).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from oneshader.compiler.emitted.common import SLANG_LENGTHS, counter_name
from oneshader.compiler.source.scanner import (
    Declaration,
    SourceFile,
    closing,
    comma_spans,
    line_offsets,
    strip_comments,
)
from oneshader.reflection.model import SAMPLER_TYPES, TEXTURE_TYPES, Target

__all__ = [
    "BYTE_ATOMIC_METHODS",
    "BYTE_ATOMIC_TYPE",
    "INSTANCE_MARKER",
    "OFFSET_HELPER",
    "SAMPLE_POSITION_HELPER",
    "STANDARD_SAMPLE_POSITIONS",
    "bitfield_words",
    "blank_words",
    "blanked",
    "block_resources_as_globals",
    "bools_as_uints",
    "buffer_lengths_prelude",
    "byte_atomics",
    "byte_buffer_uses",
    "byte_stores",
    "classes_as_structs",
    "counter_calls",
    "distances_as_varyings",
    "entry_outputs_as_results",
    "instance_ids_as_varyings",
    "load_offsets",
    "matrix_array_majorness",
    "offset_textures",
    "one_component_texels",
    "outputs_struct",
    "pack_matrix",
    "postfix_start",
    "printf_calls",
    "register_letters",
    "rename_at",
    "sample_position_queries",
    "status_arguments",
    "subpass_inputs_as_vectors",
    "typed_buffers_as_structured",
    "unit_point_sizes",
    "vk_builtins",
    "with_append_consume_as_rw",
    "with_buffer_lengths",
    "with_counter_buffers",
    "with_helpers",
    "with_inserted",
    "with_sample_positions",
    "without_load_offsets",
    "without_own_attributes",
    "without_packoffsets",
    "without_point_size",
    "without_printf",
    "without_space_only_registers",
    "without_status_arguments",
    "without_void_casts",
]


def blanked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """The text with each ``(start, end)`` span blanked but its line breaks (lines and the
    columns of everything else stay)."""
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def blank_words(text: str, word: str) -> str:
    """The text with the keyword ``word`` blanked where it is a modifier (not in comments)."""
    clean = strip_comments(text)
    return blanked(text, (m.span() for m in re.finditer(rf"\b{word}\b(?=\s+[A-Za-z_])", clean)))


# DXC's [[vk::builtin("X")]] names Slang knows as system-value semantics.
VK_BUILTINS = {
    "PointSize": "SV_PointSize",
    "BaseVertex": "SV_StartVertexLocation",
    "BaseInstance": "SV_StartInstanceLocation",
    "DrawIndex": "SV_DrawIndex",  # SPIR-V only: neither Metal nor WGSL has it
}
VK_BUILTIN = re.compile(r'\[\[\s*vk::builtin\(\s*"(\w+)"\s*\)\s*\]\]([^;:,)]*)(:\s*\w+)?')


def vk_builtins(text: str) -> str:
    """DXC's ``[[vk::builtin("PointSize")]] float s : PSIZE`` as Slang's ``float s :
    SV_PointSize`` (and BaseVertex/BaseInstance as SV_StartVertex/InstanceLocation, DrawIndex
    as SV_DrawIndex)."""
    clean = strip_comments(text)
    out, last = [], 0
    for m in VK_BUILTIN.finditer(clean):
        semantic = VK_BUILTINS.get(m.group(1))
        if semantic is None:
            continue
        out.append(text[last : m.start()])
        out.append(" " * (m.start(2) - m.start()))
        out.append(text[m.start(2) : m.end(2)].rstrip())
        out.append(f" : {semantic}")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


_OWN_ATTRIBUTE = re.compile(r"\[\[\s*oneshader::\w+\s*(?:\([^)\]]*\))?\s*\]\]")


def without_own_attributes(text: str) -> str:
    """oneshader's own attributes (``[[oneshader::format("unorm8x4")]]``, read by the
    scanner) blanked (lines and columns stay): Slang warns of attributes it does not know."""
    return blanked(text, (m.span() for m in _OWN_ATTRIBUTE.finditer(strip_comments(text))))


# ``class Name {`` or ``class Name : Base {`` (not ``enum class``, not ``template<class T>``)
_CLASS = re.compile(r"(?<![\w:])(?<!enum )class(?=\s+[A-Za-z_]\w*\s*(?::[^{};]*)?\{)")


def classes_as_structs(text: str) -> str:
    """HLSL's ``class`` as ``struct``: in HLSL (DXC) a class is a struct, a value type whose
    members are public; Slang takes ``class`` for its own reference type, whose methods its
    SPIR-V emitter cannot write ("Unhandled global inst in spirv-emit", an internal error
    without a position). The columns after it on its line move by one."""
    clean = strip_comments(text)
    out, last = [], 0
    for m in _CLASS.finditer(clean):
        out.append(text[last : m.start()])
        out.append("struct")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


# A texture or typed buffer of one-component vectors (``Texture2D<float1>``), its ``1``.
_ONE_COMPONENT_TEXEL = re.compile(
    r"\b(?:RW|RasterizerOrdered)?(?:Texture(?:1D|2D|3D|Cube)(?:Array)?|Texture2DMS(?:Array)?"
    r"|Buffer)\s*<\s*(?:float|half|int|uint|min16float|min16int|min16uint|float16_t"
    r"|float32_t|int32_t|uint32_t)(1)\s*[,>]"
)


# The RWByteAddressBuffer methods a buffer of atomic words expresses (``byte_atomics``): HLSL's
# name -> (Slang's Atomic<uint> method, the number of value arguments after the address, whether
# an original-value argument may follow). InterlockedMin/Max are left out: a byte-address
# buffer's min/max is signed or unsigned by the value's type, which the text does not say.
BYTE_ATOMIC_METHODS = {
    "Load": ("load", 0, False),
    "Store": ("store", 1, False),
    "InterlockedAdd": ("add", 1, True),
    "InterlockedAnd": ("and", 1, True),
    "InterlockedOr": ("or", 1, True),
    "InterlockedXor": ("xor", 1, True),
    "InterlockedExchange": ("exchange", 1, True),
    "InterlockedCompareExchange": ("compareExchange", 2, True),
    "InterlockedCompareStore": ("compareExchange", 2, False),
}
BYTE_ATOMIC_TYPE = "RWStructuredBuffer<Atomic<uint>>"


def byte_buffer_uses(text: str, name: str) -> list[tuple[re.Match[str], str | None]]:
    """Each use of buffer ``name`` in ``text`` (comments blanked), with the method it calls
    (None: any other use, such as ``Load2`` or passing the buffer on)."""
    out: list[tuple[re.Match[str], str | None]] = []
    for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\b(?:\s*\.\s*(\w+)\s*\()?", text):
        out.append((m, m.group(1) if m.group(1) in BYTE_ATOMIC_METHODS else None))
    return out


def byte_atomics(text: str, names: Collection[str]) -> str:
    """Each RWByteAddressBuffer of ``names`` (every use a ``Load``, ``Store`` or ``Interlocked*``
    of one word: ``slang.request``'s choice) as a buffer of atomic words, WGSL's
    ``array<atomic<u32>>``: declared ``RWStructuredBuffer<Atomic<uint>>``, ``B.Load(a)`` as
    ``B[(a) / 4].load()``, ``B.InterlockedAdd(a, v, o)`` as ``(o) = B[(a) / 4].add(v)`` (the
    innermost call first, so calls nest). Columns after a change on its line move; lines
    stay."""
    for name in names:
        declared = re.compile(rf"\bRWByteAddressBuffer(?=\s+{re.escape(name)}\b)")
        for m in reversed(list(declared.finditer(strip_comments(text)))):
            text = text[: m.start()] + BYTE_ATOMIC_TYPE + text[m.end() :]
        while True:
            clean = strip_comments(text)
            calls = [(m, method) for m, method in byte_buffer_uses(clean, name) if method]
            edit = _byte_atomic_call(clean, name, *calls[-1]) if calls else None
            if edit is None:
                break
            text = text[: edit[0]] + edit[2] + text[edit[1] :]
    return text


def _byte_atomic_call(
    clean: str, name: str, m: re.Match[str], method: str | None
) -> tuple[int, int, str] | None:
    """The span of one call of :func:`byte_atomics` and the text that replaces it."""
    atomic, values, original = BYTE_ATOMIC_METHODS[method or ""]
    end = closing(clean, m.end() - 1)
    args = [clean[i:j].strip() for i, j in comma_spans(clean, m.end(), end - 1)]
    if end < 0 or not values <= len(args) - 1 <= values + original:
        return None
    call = f"{name}[({args[0]}) / 4].{atomic}({', '.join(args[1 : 1 + values])})"
    if len(args) > 1 + values:
        call = f"({args[-1]}) = {call}"
    return m.start(), end, call


# A typed buffer of 32-bit scalars or 2- or 4-vectors of them: WGSL holds one as a storage array
# of the same bytes (a 3-vector's array stride would be 16, its texels 12 bytes apart).
_TYPED_BUFFER = re.compile(
    r"(?<![\w.:])(RW)?Buffer(\s*<\s*(?:float|int|uint|float32_t|int32_t|uint32_t|dword)"
    r"(?:[124])?\s*>)"
)


def typed_buffers_as_structured(text: str, names: Collection[str]) -> str:
    """The declarations of the typed buffers ``names``, ``Buffer<T>`` (``RWBuffer<T>``), as
    ``StructuredBuffer<T>`` (``RWStructuredBuffer<T>``), for WGSL, which has no texel buffers:
    a storage array of T, read (written) by index or ``Load`` as the typed buffer is, at the
    same byte offsets (T a 32-bit scalar or a 2- or 4-vector of one; a buffer whose
    ``GetDimensions`` the code calls is left alone: a storage array has no such query). Columns
    after it on its line move."""
    clean = strip_comments(text)
    for m in reversed(list(_TYPED_BUFFER.finditer(clean))):
        declared = re.match(r"\s*(\w+)", clean[m.end() :])
        if declared is not None and declared.group(1) in names:
            text = f"{text[: m.start()]}{m.group(1) or ''}StructuredBuffer{text[m.start(2) :]}"
    return text


def one_component_texels(text: str) -> str:
    """A texture or typed buffer of one-component vectors (``Texture2D<float1>``) as one of the
    scalar (``Texture2D<float >``): the same texels on every target, where Slang's WGSL refuses
    the vector (E41400 "WGSL supports only f32/i32/u32 type textures"); a read gives the scalar,
    which converts to the one-component vector and takes its swizzles. Columns stay."""
    clean = strip_comments(text)
    ones = [m.start(1) for m in _ONE_COMPONENT_TEXEL.finditer(clean)]
    for i in reversed(ones):
        text = text[:i] + " " + text[i + 1 :]
    return text


def with_inserted(text: str, inserts: Collection[tuple[int, int, str]]) -> str:
    """The text with each ``(line, column, text)`` inserted at that position (1-based): the
    lines stay, the columns after an insertion on its line move."""
    lines = text.split("\n")
    for line, column, inserted in sorted(inserts, reverse=True):
        if 1 <= line <= len(lines):
            here = lines[line - 1]
            lines[line - 1] = here[: column - 1] + inserted + here[column - 1 :]
    return "\n".join(lines)


_VECTORS = ("float", "float2", "float3", "float4")
# clip() of a matrix (HLSL takes scalars, vectors and matrices): Slang's SPIR-V aborts on it
# (SIGABRT) and its WGSL and Metal have no clip; row by row, as a generic overload no vector
# argument matches (on SPIR-V an overload of ``clip`` itself, so vector calls stay Slang's).
MATRIX_CLIP = (
    "void {name}<let R : int, let C : int>(matrix<float, R, C> x) "
    "{{ for (int i = 0; i < R; i++) if (any(x[i] < 0)) discard; }}"
)
# HLSL intrinsics Slang has only for some targets, as helpers that do the same in HLSL it can
# compile for the others: name -> (the targets that need the helper, its definitions).
HELPERS: dict[str, tuple[frozenset[Target], str]] = {
    # clip(x): discard when any component is negative.
    "clip": (
        frozenset({Target.Wgsl, Target.Msl}),
        " ".join(f"void oneshader_clip({t} x) {{ if (any(x < 0)) discard; }}" for t in _VECTORS)
        + " "
        + MATRIX_CLIP.format(name="oneshader_clip"),
    ),
    # Metal indexes an argument array of textures or samplers with any value.
    "NonUniformResourceIndex": (
        frozenset({Target.Msl}),
        "uint oneshader_NonUniformResourceIndex(uint i) { return i; } "
        "int oneshader_NonUniformResourceIndex(int i) { return i; }",
    ),
    # Without sparse residency every texel is resident (the status arguments are dropped:
    # without_status_arguments).
    "CheckAccessFullyMapped": (
        frozenset({Target.Wgsl, Target.Msl}),
        "\n#define oneshader_CheckAccessFullyMapped(status) true\n",
    ),
    # dst(a, b) is (1, a.y * b.y, a.z, b.w) by definition (Slang crashes on it: SPIR-V, Metal).
    "dst": (
        frozenset(Target),
        " ".join(
            f"{t} oneshader_dst({t} a, {t} b) {{ return {t}(1, a.y * b.y, a.z, b.w); }}"
            for t in ("float4", "half4")
        ),
    ),
    # Wave operations Slang's WGSL writes as what the naga of wgpu-py does not know
    # (WaveIsFirstLane: subgroupElect) or not at all (E36107), in the subgroup operations it
    # knows: the first active lane is the one whose index subgroupBroadcastFirst gives; a
    # quad is four consecutive lanes (SPIR-V's and WGSL's quads), read by subgroupShuffle;
    # the bits of a ballot counted word by word.
    "WaveIsFirstLane": (
        frozenset({Target.Wgsl}),
        "bool oneshader_WaveIsFirstLane() "
        "{ return WaveReadLaneFirst(WaveGetLaneIndex()) == WaveGetLaneIndex(); }",
    ),
    "QuadReadLaneAt": (
        frozenset({Target.Wgsl}),
        " ".join(
            f"{t}{n} oneshader_QuadReadLaneAt({t}{n} x, uint i) "
            "{ return WaveReadLaneAt(x, (WaveGetLaneIndex() & ~3u) + (i & 3u)); }"
            for t in ("float", "int", "uint")
            for n in ("", "2", "3", "4")
        ),
    ),
    "WaveActiveCountBits": (
        frozenset({Target.Wgsl}),
        "uint oneshader_WaveActiveCountBits(bool b) { uint4 m = WaveActiveBallot(b); "
        "return countbits(m.x) + countbits(m.y) + countbits(m.z) + countbits(m.w); }",
    ),
    # fwidth(x) is abs(ddx(x)) + abs(ddy(x)) by definition.
    "fwidth": (
        frozenset({Target.Msl}),
        " ".join(
            f"{t} oneshader_fwidth({t} x) {{ return abs(ddx(x)) + abs(ddy(x)); }}" for t in _VECTORS
        ),
    ),
}


# asfloat16/asuint16/asint16 of a float literal (FidelityFX's ``asfloat16(1.0)``): DXC's literal
# converts to half, the one 16-bit type it can be; Slang's ``1.0`` is a float, which converts to
# half, int16_t and uint16_t alike (E39999, ambiguous call). Overloads taking float (any width)
# make the literal's half explicit.
SIXTEEN_BIT_CASTS = re.compile(r"(?<![\w.:])as(?:float|uint|int)16(?=\s*\()")
SIXTEEN_BIT_LITERALS = " ".join(
    f"{r}{n} as{name}16(float{n} x) {{ return {inner}; }}"
    for n in ("", "2", "3", "4")
    for name, r, inner in (
        ("float", "half", f"half{n}(x)"),
        ("uint", "uint16_t", f"asuint16(half{n}(x))"),
        ("int", "int16_t", f"asint16(half{n}(x))"),
    )
)


def helper_calls(name: str) -> re.Pattern[str]:
    """Calls of the free function ``name`` (not methods, not qualified names)."""
    return re.compile(rf"(?<![\w.:]){name}(?=\s*\()")


def with_helpers(text: str, names: Collection[str]) -> str:
    """Calls of each of ``names`` renamed to its helper, ``oneshader_<name>`` (see
    :data:`HELPERS`); the columns after a call on its line move."""
    for name in names:
        clean = strip_comments(text)
        out, last = [], 0
        for m in helper_calls(name).finditer(clean):
            out.append(text[last : m.start()])
            out.append(f"oneshader_{name}")
            last = m.end()
        out.append(text[last:])
        text = "".join(out)
    return text


# SV_ClipDistanceN/SV_CullDistanceN, which Slang's WGSL refuses (E55202), handed to it as
# ordinary varyings under a marker semantic of the same length (columns stay): the WGSL patch
# makes the vertex outputs WebGPU's clip_distances built-in and drops unread pixel inputs.
DISTANCE_MARKERS = {"SV_ClipDistance": "OS_CLIPDISTANCE", "SV_CullDistance": "OS_CULLDISTANCE"}
DISTANCE_SEMANTIC = re.compile(r"(:\s*)(SV_(?:Clip|Cull)Distance)(\d*)\b", re.IGNORECASE)
_DISTANCE_LOCATION = 64  # Slang's WGSL numbers varyings itself; this only has to be explicit


def distances_as_varyings(text: str) -> str:
    """Each ``: SV_ClipDistanceN`` (``SV_CullDistanceN``) as ``: OS_CLIPDISTANCEN``
    (:data:`DISTANCE_MARKERS`), given a ``[[vk::location]]`` of its own where a sibling in its
    struct or parameter list has one (Slang refuses explicit and implicit locations mixed)."""
    clean = strip_comments(text)
    edits: list[tuple[int, int, str]] = []
    for n, m in enumerate(DISTANCE_SEMANTIC.finditer(clean)):
        marker = DISTANCE_MARKERS["SV_" + m.group(2)[3:7].capitalize() + "Distance"]
        edits.append((m.start(2), m.end(2), marker))
        opened = _unclosed(clean, m.start())
        closes = [i for i in (clean.find("}", m.end()), clean.find(")", m.end())) if i >= 0]
        scope = clean[opened + 1 : min(closes, default=len(clean))]
        if "vk::location" in scope:
            member = max(opened, *(clean.rfind(c, opened, m.start()) for c in ";,")) + 1
            at = len(clean[member:]) - len(clean[member:].lstrip()) + member
            edits.append((at, at, f"[[vk::location({_DISTANCE_LOCATION + n})]] "))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


INSTANCE_MARKER = "OS_INSTANCEID"  # SV_InstanceID between the stages: an ordinary varying


def instance_ids_as_varyings(text: str, at: Collection[tuple[int, int]]) -> str:
    """The ``SV_InstanceID`` semantic at each (line, column) (``varyings.instance_id_semantics``:
    a vertex output or pixel input, which DXC passes as an ordinary varying and Slang as a
    built-in no target has there) as :data:`INSTANCE_MARKER`, of the same length."""
    starts = line_offsets(text)
    for line, column in at:
        i = starts[line - 1] + column - 1
        text = text[:i] + INSTANCE_MARKER + text[i + len(INSTANCE_MARKER) :]
    return text


def _unclosed(text: str, i: int) -> int:
    """Where the ``{`` or ``(`` that encloses position ``i`` opens (-1 at file scope)."""
    depth = 0
    for j in range(i - 1, -1, -1):
        if text[j] in ")}]":
            depth += 1
        elif text[j] in "({[":
            if depth == 0 and text[j] != "[":
                return j
            depth = max(depth - 1, 0)
    return -1


_ONE = r"\(?\s*1(?:\.0*)?[fFhH]?\s*\)?"


def unit_point_sizes(texts: Iterable[str], names: Collection[str]) -> set[str]:
    """The PointSize members of ``names`` that the code only ever sets to the constant 1.0
    (what Vulkan validation asks a point-list vertex shader to write): every ``.name`` in
    ``texts`` is a statement ``<object>.name = 1.0;``."""
    out = set()
    cleaned = [strip_comments(t) for t in texts]
    for name in names:
        uses = [m for t in cleaned for m in re.finditer(rf"\.\s*{name}\b", t)]
        sets = [m for t in cleaned for m in re.finditer(rf"\.\s*{name}\s*=\s*{_ONE}\s*;", t)]
        if uses and len(uses) == len(sets):
            out.add(name)
    return out


def without_point_size(text: str, name: str) -> str:
    """The ``[[vk::builtin("PointSize")]]`` member ``name`` and its ``<object>.name = 1.0;``
    statements blanked out (lines and columns kept): WGSL draws 1-pixel points anyway."""
    clean = strip_comments(text)
    spans = [
        (m.start(), m.end())
        for m in re.finditer(
            rf'\[\[\s*vk::builtin\(\s*"PointSize"\s*\)\s*\]\][^;]*\b{name}\b[^;]*;', clean
        )
    ]
    for m in re.finditer(rf"\.\s*{name}\s*=\s*{_ONE}\s*;", clean):
        spans.append((postfix_start(clean, m.start()), m.end()))
    return blanked(text, spans)


def postfix_start(text: str, i: int) -> int:
    """Where the postfix expression ending in the member access at ``i`` (its ``.`` or ``->``)
    begins: identifiers, ``.``/``->`` and balanced ``[...]``/``(...)`` are walked back over."""
    j = i
    while j > 0:
        k = j
        while k > 0 and text[k - 1] in " \t":
            k -= 1
        c = text[k - 1] if k > 0 else ""
        if c.isalnum() or c == "_":
            while k > 0 and (text[k - 1].isalnum() or text[k - 1] == "_"):
                k -= 1
        elif c in ")]":
            opening = "(" if c == ")" else "["
            depth = 0
            while k > 0:
                k -= 1
                if text[k] == c:
                    depth += 1
                elif text[k] == opening:
                    depth -= 1
                    if depth == 0:
                        break
            if c == "]":
                j = k
                continue
            # a parenthesised base ((*p).x) or a call (f(x).y): take the callee's name too
            while k > 0 and (text[k - 1].isalnum() or text[k - 1] == "_"):
                k -= 1
        else:
            return j
        j = k
        before = text[:j].rstrip()
        if before.endswith("->"):
            j = len(before) - 2
        elif before.endswith(".") and not before[-2:-1].isdigit():
            j = len(before) - 1
        else:
            return j
    return j


MAJOR_ARRAY = re.compile(
    r"\b(row_major|column_major)(\s+)((?:\w+\d+x\d+|matrix\s*<[^;>]*>))(?=\s+\w+\s*\[)"
)


def matrix_array_majorness(text: str) -> str:
    """``row_major float2x3 m[2]`` as ``_os_major0 m[2]`` after ``typedef row_major float2x3
    _os_major0;``: Slang drops the majorness of an array of matrices (stride 48, DXC's 32) but
    keeps a typedef's. The typedef goes right after the ``;``, ``{`` or ``}`` before the
    declaration (usually the end of the previous line), so the declaration's columns stay."""
    clean = strip_comments(text)
    edits: list[tuple[int, int, str]] = []
    for n, m in enumerate(MAJOR_ARRAY.finditer(clean)):
        alias = f"_os_major{n}"
        where = max(clean.rfind(c, 0, m.start()) for c in ";{}") + 1
        edits.append((where, where, f" typedef {m.group(1)} {m.group(3)} {alias};"))
        edits.append((m.start(), m.end(), alias.ljust(m.end() - m.start())))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def bitfield_words(text: str, scanned: SourceFile) -> str:
    """A zero-width ``uint _os_wordN : 0;`` before each bitfield whose type differs from the
    bitfield before it: DXC starts a new word there (``uint a : 1; int b : 1;`` are two words),
    Slang would pack both into one. Inserted after the ``;`` that ends the member before, so
    the line and the member's columns stay."""
    starts = line_offsets(text)
    clean = strip_comments(text)
    where: list[int] = []
    for sdef in scanned.structs.values():
        if sdef.kind != "struct":
            continue
        before = ""
        for f in sdef.fields:
            bits = f.semantic.isdigit()
            if bits and before and f.type_text != before:
                name_at = starts[f.line - 1] + f.column - 1
                where.append(max(clean.rfind(";", 0, name_at), clean.rfind("{", 0, name_at)) + 1)
            before = f.type_text if bits else ""
    for n, at in sorted(enumerate(where), key=lambda x: -x[1]):
        text = f"{text[:at]} uint _os_word{n} : 0;{text[at:]}"
    return text


def block_resources_as_globals(text: str, scanned: SourceFile) -> str:
    """Resources declared in a cbuffer body declared before the block instead, as DXC makes
    them (Slang would emit them as ``Block.tex``); a block left with nothing but resources is
    dropped (its header and closing brace blanked), as DXC drops it. The declarations go after
    the ``;``, ``{`` or ``}`` before the block, so lines stay."""
    if not scanned.block_resources:
        return text
    clean = strip_comments(text)
    edits: list[tuple[int, int, str]] = []
    moved: dict[int, list[str]] = {}
    for block, start, end in scanned.block_resources:
        where = max(clean.rfind(c, 0, block) for c in ";{}") + 1
        moved.setdefault(where, []).append(" ".join(text[start:end].split()))
        edits.append((start, end, " " * (end - start)))
    edits += [(at, at, " " + " ".join(decls)) for at, decls in moved.items()]
    for start, brace, close, end in scanned.resource_only_blocks:
        edits.append((start, brace, " " * (brace - start)))
        edits.append((close, end, " " * (end - close)))
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


PACK_MATRIX = re.compile(
    r"^[ \t]*#[ \t]*pragma[ \t]+pack_matrix[ \t]*\([ \t]*(row_major|column_major)[ \t]*\)[^\n]*",
    re.MULTILINE,
)
_MATRIX_DECLARED = re.compile(
    r"(?<![\w.])(?P<type>(?:[a-z]+(?:\d+[a-z_]*)?[1-4]x[1-4])|matrix\s*<[^;>]*>)"
    r"(?=\s*>|\s+[A-Za-z_]\w*\s*[;:\[=,)])"
)


def pack_matrix(text: str) -> str:
    """DXC's ``#pragma pack_matrix(row_major)`` (Slang ignores it, E15601): from the pragma to
    the next one, every matrix declared without its own majorness gets the pragma's (a
    member, a global, a parameter, a local, a template argument; not a function's result,
    where Slang allows no modifier). The pragma line is blanked."""
    clean = strip_comments(text)
    pragmas = list(PACK_MATRIX.finditer(clean))
    if not pragmas:
        return text
    edits: list[tuple[int, int, str]] = [
        (m.start(), m.end(), " " * (m.end() - m.start())) for m in pragmas
    ]
    for n, pragma in enumerate(pragmas):
        end = pragmas[n + 1].start() if n + 1 < len(pragmas) else len(clean)
        for m in _MATRIX_DECLARED.finditer(clean, pragma.end(), end):
            before = clean[: m.start()].rstrip()
            if before.endswith(("row_major", "column_major")):
                continue
            edits.append((m.start(), m.start(), f"{pragma.group(1)} "))
    for start, stop, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[stop:]
    return text


SPACE_ONLY = re.compile(r":\s*register\s*\(\s*space\d+\s*\)")


def without_space_only_registers(text: str) -> str:
    """DXC's ``: register(space1)`` (a set, no binding) blanked: Slang rejects it (E31222), and
    oneshader places such a resource itself (the next free binding of that set)."""
    clean = strip_comments(text)
    chars = list(text)
    for m in SPACE_ONLY.finditer(clean):
        chars[m.start() : m.end()] = " " * (m.end() - m.start())
    return "".join(chars)


# The register letter Slang asks of a resource type whose letter DXC lets be either t or s
# (Sema's DiagnoseRegisterType: read-only textures and samplers).
_T_OR_S = {
    **{t.name: "t" for t in TEXTURE_TYPES if not t.name.startswith("RW")},
    **{t.name: "s" for t in SAMPLER_TYPES},
}
_REGISTER_LETTER = re.compile(r"register\s*\(\s*([A-Za-z])")


def register_letters(text: str, scanned: SourceFile) -> str:
    """``Texture2D t : register(s1)`` and ``SamplerState s : register(t1)`` with the letter
    Slang takes for the type (E31222 otherwise); DXC takes either letter for both, and its
    binding (the number, the space, the shift of the letter as written) is oneshader's
    placement, which reads the declaration, not this text. Same length: columns stay."""
    starts = line_offsets(text)
    chars = list(text)
    for d in scanned.declarations:
        wanted = _T_OR_S.get(d.base)
        if wanted is None or d.register is None or d.register[0] == wanted:
            continue
        line, col = d.register_pos
        m = _REGISTER_LETTER.match(text, starts[line - 1] + col - 1)
        if m is not None and m.group(1).lower() in "ts":
            chars[m.start(1)] = wanted
    return "".join(chars)


# X.IncrementCounter(), or X[i].IncrementCounter() for an array of buffers (i: one level of
# nested brackets): group "index" is "[i]" or "".
COUNTER_CALL = re.compile(
    r"\b(\w+)\s*(?P<index>\[(?:[^\[\]]|\[[^\[\]]*\])*\])?\s*\.\s*"
    r"(?P<op>Increment|Decrement)Counter\s*\(\s*\)"
)


def counter_calls(text: str) -> list[re.Match[str]]:
    return list(COUNTER_CALL.finditer(strip_comments(text)))


def with_counter_buffers(
    text: str, names: Mapping[str, Declaration], declared_here: Collection[str]
) -> str:
    """RW structured buffer counters as Slang can compile them (it rejects IncrementCounter):
    a companion ``RWStructuredBuffer<Atomic<uint>> X_counter`` declared at the end of X's line
    (for the ``declared_here`` in this file) and ``X.IncrementCounter()`` as
    ``X_counter[0].add(1u)`` (the same length), which returns the old value as DXC's does;
    DecrementCounter returns the new one, as DXC's."""
    out, last = [], 0
    for m in counter_calls(text):
        name = m.group(1)
        if name not in names:
            continue
        out.append(text[last : m.start()])
        counter = f"{counter_name(name)}{m.group('index') or ''}[0]"
        if m.group("op") == "Increment":
            out.append(f"{counter}.add(1u)")
        else:
            out.append(f"({counter}.sub(1u)-1u)")
        last = m.end()
    out.append(text[last:])
    return _with_companions("".join(out), names, declared_here)


def _with_companions(
    text: str, names: Mapping[str, Declaration], declared_here: Collection[str]
) -> str:
    """Each of ``declared_here``'s companion counter declared at the end of its line (an array
    of counters for an array of buffers)."""
    lines = text.split("\n")
    for name, decl in names.items():
        if name in declared_here and 1 <= decl.line <= len(lines):
            size = "" if decl.array is None else f"[{decl.array or ''}]"
            lines[decl.line - 1] += f" RWStructuredBuffer<Atomic<uint>> {counter_name(name)}{size};"
    return "\n".join(lines)


APPEND_CONSUME = re.compile(r"\b(Append|Consume)StructuredBuffer\b")


def with_append_consume_as_rw(
    text: str, names: Mapping[str, Declaration], declared_here: Collection[str]
) -> str:
    """Append/consume buffers for targets without hidden counters (WGSL, Metal): each of
    ``declared_here`` declared as a ``RWStructuredBuffer`` (padded to the same length) with the
    companion counter of :func:`with_counter_buffers`; ``X.Append(v)`` as
    ``X[X_counter[0].add(1u)]=(v)`` and ``X.Consume()`` as ``X[X_counter[0].sub(1u)-1u]``, the
    slots DXC's SPIR-V uses (Append takes the old count, Consume the new one)."""
    if not names:
        return text
    clean = strip_comments(text)
    chars = list(text)
    lines_of = {d.line for n, d in names.items() if n in declared_here}
    for m in APPEND_CONSUME.finditer(clean):
        if clean.count("\n", 0, m.start()) + 1 in lines_of:
            chars[m.start() : m.end()] = "RWStructuredBuffer".ljust(m.end() - m.start())
    text = "".join(chars)
    clean = strip_comments(text)
    alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    call = re.compile(rf"\b({alts})\s*\.\s*(?:(Append)\s*\(|(Consume)\s*\(\s*\))")
    out, last = [], 0
    for m in call.finditer(clean):
        name = m.group(1)
        out.append(text[last : m.start()])
        if m.group(2):
            out.append(f"{name}[{counter_name(name)}[0].add(1u)]=(")
        else:
            out.append(f"{name}[{counter_name(name)}[0].sub(1u)-1u]")
        last = m.end()
    out.append(text[last:])
    return _with_companions("".join(out), names, declared_here)


# Metal: what GetDimensions on a buffer becomes (docs/compiler.md "Buffer lengths on Metal"): the
# length in bytes comes from the companion constant buffer; a structured buffer's stride is
# Metal's own sizeof of the element (the stride the code indexes by, whatever its layout).
_STRIDE = '{ __target_switch { case metal: __intrinsic_asm "uint(sizeof(*$0))"; } }'
_LENGTH_HELPERS = " ".join(
    [
        *(
            f"uint oneshader_stride<T>({b}<T> b) {_STRIDE} "
            f"void oneshader_GetDimensions<T>({b}<T> b, uint bytes, out uint n, out uint s) "
            "{ s = oneshader_stride(b); n = bytes / s; }"
            for b in ("StructuredBuffer", "RWStructuredBuffer")
        ),
        *(
            f"void oneshader_GetDimensions({b} b, uint bytes, out uint n) {{ n = bytes; }}"
            for b in ("ByteAddressBuffer", "RWByteAddressBuffer")
        ),
    ]
)


def length_queries(text: str, names: Collection[str]) -> list[re.Match[str]]:
    """``X.GetDimensions(`` calls on the buffers ``names`` (not in comments)."""
    if not names:
        return []
    alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w.:])({alts})\s*\.\s*GetDimensions\s*\(")
    return list(pattern.finditer(strip_comments(text)))


def with_buffer_lengths(text: str, names: Collection[str]) -> str:
    """Metal: ``X.GetDimensions(n, s)`` on each global buffer of ``names`` as
    ``oneshader_GetDimensions(X, oneshader_lengths.X, n, s)`` (the helpers and the companion of
    :func:`buffer_lengths_prelude`); the columns after the call's head on its line move."""
    out, last = [], 0
    for m in length_queries(text, names):
        name = m.group(1)
        out.append(text[last : m.start()])
        out.append(f"oneshader_GetDimensions({name}, {SLANG_LENGTHS}.{name}, ")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def buffer_lengths_prelude(names: Collection[str]) -> str:
    """The helpers of :func:`with_buffer_lengths` and the companion constant buffer, one
    ``uint`` (the buffer's size in bytes) per buffer of ``names``, in that order."""
    members = " ".join(f"uint {n};" for n in names)
    return (
        f"{_LENGTH_HELPERS} struct oneshader_BufferLengths {{ {members} }}; "
        f"ConstantBuffer<oneshader_BufferLengths> {SLANG_LENGTHS};"
    )


# A bool value of a byte-address buffer's Store passed through this (``with_byte_stores``):
# Slang stores a bool as ``bitcast<u32>(b)`` in WGSL (not WGSL), ``as_type<uint32_t>(b)`` in
# Metal (a 1-byte bool), a bool vector in SPIR-V as a bool in a storage buffer (spirv-val
# refuses it); DXC stores the uint 0 or 1, as the bool overloads do. A value that only looks
# boolean (a template's ``<``) meets an identity overload of its type (a generic crashes Slang).
BYTE_STORE_PRELUDE = " ".join(
    [
        *(
            f"uint{n} oneshader_stored(bool{n} b) {{ return select(b, uint{n}(1), uint{n}(0)); }}"
            for n in ("", "2", "3", "4")
        ),
        *(
            f"{t}{n} oneshader_stored({t}{n} v) {{ return v; }}"
            for t in ("float", "int", "uint", "half")
            for n in ("", "2", "3", "4")
        ),
    ]
)

_BOOL_CALL = re.compile(r"(?:isnan|isinf|isfinite|any|all|and|or|bool[1-4]?)\s*\(")
_COMPARISON = re.compile(r"==|!=|<=|>=|&&|\|\||(?<![<>])[<>](?![<>=])")


def _boolean(value: str, bools: Collection[str]) -> bool:
    """Whether a Store's value (comments stripped) is a bool as written: a comparison or
    logical operation outside brackets, a negation, ``true``/``false``, a call of ``isnan``
    and its kin or a ``bool`` cast, or a variable declared ``bool`` (``bools``)."""
    v = value.strip()
    depth, top = 0, []
    for c in v:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(c, 0)
        top.append(c if depth == 0 else " ")
    outside = "".join(top)
    if "?" in outside:
        return False  # a ternary's value is its branches'
    first = re.match(r"\w+", v)
    return bool(
        _COMPARISON.search(outside)
        or v.startswith("!")
        or v in ("true", "false")
        or (_BOOL_CALL.match(v) and v.endswith(")"))
        or (first is not None and first.group(0) in bools and re.fullmatch(r"\w+(?:\.\w+)?", v))
    )


def byte_stores(text: str, names: Collection[str]) -> list[tuple[int, int]]:
    """The spans of the bool values (:func:`_boolean`) of ``X.Store(``, ``X.Store2(`` ..
    ``X.Store<T>(`` calls on the buffers ``names`` in ``text``."""
    if not names:
        return []
    clean = strip_comments(text)
    bools = set(re.findall(r"\bbool[1-4]?\s+(\w+)", clean))
    alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w.:])(?:{alts})\s*\.\s*Store[234]?\s*(?:<[^<>()]*>\s*)?\(")
    spans = []
    for m in pattern.finditer(clean):
        depth, comma = 0, None
        for i in range(m.end(), len(clean)):
            c = clean[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    if comma is not None and _boolean(clean[comma + 1 : i], bools):
                        spans.append((comma + 1, i))
                    break
                depth -= 1
            elif c == "," and depth == 0:
                comma = i if comma is None else comma
    return spans


def with_byte_stores(text: str, names: Collection[str]) -> str:
    """Each bool value of a Store on ``names`` (:func:`byte_stores`) as
    ``oneshader_stored(value)`` (:data:`BYTE_STORE_PRELUDE`); the columns after the value's
    start on its line move (and after the call's end on its line)."""
    out, last = [], 0
    for start, end in byte_stores(text, names):
        out += [text[last:start], " oneshader_stored(", text[start:end], ")"]
        last = end
    out.append(text[last:])
    return "".join(out)


_VOID_CAST = re.compile(r"\(\s*void\s*\)")


def without_void_casts(text: str) -> str:
    """A statement's cast to void (``(void)x;``, the idiom that silences an unused variable)
    blanked to spaces: the expression is evaluated and discarded all the same. Slang fails on
    it for every target without a word (SPIR-V: an internal error). A parameter list ``f(void)``
    follows a name, so it is left alone."""
    code = strip_comments(text)
    return blanked(text, (m.span() for m in _VOID_CAST.finditer(code) if _starts(code, m.start())))


def _starts(code: str, at: int) -> bool:
    """Whether ``at`` begins a statement: first on its line, or after ``;``, ``{`` or ``}``
    with only white space between. (Looked at backwards from each cast: a pattern that tried
    every line start forwards cost the square of a run of blank or comment lines.)"""
    begin = at
    while begin > 0 and code[begin - 1].isspace():
        begin -= 1
    return begin == 0 or code[begin - 1] in ";{}" or "\n" in code[begin:at]


def rename_at(text: str, names: Collection[tuple[int, int, str, str]]) -> str:
    """The text with each (line, column, old, new) identifier renamed where it is declared
    (columns after it on its line shift by the difference in length)."""
    lines = text.split("\n")
    for line, col, old, new in sorted(names, key=lambda n: (n[0], -n[1])):
        if 1 <= line <= len(lines):
            row = lines[line - 1]
            if row[col - 1 : col - 1 + len(old)] == old:
                lines[line - 1] = row[: col - 1] + new + row[col - 1 + len(old) :]
    return "\n".join(lines)


_NARROW_TEXEL = re.compile(
    r"\b(SubpassInput(?:MS)?\s*<\s*)((?:float|int|uint|half)(?:16_t|32_t)?)([123]?)(\s*>)"
)


def subpass_inputs_as_vectors(
    text: str, names: Mapping[str, Declaration], declared_here: Collection[str]
) -> str:
    """``SubpassInput<float>`` (or a 2- or 3-component texel) as ``SubpassInput<float4>``, its
    ``x.SubpassLoad(...)`` as ``x.SubpassLoad(...).x`` (``.xy``, ``.xyz``): Slang's SPIR-V
    reads a narrower texel with an OpImageRead of that width, which spirv-val rejects (Vulkan
    reads 4 components), where DXC reads 4 and keeps the first. Columns after a change on its
    line shift by the characters added."""
    lines = text.split("\n")
    width: dict[str, int] = {}
    for name, decl in names.items():
        m = _NARROW_TEXEL.search(decl.type_text)
        if m is None:
            continue
        width[name] = int(m.group(3) or 1)
        if name not in declared_here or not 1 <= decl.line <= len(lines):
            continue
        row = lines[decl.line - 1]
        here = _NARROW_TEXEL.search(row[: decl.column - 1])
        if here is not None:
            lines[decl.line - 1] = f"{row[: here.end(2)]}4{row[here.end(3) :]}"
    if not width:
        return text
    text = "\n".join(lines)
    clean = strip_comments(text)
    alts = "|".join(re.escape(n) for n in sorted(width, key=len, reverse=True))
    out, last = [], 0
    for m in re.finditer(rf"\b({alts})\s*\.\s*SubpassLoad\s*\(", clean):
        end = closing(clean, m.end() - 1)
        end = len(clean) if end < 0 else end
        out.append(text[last:end])
        out.append("." + "xyz"[: width[m.group(1)]])
        last = end
    out.append(text[last:])
    return "".join(out)


def outputs_struct(entry: str) -> str:
    """The struct the wrapper of ``entry_outputs_as_results`` returns."""
    return f"{entry}_oneshader_outputs"


_DIRECTION = re.compile(r"\b(in|out|inout)\b")
_PARAMETER_NAME = re.compile(r"(\w+)\s*(?:\[[^\]]*\]\s*)*(?::\s*\w+\s*)?$")
_SEMANTIC = re.compile(r":\s*\w+\s*$")
_ENTRY_ATTRIBUTE = re.compile(r"\[\s*(?:shader|earlydepthstencil)\b[^\]]*\]")


def entry_outputs_as_results(
    text: str,
    line: int,
    column: int,
    name: str,
    hidden: str,
    direct: bool = False,
    flat: Sequence[tuple[str, Sequence[str], Sequence[str]]] = (),
) -> str:
    """The entry point ``name`` (declared at ``line``:``column``) with its ``out``/``inout``
    parameters returned instead, for WGSL, whose entry points return their outputs (Slang
    writes pointer parameters naga refuses). The function becomes ``hidden`` (a name of the
    same length, so columns stay) and a wrapper named ``name``, appended after its closing
    brace on the same line (lines stay), returns a struct of the outputs, each a member with
    the parameter's name, type and semantic (the return value first, as member ``result``, the
    name the reflection gives it); ``direct``: the one ``out`` parameter's own struct (Slang
    loses a pixel input's built-ins of a struct it also finds inside another); ``flat``: the
    struct parameters beside other outputs, returned member by member (name, the members'
    declarations, their names: ``precheck.flattened_outputs``), through a local the function
    fills. The entry point's attributes move to the wrapper. Unchanged when the function is
    not found as expected."""
    code = strip_comments(text)
    at = line_offsets(code)[line - 1] + column - 1
    if code[at : at + len(name)] != name:
        return text
    open_ = code.find("(", at + len(name))
    close = closing(code, open_) if open_ >= 0 else -1
    brace = code.find("{", close) if close >= 0 else -1
    if brace < 0 or code[close:brace].strip(" \t\r\n:").count(";"):
        return text
    end = closing(code, brace)
    if end < 0:
        return text
    head_start = max(code.rfind(";", 0, at), code.rfind("}", 0, at)) + 1
    head = code[head_start:at]
    returns = _ENTRY_ATTRIBUTE.sub("", head).strip()
    entry_attributes = list(_ENTRY_ATTRIBUTE.finditer(code, head_start, at))  # to the wrapper
    attributes = " ".join(m.group(0) for m in entry_attributes)
    result_semantic = code[close:brace].strip()
    ins, args, copies = [], [], []
    members: list[str] = []
    after: list[str] = []  # the flattened members, copied from their locals after the call
    locals_: list[str] = []
    flats = {pname: (decls, names) for pname, decls, names in flat}
    semantics = []  # Slang checks system values on every function's parameters for WGSL
    for i, j in comma_spans(code, open_ + 1, close - 1):
        p = code[i:j]
        m = _PARAMETER_NAME.search(p.rstrip())
        if m is None:
            return text
        pname = m.group(1)
        semantic = _SEMANTIC.search(p)
        if semantic is not None:
            semantics.append((i + semantic.start(), i + semantic.end()))
        direction = _DIRECTION.search(p)
        bare = " ".join(_DIRECTION.sub(" ", p).split())
        if direction is None or direction.group(1) == "in":
            ins.append(bare)
            args.append(pname)
            continue
        if pname in flats:  # a struct beside other outputs: returned member by member
            decls, names = flats[pname]
            local = f"oneshader_{pname}"
            members.extend(decls)
            locals_.append(f"{bare.rsplit(pname, 1)[0].strip()} {local};")
            args.append(local)
            after.extend(f"oneshader_out.{n} = {local}.{n};" for n in names)
            if direction.group(1) == "inout":
                ins.append(bare)
                copies.append(f"{local} = {pname};")
            continue
        members.append(f"{bare};")
        args.append(f"oneshader_out.{pname}")
        if direction.group(1) == "inout":
            ins.append(bare)
            copies.append(f"oneshader_out.{pname} = {pname};")
    call = f"{hidden}({', '.join(args)});"
    if returns.split()[-1:] != ["void"]:  # first, as Slang and DXC list the result
        result = "oneshader_result" if "oneshader_out.result" in args else "result"
        members.insert(0, f"{returns} {result} {result_semantic};")
        call = f"oneshader_out.{result} = {call}"
    outputs = outputs_struct(name)
    if direct:  # the one out parameter, a struct: "S o;" (attributes, modifiers before)
        (only,) = [a for a in args if a.startswith("oneshader_out.")]
        outputs = members[0][:-1].split()[-2]
        call = call.replace(only, "oneshader_out")
        copies = [f"oneshader_out = {only.split('.', 1)[1]};" for _ in copies]
        members = []
    declaration = f" struct {outputs} {{ {' '.join(members)} }};" if members else ""
    wrapper = (
        f"{declaration} {attributes} {outputs} {name}("
        f"{', '.join(ins)}) {{ {outputs} oneshader_out; {' '.join([*locals_, *copies])} "
        f"{call} {' '.join(after)} return oneshader_out; }}"
    )
    text = blanked(text, [*(a.span() for a in entry_attributes), *semantics])
    return text[:at] + hidden + text[at + len(name) : end] + wrapper + text[end:]


# The argument counts at which a texture method's last argument is the sparse-residency status
# (``out uint``), whatever the texture type: Load(loc, offset, status) and a multisampled
# Load(coord, sample, offset, status) (three arguments: a status only if it is a uint);
# Sample(s, uv, offset, clamp, status); Gather(s, uv, offset, status) or with four offsets.
_STATUS_ARITY: dict[str, frozenset[int]] = {
    "Load": frozenset({3, 4}),
    "Sample": frozenset({5}),
    "SampleLevel": frozenset({5}),
    "SampleCmpLevelZero": frozenset({5}),
    "SampleBias": frozenset({6}),
    "SampleCmp": frozenset({6}),
    "SampleCmpLevel": frozenset({6}),
    "SampleGrad": frozenset({7}),
    **{
        f"Gather{c}{k}": frozenset({4, 7})
        for c in ("", "Cmp")
        for k in ("", "Red", "Green", "Blue", "Alpha")
    },
}
_STATUS_CALL = re.compile(r"\.\s*(" + "|".join(_STATUS_ARITY) + r")\s*\(")


def status_arguments(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of each sparse-residency status argument (with its comma) of
    a texture method call in ``text``: a last argument at a count only the status form has,
    that is a name the text declares ``uint``."""
    code = strip_comments(text)
    out = []
    for m in _STATUS_CALL.finditer(code):
        close = closing(code, m.end() - 1)
        spans = comma_spans(code, m.end(), close - 1) if close > 0 else []
        if len(spans) not in _STATUS_ARITY[m.group(1)] or len(spans) < 2:
            continue
        name = code[spans[-1][0] : spans[-1][1]].strip()
        if not re.fullmatch(r"[A-Za-z_]\w*", name) or not re.search(
            rf"\b(?:uint|uint32_t|dword)\s+{name}\b", code
        ):
            continue
        out.append((spans[-2][1], spans[-1][1]))
    return out


def without_status_arguments(text: str) -> str:
    """The text with every sparse-residency status argument blanked (columns stay): WGSL and
    Metal have no residency feedback, and every texel is resident there, which the
    ``CheckAccessFullyMapped`` helper says."""
    return blanked(text, status_arguments(text))


_LOAD = re.compile(r"\b(\w+)\s*\.\s*Load\s*\(")
# For WGSL and Metal, before the file (``without_load_offsets``): the coordinate plus the offset
# widened with zeros (a mip level, an array layer), per (coordinate, offset) shape.
OFFSET_HELPER = " ".join(
    f"{t}{n} oneshader_offset({t}{n} c, {o} o) {{ return c + {t}{n}({pad}); }}"
    for t in ("int", "uint")
    for n, o, pad in (
        (2, "int", "o, 0"),
        (2, "int2", "o"),
        (3, "int", "o, 0, 0"),
        (3, "int2", "o, 0"),
        (4, "int2", "o, 0, 0"),
        (4, "int3", "o, 0"),
    )
)
# A Load's argument count with an offset: Texture2D.Load(location, offset), a multisampled
# Load(coordinate, sample, offset).
_LOAD_WITH_OFFSET = {
    **dict.fromkeys(("Texture1D", "Texture1DArray", "Texture2D", "Texture2DArray", "Texture3D"), 2),
    **dict.fromkeys(("Texture2DMS", "Texture2DMSArray"), 3),
}
_TEXTURE_DECLARATION = re.compile(
    r"\b(" + "|".join(_LOAD_WITH_OFFSET) + r")\b\s*(?:<[^<>]*(?:<[^<>]*>[^<>]*)?>)?\s+(\w+)"
)


def offset_textures(texts: Iterable[str]) -> dict[str, str]:
    """The texture type of each name ``texts`` declare as a texture whose Load takes an offset
    (what :func:`load_offsets` needs: found once for all the files, not once per file)."""
    return {
        m.group(2): m.group(1)
        for t in texts
        for m in _TEXTURE_DECLARATION.finditer(strip_comments(t))
    }


def load_offsets(text: str, textures: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """Each texture ``Load`` with an offset (the texture one of :func:`offset_textures`) as
    (start, end, new arguments): ``oneshader_offset(location, offset)`` and the sample index
    of a multisampled one. Slang does not add the offset for WGSL and Metal (E36107)."""
    code = strip_comments(text)
    edits = []
    for m in _LOAD.finditer(code):
        close = closing(code, m.end() - 1)
        spans = comma_spans(code, m.end(), close - 1) if close > 0 else []
        if len(spans) != _LOAD_WITH_OFFSET.get(textures.get(m.group(1), ""), 0):
            continue
        args = [text[a:b].strip() for a, b in spans]
        call = ", ".join([f"oneshader_offset({args[0]}, {args[-1]})", *args[1:-1]])
        edits.append((m.end(), close - 1, call))
    return edits


def without_load_offsets(text: str, textures: Mapping[str, str]) -> str:
    """The text with ``load_offsets`` made (columns after such a call on its line move)."""
    for i, j, call in reversed(load_offsets(text, textures)):
        text = text[:i] + call + text[j:]
    return text


_PRINTF = helper_calls("printf")
_STATEMENT_END = re.compile(r"\s*;")


def printf_calls(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of each ``printf(...);`` statement in ``text``."""
    code = strip_comments(text)
    out = []
    for m in _PRINTF.finditer(code):
        close = closing(code, code.index("(", m.end()))
        semicolon = _STATEMENT_END.match(code, close) if close > 0 else None
        if semicolon is not None:
            out.append((m.start(), semicolon.end()))
    return out


def without_printf(text: str) -> str:
    """The text with every ``printf`` statement blanked (lines and columns stay): debug printf
    exists on SPIR-V only, and has no effect on what a shader computes."""
    return blanked(text, printf_calls(text))


# D3D's and Vulkan's standard sample positions (1, 2, 4, 8, 16 samples; the n positions of n
# samples from index n - 1), in 1/16 pixel from the pixel's centre: also WebGPU's (4 samples,
# the only count it has beside 1) and Metal's default positions.
STANDARD_SAMPLE_POSITIONS = (
    (0, 0),
    *((4, 4), (-4, -4)),
    *((-2, -6), (6, -2), (-6, 2), (2, 6)),
    *((1, -3), (-1, 3), (5, 1), (-3, -5), (-5, 5), (-7, -1), (3, 7), (7, -7)),
    *((1, 1), (-1, -3), (-3, 2), (4, -1), (-5, -2), (2, 5), (5, 3), (3, -5)),
    *((-2, 6), (0, -7), (-4, -6), (-6, 4), (-8, 0), (7, -4), (6, 7), (-7, -8)),
)
# Before the file, for every target (``with_sample_positions``): WGSL and Metal cannot ask for
# a sample's position, Slang's SPIR-V crashes on it (DXC's SPIR-V holds this table too); the
# texture tells its sample count.
SAMPLE_POSITION_HELPER = (
    "static const int2 oneshader_sample_positions[31] = { "
    + ", ".join(f"int2({x}, {y})" for x, y in STANDARD_SAMPLE_POSITIONS)
    + " }; float2 oneshader_sample_position(uint n, int i) { return (n & (n - 1)) == 0 "
    "&& n <= 16 && uint(i) < n ? float2(oneshader_sample_positions[n - 1 + i]) / 16.0 "
    ": float2(0, 0); } "
    "__generic<T : ITexelElement> float2 oneshader_GetSamplePosition(Texture2DMS<T> t, int i) "
    "{ uint w, h, n; t.GetDimensions(w, h, n); return oneshader_sample_position(n, i); } "
    "__generic<T : ITexelElement> float2 oneshader_GetSamplePosition(Texture2DMSArray<T> t, "
    "int i) { uint w, h, e, n; t.GetDimensions(w, h, e, n); "
    "return oneshader_sample_position(n, i); }"
)
_SAMPLE_POSITION = re.compile(r"\.\s*GetSamplePosition\s*\(")


def sample_position_queries(text: str) -> list[re.Match[str]]:
    """``.GetSamplePosition(`` calls (not in comments)."""
    return list(_SAMPLE_POSITION.finditer(strip_comments(text)))


def with_sample_positions(text: str) -> str:
    """``t.GetSamplePosition(i)`` as ``oneshader_GetSamplePosition(t, i)`` (the helpers of
    :data:`SAMPLE_POSITION_HELPER`); the columns after the call's head on its line move."""
    code = strip_comments(text)
    for m in reversed(sample_position_queries(text)):
        start = postfix_start(code, m.start())
        head = f"oneshader_GetSamplePosition({text[start : m.start()].strip()}, "
        text = text[:start] + head + text[m.end() :]
    return text


_BOOL_TYPE = re.compile(r"\bbool(?=[1-4]?\b)")


def bools_as_uints(text: str, names: Iterable[tuple[int, int]]) -> str:
    """WGSL: the ``bool`` type of each member or global named at (line, column) written
    ``uint`` (same length: columns stay). WGSL has no bool in buffers; a 4-byte uint holding 0
    or 1 is how SPIR-V stores HLSL's bool there too, and HLSL converts between them wherever
    the code uses one as the other."""
    lines = text.split("\n")
    for line, col in names:
        row = lines[line - 1]
        found = list(_BOOL_TYPE.finditer(row, 0, col - 1))
        if found:
            at = found[-1].start()
            lines[line - 1] = row[:at] + "uint" + row[at + 4 :]
    return "\n".join(lines)


def without_packoffsets(text: str) -> str:
    """``: packoffset(...)`` blanked out (columns kept), for WGSL and Metal: Slang's code for
    them ignores it while its reflection follows it; the padding members (``slang.padding``)
    place the member."""
    return re.sub(r":\s*packoffset\s*\([^)]*\)", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
