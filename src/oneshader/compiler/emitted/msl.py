"""A reader of what a Metal Shading Language file declares: argument indices, structs, entries.

Standard library only, and only for the subset Slang writes: ``struct`` declarations, function
constants, and functions whose bodies are skipped. Each entry point's parameters carry the
resources (``[[buffer(n)]]``, ``[[texture(n)]]``, ``[[sampler(n)]]``) and built-ins; its
``[[stage_in]]`` struct carries ``[[attribute(n)]]`` vertex inputs or ``[[user(SEM)]]`` varyings.

Layouts follow Metal's C-like rules: ``floatN`` is ``N*4`` bytes aligned to its size, except
``float3``, which takes 16; ``packed_floatN`` is ``N*4`` bytes aligned to 4; ``matrix<T,C,R>`` (and
``floatCxR``) is C columns of ``vecR``; ``array<T,N>`` strides by ``sizeof(T)``; a struct is
padded to its alignment. Slang spells an HLSL ``floatRxC`` row-major matrix ``matrix<float,R,C>``
and wraps column-major ones in ``_MatrixStorage_*`` structs (see ``common.unwrap_slang_struct``);
names gain ``_<n>``, and a function constant ``X`` is ``fc_X_<n>``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

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
)
from oneshader.reflection.model import (
    BuiltIn,
    Interpolation,
    MatrixPacking,
    ScalarKind,
    StageVariable,
    Target,
    TypeKind,
    TypeLayout,
)

__all__ = ["msl_semantic", "read_msl", "read_msl_shared", "unattributed_inputs_read"]

_TOKEN = re.compile(
    r"\s+|//[^\n]*|/\*.*?\*/|^[ \t]*#[^\n]*"
    r"|(?P<num>0[xX][0-9a-fA-F]+[uUlL]*|\d+\.\d*(?:[eE][+-]?\d+)?[fFhH]?|\.\d+(?:[eE][+-]?\d+)?[fFhH]?"
    r"|\d+[eE][+-]?\d+[fFhH]?|\d+[uUlL]*)"
    r"|(?P<str>\"(?:[^\"\\\n]|\\.)*\")"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>->|::|&&|\|\||==|!=|\+\+|--|[-+*/%&|^~!<>=(){}\[\],.;:?#])",
    re.S | re.M,
)

# _TOKEN's tokens, the most frequent first, where no other token starts as they do: a name, a
# punctuator no longer one begins with.
_TOKENS = EmittedTokens(
    r"\s+|//[^\n]*|/\*.*?\*/|^[ \t]*#[^\n]*",
    r"[A-Za-z_][A-Za-z0-9_]*|[(){}\[\],;?#~*/%^<>]"
    r"|0[xX][0-9a-fA-F]+[uUlL]*|\d+\.\d*(?:[eE][+-]?\d+)?[fFhH]?|\.\d+(?:[eE][+-]?\d+)?[fFhH]?"
    r"|\d+[eE][+-]?\d+[fFhH]?|\d+[uUlL]*"
    r"|\"(?:[^\"\\\n]|\\.)*\""
    r"|[A-Za-z_][A-Za-z0-9_]*"
    r"|->|::|&&|\|\||==|!=|\+\+|--|[-+*/%&|^~!<>=(){}\[\],.;:?#]",
    re.S | re.M,
)

_SCALARS: dict[str, tuple[ScalarKind, int]] = {
    "bool": (ScalarKind.Bool, 1),
    "char": (ScalarKind.Int, 1),
    "uchar": (ScalarKind.UInt, 1),
    "int8_t": (ScalarKind.Int, 1),
    "uint8_t": (ScalarKind.UInt, 1),
    "short": (ScalarKind.Int16, 2),
    "ushort": (ScalarKind.UInt16, 2),
    "int16_t": (ScalarKind.Int16, 2),
    "uint16_t": (ScalarKind.UInt16, 2),
    "half": (ScalarKind.Float16, 2),
    "int": (ScalarKind.Int, 4),
    "uint": (ScalarKind.UInt, 4),
    "int32_t": (ScalarKind.Int, 4),
    "uint32_t": (ScalarKind.UInt, 4),
    "float": (ScalarKind.Float, 4),
    "long": (ScalarKind.Int64, 8),
    "ulong": (ScalarKind.UInt64, 8),
    "int64_t": (ScalarKind.Int64, 8),
    "uint64_t": (ScalarKind.UInt64, 8),
    "double": (ScalarKind.Float64, 8),
}
_ATOMIC_ELEMENTS = ("uint", "int", "uint32_t", "int32_t", "float")  # Metal 3: atomic<float>
_ATOMIC_SCALARS = {"atomic_uint": "uint", "atomic_int": "int"}
_VECTOR = re.compile(r"^(packed_)?([a-z]+?)([234])$")
_MATRIX = re.compile(r"^([a-z]+?)([234])x([234])$")

_BUILTINS: dict[str, BuiltIn | None] = {
    "position": BuiltIn.Position,
    "vertex_id": BuiltIn.VertexId,
    "instance_id": BuiltIn.InstanceId,
    "front_facing": BuiltIn.FrontFacing,
    "sample_id": BuiltIn.SampleIndex,
    "sample_mask": BuiltIn.SampleMask,
    "depth": BuiltIn.Depth,
    "primitive_id": BuiltIn.PrimitiveId,
    "clip_distance": BuiltIn.ClipDistance,
    "point_size": BuiltIn.PointSize,
    "thread_position_in_grid": BuiltIn.DispatchThreadId,
    "threadgroup_position_in_grid": BuiltIn.GroupId,
    "thread_position_in_threadgroup": BuiltIn.GroupThreadId,
    "thread_index_in_threadgroup": BuiltIn.GroupIndex,
    "base_vertex": None,
    "base_instance": None,
    "threads_per_threadgroup": None,
    "threadgroups_per_grid": None,
}
_RESOURCE_ATTRS = ("buffer", "texture", "sampler")
_STAGES = {"vertex": "vertex", "fragment": "pixel", "kernel": "compute"}
_INTERP = {
    "flat": {Interpolation.Flat},
    "center_no_perspective": {Interpolation.NoPerspective},
    "centroid_perspective": {Interpolation.Centroid},
    "centroid_no_perspective": {Interpolation.Centroid, Interpolation.NoPerspective},
    "sample_perspective": {Interpolation.Sample},
    "sample_no_perspective": {Interpolation.Sample, Interpolation.NoPerspective},
}

Attr = tuple[str, tuple[str, ...]]


@dataclass
class _Decl:
    """A declarator: type tokens, name, attributes written before and after it."""

    type: list[str]
    name: str
    attrs: list[Attr] = field(default_factory=list)


@dataclass
class _Function:
    name: str
    attrs: list[Attr]
    result: list[str]
    params: list[_Decl]
    # its tokens, read only where asked for (a new list each time: nothing to change)
    body: Callable[[], list[str]] = field(default=list, compare=False)


@dataclass
class _Parsed:
    structs: dict[str, list[_Decl]] = field(default_factory=dict)
    constants: list[_Decl] = field(default_factory=list)
    constant_values: dict[str, list[str]] = field(default_factory=dict)
    functions: list[_Function] = field(default_factory=list)


def _tokens(text: str) -> list[str]:
    found = _TOKENS.tokens(text)
    if found is not None:
        return found
    out = []
    pos = 0
    for m in _TOKEN.finditer(text):  # the tokens cover the text, else a character is wrong
        if m.start() != pos:
            break
        if m.lastgroup:
            out.append(m.group())
        pos = m.end()
    if pos < len(text):
        line = text.count("\n", 0, pos) + 1
        raise EmittedCodeError(f"MSL: unexpected character {text[pos]!r} on line {line}")
    return out


def _split_attrs(toks: list[str]) -> tuple[list[str], list[Attr]]:
    """Remove ``[[name(args)]]`` groups from a token run, returning the rest and the attributes."""
    if "[" not in toks:  # (most runs: one C search, no Python step per token)
        return list(toks), []
    rest: list[str] = []
    attrs: list[Attr] = []
    i = 0
    while i < len(toks):
        if toks[i] == "[" and i + 1 < len(toks) and toks[i + 1] == "[":
            j = i + 2
            name = toks[j] if j < len(toks) else ""
            args: list[str] = []
            j += 1
            if j < len(toks) and toks[j] == "(":
                depth = 1
                cur: list[str] = []
                j += 1
                while j < len(toks) and depth:
                    t = toks[j]
                    if t == "(":
                        depth += 1
                    elif t == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    if t == "," and depth == 1:
                        args.append("".join(cur))
                        cur = []
                    else:
                        cur.append(t)
                    j += 1
                if cur:
                    args.append("".join(cur))
                j += 1
            while j < len(toks) and toks[j] == "]":
                j += 1
            attrs.append((name, tuple(args)))
            i = j
        else:
            rest.append(toks[i])
            i += 1
    return rest, attrs


def _split_at(
    toks: list[str], sep: str, opens: tuple[str, ...], closes: tuple[str, ...]
) -> list[list[str]]:
    """The non-empty runs between ``sep`` tokens outside the brackets ``opens``/``closes``."""
    out: list[list[str]] = [[]]
    depth = 0
    for t in toks:
        if t in opens:
            depth += 1
        elif t in closes:
            depth -= 1
        if t == sep and depth == 0:
            out.append([])
        else:
            out[-1].append(t)
    return [p for p in out if p]


def _split_commas(toks: list[str]) -> list[list[str]]:
    """Split at commas outside (), <>, [] (parameter lists have no comparisons)."""
    return _split_at(toks, ",", ("(", "<", "["), (")", ">", "]"))


def _declarator(toks: list[str]) -> _Decl:
    rest, attrs = _split_attrs(toks)
    if "=" in rest:
        rest = rest[: rest.index("=")]
    if not rest:
        raise EmittedCodeError("MSL: empty declaration")
    return _Decl(rest[:-1], rest[-1], attrs)


@functools.lru_cache(maxsize=4)
def _parse(text: str) -> _Parsed:
    """The module's declarations, parsed once per text: the readers and the patches of one
    compile read the same code several times, so the result is shared and its callers must
    not change it."""
    top = _TOKENS.outside(text)
    toks, blocks = top if top is not None else (_tokens(text), {})
    out = _Parsed()
    i = 0
    n = len(toks)
    while i < n:
        # One top-level item: tokens up to ';' or a '{...}' block at depth 0.
        start = i
        depth = 0
        while i < n:
            t = toks[i]
            if t in ("(", "["):
                depth += 1
            elif t in (")", "]"):
                depth -= 1
            elif depth == 0 and t in (";", "{"):
                break
            i += 1
        head = toks[start:i]
        if i >= n:
            break
        if toks[i] == ";":
            i += 1
            _declaration(head, out)
            continue
        body, i = _block(text, toks, i, blocks)
        if head[:1] == ["struct"] and len(head) >= 2:
            out.structs[head[1]] = [
                _declarator(d) for d in _statements(body()) if d and d[0] != "struct"
            ]
            if i < n and toks[i] == ";":
                i += 1
        elif "(" in head:
            fn = _function(head)
            fn.body = body
            out.functions.append(fn)
    return out


def _block(
    text: str, toks: list[str], at: int, blocks: dict[int, tuple[int, int]]
) -> tuple[Callable[[], list[str]], int]:
    """The tokens inside the block whose ``{`` is ``toks[at]`` (read from the text when asked,
    where ``EmittedTokens.outside`` left them out: a function's body mostly is not), and the
    index of the token after its ``}``."""
    if at in blocks:
        return functools.partial(_TOKENS.within, text, *blocks[at]), at + 2
    close = closing_brace(toks, at)
    end = len(toks) if close is None else close
    return functools.partial(list, toks[at + 1 : end]), end + 1


def _statements(body: list[str]) -> list[list[str]]:
    return _split_at(body, ";", ("(", "[", "{"), (")", "]", "}"))


def _declaration(head: list[str], out: _Parsed) -> None:
    if head[:1] != ["constant"]:
        return
    decl = _declarator(head[1:])
    if any(name == "function_constant" for name, _ in decl.attrs):
        out.constants.append(decl)
    elif "=" in head:
        out.constant_values[decl.name] = head[head.index("=") + 1 :]


def _function(head: list[str]) -> _Function:
    rest, attrs = _split_attrs(head[: head.index("(")])
    close = len(head) - 1 - head[::-1].index(")")
    params = [_declarator(p) for p in _split_commas(head[head.index("(") + 1 : close])]
    if not rest:
        raise EmittedCodeError("MSL: function without a name")
    return _Function(rest[-1], attrs, rest[:-1], params)


class _Layouts:
    def __init__(self, structs: dict[str, list[_Decl]]) -> None:
        self.structs = structs
        self.cache: dict[str, tuple[TypeLayout, int, int]] = {}

    def layout(self, toks: list[str]) -> tuple[TypeLayout, int, int]:
        """The layout to report, and the (size, align) the enclosing struct must use."""
        toks = [t for t in toks if t not in ("const", "volatile", "metal", "::", "thread")]
        if not toks:
            raise EmittedCodeError("MSL: empty type")
        head = toks[0]
        if head == "atomic" and toks[1:2] == ["<"] and toks[-1] == ">":
            # atomic<uint>/<int>/<float> hold their scalar's 4 bytes (and so do atomic_uint/_int).
            toks = toks[2:-1]
            head = toks[0] if len(toks) == 1 else ""
            if head not in _ATOMIC_ELEMENTS:
                raise EmittedCodeError(f"MSL: type 'atomic<{' '.join(toks)}>' has no buffer layout")
        head = _ATOMIC_SCALARS.get(head, head)
        if head == "array" and toks[1:2] == ["<"]:
            args = _split_commas(toks[2:-1])
            element, esize, ealign = self.layout(args[0])
            length = _count(args[1]) if len(args) > 1 else 0
            lay = TypeLayout(
                TypeKind.Array,
                size=length * esize,
                align=ealign,
                length=length,
                stride=esize,
                element=element,
            )
            return lay, length * esize, ealign
        if head in ("matrix", "vec") and toks[1:2] == ["<"]:
            args = _split_commas(toks[2:-1])
            if head == "vec":
                return self._vector(args[0][0], _count(args[1]), packed=False)
            return self._matrix(args[0][0], _count(args[1]), _count(args[2]))
        if len(toks) > 1:
            raise EmittedCodeError(f"MSL: type '{' '.join(toks)}' has no buffer layout")
        if head in _SCALARS:
            kind, size = _SCALARS[head]
            return TypeLayout(TypeKind.Scalar, scalar=kind, size=size, align=size), size, size
        m = _VECTOR.match(head)
        if m and m.group(2) in _SCALARS:
            return self._vector(m.group(2), int(m.group(3)), packed=bool(m.group(1)))
        m = _MATRIX.match(head)
        if m and m.group(1) in _SCALARS:
            return self._matrix(m.group(1), int(m.group(2)), int(m.group(3)))
        if head in self.structs:
            if head not in self.cache:
                self.cache[head] = self._struct(head)
            return self.cache[head]
        raise EmittedCodeError(f"MSL: unknown type '{head}'")

    def _vector(self, scalar: str, n: int, packed: bool) -> tuple[TypeLayout, int, int]:
        kind, s = _SCALARS[scalar]
        size = n * s if packed or n != 3 else 4 * s
        align = s if packed else size
        lay = TypeLayout(TypeKind.Vector, scalar=kind, rows=n, size=size, align=align)
        return lay, size, align

    def _matrix(self, scalar: str, cols: int, rows: int) -> tuple[TypeLayout, int, int]:
        column, csize, calign = self._vector(scalar, rows, packed=False)
        lay = TypeLayout(
            TypeKind.Matrix,
            scalar=column.scalar,
            rows=cols,
            cols=rows,
            size=cols * csize,
            align=calign,
            mstride=csize,
            packing=MatrixPacking.RowMajor,
        )
        return lay, cols * csize, calign

    def _struct(self, name: str) -> tuple[TypeLayout, int, int]:
        return sequential_struct(
            name, ((decl.name, *self.layout(decl.type)) for decl in self.structs[name])
        )


def _count(toks: list[str]) -> int:
    digits = [t for t in toks if t[:1].isdigit()]
    if len(digits) != 1:
        raise EmittedCodeError(f"MSL: expected a constant count, found '{' '.join(toks)}'")
    return int(digits[0].rstrip("uUlL"), 0)


def _default_bits(toks: list[str], scalar: str) -> int | None:
    """The else-branch of ``is_function_constant_defined(fc) ? fc : <default>``."""
    if ":" not in toks:
        return None
    value = [t for t in toks[len(toks) - 1 - toks[::-1].index(":") + 1 :] if t not in "()"]
    value = [t for t in value if t not in _SCALARS]
    text = "".join(value)
    return literal_bits(text, scalar in ("float", "half") or "." in text, "fFhH", "uUlL")


def _attr(attrs: list[Attr], name: str) -> tuple[str, ...] | None:
    return next((args for n, args in attrs if n == name), None)


def _stage_var(decl: _Decl) -> EmittedVariable | None:
    interp: set[Interpolation] = set()
    for name, args in decl.attrs:
        if name in _INTERP:
            interp |= _INTERP[name]
        elif name == "attribute" or name == "color":
            return EmittedVariable(
                demangle(decl.name), decl.name, location=int(args[0]), target_builtin=""
            )
        elif name == "user":
            sem = args[0] if args else ""
            return EmittedVariable(
                demangle(decl.name), decl.name, semantic=sem.upper(), interp=frozenset(interp)
            )
        elif name in _BUILTINS:
            return EmittedVariable(
                demangle(decl.name), decl.name, builtin=_BUILTINS[name], target_builtin=name
            )
    return None


def read_msl(data: bytes, source: str = ".metal") -> EmittedModule:
    """Everything the cross-check compares, as this file declares it."""
    parsed = _parse(data.decode("utf-8"))
    lay = _Layouts(parsed.structs)
    out = EmittedModule(Target.Msl, source)
    for decl in parsed.constants:
        args = _attr(decl.attrs, "function_constant")
        if not args:
            continue
        source_name = demangle(decl.name.removeprefix("fc_"))
        default = None
        for value_name, value in parsed.constant_values.items():
            if decl.name in value and demangle(value_name) == source_name:
                default = _default_bits(value, decl.type[-1] if decl.type else "")
        out.spec_constants[decl.name] = EmittedSpec(source_name, decl.name, int(args[0]), default)
    for fn in parsed.functions:
        stage = next((s for s, _ in fn.attrs if s in _STAGES), None)
        if stage is None:
            continue
        out.entries[fn.name] = _entry(fn, _STAGES[stage], parsed, lay, out)
    return out


def unattributed_inputs_read(data: bytes, entry: str) -> set[str]:
    """The source names of the parameters without an attribute (stage inputs Slang gives none,
    such as a clip distance: Metal refuses them) that fragment or vertex function ``entry``
    (Slang's ``main_0`` for ``main``) names in its body."""
    names = (entry, f"{entry}_0") if entry == "main" else (entry,)
    for fn in _parse(data.decode("utf-8")).functions:
        if fn.name in names and any(s in _STAGES for s, _ in fn.attrs):
            idents = identifiers(fn.body())
            return {demangle(p.name) for p in fn.params if not p.attrs and p.name in idents}
    return set()


def _entry(
    fn: _Function, stage: str, parsed: _Parsed, lay: _Layouts, out: EmittedModule
) -> EmittedEntry:
    inputs: list[EmittedVariable] = []
    helpers: set[str] = set()
    for p in fn.params:
        kind = next((n for n, _ in p.attrs if n in _RESOURCE_ATTRS), None)
        if kind is not None:
            out.add_resource(_resource(p, kind, lay, fn.name))
            continue
        if _attr(p.attrs, "stage_in") is not None:
            inputs.extend(_struct_vars(p.type, parsed))
            continue
        var = _stage_var(p)
        if var is None:
            continue
        if var.builtin is None and var.target_builtin:
            helpers.add(var.target_builtin)
        else:
            inputs.append(var)
    outputs = _struct_vars(fn.result, parsed)
    return EmittedEntry(
        name=fn.name,
        stage=stage,
        workgroup=None,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        uses=None,  # Slang passes every resource to every entry point
        helpers=frozenset(helpers),
    )


def _struct_vars(type_toks: list[str], parsed: _Parsed) -> list[EmittedVariable]:
    name = next((t for t in type_toks if t in parsed.structs), None)
    if name is None:
        return []
    out = []
    for decl in parsed.structs[name]:
        var = _stage_var(decl)
        if var is not None and not (var.builtin is None and var.target_builtin):
            out.append(var)
    return out


def _resource(p: _Decl, kind: str, lay: _Layouts, entry: str) -> EmittedResource:
    args = _attr(p.attrs, kind) or ("",)
    index = int(args[0]) if args[0].isdigit() else None
    toks = list(p.type)
    count = 1
    if toks[:2] == ["array", "<"] and kind != "buffer":
        parts = _split_commas(toks[2:-1])
        count = _count(parts[1]) if len(parts) > 1 else 0
        toks = parts[0]
    layout: TypeLayout | None = None
    stride: int | None = None
    if kind == "buffer" and "acceleration_structure" not in toks:  # a ray-query scene: no layout
        pointee = [t for t in toks if t not in ("constant", "device", "*", "&", "const")]
        layout, size, align = lay.layout(pointee)
        stride = round_up(size, align)
    return EmittedResource(
        name=resource_name(p.name),
        emitted=p.name,
        space=kind,
        set=0,
        binding=index,
        layout=layout,
        stride=stride,
        count=count,
        type_text=" ".join(p.type),
        scope=entry,
    )


def msl_semantic(var: StageVariable) -> str:
    """The ``[[user(...)]]`` name Slang gives a varying: its semantic upper-cased, the index
    appended unless 0."""
    sem = var.semantic.upper()
    return f"{sem}_{var.index}" if var.index else sem


@functools.lru_cache(maxsize=4)
def read_msl_shared(data: bytes) -> EmittedModule:
    """:func:`read_msl` of ``data``, read once for the reflection's steps and the cross-check,
    which only look at the module; they must not change it."""
    return read_msl(data)
