"""A reader of what a WGSL module declares: resources, structs and their layout, entry points.

Standard library only. It tokenizes the module, reads module-scope declarations (``struct``,
``var``, ``override``, ``const``, ``alias``, ``fn``, ``enable``) and skips function bodies except
for the identifiers they mention, which give each entry point the globals it really reaches.

Layouts follow the WGSL specification's rules (alignment and size per type, ``@align``/``@size``
honoured, struct size rounded to its alignment). Slang's spellings that this reader undoes:

- names gain ``_<n>`` (``Frame`` -> ``Frame_0``, a second ``UV`` -> ``UV_1``);
- a column-major HLSL matrix in a buffer becomes ``struct _MatrixStorage_floatRxC_ColMajor<rules>
  { data : array<vecK<f32>, N> }`` (row-major: no ``_ColMajor``), read as that HLSL matrix with
  the array's stride as matrix stride;
- an array in a constant buffer becomes ``struct _Array_std140_<T><N> { data : array<...> }``,
  read as the array;
- a native ``matCxR`` is an HLSL row-major ``floatCxR`` (Slang transposes);
- the count of an array is written ``i32(N)``.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NoReturn

from oneshader.compiler.emitted.common import (
    EmittedCodeError,
    EmittedEntry,
    EmittedModule,
    EmittedResource,
    EmittedSpec,
    EmittedTokens,
    EmittedVariable,
    closing_brace,
    demangle,
    identifiers,
    literal_bits,
    resource_name,
    round_up,
    sequential_struct,
    varying_name,
)
from oneshader.reflection.model import (
    BuiltIn,
    Interpolation,
    MatrixPacking,
    ScalarKind,
    Target,
    TypeKind,
    TypeLayout,
    record,
)

__all__ = [
    "TEXEL_FORMATS",
    "WgslType",
    "parse_wgsl",
    "reached_identifiers",
    "read_wgsl",
    "read_wgsl_shared",
    "wgsl_layout",
]

_TOKEN = re.compile(
    r"\s+|//[^\n]*|/\*.*?\*/"
    r"|(?P<num>0[xX][0-9a-fA-F]+[iuf]?|\d+\.\d*(?:[eE][+-]?\d+)?[fh]?|\.\d+(?:[eE][+-]?\d+)?[fh]?"
    r"|\d+[eE][+-]?\d+[fh]?|\d+[iufh]?)"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>->|::|&&|\|\||==|!=|\+\+|--|[-+*/%&|^~!<>=(){}\[\],.;:@?])",
    re.S,
)

# _TOKEN's tokens, the most frequent first, where no other token starts as they do: a name, a
# punctuator no longer one begins with.
_TOKENS = EmittedTokens(
    r"\s+|//[^\n]*|/\*.*?\*/",
    r"[A-Za-z_][A-Za-z0-9_]*|[(){}\[\],;@?~*/%^<>]"
    r"|0[xX][0-9a-fA-F]+[iuf]?|\d+\.\d*(?:[eE][+-]?\d+)?[fh]?|\.\d+(?:[eE][+-]?\d+)?[fh]?"
    r"|\d+[eE][+-]?\d+[fh]?|\d+[iufh]?"
    r"|[A-Za-z_][A-Za-z0-9_]*"
    r"|->|::|&&|\|\||==|!=|\+\+|--|[-+*/%&|^~!<>=(){}\[\],.;:@?]",
    re.S,
)

_SCALARS: dict[str, tuple[ScalarKind, int]] = {
    "f32": (ScalarKind.Float, 4),
    "i32": (ScalarKind.Int, 4),
    "u32": (ScalarKind.UInt, 4),
    "f16": (ScalarKind.Float16, 2),
    "bool": (ScalarKind.Bool, 4),
    # Not valid WGSL for naga, but Slang emits them for 64-bit types; read them faithfully.
    "i64": (ScalarKind.Int64, 8),
    "u64": (ScalarKind.UInt64, 8),
    "f64": (ScalarKind.Float64, 8),
}
_SHORT_SUFFIX = {"f": "f32", "i": "i32", "u": "u32", "h": "f16"}

# WGSL texel format -> the [[vk::image_format]] name for the same format.
TEXEL_FORMATS: dict[str, str] = {
    "rgba8unorm": "rgba8",
    "rgba8snorm": "rgba8snorm",
    "rgba8uint": "rgba8ui",
    "rgba8sint": "rgba8i",
    "rgba16uint": "rgba16ui",
    "rgba16sint": "rgba16i",
    "rgba16float": "rgba16f",
    "rgba16unorm": "rgba16",
    "rgba16snorm": "rgba16snorm",
    "r32uint": "r32ui",
    "r32sint": "r32i",
    "r32float": "r32f",
    "rg32uint": "rg32ui",
    "rg32sint": "rg32i",
    "rg32float": "rg32f",
    "rgba32uint": "rgba32ui",
    "rgba32sint": "rgba32i",
    "rgba32float": "rgba32f",
    "r8unorm": "r8",
    "r8snorm": "r8snorm",
    "r8uint": "r8ui",
    "r8sint": "r8i",
    "rg8unorm": "rg8",
    "rg8snorm": "rg8snorm",
    "rg8uint": "rg8ui",
    "rg8sint": "rg8i",
    "r16uint": "r16ui",
    "r16sint": "r16i",
    "r16float": "r16f",
    "r16unorm": "r16",
    "r16snorm": "r16snorm",
    "rg16uint": "rg16ui",
    "rg16sint": "rg16i",
    "rg16float": "rg16f",
    "rg16unorm": "rg16",
    "rg16snorm": "rg16snorm",
    "rgb10a2unorm": "rgb10a2",
    "rgb10a2uint": "rgb10a2ui",
    "rg11b10ufloat": "r11g11b10f",
}

_BUILTINS: dict[str, BuiltIn | None] = {
    "position": BuiltIn.Position,
    "vertex_index": BuiltIn.VertexId,
    "instance_index": BuiltIn.InstanceId,
    "front_facing": BuiltIn.FrontFacing,
    "frag_depth": BuiltIn.Depth,
    "sample_index": BuiltIn.SampleIndex,
    "sample_mask": BuiltIn.SampleMask,
    "primitive_index": BuiltIn.PrimitiveId,
    "clip_distances": BuiltIn.ClipDistance,
    "local_invocation_id": BuiltIn.GroupThreadId,
    "local_invocation_index": BuiltIn.GroupIndex,
    "global_invocation_id": BuiltIn.DispatchThreadId,
    "workgroup_id": BuiltIn.GroupId,
    "num_workgroups": None,
}

_STAGES = {"vertex": "vertex", "fragment": "pixel", "compute": "compute"}


@record
@dataclass(frozen=True)
class WgslType:
    """A parsed type expression: ``name`` with template arguments (types or integer counts)."""

    name: str
    args: tuple[WgslType | int | str, ...] = ()

    def __str__(self) -> str:
        if not self.args:
            return self.name
        return f"{self.name}<{', '.join(str(a) for a in self.args)}>"


@record
@dataclass(frozen=True)
class _Member:
    name: str
    type: WgslType
    attrs: dict[str, tuple[str, ...]]


@dataclass
class _Function:
    name: str
    attrs: dict[str, tuple[str, ...]]
    params: list[_Member]
    result: _Member | None
    idents: set[str]


@dataclass
class _Parsed:
    structs: dict[str, list[_Member]] = field(default_factory=dict)
    aliases: dict[str, WgslType] = field(default_factory=dict)
    consts: dict[str, int] = field(default_factory=dict)
    globals: list[tuple[str, str, WgslType, dict[str, tuple[str, ...]]]] = field(
        default_factory=list
    )
    overrides: list[tuple[str, WgslType | None, str, dict[str, tuple[str, ...]]]] = field(
        default_factory=list
    )
    functions: dict[str, _Function] = field(default_factory=dict)
    enables: set[str] = field(default_factory=set)


class _Parser:
    def __init__(self, text: str, bodies: bool = False) -> None:
        self.text = text
        # The functions' bodies left out (most of the code: only their names are read, by a
        # regular expression), where every brace is code and unless ``bodies``; else one C call
        # finds every token, or a character is wrong and the slow walk names it.
        top = None if bodies else _TOKENS.outside(text, _struct_block)
        toks, self.blocks = top or (_TOKENS.tokens(text), {})
        if toks is None:
            self._bad_character()
        self.toks: list[str] = toks
        self.n = len(toks)
        self.i = 0
        self.simple: dict[str, WgslType] = {}  # the types without arguments, by name

    def _bad_character(self) -> NoReturn:
        pos = 0
        for m in _TOKEN.finditer(self.text):
            if m.start() != pos:
                break
            pos = m.end()
        line = self.text.count("\n", 0, pos) + 1
        raise EmittedCodeError(f"WGSL: unexpected character {self.text[pos]!r} on line {line}")

    @property
    def starts(self) -> list[int]:
        """Where each token starts (its line is counted on an error)."""
        return _TOKENS.starts(self.text)

    def peek(self, ahead: int = 0) -> str:
        j = self.i + ahead
        return self.toks[j] if j < self.n else ""

    def next(self) -> str:
        i = self.i
        if i >= self.n:
            raise EmittedCodeError("WGSL: unexpected end of module")
        self.i = i + 1
        return self.toks[i]

    def expect(self, tok: str) -> None:
        got = self.next()
        if got != tok:
            raise EmittedCodeError(f"WGSL: expected '{tok}', found '{got}'")

    def attributes(self) -> dict[str, tuple[str, ...]]:
        attrs: dict[str, tuple[str, ...]] = {}
        while self.peek() == "@":
            self.next()
            name = self.next()
            args: list[str] = []
            if self.peek() == "(":
                self.next()
                depth = 0
                cur: list[str] = []
                while True:
                    tok = self.next()
                    if tok == "(":
                        depth += 1
                    elif tok == ")":
                        if depth == 0:
                            break
                        depth -= 1
                    if tok == "," and depth == 0:
                        args.append("".join(cur))
                        cur = []
                    else:
                        cur.append(tok)
                if cur:
                    args.append("".join(cur))
            attrs[name] = tuple(args)
        return attrs

    def type(self) -> WgslType:
        name = self.next()
        if not (name[:1].isalpha() or name[:1] == "_"):
            raise EmittedCodeError(f"WGSL: expected a type, found '{name}'")
        if self.peek() != "<":
            simple = self.simple.get(name)
            if simple is None:  # (one per name: a type is frozen)
                simple = self.simple[name] = WgslType(name)
            return simple
        self.next()
        args: list[WgslType | int | str] = []
        while True:
            args.append(self.type_arg())
            tok = self.next()
            if tok == ">":
                break
            if tok != ",":
                raise EmittedCodeError(f"WGSL: expected ',' or '>' in {name}<...>, found '{tok}'")
        return WgslType(name, tuple(args))

    def type_arg(self) -> WgslType | int | str:
        tok = self.peek()
        if tok[:1].isdigit():
            self.next()
            return _int_literal(tok)
        if tok in ("i32", "u32") and self.peek(1) == "(":
            self.next()
            self.next()
            value = _int_literal(self.next())
            self.expect(")")
            return value
        return self.type()

    def skip_to(self, end: str) -> list[str]:
        out: list[str] = []
        depth = 0
        while True:
            tok = self.next()
            if tok in "([{" and tok:
                depth += 1
            elif tok in ")]}" and tok:
                depth -= 1
            if tok == end and depth <= 0:
                return out
            out.append(tok)

    def block_idents(self) -> set[str]:
        """Skip a brace-delimited body and return every identifier in it."""
        self.expect("{")
        span = self.blocks.get(self.i - 1)
        if span is not None:
            self.i += 1  # its '}'
            return _identifiers(self.text, *span)
        close = closing_brace(self.toks, self.i - 1)
        if close is None:
            self.i = len(self.toks)
            raise EmittedCodeError("WGSL: unexpected end of module")
        idents = identifiers(self.toks[self.i : close])
        self.i = close + 1
        return idents

    def member(self) -> _Member:
        attrs = self.attributes()
        name = self.next()
        self.expect(":")
        return _Member(name, self.type(), attrs)

    def members(self, close: str) -> list[_Member]:
        """Comma-separated members (a struct's or a function's parameters) up to ``close``."""
        members: list[_Member] = []
        while self.peek() != close:
            members.append(self.member())
            if self.peek() == ",":
                self.next()
        self.next()
        return members

    def parse(self) -> _Parsed:
        try:
            return self._parse()
        except EmittedCodeError as exc:
            if self.blocks:  # the error's line is counted among every token
                return _Parser(self.text, bodies=True).parse()
            at = self.starts[min(self.i, len(self.starts)) - 1] if self.starts else 0
            where = self.text.count("\n", 0, at) + 1
            raise EmittedCodeError(f"{exc} (line {where})") from None

    def _parse(self) -> _Parsed:
        out = _Parsed()
        while self.peek():
            attrs = self.attributes()
            kw = self.next()
            if kw == ";":
                continue
            if kw in ("enable", "requires", "diagnostic", "const_assert"):
                words = self.skip_to(";")
                if kw == "enable":
                    out.enables.update(w for w in words if w != ",")
            elif kw == "struct":
                name = self.next()
                self.expect("{")
                out.structs[name] = self.members("}")
            elif kw == "alias":
                name = self.next()
                self.expect("=")
                out.aliases[name] = self.type()
                self.expect(";")
            elif kw == "const":
                name = self.next()
                rest = self.skip_to(";")
                value = _const_value(rest)
                if value is not None:
                    out.consts[name] = value
            elif kw == "var":
                space = ""
                if self.peek() == "<":
                    self.next()
                    space = ",".join(t for t in self.skip_to(">") if t != ",")
                name = self.next()
                self.expect(":")
                vtype = self.type()
                self.skip_to(";")
                out.globals.append((name, space, vtype, attrs))
            elif kw == "override":
                name = self.next()
                otype: WgslType | None = None
                if self.peek() == ":":
                    self.next()
                    otype = self.type()
                init = ""
                if self.peek() == "=":
                    self.next()
                    init = "".join(self.skip_to(";"))
                else:
                    self.skip_to(";")
                out.overrides.append((name, otype, init, attrs))
            elif kw == "fn":
                fn = self.function(attrs)
                out.functions[fn.name] = fn
            else:
                raise EmittedCodeError(f"WGSL: unexpected '{kw}' at module scope")
        return out

    def function(self, attrs: dict[str, tuple[str, ...]]) -> _Function:
        name = self.next()
        self.expect("(")
        params = self.members(")")
        result: _Member | None = None
        if self.peek() == "->":
            self.next()
            rattrs = self.attributes()
            result = _Member("", self.type(), rattrs)
        return _Function(name, attrs, params, result, self.block_idents())


def _struct_block(toks: list[str]) -> bool:
    """Whether the block after ``toks`` is a struct's (read in place: its members)."""
    return toks[-2:-1] == ["struct"]


