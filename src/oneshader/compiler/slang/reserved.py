"""WGSL's reserved words in the code Slang emits. With ``-no-mangle`` Slang keeps the source's
names of globals, constant-buffer members and specialization constants, and does not check them
against WGSL's reserved words (``type``, ``module``, ``set``... are common HLSL names): naga
rejects such a module. Renamed as Slang's mangling would (``type`` -> ``type_0``), which every
reader of WGSL already takes back to the source's name."""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# WGSL's reserved words (the spec, "Reserved Words"): never syntax, so every such token in
# emitted WGSL is a name. Its keywords are also syntax: renamed where they name a struct member
# (a constant buffer's ``float4 loop;``), its declaration and ``.member`` accesses.
WGSL_RESERVED = _words(
    """NULL Self abstract active alignas alignof as asm asm_fragment async attribute auto await
    become binding_array cast catch class co_await co_return co_yield coherent column_major
    common compile compile_fragment concept const_cast consteval constexpr constinit crate
    debugger decltype delete demote demote_to_helper do dynamic_cast enum explicit export extends
    extern external fallthrough filter final finally friend from fxgroup get goto groupshared
    highp impl implements import inline instanceof interface layout lowp macro macro_rules match
    mediump meta mod module move mut mutable namespace new nil noexcept noinline nointerpolation
    non_coherent noncoherent noperspective null nullptr of operator package packoffset partition
    pass patch pixelfragment precise precision premerge priv protected pub public readonly ref
    regardless register reinterpret_cast require resource restrict self set shared sizeof smooth
    snorm static static_assert static_cast std subroutine super target template this
    thread_local throw trait try type typedef typeid typename typeof union unless unorm unsafe
    unsized use using varying virtual volatile wgsl where with writeonly yield"""
)
# WGSL's keywords that HLSL code may use as names (the others, break, case, default, ..., are
# HLSL keywords too; WGSL's ``default:`` of a switch must stay as it is).
WGSL_KEYWORDS = _words(
    """alias const_assert continuing diagnostic enable fn let loop override requires var"""
)

_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_LINE_START = r"^[ \t]*(?:@\w+(?:\([^)]*\))?[ \t]*)*"  # a member declaration's attributes


def wgsl_without_reserved_words(text: str) -> str:
    """``text`` with every reserved word ``w`` used as a name, and every keyword used as a
    member name, renamed ``w_<n>``, the first ``n`` that names nothing else in the module."""
    words = set(_WORD.findall(text))

    def fresh(word: str) -> str:
        n = 0
        while f"{word}_{n}" in words:
            n += 1
        words.add(f"{word}_{n}")
        return f"{word}_{n}"

    for word in sorted(words & WGSL_RESERVED):
        text = re.sub(rf"\b{re.escape(word)}\b", fresh(word), text)
    for word in sorted(words & WGSL_KEYWORDS):
        w = re.escape(word)
        declared = re.compile(rf"(?m)({_LINE_START}){w}(?=[ \t]*:(?!:))")
        if not declared.search(text):
            continue
        name = fresh(word)
        text = declared.sub(rf"\g<1>{name}", text)
        text = re.sub(rf"(\.\s*){w}\b", rf"\g<1>{name}", text)
    return text
