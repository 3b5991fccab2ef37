"""Source rewrites: where the text handed to Slang differs from the file, and why.

Each rewrite keeps line numbers, and the columns before the change, so Slang's diagnostics still
point into the user's file (docs/compiler.md lists them). Each finds what it edits among the
tokens of a stream (``query.Stream``) and gives its edits as offset spans of that stream's text
(``*_edits``), so that the records of ``quirks/rewrites.py`` gather the edits of many rewrites
on one stream and apply them together; the few that remake the text as a whole
(``byte_atomics``, ``without_load_offsets``, ``entry_outputs_as_results``) take and give text.
No regular expression reads the text.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from oneshader.compiler.emitted.common import SLANG_LENGTHS, counter_name
from oneshader.compiler.source.query import Edit, Stream, blank, blanks, edited, is_word, lexed
from oneshader.compiler.source.scanner import (
    Declaration,
    SourceFile,
)
from oneshader.reflection.model import SAMPLER_TYPES, TEXTURE_TYPES, Target

__all__ = [
    "BYTE_ATOMIC_METHODS",
    "BYTE_ATOMIC_TYPE",
    "BYTE_STORE_PRELUDE",
    "DISTANCE_MARKERS",
    "HELPERS",
    "INSTANCE_MARKER",
    "MAJORNESS",
    "MATRIX_CLIP",
    "OFFSET_HELPER",
    "SAMPLE_POSITION_HELPER",
    "SIXTEEN_BIT_LITERALS",
    "STANDARD_SAMPLE_POSITIONS",
    "SWITCHED",
    "VK_BUILTINS",
    "CounterCall",
    "append_consume_edits",
    "bitfield_edits",
    "blank_word_edits",
    "blanked",
    "block_resource_edits",
    "bool_edits",
    "buffer_length_edits",
    "buffer_lengths_prelude",
    "byte_atomics",
    "byte_buffer_uses",
    "byte_store_edits",
    "byte_stores",
    "class_edits",
    "counter_edits",
    "distance_edits",
    "entry_outputs_as_results",
    "helper_calls",
    "helper_edits",
    "helper_numthreads_edits",
    "inserted_edits",
    "instance_id_edits",
    "load_offsets",
    "majorness_edits",
    "offset_textures",
    "one_component_edits",
    "outputs_struct",
    "own_attribute_edits",
    "pack_matrix_edits",
    "packoffset_edits",
    "point_size_edits",
    "postfix_start",
    "printf_calls",
    "printf_edits",
    "register_letter_edits",
    "rename_edits",
    "sample_position_edits",
    "sample_position_queries",
    "sampler_edits",
    "sixteen_bit_casts",
    "space_only_register_edits",
    "status_argument_edits",
    "status_arguments",
    "subpass_edits",
    "typed_buffer_edits",
    "vk_builtin_edits",
    "void_cast_edits",
    "without_load_offsets",
    "without_status_arguments",
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


def blank_word_edits(s: Stream, word: str) -> list[Edit]:
    """The keyword ``word`` blanked where it is a modifier (a name follows)."""
    return blanks(
        s.text,
        (
            (s.start(i), s.end(i))
            for i in s.words((word,))
            if s.word(i + 1) and (s.at(i + 1).space or s.first_on_line(i + 1))
        ),
    )


# DXC's [[vk::builtin("X")]] names Slang knows as system-value semantics.
VK_BUILTINS = {
    "PointSize": "SV_PointSize",
    "BaseVertex": "SV_StartVertexLocation",
    "BaseInstance": "SV_StartInstanceLocation",
    "DrawIndex": "SV_DrawIndex",  # SPIR-V only: neither Metal nor WGSL has it
}


def _attribute(s: Stream, i: int, *name: str) -> int:
    """At ``[`` ``[`` followed by the tokens ``name``: the index just past the attribute's
    ``]]`` when its arguments are one bracket-free list (or none), else -1."""
    if not s.seq(i, "[", "[", *name):
        return -1
    k = i + 2 + len(name)
    if s.is_(k, "("):
        close = s.closing(k)
        if close < 0 or any(s.at(j).text in ("[", "]") for j in range(k + 1, close - 1)):
            return -1
        k = close
    return k + 2 if s.seq(k, "]", "]") else -1


def vk_builtin_edits(s: Stream) -> list[Edit]:
    """DXC's ``[[vk::builtin("PointSize")]] float s : PSIZE`` as Slang's ``float s :
    SV_PointSize`` (and BaseVertex/BaseInstance as SV_StartVertex/InstanceLocation, DrawIndex
    as SV_DrawIndex)."""
    text = s.text
    edits: list[tuple[int, int, str]] = []
    n, resume = len(s), 0
    for k in s.words(("builtin",)):
        i = k - 4
        if i < resume or not s.seq(i, "[", "[", "vk", "::", "builtin", "("):
            continue
        if not s.seq(i + 7, ")", "]", "]"):
            continue
        literal = s.at(i + 6)
        semantic = VK_BUILTINS.get(literal.text[1:-1]) if literal.kind == "str" else None
        past = i + 10
        stop = past  # the declaration up to its semantic (or the end of the member)
        while stop < n and not any(c in ";:,)" for c in s.at(stop).text):
            stop += 1
        declared_end = end = s.start(stop)
        resume = stop
        if s.is_(stop, ":") and is_word(s.at(stop + 1).text):
            end, resume = s.end(stop + 1), stop + 2
        if semantic is not None:
            declared = text[s.end(i + 9) : declared_end].rstrip()
            edits.append((s.start(i), end, f"{declared.lstrip()} : {semantic}"))
    return sorted(edits)


def own_attribute_edits(s: Stream) -> list[Edit]:
    """oneshader's own attributes (``[[oneshader::format("unorm8x4")]]``, read by the
    scanner) blanked (lines and columns stay): Slang warns of attributes it does not know."""
    spans = []
    for i in s.words(("oneshader",)):
        if s.is_(i + 1, "::") and s.word(i + 2):
            past = _attribute(s, i - 2, "oneshader", "::", s.at(i + 2).text)
            if past > 0:
                spans.append((s.start(i - 2), s.end(past - 1)))
    return blanks(s.text, spans)


def _after_member(s: Stream, i: int) -> bool:
    """Whether token ``i`` follows a ``.`` or a ``:``/``::`` with nothing between."""
    before = s.at(i - 1)
    return (
        i > 0
        and before.text[-1:] in (".", ":")
        and not s.at(i).space
        and (before.line == s.at(i).line)
    )


def class_edits(s: Stream) -> list[Edit]:
    """HLSL's ``class`` as ``struct``: in HLSL (DXC) a class is a struct, a value type whose
    members are public; Slang takes ``class`` for its own reference type, whose methods its
    SPIR-V emitter cannot write ("Unhandled global inst in spirv-emit", an internal error
    without a position). The columns after it on its line move by one."""
    edits = []
    for i in s.words(("class",)):
        if _after_member(s, i) or s.is_(i - 1, "enum"):
            continue
        name = s.at(i + 1)
        if name.kind != "id" or not (name.space or s.first_on_line(i + 1)):
            continue
        k = i + 2
        if s.is_(k, ":", "::"):  # a base: anything but braces and ';' up to the body
            k += 1
            while k < len(s) and s.at(k).text not in ("{", "}", ";"):
                k += 1
        if s.is_(k, "{"):
            edits.append((s.start(i), s.end(i), "struct"))
    return sorted(edits)


def helper_numthreads_edits(s: Stream, entries: Collection[str]) -> list[Edit]:
    """``[numthreads(...)]`` on a function that is no entry point (Sascha Willems's cull.comp
    puts it on ``frustumCheck``, which ``main`` calls) blanked: DXC ignores it there, Slang's
    back ends crash on it (SIGSEGV). Lines and columns stay."""
    edits = []
    for i in s.words(("numthreads",)):
        if not (s.is_(i - 1, "[") and s.is_(i + 1, "(")):
            continue
        close = s.closing(i + 1)
        if close < 0 or not s.is_(close, "]"):
            continue
        k = close + 1
        while s.is_(k, "["):  # further attributes
            k = s.closing(k)
            if k < 0:
                break
        while 0 <= k < len(s) and not s.is_(k, "(", ";", "{"):
            k += 1
        name = s.at(k - 1)
        if s.is_(k, "(") and name.kind == "id" and name.text not in entries:
            edits.append(blank(s.text, s.start(i - 1), s.end(close)))
    return sorted(edits)


def sampler_edits(s: Stream) -> list[Edit]:
    """HLSL's ``sampler`` type (``sampler S : register(s0);``, a parameter ``sampler s``), which
    DXC takes for ``SamplerState`` and Slang does not know (E30015), written ``SamplerState``:
    the word followed by a declarator's name. The columns after it on its line move."""
    return [
        (s.start(i), s.end(i), "SamplerState")
        for i in s.words(("sampler",))
        if not _after_member(s, i) and s.at(i + 1).kind == "id"
    ]


