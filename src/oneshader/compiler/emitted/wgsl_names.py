"""The identifiers WGSL reserves, and how oneshader renames the source names Slang keeps in WGSL
that are one of them.

Slang keeps some source names as they are in WGSL (spec constants, resources, constant-buffer
members) and gives most others ``_<n>``; naga refuses a name WGSL reserves (WGSL 3.5 and
3.6): a keyword, a reserved word, a single ``_``, or any name starting with ``__``. Such a name
is renamed in the module so that :func:`wgsl_source_name` (through ``common.demangle``) gives
the source name back: a reserved word or keyword gets Slang's ``_0`` (``type`` -> ``type_0``);
``_`` and ``__x``, which stay reserved whatever follows them, get the prefix ``oneshader`` too
(``_`` -> ``oneshader__0``, ``__pad`` -> ``oneshader__pad_0``; ``oneshader_`` names are
oneshader's own, so no source name is read back wrongly).
"""

from __future__ import annotations

import re

__all__ = [
    "WGSL_KEYWORDS",
    "WGSL_RESERVED",
    "unreserved_wgsl",
    "wgsl_escaped",
    "wgsl_source_name",
]

# WGSL's reserved words (naga refuses each as a name; tests/compiler/test_wgsl_keywords.py
# checks the whole list against naga).
_RESERVED_WORDS = """
NULL Self abstract active alignas alignof as asm asm_fragment async attribute auto await
become cast catch class co_await co_return co_yield coherent column_major common compile
compile_fragment concept const_cast consteval constexpr constinit crate debugger decltype
delete demote demote_to_helper do dynamic_cast enum explicit export extends extern
external fallthrough filter final finally friend from fxgroup get goto groupshared highp
impl implements import inline instanceof interface layout lowp macro macro_rules match
mediump meta mod module move mut mutable namespace new nil noexcept noinline
nointerpolation noperspective null nullptr of operator package packoffset partition pass
patch pixelfragment precise precision premerge priv protected pub public readonly ref
regardless register reinterpret_cast require resource restrict self set shared sizeof
smooth snorm static static_assert static_cast std subroutine super target template this
thread_local throw trait try type typedef typeid typename typeof union unless unorm
unsafe unsized use using varying virtual volatile wgsl where with writeonly yield
"""
WGSL_RESERVED = frozenset(_RESERVED_WORDS.split())
# WGSL's keywords that HLSL lets a name be (the others, ``if``, ``struct``, ``return``..., are
# HLSL keywords too), which Slang's own code uses: renamed only where WGSL puts a name.
WGSL_KEYWORDS = (
    "alias",
    "const_assert",
    "continuing",
    "diagnostic",
    "enable",
    "fn",
    "let",
    "loop",
    "override",
    "requires",
    "var",
)
_PREFIX = "oneshader"  # before a name WGSL reserves by its start (``_``, ``__x``)
_SUFFIX = "_0"  # Slang's own suffix, which ``common.demangle`` drops


def _reserved_start(name: str) -> bool:
    return name == "_" or name.startswith("__")


def wgsl_escaped(name: str) -> str:
    """``name`` as oneshader writes it in WGSL when Slang keeps it and WGSL reserves it."""
    if _reserved_start(name):
        return f"{_PREFIX}{name}{_SUFFIX}"
    if name in WGSL_RESERVED or name in WGSL_KEYWORDS:
        return f"{name}{_SUFFIX}"
    return name


def wgsl_source_name(name: str) -> str:
    """The inverse of :func:`wgsl_escaped` for a name whose ``_<n>`` suffix is already
    dropped: ``oneshader__pad`` is ``__pad``; any other name is itself."""
    rest = name.removeprefix(_PREFIX)
    return rest if rest != name and _reserved_start(rest) else name


# Any identifier token; one of Slang's own names never is ``_`` or starts with ``__`` (Slang
# writes ``__x`` as ``_x_0``), nor is a WGSL reserved word, so every such token is a kept name.
_WORD = re.compile(r"(?<![\w@])[A-Za-z_]\w*")
# A word _reserved_start holds. (Each pattern searched for over a module starts with its
# literal, the look-behind after it: one led by a look-behind is tried at every position, ten
# times slower.)
_RESERVED_START = re.compile(r"_(?<![\w@]_)(?:_|(?!\w))")
# A keyword, then whether it is a name: after a member access's ``.``, or not after a word
# character or ``@`` and before what follows a name.
_KEYWORD = re.compile(rf"(?:{'|'.join(WGSL_KEYWORDS)})\b")
_WORD_BEFORE = re.compile(r"[\w@]")
_NAME_AFTER = re.compile(r"\s*(?:[\[\].),;*+\-/%&|^:]|[=!<>]=|=(?!=))")


# ASCII's characters that are no word character, each made a space (``_words``).
_NOT_WORD = str.maketrans({c: " " for c in map(chr, range(128)) if not re.match(r"\w", c)})


def _words(text: str) -> list[str]:
    """Every run of word characters in ``text``, so every name ``_WORD`` finds among them
    (an ASCII text's in two C calls: ``_WORD``'s look-behind is tried at every position)."""
    if text.isascii():
        return text.translate(_NOT_WORD).split()
    found: list[str] = _WORD.findall(text)
    return found


def unreserved_wgsl(code: bytes) -> bytes:
    """Slang's WGSL with every kept name WGSL reserves renamed by :func:`wgsl_escaped`: a
    reserved word (a spec constant called ``type``), ``_`` or a name starting with ``__`` (a
    ``cbuffer _``) wherever it stands, a keyword (a member called ``var``) only where WGSL's
    grammar never puts the keyword: after a member access's ``.``, or before what follows a
    name (a declaration's ``:``, an operator, an index, ``;``), since Slang's code uses it."""
    text = code.decode()

    def keyword(m: re.Match[str]) -> str:
        at = m.start()
        if at and text[at - 1] == ".":
            return wgsl_escaped(m.group(0))
        if at and _WORD_BEFORE.match(text, at - 1):
            return m.group(0)
        return wgsl_escaped(m.group(0)) if _NAME_AFTER.match(text, m.end()) else m.group(0)

    text = _KEYWORD.sub(keyword, text)
    if WGSL_RESERVED.isdisjoint(_words(text)) and not _RESERVED_START.search(text):
        return text.encode()  # (each name once: no name to rename)

    def reserved(word: str) -> bool:
        return word in WGSL_RESERVED or _reserved_start(word)

    renamed = _WORD.sub(lambda m: wgsl_escaped(w) if reserved(w := m.group(0)) else w, text)
    return renamed.encode()