# A number whose letters a word boundary starts (``1.e5``, ``1.f``): read as a token
_DOT_LETTER = re.compile(r"(?<![A-Za-z0-9_])\d+\.[A-Za-z_]")
# Every ASCII character but a word's and a dot, to a space (str.translate)
_SPACED = str.maketrans({c: " " for c in map(chr, range(128)) if not re.match(r"[\w.]", c)})


def _identifiers(text: str, start: int, end: int) -> set[str]:
    """The identifiers in ``text[start:end]`` (a body :meth:`EmittedTokens.outside` left out,
    of no comment or character beyond ASCII), as :func:`identifiers` reads them of its tokens:
    the words that start with a letter. Its distinct runs of word characters and dots, found
    in two C calls, are what ``_DOT_LETTER`` is looked for in and split at the dots (a regular
    expression over the whole body cost twice as much)."""
    runs = " ".join(set(text[start:end].translate(_SPACED).split()))
    if _DOT_LETTER.search(runs):
        return identifiers(_TOKENS.within(text, start, end))
    return {w for w in set(runs.replace(".", " ").split()) if not w[0].isdigit()}


@functools.lru_cache(maxsize=4)
def parse_wgsl(text: str) -> _Parsed:
    """The module's declarations: structs, and functions with their attributes and parameters
    (for the patches that wrap entry points). Parsed once per text: the readers, the entry
    points and the patches of one compile read the same code several times, so the result is
    shared and its callers must not change it."""
    return _Parser(text).parse()