# The types of a texture or typed buffer (``one_component_edits``) and the scalars of their
# one-component vectors.
_TEXEL_HOLDERS = frozenset(
    f"{rw}{t}"
    for rw in ("", "RW", "RasterizerOrdered")
    for t in (
        *(f"Texture{d}{a}" for d in ("1D", "2D", "3D", "Cube") for a in ("", "Array")),
        "Texture2DMS",
        "Texture2DMSArray",
        "Buffer",
    )
)
_ONE_COMPONENT = frozenset(
    f"{t}1"
    for t in (
        "float",
        "half",
        "int",
        "uint",
        "min16float",
        "min16int",
        "min16uint",
        "float16_t",
        "float32_t",
        "int32_t",
        "uint32_t",
    )
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


def byte_buffer_uses(text: str, name: str) -> list[tuple[int, str | None, bool]]:
    """Each use of buffer ``name`` in ``text``: its token's index in ``lexed(text)``, the
    method it calls (None: any other use, such as ``Load2`` or passing the buffer on), and
    whether it is the name's declaration (after ``RWByteAddressBuffer``)."""
    s = lexed(text)
    out: list[tuple[int, str | None, bool]] = []
    for i in s.words((name,)):
        if s.is_(i - 1, ".") and not s.at(i).space and s.at(i - 1).line == s.at(i).line:
            continue
        method = s.at(i + 2).text if s.method(i) > 0 else None
        declared = s.is_(i - 1, "RWByteAddressBuffer")
        out.append((i, method if method in BYTE_ATOMIC_METHODS else None, declared))
    return out


def byte_atomics(text: str, names: Collection[str]) -> str:
    """Each RWByteAddressBuffer of ``names`` (every use a ``Load``, ``Store`` or ``Interlocked*``
    of one word: ``slang.request``'s choice) as a buffer of atomic words, WGSL's
    ``array<atomic<u32>>``: declared ``RWStructuredBuffer<Atomic<uint>>``, ``B.Load(a)`` as
    ``B[(a) / 4].load()``, ``B.InterlockedAdd(a, v, o)`` as ``(o) = B[(a) / 4].add(v)`` (the
    innermost call first, so calls nest). Columns after a change on its line move; lines
    stay."""
    for name in names:
        s = lexed(text)
        text = edited(
            text,
            (
                (s.start(i), s.end(i), BYTE_ATOMIC_TYPE)
                for i in s.words(("RWByteAddressBuffer",))
                if s.at(i + 1).text == name and (s.at(i + 1).space or s.first_on_line(i + 1))
            ),
        )
        while True:
            s = lexed(text)
            calls = [(i, m) for i, m, _ in byte_buffer_uses(text, name) if m]
            edit = _byte_atomic_call(s, name, *calls[-1]) if calls else None
            if edit is None:
                break
            text = text[: edit[0]] + edit[2] + text[edit[1] :]
    return text


def _byte_atomic_call(s: Stream, name: str, i: int, method: str) -> tuple[int, int, str] | None:
    """The span of one call of :func:`byte_atomics` (the buffer's name at token ``i``) and the
    text that replaces it."""
    atomic, values, original = BYTE_ATOMIC_METHODS[method]
    close = s.closing(i + 3) - 1
    if close < 0:
        return None
    clean = s.cleaned
    args = [clean[s.start(a) : s.end(b - 1)].strip() for a, b in s.items(i + 4, close)]
    if not values <= len(args) - 1 <= values + original:
        return None
    call = f"{name}[({args[0]}) / 4].{atomic}({', '.join(args[1 : 1 + values])})"
    if len(args) > 1 + values:
        call = f"({args[-1]}) = {call}"
    return s.start(i), s.end(close), call


# The texels of a typed buffer WGSL holds as a storage array of the same bytes (a 3-vector's
# array stride would be 16, its texels 12 bytes apart): 32-bit scalars, 2- and 4-vectors.
_STORAGE_TEXELS = frozenset(
    f"{t}{n}"
    for t in ("float", "int", "uint", "float32_t", "int32_t", "uint32_t", "dword")
    for n in ("", "1", "2", "4")
)


def typed_buffer_edits(s: Stream, names: Collection[str]) -> list[Edit]:
    """The declarations of the typed buffers ``names``, ``Buffer<T>`` (``RWBuffer<T>``), as
    ``StructuredBuffer<T>`` (``RWStructuredBuffer<T>``), for WGSL, which has no texel buffers:
    a storage array of T, read (written) by index or ``Load`` as the typed buffer is, at the
    same byte offsets (T a 32-bit scalar or a 2- or 4-vector of one; a buffer whose
    ``GetDimensions`` the code calls is left alone: a storage array has no such query). Columns
    after it on its line move."""
    edits = []
    for i in s.words(("Buffer", "RWBuffer")):
        if _after_member(s, i) or not (s.is_(i + 1, "<") and s.is_(i + 3, ">")):
            continue
        if s.at(i + 2).text in _STORAGE_TEXELS and s.at(i + 4).text in names and s.word(i + 4):
            edits.append((s.start(i), s.end(i), s.at(i).text[:-6] + "StructuredBuffer"))
    return edits


def one_component_edits(s: Stream) -> list[Edit]:
    """A texture or typed buffer of one-component vectors (``Texture2D<float1>``) as one of the
    scalar (``Texture2D<float>``): the same texels on every target, where Slang's WGSL refuses
    the vector (E41400 "WGSL supports only f32/i32/u32 type textures"); a read gives the scalar,
    which converts to the one-component vector and takes its swizzles."""
    edits = []
    for i in s.words(_TEXEL_HOLDERS):
        texel = s.at(i + 2)
        if (
            s.is_(i + 1, "<")
            and texel.text in _ONE_COMPONENT
            and s.at(i + 3).text[:1] in (",", ">")
        ):
            edits.append((s.end(i + 2) - 1, s.end(i + 2), ""))
    return sorted(edits)


def inserted_edits(s: Stream, inserts: Collection[tuple[int, int, str]]) -> list[Edit]:
    """Each ``(line, column, text)`` inserted at that position (1-based; a column past its
    line's end is the end): the lines stay, the columns after an insertion on its line move."""
    starts = s._line_starts()
    text, edits = s.text, []
    for line, column, inserted in inserts:
        if 1 <= line <= len(starts):
            start = starts[line - 1]
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
            at = start + column - 1 if column >= 1 else end + column - 1
            edits.append((max(start, min(at, end)), max(start, min(at, end)), inserted))
    return sorted(edits)


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


# Slang's name of each target in a ``__target_switch``.
_CASE = {Target.SpirV: "spirv", Target.Msl: "metal", Target.Wgsl: "wgsl"}


def _dispatch(name: str, signatures: Collection[tuple[str, str]]) -> str:
    """``oneshader_target_<name>``: a void function forced inline whose ``__target_switch``
    calls the helper ``oneshader_<name>`` on the targets of :data:`HELPERS` that need it and
    Slang's own ``name`` on the others; one overload per (generic parameters, parameter type)."""
    cases = " ".join(f"case {_CASE[t]}:" for t in sorted(HELPERS[name][0], key=list(Target).index))
    return " ".join(
        f"[ForceInline] void oneshader_target_{name}{generic}({param} x) {{ __target_switch "
        f"{{ {cases} oneshader_{name}(x); default: {name}(x); }} }}"
        for generic, param in signatures
    )


# Helpers every target's text calls through a dispatch (``oneshader_target_<name>``, see
# :func:`_dispatch`) so that one text serves all targets (one Slang request): name -> (the
# function the calls are renamed to, what is defined beside the helper). Void helpers only: the
# dispatch, inlined, leaves the code of each target as its own text made it, byte for byte
# (SPIR-V's IDs too), where the result of an inlined function returning a value loses its
# variable's name in Metal and WGSL once it is used past a branch. ``clip`` of a matrix, which
# Slang's SPIR-V back end aborts on (SIGABRT), meets an overload of ``clip`` itself there (a
# generic no scalar or vector argument matches).
SWITCHED: dict[str, tuple[str, str]] = {
    "clip": (
        "oneshader_target_clip",
        _dispatch(
            "clip",
            [*(("", t) for t in _VECTORS), ("<let R : int, let C : int>", "matrix<float, R, C>")],
        )
        + " "
        + MATRIX_CLIP.format(name="clip"),
    ),
}


SIXTEEN_BIT_CASTS = ("asfloat16", "asuint16", "asint16")


SIXTEEN_BIT_LITERALS = " ".join(
    f"{r}{n} as{name}16(float{n} x) {{ return {inner}; }}"
    for n in ("", "2", "3", "4")
    for name, r, inner in (
        ("float", "half", f"half{n}(x)"),
        ("uint", "uint16_t", f"asuint16(half{n}(x))"),
        ("int", "int16_t", f"asint16(half{n}(x))"),
    )
)


def helper_calls(text: str, name: str) -> list[int]:
    """The tokens (of ``lexed(text)``) of the calls of the free function ``name`` (not methods,
    not qualified names)."""
    s = lexed(text)
    return [i for i in s.words((name,)) if s.is_(i + 1, "(") and not _after_member(s, i)]


def sixteen_bit_casts(text: str) -> list[int]:
    """The calls of ``asfloat16``/``asuint16``/``asint16`` (:data:`SIXTEEN_BIT_LITERALS`)."""
    return [i for name in SIXTEEN_BIT_CASTS for i in helper_calls(text, name)]


def helper_edits(s: Stream, names: Collection[str]) -> list[Edit]:
    """Calls of each of ``names`` renamed to its helper, ``oneshader_<name>`` (see
    :data:`HELPERS`), or to its dispatch (:data:`SWITCHED`); the columns after a call on its
    line move."""
    return sorted(
        (s.start(i), s.end(i), _helper_name(s.at(i).text))
        for i in s.words(names)
        if s.is_(i + 1, "(") and not _after_member(s, i)
    )


def _helper_name(name: str) -> str:
    switched = SWITCHED.get(name)
    return switched[0] if switched else f"oneshader_{name}"


# SV_ClipDistanceN/SV_CullDistanceN, which Slang's WGSL refuses (E55202), handed to it as
# ordinary varyings under a marker semantic of the same length (columns stay): the WGSL patch
# makes the vertex outputs WebGPU's clip_distances built-in and drops unread pixel inputs.
DISTANCE_MARKERS = {"SV_ClipDistance": "OS_CLIPDISTANCE", "SV_CullDistance": "OS_CULLDISTANCE"}
_DISTANCE_LOCATION = 64  # Slang's WGSL numbers varyings itself; this only has to be explicit


def _distance(word: str) -> bool:
    upper = word.upper()
    return upper.startswith(("SV_CLIPDISTANCE", "SV_CULLDISTANCE")) and (
        upper[15:].isdigit() or len(upper) == 15
    )


def distance_edits(s: Stream) -> list[Edit]:
    """Each ``: SV_ClipDistanceN`` (``SV_CullDistanceN``) as ``: OS_CLIPDISTANCEN``
    (:data:`DISTANCE_MARKERS`), given a ``[[vk::location]]`` of its own where a sibling in its
    struct or parameter list has one (Slang refuses explicit and implicit locations mixed)."""
    edits: list[tuple[int, int, str]] = []
    semantics = [i for i in s.words_where(_distance) if s.is_(i - 1, ":")]
    for n, i in enumerate(semantics):
        marker = DISTANCE_MARKERS["SV_" + s.at(i).text[3:7].capitalize() + "Distance"]
        edits.append((s.start(i), s.start(i) + 15, marker))
        opened = _unclosed(s, i - 1)
        close = next((k for k in range(i + 1, len(s)) if s.at(k).text in ("}", ")")), len(s))
        if not any(s.seq(k, "vk", "::", "location") for k in range(opened + 1, close)):
            continue
        member = opened + 1
        if opened >= 0:
            member = 1 + max(
                (k for k in range(opened + 1, i - 1) if s.at(k).text in (";", ",")),
                default=opened,
            )
        at = s.start(member)
        edits.append((at, at, f"[[vk::location({_DISTANCE_LOCATION + n})]] "))
    return sorted(edits)


INSTANCE_MARKER = "OS_INSTANCEID"  # SV_InstanceID between the stages: an ordinary varying


def instance_id_edits(s: Stream, at: Collection[tuple[int, int]]) -> list[Edit]:
    """The ``SV_InstanceID`` semantic at each (line, column) (``varyings.instance_id_semantics``:
    a vertex output or pixel input, which DXC passes as an ordinary varying and Slang as a
    built-in no target has there) as :data:`INSTANCE_MARKER`, of the same length."""
    found = {s.offset_of(line, column) for line, column in at}
    return [(i, i + len(INSTANCE_MARKER), INSTANCE_MARKER) for i in sorted(found)]


def _unclosed(s: Stream, i: int) -> int:
    """The ``{`` or ``(`` that encloses token ``i`` (-1 at file scope)."""
    depth = 0
    for j in range(i - 1, -1, -1):
        t = s.at(j).text
        if t in (")", "}", "]"):
            depth += 1
        elif t in ("(", "{", "["):
            if depth == 0 and t != "[":
                return j
            depth = max(depth - 1, 0)
    return -1


def point_size_edits(s: Stream, names: Collection[str]) -> list[Edit]:
    """The ``[[vk::builtin("PointSize")]]`` member of each of ``names`` and its
    ``<object>.name = 1.0;`` statements blanked out (lines and columns kept): WGSL draws
    1-pixel points anyway."""
    return blanks(s.text, [span for name in names for span in _point_size_spans(s, name)])


def _point_size_spans(s: Stream, name: str) -> list[tuple[int, int]]:
    spans = []
    resume = 0
    for k in s.words(("builtin",)):
        i = k - 4
        if i < resume or not s.seq(
            i, "[", "[", "vk", "::", "builtin", "(", '"PointSize"', ")", "]", "]"
        ):
            continue
        end = next((j for j in range(i + 10, len(s)) if s.at(j).text == ";"), -1)
        if end < 0:
            break
        if any(s.at(j).text == name for j in range(i + 10, end)):
            spans.append((s.start(i), s.end(end)))
            resume = end + 1
    for i in s.words((name,)):
        if s.is_(i - 1, ".") and s.is_(i + 1, "="):
            past = s.one_assigned(i + 1)
            if past > 0:
                spans.append((s.start(s.postfix_start(i - 1)), s.end(past - 1)))
    return spans


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


MAJORNESS = ("row_major", "column_major")


def _matrix_name(name: str) -> bool:
    """Whether ``name`` is a matrix type's, ``<word><digits>x<digits>`` (``float2x3``)."""
    head, x, cols = name.rpartition("x")
    rows = head.rstrip("0123456789")
    return (
        bool(x and cols.isdigit() and cols.isascii() and rows)
        and head[len(rows) :].isascii()
        and len(head) > len(rows)
        and is_word(rows)
    )


def _matrix_type(s: Stream, i: int) -> int:
    """At a matrix type (``float2x3``, ``matrix<float, 2, 3>``): the index just past it, or
    -1."""
    if s.word(i) and _matrix_name(s.at(i).text):
        return i + 1
    if s.seq(i, "matrix", "<"):
        for k in range(i + 2, len(s)):
            t = s.at(k).text
            if ";" in t:
                return -1
            if ">" in t:
                return k + 1 if t == ">" else -1
    return -1


def majorness_edits(s: Stream) -> list[Edit]:
    """``row_major float2x3 m[2]`` as ``_os_major0 m[2]`` after ``typedef row_major float2x3
    _os_major0;``: Slang drops the majorness of an array of matrices (stride 48, DXC's 32) but
    keeps a typedef's. The typedef goes right after the ``;``, ``{`` or ``}`` before the
    declaration (usually the end of the previous line), so the declaration's columns stay."""
    edits: list[tuple[int, int, str]] = []
    n = 0
    for i in s.words(MAJORNESS):
        past = _matrix_type(s, i + 1)
        if past < 0 or not (s.at(i + 1).space or s.first_on_line(i + 1)):
            continue
        name = s.at(past)
        if not (name.kind == "id" and (name.space or s.first_on_line(past))):
            continue
        if not s.is_(past + 1, "["):
            continue
        alias = f"_os_major{n}"
        n += 1
        before = next((k for k in range(i - 1, -1, -1) if s.at(k).text in (";", "{", "}")), -1)
        where = s.end(before) if before >= 0 else 0
        matrix = s.cleaned[s.start(i + 1) : s.end(past - 1)]
        edits.append((where, where, f" typedef {s.at(i).text} {matrix} {alias};"))
        edits.append((s.start(i), s.end(past - 1), alias))
    return sorted(edits)


def _after_last(s: Stream, offset: int, texts: Collection[str]) -> int:
    """The offset just past the last token of ``texts`` before ``offset`` (0: none)."""
    k = s.index(offset) - 1
    while k >= 0 and s.at(k).text not in texts:
        k -= 1
    return s.end(k) if k >= 0 else 0


def bitfield_edits(s: Stream, scanned: SourceFile) -> list[Edit]:
    """A zero-width ``uint _os_wordN : 0;`` before each bitfield whose type differs from the
    bitfield before it: DXC starts a new word there (``uint a : 1; int b : 1;`` are two words),
    Slang would pack both into one. Inserted after the ``;`` that ends the member before, so
    the line and the member's columns stay."""
    where: list[int] = []
    for sdef in scanned.structs.values():
        if sdef.kind != "struct":
            continue
        before = ""
        for f in sdef.fields:
            bits = f.semantic.isdigit()
            if bits and before and f.type_text != before:
                where.append(_after_last(s, s.offset_of(f.line, f.column), (";", "{")))
            before = f.type_text if bits else ""
    # at one offset (never, in practice), the later word first, as inserted from the last back
    inserts = sorted(enumerate(where), key=lambda x: (x[1], -x[0]))
    return [(at, at, f" uint _os_word{n} : 0;") for n, at in inserts]


def block_resource_edits(s: Stream, scanned: SourceFile) -> list[Edit]:
    """Resources declared in a cbuffer body declared before the block instead, as DXC makes
    them (Slang would emit them as ``Block.tex``); a block left with nothing but resources is
    dropped (its header and closing brace blanked), as DXC drops it. The declarations go after
    the ``;``, ``{`` or ``}`` before the block, so lines stay."""
    if not scanned.block_resources:
        return []
    text = s.text
    edits: list[tuple[int, int, str]] = []
    moved: dict[int, list[str]] = {}
    for block, start, end in scanned.block_resources:
        where = _after_last(s, block, (";", "{", "}"))
        moved.setdefault(where, []).append(" ".join(text[start:end].split()))
        edits.append((start, end, " " * (end - start)))
    edits += [(at, at, " " + " ".join(decls)) for at, decls in moved.items()]
    for start, brace, close, end in scanned.resource_only_blocks:
        edits.append((start, brace, " " * (brace - start)))
        edits.append((close, end, " " * (end - close)))
    # at one span, the later edit first, as applied from the last back
    order = sorted(enumerate(edits), key=lambda e: (e[1][0], e[1][1], -e[0]))
    return [e for _, e in order]


_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")


def _packed_matrix_name(name: str) -> bool:
    """Whether ``name`` is a matrix type's that ``#pragma pack_matrix`` gives a majorness:
    ``<lower-case letters>[<digits><lower-case letters or _>]<1-4>x<1-4>``."""
    if len(name) < 4 or name[-2] != "x" or name[-1] not in "1234" or name[-3] not in "1234":
        return False
    head = name[:-3]
    k = 0
    while k < len(head) and head[k] in _LOWER:
        k += 1
    if k == 0:
        return False
    d = k
    while d < len(head) and head[d] in "0123456789":
        d += 1
    return (d == k == len(head)) or (d > k and all(c in _LOWER or c == "_" for c in head[d:]))


def _pack_matrix_pragmas(s: Stream) -> list[tuple[int, int, str]]:
    """Each ``#pragma pack_matrix(row_major|column_major)`` line: the index of its ``#``, the
    index past its line's tokens, and the majorness."""
    out = []
    for i in s.words(("pack_matrix",)):
        if not (s.is_(i - 2, "#") and s.is_(i - 1, "pragma") and s.first_on_line(i - 2)):
            continue
        if not (s.is_(i + 1, "(") and s.at(i + 2).text in MAJORNESS and s.is_(i + 3, ")")):
            continue
        line = s.at(i).line
        if any(s.at(k).line != line for k in range(i - 2, i + 4)):
            continue
        past = i + 4
        while past < len(s) and s.at(past).line == line:
            past += 1
        out.append((i - 2, past, s.at(i + 2).text))
    return out


def pack_matrix_edits(s: Stream) -> list[Edit]:
    """DXC's ``#pragma pack_matrix(row_major)`` (Slang ignores it, E15601): from the pragma to
    the next one, every matrix declared without its own majorness gets the pragma's (a
    member, a global, a parameter, a local, a template argument; not a function's result,
    where Slang allows no modifier). The pragma line is blanked."""
    if "pack_matrix" not in s.text:
        return []
    text = s.text
    pragmas = _pack_matrix_pragmas(s)
    edits: list[tuple[int, int, str]] = []
    for n, (hash_, past, major) in enumerate(pragmas):
        line_start = s.text.rfind("\n", 0, s.start(hash_)) + 1
        line_end = s.text.find("\n", s.start(hash_))
        edits.append(blank(text, line_start, len(text) if line_end < 0 else line_end))
        end = pragmas[n + 1][0] if n + 1 < len(pragmas) else len(s)
        for i in range(past, end):
            matrix = s.is_(i, "matrix")
            after = i + 1 if _packed_matrix_name(s.at(i).text) else -1
            after = _matrix_type(s, i) if matrix else after
            if after < 0 or not s.word(i) or s.at(i - 1).text in MAJORNESS:
                continue
            if s.is_(i - 1, ".") and not s.at(i).space and s.at(i - 1).line == s.at(i).line:
                continue
            following = s.at(after)
            declared = following.text.startswith(">") or (
                following.kind == "id"
                and (following.space or s.first_on_line(after))
                and s.at(after + 1).text[:1] in (";", ":", "[", "=", ",", ")")
                and s.at(after + 1).text != ""
            )
            if declared:
                edits.append((s.start(i), s.start(i), f"{major} "))
    return sorted(edits)


def space_only_register_edits(s: Stream) -> list[Edit]:
    """DXC's ``: register(space1)`` (a set, no binding) blanked: Slang rejects it (E31222), and
    oneshader places such a resource itself (the next free binding of that set)."""
    spans = []
    for i in s.words(("register",)):
        space = s.at(i + 2).text
        digits = space[5:]
        numbered = space.startswith("space") and digits.isdigit() and digits.isascii()
        if numbered and s.is_(i - 1, ":") and s.is_(i + 1, "(") and s.is_(i + 3, ")"):
            spans.append((s.start(i - 1), s.end(i + 3)))
    return blanks(s.text, spans)


# The register letter Slang asks of a resource type whose letter DXC lets be either t or s
# (Sema's DiagnoseRegisterType: read-only textures and samplers).
_T_OR_S = {
    **{t.name: "t" for t in TEXTURE_TYPES if not t.name.startswith("RW")},
    **{t.name: "s" for t in SAMPLER_TYPES},
}


def register_letter_edits(s: Stream, scanned: SourceFile) -> list[Edit]:
    """``Texture2D t : register(s1)`` and ``SamplerState s : register(t1)`` with the letter
    Slang takes for the type (E31222 otherwise); DXC takes either letter for both, and its
    binding (the number, the space, the shift of the letter as written) is oneshader's
    placement, which reads the declaration, not this text. Same length: columns stay."""
    edits = []
    for d in scanned.declarations:
        wanted = _T_OR_S.get(d.base)
        if wanted is None or d.register is None or d.register[0] == wanted:
            continue
        i = s.index_at(s.offset_of(*d.register_pos))
        slot = s.at(i + 2)
        if s.seq(i, "register", "(") and slot.text[:1].lower() in ("t", "s"):
            at = s.start(i + 2)
            edits.append((at, at + 1, wanted))
    return sorted(edits)


# X.IncrementCounter(), or X[i].IncrementCounter() for an array of buffers.
_COUNTER_METHODS = {"IncrementCounter": "Increment", "DecrementCounter": "Decrement"}


@dataclass(frozen=True)
class CounterCall:
    """``X.IncrementCounter()`` (``X[i].DecrementCounter()``): the buffer's name, the
    subscript as written (comments blanked; "" without one), ``Increment`` or ``Decrement``,
    and the call's span in the text."""

    name: str
    index: str
    op: str
    start: int
    end: int


def _counter_calls(s: Stream) -> list[CounterCall]:
    """Every counter call in ``s``."""
    out = []
    for i in s.words(_COUNTER_METHODS):
        if not (s.is_(i - 1, ".") and s.seq(i + 1, "(", ")")):
            continue
        j, index = i - 2, ""
        if s.is_(j, "]"):
            opening = s.opening(j)
            if opening < 0 or _nesting(s, opening, j) > 2:
                continue
            index = s.cleaned[s.start(opening) : s.end(j)]
            j = opening - 1
        if not is_word(s.at(j).text) or j < 0:
            continue
        op = _COUNTER_METHODS[s.at(i).text]
        out.append(CounterCall(s.at(j).text, index, op, s.start(j), s.end(i + 2)))
    return out


def _nesting(s: Stream, a: int, b: int) -> int:
    """How deep ``[`` nest in tokens a..b (the deepest)."""
    depth = deepest = 0
    for k in range(a, b + 1):
        t = s.at(k).text
        if t == "[":
            depth += 1
            deepest = max(deepest, depth)
        elif t == "]":
            depth -= 1
    return deepest


def counter_edits(
    s: Stream, names: Mapping[str, Declaration], declared_here: Collection[str]
) -> list[Edit]:
    """RW structured buffer counters as Slang can compile them (it rejects IncrementCounter):
    a companion ``RWStructuredBuffer<Atomic<uint>> X_counter`` declared at the end of X's line
    (for the ``declared_here`` in this file) and ``X.IncrementCounter()`` as
    ``X_counter[0].add(1u)``, which returns the old value as DXC's does; DecrementCounter
    returns the new one, as DXC's."""
    edits = []
    for call in _counter_calls(s):
        if call.name not in names:
            continue
        counter = f"{counter_name(call.name)}{call.index}[0]"
        new = f"{counter}.add(1u)" if call.op == "Increment" else f"({counter}.sub(1u)-1u)"
        edits.append((call.start, call.end, new))
    return _with_companions(s, sorted(edits), names, declared_here)


def _with_companions(
    s: Stream, edits: list[Edit], names: Mapping[str, Declaration], declared_here: Collection[str]
) -> list[Edit]:
    """``edits`` and each of ``declared_here``'s companion counter declared at the end of its
    line (an array of counters for an array of buffers), after any edit there."""
    starts = s._line_starts()
    ends: dict[int, list[str]] = {}
    for name, decl in names.items():
        if name in declared_here and 1 <= decl.line <= len(starts):
            size = "" if decl.array is None else f"[{decl.array or ''}]"
            end = s.text.find("\n", starts[decl.line - 1])
            end = len(s.text) if end < 0 else end
            new = f" RWStructuredBuffer<Atomic<uint>> {counter_name(name)}{size};"
            ends.setdefault(end, []).append(new)
    if not ends:
        return edits
    # stable: a companion goes after the edits at its offset
    return sorted([*edits, *((at, at, "".join(news)) for at, news in ends.items())], key=_span)


def _span(edit: Edit) -> tuple[int, int]:
    return edit[0], edit[1]


APPEND_CONSUME = ("AppendStructuredBuffer", "ConsumeStructuredBuffer")


def append_consume_edits(
    s: Stream, names: Mapping[str, Declaration], declared_here: Collection[str]
) -> list[Edit]:
    """Append/consume buffers for targets without hidden counters (WGSL, Metal): each of
    ``declared_here`` declared as a ``RWStructuredBuffer`` with the
    companion counter of :func:`counter_edits`; ``X.Append(v)`` as
    ``X[X_counter[0].add(1u)]=(v)`` and ``X.Consume()`` as ``X[X_counter[0].sub(1u)-1u]``, the
    slots DXC's SPIR-V uses (Append takes the old count, Consume the new one)."""
    if not names:
        return []
    lines_of = {d.line for n, d in names.items() if n in declared_here}
    edits: list[tuple[int, int, str]] = []
    for i in s.words(APPEND_CONSUME):
        if s.at(i).line in lines_of:
            edits.append((s.start(i), s.end(i), "RWStructuredBuffer"))
    for i in s.words(names):
        name = s.at(i).text
        if s.seq(i + 1, ".", "Append", "("):
            edits.append((s.start(i), s.end(i + 3), f"{name}[{counter_name(name)}[0].add(1u)]=("))
        elif s.seq(i + 1, ".", "Consume", "(", ")"):
            new = f"{name}[{counter_name(name)}[0].sub(1u)-1u]"
            edits.append((s.start(i), s.end(i + 4), new))
    return _with_companions(s, sorted(edits), names, declared_here)


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


def _length_queries(s: Stream, names: Collection[str]) -> list[tuple[str, int, int]]:
    """``X.GetDimensions(`` calls on the buffers ``names``: the name and the span of
    ``X.GetDimensions(``."""
    if not names:
        return []
    return [
        (s.at(i).text, s.start(i), s.end(i + 3))
        for i in s.words(names)
        if s.seq(i + 1, ".", "GetDimensions", "(") and not _after_member(s, i)
    ]


def buffer_length_edits(s: Stream, names: Collection[str]) -> list[Edit]:
    """Metal: ``X.GetDimensions(n, s)`` on each global buffer of ``names`` as
    ``oneshader_GetDimensions(X, oneshader_lengths.X, n, s)`` (the helpers and the companion of
    :func:`buffer_lengths_prelude`); the columns after the call's head on its line move."""
    return sorted(
        (start, end, f"oneshader_GetDimensions({name}, {SLANG_LENGTHS}.{name}, ")
        for name, start, end in _length_queries(s, names)
    )


def buffer_lengths_prelude(names: Collection[str]) -> str:
    """The helpers of :func:`buffer_length_edits` and the companion constant buffer, one
    ``uint`` (the buffer's size in bytes) per buffer of ``names``, in that order."""
    members = " ".join(f"uint {n};" for n in names)
    return (
        f"{_LENGTH_HELPERS} struct oneshader_BufferLengths {{ {members} }}; "
        f"ConstantBuffer<oneshader_BufferLengths> {SLANG_LENGTHS};"
    )


# A bool value of a byte-address buffer's Store passed through this (``byte_store_edits``):
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

_BOOLS = frozenset(("bool", "bool1", "bool2", "bool3", "bool4"))
_BOOL_CALLS = _BOOLS | {"isnan", "isinf", "isfinite", "any", "all", "and", "or"}
_COMPARISONS = frozenset(("==", "!=", "<=", ">=", "&&", "||", "<", ">", "<<=", ">>=", "->"))


def _boolean(s: Stream, a: int, b: int, bools: Collection[str]) -> bool:
    """Whether a Store's value (tokens a..b-1) is a bool as written: a comparison or logical
    operation outside brackets, a negation, ``true``/``false``, a call of ``isnan`` and its
    kin or a ``bool`` cast, or a variable declared ``bool`` (``bools``)."""
    if a >= b:
        return False
    depth, comparison = 0, False
    for k in range(a, b):
        t = s.at(k).text
        if depth == 0 and "?" in t and s.at(k).kind == "punct":
            return False  # a ternary's value is its branches'
        comparison = comparison or (depth == 0 and t in _COMPARISONS)
        depth += t in ("(", "[")
        depth -= t in (")", "]")
    first = s.at(a)
    words = [s.at(k) for k in range(a, b)]
    single = len(words) == 1 or (
        len(words) == 3
        and words[1].text == "."
        and words[2].kind == "id"
        and not words[1].space
        and not words[2].space
        and words[1].line == words[2].line == first.line
    )
    return bool(
        comparison
        or first.text.startswith("!")
        or (b - a == 1 and first.text in ("true", "false"))
        or (first.text in _BOOL_CALLS and s.is_(a + 1, "(") and s.at(b - 1).text == ")")
        or (first.kind == "id" and first.text in bools and single)
    )


_STORES = frozenset(("Store", "Store2", "Store3", "Store4"))


def byte_stores(text: str, names: Collection[str]) -> list[tuple[int, int]]:
    """The spans of the bool values (:func:`_boolean`) of ``X.Store(``, ``X.Store2(`` ..
    ``X.Store<T>(`` calls on the buffers ``names`` in ``text``."""
    return _byte_store_spans(lexed(text), names) if names else []


def _byte_store_spans(s: Stream, names: Collection[str]) -> list[tuple[int, int]]:
    if not names:
        return []
    bools = {
        s.at(i + 1).text
        for i in s.words(_BOOLS)
        if is_word(s.at(i + 1).text) and (s.at(i + 1).space or s.first_on_line(i + 1))
    }
    spans = []
    for i in s.words(names):
        if _after_member(s, i) or not s.is_(i + 1, ".") or s.at(i + 2).text not in _STORES:
            continue
        k = i + 3
        if s.is_(k, "<"):  # Store<T>: no brackets inside
            while k + 1 < len(s) and s.at(k + 1).text not in ("<", ">", "(", ")"):
                k += 1
            if not s.is_(k + 1, ">"):
                continue
            k += 2
        if not s.is_(k, "("):
            continue
        depth, comma = 0, -1
        for j in range(k + 1, len(s)):
            t = s.at(j).text
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                if depth == 0:
                    if comma >= 0 and _boolean(s, comma + 1, j, bools):
                        spans.append((s.end(comma), s.start(j)))
                    break
                depth -= 1
            elif t == "," and depth == 0 and comma < 0:
                comma = j
    return spans


def byte_store_edits(s: Stream, names: Collection[str]) -> list[Edit]:
    """Each bool value of a Store on ``names`` (:func:`byte_stores`) as
    ``oneshader_stored(value)`` (:data:`BYTE_STORE_PRELUDE`); the columns after the value's
    start on its line move (and after the call's end on its line): two insertions a value."""
    return [
        edit
        for start, end in _byte_store_spans(s, names)
        for edit in ((start, start, " oneshader_stored("), (end, end, ")"))
    ]


def void_cast_edits(s: Stream) -> list[Edit]:
    """A statement's cast to void (``(void)x;``, the idiom that silences an unused variable)
    blanked to spaces: the expression is evaluated and discarded all the same. Slang fails on
    it for every target without a word (SPIR-V: an internal error). A parameter list ``f(void)``
    follows a name, so it is left alone."""
    spans = []
    for i in s.words(("void",)):
        if s.is_(i - 1, "(") and s.is_(i + 1, ")"):
            start = i - 1
            if start == 0 or s.first_on_line(start) or s.at(start - 1).text in (";", "{", "}"):
                spans.append((s.start(start), s.end(i + 1)))
    return blanks(s.text, spans)


def rename_edits(s: Stream, names: Collection[tuple[int, int, str, str]]) -> list[Edit]:
    """Each (line, column, old, new) identifier renamed where it is declared
    (columns after it on its line shift by the difference in length)."""
    starts, text = s._line_starts(), s.text
    edits = []
    for line, col, old, new in names:
        if 1 <= line <= len(starts) and col >= 1:
            at = starts[line - 1] + col - 1
            end = text.find("\n", starts[line - 1])
            end = len(text) if end < 0 else end
            if at + len(old) <= end and text[at : at + len(old)] == old:
                edits.append((at, at + len(old), new))
    return sorted(edits)


_SUBPASS_INPUTS = ("SubpassInput", "SubpassInputMS")


def _narrow_texel(s: Stream, i: int) -> tuple[int, int] | None:
    """At ``SubpassInput<float3>``: the texel's token and its width (1 to 3), or None for a
    4-component texel or another type."""
    texel = s.at(i + 2).text
    if not (s.is_(i, *_SUBPASS_INPUTS) and s.is_(i + 1, "<") and s.is_(i + 3, ">")):
        return None
    width = texel[-1:] if texel[-1:] in ("1", "2", "3") else ""
    base = texel[: len(texel) - len(width)]
    for scalar in ("float", "int", "uint", "half"):
        if base in (scalar, f"{scalar}16_t", f"{scalar}32_t"):
            return i + 2, int(width or 1)
    return None


def subpass_edits(
    s: Stream, names: Mapping[str, Declaration], declared_here: Collection[str]
) -> list[Edit]:
    """``SubpassInput<float>`` (or a 2- or 3-component texel) as ``SubpassInput<float4>``, its
    ``x.SubpassLoad(...)`` as ``x.SubpassLoad(...).x`` (``.xy``, ``.xyz``): Slang's SPIR-V
    reads a narrower texel with an OpImageRead of that width, which spirv-val rejects (Vulkan
    reads 4 components), where DXC reads 4 and keeps the first. Columns after a change on its
    line shift by the characters added."""
    width: dict[str, int] = {}
    edits: list[tuple[int, int, str]] = []
    for name, decl in names.items():
        declared = lexed(decl.type_text)
        found = next(
            (n for k in declared.words(_SUBPASS_INPUTS) if (n := _narrow_texel(declared, k))),
            None,
        )
        if found is None:
            continue
        width[name] = found[1]
        if name not in declared_here:
            continue
        here = [
            n
            for k in s.on_line(decl.line)
            if (n := _narrow_texel(s, k)) is not None
            and s.end(n[0] + 1) <= s.offset_of(decl.line, decl.column)
        ]
        if here:
            texel = s.at(here[0][0]).text
            scalar = texel[:-1] if texel[-1:] in ("1", "2", "3") else texel
            edits.append((s.start(here[0][0]), s.end(here[0][0]), f"{scalar}4"))
    if not width:
        return []
    for i in s.words(width):
        if s.seq(i + 1, ".", "SubpassLoad", "("):
            close = s.closing(i + 3)
            at = s.end(close - 1) if close > 0 else len(s.text)
            edits.append((at, at, "." + "xyz"[: width[s.at(i).text]]))
    return sorted(edits)


def outputs_struct(entry: str) -> str:
    """The struct the wrapper of ``entry_outputs_as_results`` returns."""
    return f"{entry}_oneshader_outputs"


_DIRECTIONS = ("in", "out", "inout")
_ENTRY_ATTRIBUTES = ("shader", "earlydepthstencil")


def _next(s: Stream, i: int, text: str) -> int:
    """The first token ``text`` from token ``i`` on, or -1."""
    return next((k for k in range(i, len(s)) if s.at(k).text == text), -1)


def _entry_attributes(s: Stream, a: int, b: int) -> list[tuple[int, int]]:
    """The spans of the ``[shader(...)]``/``[earlydepthstencil]`` attributes between the
    offsets a and b."""
    out = []
    k, stop = s.index(a), s.index(b)
    while k < stop:
        if s.is_(k, "[") and s.is_(k + 1, *_ENTRY_ATTRIBUTES) and s.word(k + 1):
            close = next((j for j in range(k + 2, len(s)) if s.at(j).text == "]"), -1)
            if close >= 0 and s.end(close) <= b:
                out.append((s.start(k), s.end(close)))
                k = close + 1
                continue
        k += 1
    return out


def _parameter(p: str) -> tuple[str, int, str | None, str] | None:
    """A parameter's name, where its semantic's ``:`` is in ``p`` (-1: none), its direction
    and the parameter without it (on one line), or None when ``p`` ends in no name."""
    s = lexed(p)
    end = len(s)
    semantic = -1
    if end >= 2 and s.is_(end - 2, ":") and is_word(s.at(end - 1).text):
        semantic = s.start(end - 2)
        end -= 2
    while end > 0 and s.is_(end - 1, "]"):
        opening = s.opening(end - 1)
        if opening < 0 or any(s.at(k).text == "]" for k in range(opening + 1, end - 1)):
            break
        end = opening
    if end <= 0 or not is_word(s.at(end - 1).text):
        return None
    direction = next((t.text for t in s.tokens if t.kind == "id" and t.text in _DIRECTIONS), None)
    out: list[str] = []
    removed = False
    for k, t in enumerate(s.tokens):
        if t.kind == "id" and t.text in _DIRECTIONS:
            removed = True
            continue
        if out and (removed or t.space or s.first_on_line(k)):
            out.append(" ")
        out.append(t.text)
        removed = False
    return s.at(end - 1).text, semantic, direction, "".join(out)


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
    stream = lexed(text)
    code = stream.cleaned
    at = stream.offset_of(line, column)
    if code[at : at + len(name)] != name:
        return text
    first = stream.index(at + len(name))
    opening = _next(stream, first, "(")
    closer = stream.closing(opening) - 1 if opening >= 0 else -1
    body = _next(stream, closer + 1, "{") if closer >= 0 else -1
    if body < 0 or any(stream.at(k).text == ";" for k in range(closer + 1, body)):
        return text
    end = stream.closing(body)
    if end < 0:
        return text
    close, brace, end = stream.end(closer), stream.start(body), stream.end(end - 1)
    head_start = _after_last(stream, at, (";", "}"))
    entry_attributes = _entry_attributes(stream, head_start, at)  # to the wrapper
    kept, last = [], head_start
    for a, b in entry_attributes:
        kept.append(code[last:a])
        last = b
    returns = "".join([*kept, code[last:at]]).strip()
    attributes = " ".join(code[a:b] for a, b in entry_attributes)
    result_semantic = code[close:brace].strip()
    ins, args, copies = [], [], []
    members: list[str] = []
    after: list[str] = []  # the flattened members, copied from their locals after the call
    locals_: list[str] = []
    flats = {pname: (decls, names) for pname, decls, names in flat}
    semantics = []  # Slang checks system values on every function's parameters for WGSL
    for a, b in stream.items(opening + 1, closer):
        i, j = stream.end(a - 1), stream.start(b)
        parameter = _parameter(code[i:j])
        if parameter is None:
            return text
        pname, semantic, direction, bare = parameter
        if semantic >= 0:
            semantics.append((i + semantic, j))
        if direction is None or direction == "in":
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
            if direction == "inout":
                ins.append(bare)
                copies.append(f"{local} = {pname};")
            continue
        members.append(f"{bare};")
        args.append(f"oneshader_out.{pname}")
        if direction == "inout":
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
    text = blanked(text, [*entry_attributes, *semantics])
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
_UINTS = ("uint", "uint32_t", "dword")


def _declared_uint(s: Stream) -> set[str]:
    """The names the text declares ``uint`` (``uint32_t``, ``dword``)."""
    return {
        s.at(i + 1).text
        for i in s.words(_UINTS)
        if s.word(i + 1) and (s.at(i + 1).space or s.first_on_line(i + 1))
    }


def status_arguments(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of each sparse-residency status argument (with its comma) of
    a texture method call in ``text``: a last argument at a count only the status form has,
    that is a name the text declares ``uint``."""
    return _status_spans(lexed(text))


def _status_spans(s: Stream) -> list[tuple[int, int]]:
    uints: set[str] | None = None
    out = []
    for i in s.words(_STATUS_ARITY):
        if not (s.is_(i - 1, ".") and s.is_(i + 1, "(")):
            continue
        close = s.closing(i + 1) - 1
        items = s.items(i + 2, close) if close > 0 else []
        if len(items) not in _STATUS_ARITY[s.at(i).text] or len(items) < 2:
            continue
        a, b = items[-1]
        if b - a != 1 or s.at(a).kind != "id":
            continue
        uints = _declared_uint(s) if uints is None else uints
        if s.at(a).text in uints:
            out.append((s.start(items[-2][1]), s.start(close)))
    return out


def without_status_arguments(text: str) -> str:
    """The text with every sparse-residency status argument blanked (columns stay): WGSL and
    Metal have no residency feedback, and every texel is resident there, which the
    ``CheckAccessFullyMapped`` helper says."""
    return edited(text, status_argument_edits(lexed(text)))


def status_argument_edits(s: Stream) -> list[Edit]:
    """:func:`without_status_arguments` as edits of ``s``."""
    return blanks(s.text, _status_spans(s))


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


def _texture_declarations(text: str) -> Iterator[tuple[str, str]]:
    """Each (name, type) of a texture whose Load takes an offset declared in ``text``."""
    s = lexed(text)
    for i in s.words(_LOAD_WITH_OFFSET):
        k = i + 1
        if s.is_(k, "<"):
            depth, j = 0, k
            while j < len(s):
                t = s.at(j).text
                if "<" in t or ">" in t:
                    depth += t.count("<") - t.count(">")
                    if depth <= 0 or depth > 2:
                        break
                j += 1
            if depth != 0 or j >= len(s):
                continue
            k = j + 1
        name = s.at(k)
        if name.kind == "id" and (name.space or s.first_on_line(k)):
            yield name.text, s.at(i).text


def offset_textures(texts: Iterable[str]) -> dict[str, str]:
    """The texture type of each name ``texts`` declare as a texture whose Load takes an offset
    (what :func:`load_offsets` needs: found once for all the files, not once per file)."""
    return {name: kind for t in texts for name, kind in _texture_declarations(t)}


def load_offsets(text: str, textures: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """Each texture ``Load`` with an offset (the texture one of :func:`offset_textures`) as
    (start, end, new arguments): ``oneshader_offset(location, offset)`` and the sample index
    of a multisampled one. Slang does not add the offset for WGSL and Metal (E36107)."""
    s = lexed(text)
    edits = []
    for i in s.words(("Load",)):
        if not (s.is_(i - 1, ".") and s.is_(i + 1, "(") and is_word(s.at(i - 2).text)):
            continue
        close = s.closing(i + 1) - 1
        wanted = _LOAD_WITH_OFFSET.get(textures.get(s.at(i - 2).text, ""), 0)
        items = s.items(i + 2, close) if close > 0 else []
        if not wanted or len(items) != wanted:  # not an offset texture's (a buffer's Load())
            continue
        args = [text[s.end(a - 1) : s.start(b)].strip() for a, b in items]
        call = ", ".join([f"oneshader_offset({args[0]}, {args[-1]})", *args[1:-1]])
        edits.append((s.end(i + 1), s.start(close), call))
    return edits


def without_load_offsets(text: str, textures: Mapping[str, str]) -> str:
    """The text with ``load_offsets`` made (columns after such a call on its line move)."""
    for i, j, call in reversed(load_offsets(text, textures)):
        text = text[:i] + call + text[j:]
    return text


def printf_calls(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of each ``printf(...);`` statement in ``text``."""
    return _printf_spans(lexed(text))


def _printf_spans(s: Stream) -> list[tuple[int, int]]:
    out = []
    calls = [i for i in s.words(("printf",)) if s.is_(i + 1, "(") and not _after_member(s, i)]
    for i in calls:
        close = s.closing(i + 1)
        if close > 0 and s.is_(close, ";"):
            out.append((s.start(i), s.end(close)))
    return out


def printf_edits(s: Stream) -> list[Edit]:
    """Every ``printf`` statement blanked (lines and columns stay): debug printf exists on
    SPIR-V only, and has no effect on what a shader computes."""
    return blanks(s.text, _printf_spans(s))


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
# Before the file, for every target (``sample_position_edits``): WGSL and Metal cannot ask for
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


def sample_position_queries(text: str) -> list[int]:
    """The ``.`` of each ``.GetSamplePosition(`` call (its token in ``lexed(text)``)."""
    return _sample_position_dots(lexed(text))


def _sample_position_dots(s: Stream) -> list[int]:
    return [
        i - 1 for i in s.words(("GetSamplePosition",)) if s.is_(i - 1, ".") and s.is_(i + 1, "(")
    ]


def sample_position_edits(s: Stream) -> list[Edit]:
    """``t.GetSamplePosition(i)`` as ``oneshader_GetSamplePosition(t, i)`` (the helpers of
    :data:`SAMPLE_POSITION_HELPER`); the columns after the call's head on its line move."""
    edits = []
    for dot in _sample_position_dots(s):
        start = s.start(s.postfix_start(dot))
        head = f"oneshader_GetSamplePosition({s.text[start : s.start(dot)].strip()}, "
        edits.append((start, s.end(dot + 2), head))
    return sorted(edits)


def bool_edits(s: Stream, names: Iterable[tuple[int, int]]) -> list[Edit]:
    """WGSL: the ``bool`` type of each member or global named at (line, column) written
    ``uint`` (same length: columns stay). WGSL has no bool in buffers; a 4-byte uint holding 0
    or 1 is how SPIR-V stores HLSL's bool there too, and HLSL converts between them wherever
    the code uses one as the other."""
    edits = []
    for line, col in names:
        found = [k for k in s.on_line(line) if s.at(k).text in _BOOLS and s.at(k).col + 3 < col - 1]
        if found:
            at = s.start(found[-1])
            edits.append((at, at + 4, "uint"))
    return sorted(set(edits))


def packoffset_edits(s: Stream) -> list[Edit]:
    """``: packoffset(...)`` blanked out (columns kept), for WGSL and Metal: Slang's code for
    them ignores it while its reflection follows it; the padding members (``slang.padding``)
    place the member."""
    spans = []
    for i in s.words(("packoffset",)):
        if s.is_(i - 1, ":") and s.is_(i + 1, "("):
            close = next((k for k in range(i + 2, len(s)) if s.at(k).text == ")"), -1)
            if close > 0:
                spans.append((s.start(i - 1), s.end(close)))
    return blanks(s.text, spans)
