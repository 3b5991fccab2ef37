"""What a target's emitted code declares, in one target-neutral shape the cross-check compares.

Each reader (``spirv``, ``wgsl``, ``msl``) turns one output file into an :class:`EmittedModule`.
Layouts reuse the reflection's :class:`TypeLayout`, filled in from the code alone (decorations,
attributes and the target's own layout rules), so a layout compares against a layout.
"""

from __future__ import annotations

import functools
import re
import struct as _struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from oneshader.compiler.emitted.wgsl_names import wgsl_escaped, wgsl_source_name
from oneshader.reflection.model import (
    BUFFER_LENGTHS,
    BuiltIn,
    Interpolation,
    MatrixPacking,
    ScalarKind,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
    record,
)

__all__ = [
    "GLOBALS",
    "LENGTHS",
    "SLANG_GLOBALS",
    "SLANG_LENGTHS",
    "EmittedCodeError",
    "EmittedEntry",
    "EmittedModule",
    "EmittedResource",
    "EmittedSpec",
    "EmittedTokens",
    "EmittedVariable",
    "closing_brace",
    "counter_name",
    "demangle",
    "emitted_name",
    "emitted_pattern",
    "emitted_regex",
    "holds_scalars",
    "identifiers",
    "literal_bits",
    "resource_name",
    "round_up",
    "sequential_struct",
    "slang_scrubbed",
    "split_member",
    "struct_name",
    "unwrap_slang_struct",
    "varying_name",
]


class EmittedCodeError(ValueError):
    """The output is not code this reader understands (a bug upstream, never a user error)."""


_SUFFIX = re.compile(r"_\d+$")


class EmittedTokens:
    """A reader's tokens of emitted code, found in one C call: a reader's token loop in Python
    was its largest cost. ``skipped``: the regular expression of what stands between tokens
    (whitespace, comments); ``tokens``: of a token, the most frequent first."""

    def __init__(self, skipped: str, tokens: str, flags: re.RegexFlag) -> None:
        # What is skipped (atomic: a comment is never given back), then a token, the end, or
        # else any one character: the matches cover the text, one group each (a pair of the
        # skipped text and the token, and a sum of their lengths to find a gap, cost a third
        # more).
        self.scan = re.compile(f"(?>(?:{skipped})*)({tokens}|\\Z|.)", flags | re.S)
        self._token = re.compile(tokens, flags)
        # A character that is no token by itself (nor whitespace): only where the text holds one
        # may the scan have taken one as a token (most texts hold none).
        plain = "".join(c for c in map(chr, range(128)) if c.isspace() or self._token.fullmatch(c))
        self._odd = re.compile(f"[^{re.escape(plain)}]")

    def tokens(self, text: str) -> list[str] | None:
        """``text``'s tokens; None where the scan took one character that is no token (a
        character no token starts with), for the caller's slow walk to name."""
        found: list[str] = self.scan.findall(text)
        if self._odd.search(text) and any(
            len(t) == 1 and not self._token.fullmatch(t) for t in set(found)
        ):
            return None
        while found and not found[-1]:  # the end matches empty (only the end can)
            found.pop()
        return found

    def starts(self, text: str) -> list[int]:
        """Where each of ``text``'s tokens starts (its line is counted on an error)."""
        return [m.start(1) for m in self.scan.finditer(text) if m.group(1)]

    def within(self, text: str, start: int, end: int) -> list[str]:
        """The tokens of ``text[start:end]`` (of text :meth:`outside` vouched for), read as
        the whole text's."""
        found: list[str] = self.scan.findall(text, start, end)
        while found and not found[-1]:
            found.pop()
        return found

    def outside(
        self, text: str, inline: Callable[[list[str]], bool] | None = None
    ) -> tuple[list[str], dict[int, tuple[int, int]]] | None:
        """``text``'s tokens with each top-level ``{...}`` block's left out (two tokens ``{``
        ``}`` stand for it) and, by the index of its ``{``, where its inside is in the text,
        for :meth:`within` where a reader needs it: the bodies of the functions, most of the
        code, are mostly not (a block ``inline`` says of, given the tokens before it, is read
        in place). None where the text is not plain enough to find the blocks from the braces
        alone (a comment, a string, a preprocessor line with a brace, a character no token
        starts with, a brace inside brackets or none to close one): the caller reads
        :meth:`tokens`."""
        if self._odd.search(text) or not _braces_plain(text):
            return None
        toks: list[str] = []
        blocks: dict[int, tuple[int, int]] = {}
        pos = depth = 0
        while True:
            at = text.find("{", pos)
            found = self.within(text, pos, len(text) if at < 0 else at)
            toks += found
            if at < 0:
                return toks, blocks
            depth += found.count("(") + found.count("[") - found.count(")") - found.count("]")
            close = closing_brace(text, at)
            if depth or close is None:
                return None
            if inline is not None and inline(toks):
                toks += ["{", *self.within(text, at + 1, close), "}"]
            else:
                blocks[len(toks)] = (at + 1, close)
                toks += ["{", "}"]
            pos = close + 1