def _int_literal(tok: str) -> int:
    text = tok.rstrip("iu")
    try:
        return int(text, 0)
    except ValueError as exc:
        raise EmittedCodeError(f"WGSL: expected an integer, found '{tok}'") from exc


def _const_value(tokens: list[str]) -> int | None:
    """The value of ``[: T] = N`` or ``= i32(N)`` when it is a plain integer."""
    if "=" not in tokens:
        return None
    rhs = [t for t in tokens[tokens.index("=") + 1 :] if t not in ("(", ")", "i32", "u32")]
    if len(rhs) == 1 and rhs[0][:1].isdigit():
        try:
            return _int_literal(rhs[0])
        except EmittedCodeError:
            return None
    return None


def _default_bits(init: str, otype: WgslType | None) -> int | None:
    text = init.strip()
    for wrap in ("i32", "u32", "f32", "bool"):
        if text.startswith(wrap + "(") and text.endswith(")"):
            text = text[len(wrap) + 1 : -1]
    is_float = otype is not None and otype.name in ("f32", "f16")
    return literal_bits(text, is_float or "." in text or text.endswith("f"), "fh", "iu")


def wgsl_layout(
    t: WgslType,
    structs: dict[str, list[tuple[str, WgslType, dict[str, tuple[str, ...]]]]],
    aliases: dict[str, WgslType] | None = None,
    consts: dict[str, int] | None = None,
) -> TypeLayout:
    """The layout WGSL's rules give type ``t`` (members as name, type, attributes)."""
    return _Layouts(structs, aliases or {}, consts or {}).layout(t)[0]


