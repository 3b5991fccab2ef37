"""Built-ins in the varyings between the vertex and pixel stages that DXC takes and Slang does
not, found in the source.

``[[vk::builtin("PointSize")]]`` in a pixel shader's input: DXC accepts it (the vertex and pixel
stages often share one struct) and makes no input of it, since Vulkan has no point size in the
fragment stage; Slang refuses it (E30702). Found here, with what the source handed to Slang
leaves out (docs/compiler.md "Source rewrites").

``SV_InstanceID`` as a vertex output or pixel input: DXC passes it as an ordinary varying at a
location; Slang writes a built-in no target has there. Found here, where the source handed to
Slang gives it a semantic of its own (``OS_INSTANCEID``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from oneshader.compiler.source.query import Stream
from oneshader.compiler.source.scanner import Field, StructDef
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.reflection.model import Stage

__all__ = [
    "PixelPointSize",
    "builtin_sides",
    "instance_id_semantics",
    "instance_id_varyings",
    "misplaced_builtins",
    "pixel_point_sizes",
]


@dataclass(frozen=True)
class PixelPointSize:
    """A PointSize member of a struct a pixel entry point takes as input, or a PointSize
    parameter of one. ``span`` is its declaration in the file's text (offsets), blanked for
    Slang; ``vertex_entry`` names an entry point of another stage whose signature holds the
    same struct (then it cannot be left out); ``read_at`` is where the code reads it (None
    where it does not, or where another struct's field of that name makes it unknowable)."""

    path: Path
    field: Field
    owner: str  # the struct, or the entry point of a parameter
    span: tuple[int, int]
    vertex_entry: str
    read_at: tuple[Path, int, int] | None

    @property
    def left_out(self) -> bool:
        """Whether it is left out of the source handed to Slang (else it is an error)."""
        return not self.vertex_entry and self.read_at is None


def _is_point_size(f: Field) -> bool:
    return any(a.name == "vk::builtin" and a.args[:1] == ("PointSize",) for a in f.attributes)


def _type_name(type_text: str) -> str:
    words = [w for w in type_text.split() if w not in ("in", "out", "inout", "const")]
    return words[-1] if words else ""


def _structs_in(src: SourceSet, type_names: list[str]) -> set[str]:
    """The structs named, and every struct their fields hold, at any depth."""
    out: set[str] = set()
    todo = list(type_names)
    while todo:
        name = todo.pop()
        sdef = src.struct(name)
        if name in out or sdef is None or sdef.kind != "struct":
            continue
        out.add(name)
        todo += [_type_name(f.type_text) for f in sdef.fields]
    return out


def _signature_types(fn: StructDef) -> list[str]:
    return [*(_type_name(f.type_text) for f in fn.fields), _type_name(fn.returns)]


def _span(s: Stream, f: Field, openers: str, closers: str) -> tuple[int, int]:
    """The declaration of ``f``, as tokens: the delimiter before it (one of ``openers``; -1:
    none) and the delimiter that ends it (one of ``closers``, at bracket depth 0)."""
    at = s.index(s.offset_of(f.line, f.column))
    first = min([at, *(s.index(s.offset_of(a.line, a.column)) for a in f.attributes)])
    before = next((j for j in range(first - 1, -1, -1) if s.tokens[j].text in openers), -1)
    end, depth = at, 0
    while end < len(s) and not (depth == 0 and s.tokens[end].text in closers):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(s.tokens[end].text, 0)
        end += 1
    return before, end


def _parameter_span(s: Stream, f: Field) -> tuple[int, int]:
    """A parameter's declaration with one comma beside it (the one before it, else the one
    after it), so that what is left is still a parameter list: offsets in the text."""
    before, end = _span(s, f, ",(", ",)")
    if s.is_(before, ","):
        return s.start(before), s.start(end)
    start = s.end(before) if before >= 0 else 0
    return start, s.end(end) if s.is_(end, ",") else s.start(end)


def _reads(src: SourceSet, name: str) -> tuple[Path, int, int] | None:
    """The first ``.name`` in the code, unless another struct has a field of that name."""
    other = any(
        f.name == name and not _is_point_size(f)
        for scanned in src.sources.values()
        for sdef in scanned.structs.values()
        for f in sdef.fields
    )
    if other:
        return None
    for s in src.streams():
        for i in s.words((name,)):
            if s.is_(i - 1, "."):
                return (s.path, *s.line_col(i))
    return None


def _body(s: Stream, after: int) -> range:
    """The tokens of the function body (its braces) that starts at or after offset ``after``."""
    start = next((j for j in range(s.index(after), len(s)) if s.tokens[j].text == "{"), -1)
    if start < 0:
        return range(0)
    close = s.closing(start)
    return range(start, close if close > 0 else len(s))


def pixel_point_sizes(src: SourceSet, stages: Mapping[str, Stage]) -> list[PixelPointSize]:
    """Every PointSize a pixel entry point of ``stages`` takes as input (computed once per
    read and set of entry points)."""
    key = ("pixel point sizes", tuple(sorted((n, s.value) for n, s in stages.items())))
    found: list[PixelPointSize] = src.derived(key, lambda: list(_pixel_point_sizes(src, stages)))
    return found


def _pixel_point_sizes(src: SourceSet, stages: Mapping[str, Stage]) -> Iterator[PixelPointSize]:
    pixel = {n: fn for n, s in stages.items() if s is Stage.Pixel and (fn := src.function(n))}
    if not pixel or not any("PointSize" in t for t in src.texts.values()):
        return  # (no file spells the built-in: most shaders, found at C's speed)
    others = {n: fn for n, s in stages.items() if s is not Stage.Pixel and (fn := src.function(n))}
    elsewhere = {s: n for n, fn in others.items() for s in _structs_in(src, _signature_types(fn))}
    inputs, _ = _interface(src, stages, Stage.Pixel, True)
    for path, scanned in src.sources.items():
        s = src.stream(path)
        for name in sorted(inputs & scanned.structs.keys()):
            for f in scanned.structs[name].fields:
                if _is_point_size(f):
                    before, end = _span(s, f, ";{}", ";")
                    start = s.end(before) if before >= 0 else 0
                    span = (start, s.start(end) + 1)  # with its ';'
                    yield PixelPointSize(
                        path, f, name, span, elsewhere.get(name, ""), _reads(src, f.name)
                    )
        for entry, fn in pixel.items():
            if entry not in scanned.functions:
                continue
            for f in fn.fields:
                if _is_point_size(f) and "out" not in f.modifiers:
                    span = _parameter_span(s, f)
                    body = _body(s, span[1])
                    read = next(
                        (j for j in s.words((f.name,)) if j in body and not s.is_(j - 1, ".")),
                        None,
                    )
                    at = None if read is None else (path, *s.line_col(read))
                    yield PixelPointSize(path, f, entry, span, "", at)


def _interface(
    src: SourceSet, stages: Mapping[str, Stage], stage: Stage, inputs: bool
) -> tuple[set[str], list[Field]]:
    """The structs (at any depth) and the parameters of ``stage``'s entry points on one side:
    what they take (``inputs``: parameters but ``out`` ones), or what they write (the result
    and the ``out``/``inout`` parameters)."""
    types: list[str] = []
    params: list[Field] = []
    for name, s in stages.items():
        fn = src.function(name)
        if s is not stage or fn is None:
            continue
        if inputs:
            side = [f for f in fn.fields if "out" not in f.modifiers]
        else:
            side = [f for f in fn.fields if {"out", "inout"} & set(f.modifiers)]
            types.append(_type_name(fn.returns))
        types += [_type_name(f.type_text) for f in side]
        params += side
    return _structs_in(src, types), params


def _fields(src: SourceSet, structs: set[str], params: list[Field]) -> list[tuple[Path, Field]]:
    """The members of ``structs`` and the ``params``, with their files."""
    out = []
    for path, scanned in src.sources.items():
        out += [
            (path, f)
            for n in sorted(structs & scanned.structs.keys())
            for f in scanned.structs[n].fields
        ]
        out += [(path, f) for fn in scanned.functions.values() for f in fn.fields if f in params]
    return out


def instance_id_varyings(src: SourceSet, stages: Mapping[str, Stage]) -> list[tuple[Path, Field]]:
    """``SV_InstanceID`` members of what a vertex entry point writes (its result, its ``out``
    parameters) or a pixel entry point takes, and such parameters."""
    written, written_params = _interface(src, stages, Stage.Vertex, False)
    taken, taken_params = _interface(src, stages, Stage.Pixel, True)
    fields = _fields(src, written | taken, written_params + taken_params)
    return [(p, f) for p, f in fields if f.semantic.upper() == "SV_INSTANCEID"]


def _instance_id_after(s: Stream, i: int) -> int:
    """The index of ``SV_InstanceID`` (any case) written as the semantic after token ``i``
    (``: SV_InstanceID``), or -1."""
    at = s.at(i + 2)
    return (
        i + 2
        if s.is_(i + 1, ":") and at.kind == "id" and at.text.upper() == "SV_INSTANCEID"
        else -1
    )


def instance_id_semantics(
    src: SourceSet, stages: Mapping[str, Stage]
) -> list[tuple[Path, int, int]]:
    """Where each ``SV_InstanceID`` between the vertex and pixel stages is written (file, line,
    column of the semantic): the members and parameters of :func:`instance_id_varyings`, and
    a vertex entry point's bare result (``uint main(uint i : SV_InstanceID) :
    SV_InstanceID``). Computed once per read and set of entry points (every target's plan
    asks)."""
    key = ("instance ids", tuple(sorted((n, s.value) for n, s in stages.items())))
    found: list[tuple[Path, int, int]] = src.derived(key, lambda: _instance_ids(src, stages))
    return found


def _instance_ids(src: SourceSet, stages: Mapping[str, Stage]) -> list[tuple[Path, int, int]]:
    if not any("SV_INSTANCEID" in t.upper() for t in src.texts.values()):
        return []  # (no file spells the semantic: most shaders, found at C's speed)
    out = []
    for path, f in instance_id_varyings(src, stages):
        s = src.stream(path)
        k = s.index(s.offset_of(f.line, f.column))
        k = next((j for j in range(k, len(s)) if s.tokens[j].text == f.name), -1)
        while k >= 0 and s.is_(k + 1, "["):  # past its array sizes
            k = s.closing(k + 1) - 1
        semantic = _instance_id_after(s, k) if k >= 0 else -1
        if semantic >= 0:
            out.append((path, *s.line_col(semantic)))
    vertex = {name for name, stage in stages.items() if stage is Stage.Vertex}
    for s in src.streams():
        for i in s.calls(vertex):
            close = s.closing(i + 1) if s.free(i) and not s.is_(i - 1, ":") else -1
            semantic = _instance_id_after(s, close - 1) if close > 0 else -1
            if semantic >= 0:
                out.append((s.path, *s.line_col(semantic)))
    return sorted(set(out))


# Where DXC takes each [[vk::builtin]] oneshader builds (DeclResultIdMapper's
# validateVKBuiltins, for the stages oneshader builds), by (stage, taken as input).
_SIDES = {
    (Stage.Vertex, True): "a vertex shader's input",
    (Stage.Vertex, False): "a vertex shader's output",
    (Stage.Pixel, True): "a pixel shader's input",
    (Stage.Pixel, False): "a pixel shader's output",
}
_BUILTIN_SIDES = {
    "PointSize": {(Stage.Vertex, False), (Stage.Pixel, True)},
    "BaseVertex": {(Stage.Vertex, True)},
    "BaseInstance": {(Stage.Vertex, True)},
    "DrawIndex": {(Stage.Vertex, True)},
}


def misplaced_builtins(
    src: SourceSet, stages: Mapping[str, Stage]
) -> list[tuple[Path, Field, str, str]]:
    """``[[vk::builtin]]`` members and parameters where DXC refuses them ("PointSize builtin
    cannot be used as VSIn"): (file, field, the built-in, where it is)."""
    out = []
    for side in _SIDES:
        structs, params = _interface(src, stages, side[0], side[1])
        for path, f in _fields(src, structs, params):
            a = next((a for a in f.attributes if a.name == "vk::builtin"), None)
            builtin = a.args[0] if a is not None and a.args else ""
            if builtin in _BUILTIN_SIDES and side not in _BUILTIN_SIDES[builtin]:
                out.append((path, f, builtin, _SIDES[side]))
    return out


def builtin_sides(builtin: str) -> str:
    """Where DXC takes ``builtin``, in words."""
    return " or ".join(_SIDES[s] for s in sorted(_BUILTIN_SIDES[builtin], key=list(_SIDES).index))