def _braces_plain(text: str) -> bool:
    """Whether every brace of ``text`` is one of its code: it holds no comment and no string,
    and no preprocessor line (Metal's ``#include``) with a brace (str.find: fast)."""
    if "//" in text or "/*" in text or '"' in text:
        return False
    at = text.find("#")
    while at >= 0:
        end = text.find("\n", at)
        line = text[text.rfind("\n", 0, at) + 1 : len(text) if end < 0 else end]
        if "{" in line or "}" in line:
            return False
        at = text.find("#", at + 1)
    return True


def closing_brace(toks: list[str] | str, at: int) -> int | None:
    """The index of the ``}`` that closes the ``{`` at ``toks[at]`` (None where none does),
    found from the braces alone, a search per ``}``: a reader skips a body without a Python
    step per token (or per character, in a text)."""
    depth, j = 1, at
    while True:
        try:
            close = toks.index("}", j + 1)
        except ValueError:
            return None
        depth += toks[j + 1 : close].count("{") - 1
        if depth == 0:
            return close
        j = close


def identifiers(toks: Iterable[str]) -> set[str]:
    """The identifiers among tokens (each distinct token looked at once: a token that starts
    as a name is one)."""
    return set(filter(str.isidentifier, set(toks)))


_NOT_CODE = re.compile(r'//[^\n]*|/\*.*?\*/|^\s*#[^\n]*|"(?:[^"\\\n]|\\.)*"', re.S | re.M)


_TYPE_WORDS = {
    Target.Wgsl: {
        ScalarKind.Int64: "i64",
        ScalarKind.UInt64: "u64",
        ScalarKind.Float64: "f64",
        ScalarKind.Int16: "i16",
        ScalarKind.UInt16: "u16",
    },
    Target.Msl: {ScalarKind.Float64: "double"},
}


def holds_scalars(code: bytes, target: Target, scalars: Iterable[ScalarKind]) -> bool:
    """Whether ``target``'s text code (WGSL, MSL) names a type of ``scalars``: ``i64``,
    ``vec3<i64>``; ``double``, ``double2``, ``double3x4`` (comments, strings and preprocessor
    lines, Slang's ``#line "file"``, left out). A kind the target spells as no word of its own
    is not looked for."""
    words = [w for k in scalars if (w := _TYPE_WORDS.get(target, {}).get(k))]
    if not words:
        return False
    text = _NOT_CODE.sub(" ", code.decode("utf-8", "replace"))
    alternatives = "|".join(re.escape(w) for w in words)
    return re.search(rf"\b(?:{alternatives})(?:\d(?:x\d)?)?\b", text) is not None


@functools.lru_cache(maxsize=4096)
def demangle(name: str) -> str:
    """Slang's WGSL/MSL name for a declaration: the source name plus ``_<n>`` (``Frame_0``);
    Slang's own ``$`` names (a bitfield's ``$bit_field_backing_0``) are spelled ``x24...``.
    (Remembered: the readers ask it of every name, the same names again and again.)"""
    name = wgsl_source_name(_SUFFIX.sub("", name))
    return "$" + name[3:] if name.startswith("x24bit_field_backing") else name