class _Layouts:
    def __init__(
        self,
        structs: dict[str, list[tuple[str, WgslType, dict[str, tuple[str, ...]]]]],
        aliases: dict[str, WgslType],
        consts: dict[str, int],
    ) -> None:
        self.structs = structs
        self.aliases = aliases
        self.consts = consts

    def resolve(self, t: WgslType) -> WgslType:
        seen = 0
        while t.name in self.aliases and not t.args and seen < 64:
            t = self.aliases[t.name]
            seen += 1
        return t

    def layout(self, t: WgslType) -> tuple[TypeLayout, int, int]:
        """The layout to report, plus the (size, align) the enclosing struct must use."""
        t = self.resolve(t)
        name = t.name
        short = re.fullmatch(r"(vec[234]|mat[234]x[234])([fhiu])", name)
        if short:
            t = WgslType(short.group(1), (WgslType(_SHORT_SUFFIX[short.group(2)]),))
            name = t.name
        if name == "atomic" and self._arg_type(t, 0).name in ("u32", "i32"):
            # atomic<u32>/atomic<i32> are 4-byte scalars to the host; the reflection says UInt/Int.
            name = self._arg_type(t, 0).name
        if name in _SCALARS:
            kind, size = _SCALARS[name]
            return TypeLayout(TypeKind.Scalar, scalar=kind, size=size, align=size), size, size
        if name in ("vec2", "vec3", "vec4"):
            n = int(name[3])
            kind, size = _SCALARS[self._arg_type(t, 0).name]
            align = (2 if n == 2 else 4) * size
            lay = TypeLayout(TypeKind.Vector, scalar=kind, rows=n, size=n * size, align=align)
            return lay, n * size, align
        if re.fullmatch(r"mat[234]x[234]", name):
            c, r = int(name[3]), int(name[5])
            kind, size = _SCALARS[self._arg_type(t, 0).name]
            align = (2 if r == 2 else 4) * size
            mstride = round_up(r * size, align)
            lay = TypeLayout(
                TypeKind.Matrix,
                scalar=kind,
                rows=c,
                cols=r,
                size=c * mstride,
                align=align,
                mstride=mstride,
                packing=MatrixPacking.RowMajor,
            )
            return lay, c * mstride, align
        if name == "array":
            element, esize, ealign = self.layout(self._arg_type(t, 0))
            length = self._count(t.args[1]) if len(t.args) > 1 else 0
            stride = round_up(esize, ealign)
            lay = TypeLayout(
                TypeKind.Array,
                size=length * stride,
                align=ealign,
                length=length,
                stride=stride,
                element=element,
            )
            return lay, length * stride, ealign
        if name in self.structs:
            return self._struct(name)
        raise EmittedCodeError(f"WGSL: type '{t}' has no host-shareable layout")

    def _arg_type(self, t: WgslType, i: int) -> WgslType:
        arg = t.args[i] if i < len(t.args) else None
        if not isinstance(arg, WgslType):
            raise EmittedCodeError(f"WGSL: '{t}' needs a type argument")
        return self.resolve(arg)

    def _count(self, arg: WgslType | int | str) -> int:
        if isinstance(arg, int):
            return arg
        if isinstance(arg, WgslType) and arg.name in self.consts:
            return self.consts[arg.name]
        raise EmittedCodeError(f"WGSL: array count '{arg}' is not a constant")

    def _struct(self, name: str) -> tuple[TypeLayout, int, int]:
        return sequential_struct(name, map(self._member, self.structs[name]))

    def _member(
        self, member: tuple[str, WgslType, dict[str, tuple[str, ...]]]
    ) -> tuple[str, TypeLayout, int, int]:
        """A member's layout, with its @align/@size attributes where Slang wrote them."""
        mname, mtype, attrs = member
        lay, size, malign = self.layout(mtype)
        if "align" in attrs:
            malign = _int_literal(attrs["align"][0])
        if "size" in attrs:
            size = _int_literal(attrs["size"][0])
        return mname, lay, size, malign


def _interp(attrs: dict[str, tuple[str, ...]]) -> frozenset[Interpolation]:
    args = attrs.get("interpolate")
    if not args:
        return frozenset()
    out: set[Interpolation] = set()
    kind = args[0]
    if kind == "flat":
        out.add(Interpolation.Flat)
    elif kind == "linear":
        out.add(Interpolation.NoPerspective)
    if len(args) > 1:
        if args[1] == "centroid":
            out.add(Interpolation.Centroid)
        elif args[1] == "sample":
            out.add(Interpolation.Sample)
    return frozenset(out)


def _stage_var(name: str, attrs: dict[str, tuple[str, ...]]) -> EmittedVariable:
    if "builtin" in attrs:
        spelled = attrs["builtin"][0]
        return EmittedVariable(
            name=demangle(name),
            emitted=name,
            builtin=_BUILTINS.get(spelled),
            target_builtin=spelled,
        )
    loc = attrs.get("location")
    return EmittedVariable(
        name=varying_name(name),
        emitted=name,
        location=_int_literal(loc[0]) if loc else None,
        interp=_interp(attrs),
    )


# A subgroup built-in or operation (WGSL's subgroups extension; quad operations are part of it).
SUBGROUP_OPERATION = re.compile(
    r"@builtin\(\s*subgroup_\w+\s*\)|\b(?:subgroup[A-Z]\w*|quad(?:Broadcast|Swap\w+))\s*\("
)