def slang_scrubbed(name: str) -> str:
    """The source name ``name`` as Slang writes a name it suffixes, before the suffix: runs of
    ``_`` made one and a trailing one dropped (a member ``__m`` is ``_m_0``, ``pad_`` is
    ``pad_0``, ``_`` is ``_0``), so that WGSL and MSL never hold a reserved ``__`` name."""
    return _UNDERSCORES.sub("_", name).removesuffix("_")


_UNDERSCORES = re.compile(r"__+")


def split_member(emitted: str, k: int) -> str:
    """The WGSL member (or parameter) that carries location ``k`` of a stage variable WGSL
    cannot pass whole (an array, a matrix): ``view_0__2``; :func:`demangle` gives ``view``."""
    return f"{emitted}__{k}"


def varying_name(emitted: str) -> str:
    """The source name of a WGSL stage variable, a :func:`split_member` one's included."""
    return demangle(_SPLIT.sub("", emitted))


_SPLIT = re.compile(r"__\d+$")


GLOBALS = "$Globals"  # DXC's constant buffer of loose global uniforms
FLOATS = frozenset({ScalarKind.Float, ScalarKind.Float16, ScalarKind.Float64})
SLANG_GLOBALS = "globalParams"  # Slang's name for the same buffer in WGSL and MSL
# Metal's companion constant buffer of buffer lengths (GetDimensions), declared by
# ``source.rewrite`` as SLANG_LENGTHS and reflected as LENGTHS (no HLSL name can clash with it).
LENGTHS = BUFFER_LENGTHS
SLANG_LENGTHS = "oneshader_lengths"


def emitted_pattern(name: str) -> str:
    """A regex for ``name`` as Slang emits it in WGSL and MSL: as written or with its ``_<n>``
    suffix (``Frame`` or ``Frame_0``), or as renamed where WGSL reserves it (``oneshader__0``
    for ``_``); the inverse of :func:`demangle`."""
    escaped = wgsl_escaped(name)
    if escaped.startswith(name):
        return rf"{re.escape(name)}(?:_\d+)?"
    return rf"(?:{re.escape(escaped)}|{re.escape(name)}(?:_\d+)?)"


@functools.lru_cache(maxsize=1024)
def emitted_regex(name: str) -> re.Pattern[str]:
    """:func:`emitted_pattern` compiled (kept: a compile asks it of the same names for each
    entry point, and ``re``'s own cache turns over within a compile)."""
    return re.compile(emitted_pattern(name))


def counter_name(name: str) -> str:
    """The companion buffer that holds buffer ``name``'s counter where a target has no hidden
    counter (``X_counter``, declared by ``source.rewrite``; SPIR-V's is renamed ``X.counter``)."""
    return f"{name}_counter"


def resource_name(emitted: str) -> str:
    """The reflection's name of a resource variable Slang emitted as ``emitted``."""
    name = demangle(emitted)
    return {SLANG_GLOBALS: GLOBALS, SLANG_LENGTHS: LENGTHS}.get(name, name)


def emitted_name(name: str) -> str:
    """The inverse of :func:`resource_name`, without Slang's ``_<n>`` suffix. A field of a
    global struct of resources, ``x.field`` in the reflection (SPIR-V's name, as DXC's), is a
    global ``x_field`` of its own in WGSL and MSL, which have no dots in names."""
    return {GLOBALS: SLANG_GLOBALS, LENGTHS: SLANG_LENGTHS}.get(name, name.replace(".", "_"))