def read_wgsl(data: bytes, source: str = ".wgsl") -> EmittedModule:
    """Everything the cross-check compares, as this module declares it."""
    text = data.decode("utf-8")
    parsed = parse_wgsl(text)
    structs = {
        name: [(m.name, m.type, m.attrs) for m in members]
        for name, members in parsed.structs.items()
    }
    lay = _Layouts(structs, parsed.aliases, parsed.consts)
    enables = set(parsed.enables)
    if ("subgroup" in text or "quad" in text) and SUBGROUP_OPERATION.search(text):
        enables.add("subgroups")  # (naga knows the operations, not yet the 'enable')
    out = EmittedModule(Target.Wgsl, source, enables=frozenset(enables))
    global_names: dict[str, str] = {}
    for emitted, space, vtype, attrs in parsed.globals:
        space_kind = space.split(",")[0] if space else "handle"
        if space_kind in ("private", "workgroup", "function"):
            continue
        global_names[emitted] = resource_name(emitted)
        out.add_resource(_resource(emitted, space_kind, vtype, attrs, lay))
    for emitted, otype, init, attrs in parsed.overrides:
        if "id" in attrs:
            out.spec_constants[emitted] = EmittedSpec(
                demangle(emitted), emitted, _int_literal(attrs["id"][0]), _default_bits(init, otype)
            )
    for fn in parsed.functions.values():
        stage = next((s for s in _STAGES if s in fn.attrs), None)
        if stage is None:
            continue
        out.entries[fn.name] = _entry(
            fn, _STAGES[stage], parsed, global_names, frozenset(out.spec_constants)
        )
    return out


def _resource(
    emitted: str,
    space: str,
    vtype: WgslType,
    attrs: dict[str, tuple[str, ...]],
    lay: _Layouts,
) -> EmittedResource:
    group = attrs.get("group")
    binding = attrs.get("binding")
    t = lay.resolve(vtype)
    count = 1
    if space == "handle" and t.name in ("binding_array", "array"):
        count = lay._count(t.args[1]) if len(t.args) > 1 else 0
        t = lay._arg_type(t, 0)
    layout: TypeLayout | None = None
    stride: int | None = None
    fmt: str | None = None
    access = ""
    if space in ("uniform", "storage"):
        if t.name == "array" and len(t.args) == 1:
            array = lay.layout(t)[0]
            layout, stride = array.element, array.stride
        else:
            layout = lay.layout(t)[0]
    elif t.name.startswith("texture_storage_") and t.args:
        texel = str(t.args[0])
        fmt = TEXEL_FORMATS.get(texel, texel)
        access = str(t.args[1]) if len(t.args) > 1 else ""
    return EmittedResource(
        name=resource_name(emitted),
        emitted=emitted,
        space=space,
        set=_int_literal(group[0]) if group else None,
        binding=_int_literal(binding[0]) if binding else None,
        layout=layout,
        stride=stride,
        count=count,
        format=fmt,
        type_text=str(vtype),
        access=access,
    )


def _flatten(
    name: str, t: WgslType, attrs: dict[str, tuple[str, ...]], parsed: _Parsed
) -> list[EmittedVariable]:
    if t.name in parsed.structs and not attrs:
        return [_stage_var(m.name, m.attrs) for m in parsed.structs[t.name]]
    return [_stage_var(name, attrs)]


def _entry(
    fn: _Function,
    stage: str,
    parsed: _Parsed,
    global_names: dict[str, str],
    overrides: frozenset[str],
) -> EmittedEntry:
    inputs: list[EmittedVariable] = []
    for p in fn.params:
        inputs.extend(_flatten(p.name, p.type, p.attrs, parsed))
    outputs: list[EmittedVariable] = []
    if fn.result is not None:
        outputs.extend(_flatten("", fn.result.type, fn.result.attrs, parsed))
    workgroup: tuple[int, int, int] | None = None
    if "workgroup_size" in fn.attrs:
        dims = [_wg_dim(a, parsed.consts) for a in fn.attrs["workgroup_size"]]
        if all(d is not None for d in dims):
            full = [d or 0 for d in dims] + [1, 1]
            workgroup = (full[0], full[1], full[2])
    # The globals and overrides this entry reaches, through the functions it calls.
    idents = _reached(parsed, fn.name)
    reached = {global_names[i] for i in idents if i in global_names}
    specs = {a for a in fn.attrs.get("workgroup_size", ()) if a in overrides}
    specs.update(i for i in idents if i in overrides)
    return EmittedEntry(
        name=fn.name,
        stage=stage,
        workgroup=workgroup,
        inputs=tuple(v for v in inputs if not (v.builtin is None and v.target_builtin)),
        outputs=tuple(outputs),
        uses=frozenset(reached),
        spec_uses=frozenset(specs),
        spelled=frozenset(i for i in idents if i in global_names),
        helpers=frozenset(
            v.target_builtin for v in inputs if v.builtin is None and v.target_builtin
        ),
    )


def _reached(parsed: _Parsed, entry: str) -> set[str]:
    """Every identifier in the body of function ``entry`` and of the functions it calls,
    transitively (the one walk of WGSL's call graph)."""
    idents: set[str] = set()
    todo = [entry]
    seen: set[str] = set()
    while todo:
        cur = parsed.functions.get(todo.pop())
        if cur is None or cur.name in seen:
            continue
        seen.add(cur.name)
        idents |= cur.idents
        todo.extend(i for i in cur.idents if i in parsed.functions)
    return idents


def reached_identifiers(data: bytes, entries: Iterable[str]) -> dict[str, set[str]]:
    """Per entry point: the identifiers in the code it reaches (for what it reads of names that
    are not resources, such as spec constants)."""
    parsed = parse_wgsl(data.decode("utf-8"))
    return {entry: _reached(parsed, entry) for entry in entries}