def round_up(value: int, align: int) -> int:
    return -(-value // align) * align if align else value


def literal_bits(text: str, is_float: bool, float_suffix: str, int_suffix: str) -> int | None:
    """The 32-bit pattern of a spec constant's default literal (``true``, a float or an integer,
    its target's suffix letters stripped), as the reflection stores it; None if not a literal."""
    if text in ("true", "false"):
        return int(text == "true")
    try:
        if is_float:
            bits = _struct.pack("<f", float(text.rstrip(float_suffix)))
            return int.from_bytes(bits, "little")
        return int(text.rstrip(int_suffix), 0) & 0xFFFFFFFF
    except ValueError:
        return None


def struct_name(name: str) -> str:
    """The source name of a struct Slang emitted as ``<Name>[_std140|_std430|_natural]_<n>``."""
    name = demangle(name)
    for suffix in ("_std140", "_std430", "_natural"):
        name = name.removesuffix(suffix)
    return name


def sequential_struct(
    name: str, members: Iterable[tuple[str, TypeLayout, int, int]]
) -> tuple[TypeLayout, int, int]:
    """A struct laid out member after member, each at its own alignment (MSL and WGSL), from
    (emitted name, layout, size, align) per member: (layout, size, align), Slang's wrapper
    structs read as what they hold."""
    laid_out = []
    offset = 0
    align = 1
    for member, lay, size, malign in members:
        offset = round_up(offset, malign)
        laid_out.append(StructMember(demangle(member), offset, lay))
        offset += size
        align = max(align, malign)
    size = round_up(offset, align)
    wrapped = unwrap_slang_struct(name, laid_out)
    if wrapped is not None:
        return wrapped, size, align
    lay = TypeLayout(
        TypeKind.Struct, name=struct_name(name), size=size, align=align, members=tuple(laid_out)
    )
    return lay, size, align


_MATRIX_STORAGE = re.compile(
    r"^_MatrixStorage_[a-z]+?(?:16_t|32_t|64_t)?(?P<r>\d)x(?P<c>\d)(?P<col>_ColMajor)?"
)


def unwrap_slang_struct(name: str, members: list[StructMember]) -> TypeLayout | None:
    """Slang's wrapper structs, read as what they hold.

    ``_MatrixStorage_floatRxC[_ColMajor]<rules>`` (one array of vectors) is the HLSL matrix
    ``floatRxC``, column-major when ``_ColMajor`` is there, its matrix stride the array stride;
    ``_Array_<rules>_<T><N>`` (one array member) is that array.
    """
    if len(members) != 1 or members[0].type.kind is not TypeKind.Array:
        return None
    array = members[0].type
    if name.startswith("_Array_"):
        return _declared_element(name, array)
    m = _MATRIX_STORAGE.match(name)
    if m is None or array.element is None:
        return None
    return TypeLayout(
        TypeKind.Matrix,
        scalar=array.element.scalar,
        rows=int(m.group("r")),
        cols=int(m.group("c")),
        size=array.size,
        align=array.align,
        mstride=array.stride,
        packing=MatrixPacking.ColumnMajor if m.group("col") else MatrixPacking.RowMajor,
    )


# ``_Array_<rules>_<T><N>``: T is a scalar name or ``vector<scalar,n>`` escaped as x3C/x2C/x3E.
_ARRAY_ELEMENT = re.compile(
    r"^_Array_[a-z0-9]+_(?:(?P<scalar>float|int|uint|half|bool|double|float16_t|int16_t|uint16_t"
    r"|int64_t|uint64_t|float64_t)|vectorx3C(?P<vscalar>[a-z0-9_]+?)x2C(?P<n>[1-4])x3E)\d+(?:_\d+)?$"
)
_SCALAR_BYTES = {"half": 2, "float16_t": 2, "int16_t": 2, "uint16_t": 2, "double": 8}
_SCALAR_BYTES.update({"int64_t": 8, "uint64_t": 8, "float64_t": 8})


def _declared_element(name: str, array: TypeLayout) -> TypeLayout:
    """The array as the host sees it: Slang's WGSL stores each element of a scalar or short-vector
    array in a constant buffer in a 16-byte vector slot (``float W[3]`` becomes
    ``array<vec4<f32>, 3>``, read as ``.x``). The element is then the declared scalar or vector at
    offset 0 of its slot; the stride stays the slot's, so a stride mismatch is still caught."""
    element = array.element
    m = _ARRAY_ELEMENT.match(name)
    if m is None or element is None or element.kind is not TypeKind.Vector:
        return array
    scalar = m.group("scalar") or m.group("vscalar")
    n = int(m.group("n")) if m.group("n") else 1
    if n >= element.rows:
        return array
    width = _SCALAR_BYTES.get(scalar, 4)
    if n == 1:
        declared = TypeLayout(TypeKind.Scalar, scalar=element.scalar, size=width, align=width)
    else:
        declared = TypeLayout(
            TypeKind.Vector,
            scalar=element.scalar,
            rows=n,
            size=n * width,
            align=(2 if n == 2 else 4) * width,
        )
    return replace(array, element=declared)


@record
@dataclass(frozen=True)
class EmittedResource:
    """A global resource variable.

    ``space`` is the target's own class: SPIR-V storage class (``Uniform``, ``StorageBuffer``,
    ``UniformConstant``, ``PushConstant``), WGSL address space or handle (``uniform``, ``storage``,
    ``handle``), MSL argument class (``buffer``, ``texture``, ``sampler``). ``layout`` is the
    block struct of a constant/push buffer or the element of a structured buffer; ``stride`` the
    element stride of a runtime array. ``set``/``binding`` are None where the code gives none.
    """

    name: str
    emitted: str
    space: str
    set: int | None = None
    binding: int | None = None
    layout: TypeLayout | None = None
    stride: int | None = None
    count: int = 1
    format: str | None = None
    type_text: str = ""
    role: str = ""  # "counter" for the hidden counter of an append/consume buffer
    attachment: int | None = None  # SPIR-V InputAttachmentIndex (a subpass input)
    scope: str = ""  # the entry point whose parameter it is (MSL); "" for a module-scope variable
    access: str = ""  # a storage image's: "read", "write" or "read_write" (WGSL's words)


@record
@dataclass(frozen=True)
class EmittedSpec:
    name: str
    emitted: str
    index: int
    default: int | None  # 32-bit pattern of the default, None when the code gives none


@record
@dataclass(frozen=True)
class EmittedVariable:
    """A stage input or output of one entry point; ``location`` is None for built-ins."""

    name: str
    emitted: str
    location: int | None = None
    builtin: BuiltIn | None = None
    target_builtin: str = ""  # the target's own spelling, for messages
    interp: frozenset[Interpolation] = frozenset()
    semantic: str = ""  # MSL user(...) semantic, upper case with its index (``TEXCOORD_1``)
    span: int = 1  # the locations it occupies (SPIR-V: arrays, matrices, 64-bit vectors)


@record
@dataclass(frozen=True)
class EmittedEntry:
    name: str
    stage: str  # vertex, pixel, compute
    workgroup: tuple[int, int, int] | None = None
    inputs: tuple[EmittedVariable, ...] = ()
    outputs: tuple[EmittedVariable, ...] = ()
    uses: frozenset[str] | None = None  # resource names the entry references, where knowable
    spec_uses: frozenset[str] | None = None  # emitted names of the spec constants it reads
    helpers: frozenset[str] = frozenset()  # target built-ins the compiler added on its own
    # the globals it references as emitted (``rw_img_mip_5`` may be a resource's own name, or
    # Slang's suffix of ``rw_img_mip``: ``uses`` holds the latter reading)
    spelled: frozenset[str] = frozenset()


@dataclass
class EmittedModule:
    target: Target
    source: str  # the output file's suffix, for messages
    resources: dict[str, list[EmittedResource]] = field(default_factory=dict)
    spec_constants: dict[str, EmittedSpec] = field(default_factory=dict)
    entries: dict[str, EmittedEntry] = field(default_factory=dict)
    capabilities: frozenset[str] = frozenset()
    enables: frozenset[str] = frozenset()
    version: tuple[int, int] | None = None

    def add_resource(self, res: EmittedResource) -> None:
        self.resources.setdefault(res.name, []).append(res)