def _wg_dim(text: str, consts: dict[str, int]) -> int | None:
    text = text.strip()
    for wrap in ("i32(", "u32("):
        if text.startswith(wrap) and text.endswith(")"):
            text = text[len(wrap) : -1]
    if text in consts:
        return consts[text]
    try:
        return _int_literal(text)
    except EmittedCodeError:
        return None


@functools.lru_cache(maxsize=4)
def read_wgsl_shared(data: bytes) -> EmittedModule:
    """:func:`read_wgsl` of ``data``, read once for the reflection's steps and the cross-check,
    which only look at the module (they read the same code up to four times); they must not
    change it."""
    return read_wgsl(data)


_SUBGROUPS_ENABLE = re.compile(rb"^enable\s+subgroups\s*;[ \t]*\n?", re.MULTILINE)


def without_subgroups_enable(code: bytes) -> bytes:
    """Slang's WGSL without ``enable subgroups;``: the naga wgpu-py ships refuses the
    directive ("not yet supported") but takes the subgroup built-ins and operations on a device
    granted the 'subgroup' feature (the entry points' features say Subgroups)."""
    if b"subgroups" not in code:  # (most modules: ``(?m)^`` is tried at every position)
        return code
    return _SUBGROUPS_ENABLE.sub(b"", code)


# What naga refuses in Slang's WGSL (slang/not_wgsl.py says where the source asks for it).
# (A pattern that starts with its word, the word boundary before it looked behind for, is
# searched for from the word's letters; one that starts with ``\b`` is tried at every position:
# fifteen times slower on a module.)
_WORKGROUP_PARAMETER = re.compile(r"fn(?<!\wfn)\s+(\w+)\s*\([^)]*:\s*ptr<workgroup\b")
# (A line's start, ``(?m)^``, is tried at every position: the first line is matched on its
# own and the others searched for from their newline.)
_LOCAL_BUFFER = re.compile(r"[ \t]+var<(?:storage|uniform)\b[^>]*>\s*(\w+)")
_LOCAL_BUFFER_LINE = re.compile(r"\n" + _LOCAL_BUFFER.pattern)
_INT_MATRIX_EMULATED = re.compile(r"array<vec[234]<(?:i32|u32|bool)>,\s*i32\([234]\)>")
_RESULT_FUNCTION = re.compile(r"fn(?<!\wfn)\s+(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*->[^{]*\{")
_RETURN = re.compile(r"return(?<!\wreturn)\b")
_BRACKET = re.compile(r"[()\[\]{}]")


def workgroup_pointer_function(code: bytes) -> str | None:
    """The first function (as Slang names it) that takes a ``ptr<workgroup, T>``."""
    if b"ptr<workgroup" not in code:  # (what the pattern needs: most modules have none)
        return None
    m = _WORKGROUP_PARAMETER.search(code.decode("utf-8", "replace"))
    return m.group(1) if m else None


def local_buffer(code: bytes) -> str | None:
    """The first buffer declared inside a function (``var<storage>`` or ``var<uniform>``, as
    Slang names it)."""
    text = code.decode("utf-8", "replace")
    m = _LOCAL_BUFFER.match(text) or _LOCAL_BUFFER_LINE.search(text)
    return m.group(1) if m else None


def emulates_integer_matrices(code: bytes) -> bool:
    """Whether the code holds an integer matrix as Slang writes one: an array of vectors."""
    return _INT_MATRIX_EMULATED.search(code.decode("utf-8", "replace")) is not None


def functions_without_return(code: bytes) -> list[str]:
    """The functions with a result whose body holds no ``return`` (as Slang names them): a body
    holds one where its brackets, walked from its ``{`` to the next ``return``, do not close
    before it (in one C call: the brackets' depths accumulated)."""
    wgsl = code.decode("utf-8", "replace")
    out = []
    for m in _RESULT_FUNCTION.finditer(wgsl):
        found = _RETURN.search(wgsl, m.end())
        if found is not None:
            brackets = _BRACKET.findall(wgsl, m.end() - 1, found.start())
            if 0 not in itertools.accumulate(map(_DEPTH.__getitem__, brackets)):
                continue  # (the return is the body's: it is still open there)
        out.append(m.group(1))
    return out


_DEPTH = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
