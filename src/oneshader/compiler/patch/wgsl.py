"""Text patches of emitted WGSL: the entry points' locations, and the names of the depth
textures a compared texture becomes.

Slang's WGSL numbers varyings by semantic index and declares compared textures as colour
textures; these helpers rewrite exactly the attributes oneshader decides (docs/compiler.md), by
the names Slang gives declarations (the source name, or the source name plus ``_<n>``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from oneshader.compiler.emitted.common import demangle, split_member
from oneshader.compiler.emitted.wgsl import WgslType, _Member, _Parsed, parse_wgsl
from oneshader.compiler.patch.common import patch_struct, with_bare_result
from oneshader.compiler.source.scanner import comma_spans
from oneshader.reflection.model import BuiltIn, Interpolation, StageVariable

DEPTH_TEXTURES = {
    "texture_2d": "texture_depth_2d",
    "texture_2d_array": "texture_depth_2d_array",
    "texture_cube": "texture_depth_cube",
    "texture_cube_array": "texture_depth_cube_array",
}


WGSL_COMPARE = re.compile(r"texture(?:SampleCompare(?:Level)?|GatherCompare)\(\s*\(?\s*$")


# (the word boundary looked behind for after the word: a pattern led by ``\b`` is tried at every
# position of the module)
_SHUFFLE = re.compile(r"subgroupShuffle(?<!\wsubgroupShuffle)(?:Xor|Up|Down)?\s*\(")


def unsigned_lane_indices(text: str) -> str:
    """Slang's ``subgroupShuffle(x, i32(lane))`` (``WaveReadLaneAt``, oneshader's
    ``QuadReadLaneAt``) with the lane as ``u32``, which is what naga takes ("Subgroup gather
    index type Sint, expected unsigned int"; WGSL's spec allows either): the second argument
    converted."""
    out, last = [], 0
    for m in _SHUFFLE.finditer(text):
        if m.start() < last:
            continue
        close = _closing(text, m.end() - 1)
        inner = text[m.end() : close]
        parts = comma_spans(inner, 0, len(inner), keep_empty=True)
        if len(parts) != 2:
            continue
        a, b = parts[1]
        arg = inner[a:b].strip()
        if arg.startswith("u32("):
            continue
        out += [text[last : m.end()], inner[:a], f" u32({arg})", text[close : close + 1]]
        last = close + 1
    out.append(text[last:])
    return "".join(out)


@dataclass(frozen=True)
class TextureFlow:
    """Which colour textures of a WGSL module may be depth textures, following them into the
    functions they are passed to (``GetShadow(texShadow)``, compared inside on the parameter).
    ``depth``: the globals (by emitted name) and the parameters (by function and index) that
    can become depth textures, every use compared or passed on to such a parameter, every
    argument such a parameter takes one of them; ``compared``: the globals a comparison
    reaches (directly or through parameters); ``params``: each parameter's type (start, end)
    in the text."""

    depth: frozenset[str | tuple[str, int]]
    compared: frozenset[str]
    params: Mapping[tuple[str, int], tuple[int, int]]


_FN = re.compile(r"fn(?<!\wfn)\s+(\w+)\s*\(")
_PARAM = re.compile(r"^\s*(\w+)\s*:\s*(texture_\w+)<f32>\s*$")
_IDENT = re.compile(r"\w+")


def _closing(text: str, open_at: int, pair: str = "()") -> int:
    """The index of the bracket closing the one at ``open_at`` (a search per closing bracket,
    not a Python step per character)."""
    opening, closing = pair[0], pair[1]
    depth, j = 1, open_at
    while True:
        close = text.find(closing, j + 1)
        if close < 0:
            return len(text)
        depth += text.count(opening, j + 1, close) - 1
        if depth == 0:
            return close
        j = close


def _argument_of(text: str, start: int, end: int) -> tuple[str, int] | None:
    """(function, index) when the word at ``start:end`` is a whole argument of a call
    (``f(a, x)``, ``f((x))``); None otherwise."""
    i, wraps = start, 0
    while True:
        j = i - 1
        while j >= 0 and text[j].isspace():
            j -= 1
        if j >= 0 and text[j] == "(" and _call_head(text, j) is None:
            wraps, i = wraps + 1, j
            continue
        break
    k = end
    for _ in range(wraps + 1):
        while k < len(text) and text[k].isspace():
            k += 1
        if k < len(text) and text[k] == ")" and _ < wraps:
            k += 1
    if j < 0 or k >= len(text) or text[k] not in ",)" or text[j] not in "(,":
        return None
    depth, commas = 0, 0
    while j >= 0:
        ch = text[j]
        if ch in ")]":
            depth += 1
        elif ch in "([":
            if depth == 0:
                head = _call_head(text, j) if ch == "(" else None
                if head is None or head in _NOT_CALLS:
                    return None
                return head, commas
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
        elif ch in ";{}":
            return None
        j -= 1
    return None


def _call_head(text: str, j: int) -> str | None:
    """The word that ends, but for whitespace, where ``text[j]`` begins (the function a ``(``
    at ``j`` calls), or None. Read backwards from ``j``: its cost is the word's length (a
    search of the text before ``j`` cost the square of the text over its textures)."""
    k = j
    while k > 0 and text[k - 1].isspace():
        k -= 1
    end = k
    while k > 0 and (text[k - 1].isalnum() or text[k - 1] == "_"):
        k -= 1
    return text[k:end] if k < end else None


_NOT_CALLS = frozenset({"if", "while", "for", "switch", "return"})


def texture_flow(text: str, globals_: Sequence[str]) -> TextureFlow:
    """The depth textures of ``text`` whose colour globals are ``globals_`` (see
    :class:`TextureFlow`)."""
    params: dict[tuple[str, int], tuple[int, int]] = {}
    scopes: list[tuple[int, int, str, dict[str, tuple[str, int]]]] = []  # body, fn, its params
    for m in _FN.finditer(text):
        close = _closing(text, m.end() - 1)
        named: dict[str, tuple[str, int]] = {}
        inner = text[m.end() : close]
        for k, (a, b) in enumerate(comma_spans(inner, 0, len(inner), keep_empty=True)):
            pm = _PARAM.match(inner[a:b])
            if pm and pm.group(2) in DEPTH_TEXTURES:
                params[(m.group(1), k)] = (m.end() + a + pm.start(2), m.end() + a + pm.end(2) + 5)
                named[pm.group(1)] = (m.group(1), k)
        body = text.find("{", close)
        if body < 0:
            continue
        scopes.append((body, _closing(text, body, "{}"), m.group(1), named))
    if not params and not globals_:
        return TextureFlow(frozenset(), frozenset(), {})
    wanted_globals = set(globals_)
    param_names = {name for sc in scopes for name in sc[3]}
    Node = str | tuple[str, int]
    uses: dict[Node, list[str | tuple[str, int]]] = {g: [] for g in globals_}
    uses.update({p: [] for p in params})

    def resolve(word: str, at: int) -> Node | None:
        scope = next((sc for sc in scopes if sc[0] <= at < sc[1]), None)
        if scope is not None and word in scope[3]:
            return scope[3][word]
        return word if word in wanted_globals else None

    # only the words of those names (a Python step per word of the code cost the most; a
    # look behind first, a search at every character): one that ends a longer word is none
    words = "|".join(map(re.escape, sorted(wanted_globals | param_names)))
    for m in re.finditer(rf"(?:{words})(?!\w)", text) if words else ():
        if m.start() and _IDENT.match(text, m.start() - 1):
            continue
        word = m.group(0)
        node = resolve(word, m.start())
        if node is None:
            continue
        after = m.end()
        while after < len(text) and text[after].isspace():
            after += 1
        if re.search(r"\bvar\s+$|[(,]\s*$", text[max(0, m.start() - 8) : m.start()]) and (
            text.startswith(":", after)
        ):
            continue  # its declaration
        call = _argument_of(text, m.start(), m.end())
        if WGSL_COMPARE.search(text[max(0, m.start() - 60) : m.start()]):
            uses[node].append("compare")
        elif call is not None and call in params:
            uses[node].append(call)
        else:
            uses[node].append("other")
    # what each parameter is given, at every call of its function
    fed: dict[tuple[str, int], set[Node | None]] = {p: set() for p in params}
    for fn in {f for f, _ in params}:
        for m in re.finditer(rf"(?<![\w.]){fn}\s*\(", text):
            if re.search(r"\bfn\s+$", text[max(0, m.start() - 8) : m.start()]):
                continue
            inner = text[m.end() : _closing(text, m.end() - 1)]
            for k, (a, b) in enumerate(comma_spans(inner, 0, len(inner), keep_empty=True)):
                if (fn, k) in params:
                    arg = inner[a:b].strip(" \t\n()")
                    fed[(fn, k)].add(resolve(arg, m.start()) if _IDENT.fullmatch(arg) else None)
    depth: set[Node] = set(uses)
    changed = True
    while changed:
        changed = False
        for node in list(depth):
            ok = all(u == "compare" or (isinstance(u, tuple) and u in depth) for u in uses[node])
            if isinstance(node, tuple):
                ok = ok and all(f is not None and f in depth for f in fed[node])
            if not ok:
                depth.discard(node)
                changed = True
    reaches: set[Node] = {n for n, us in uses.items() if "compare" in us}
    changed = True
    while changed:
        changed = False
        for node, us in uses.items():
            if node not in reaches and any(isinstance(u, tuple) and u in reaches for u in us):
                reaches.add(node)
                changed = True
    compared = frozenset(n for n in reaches if isinstance(n, str))
    return TextureFlow(frozenset(depth & reaches), compared, params)


def _relocate_fields(body: str, wanted: dict[str, int]) -> str:
    """``@location(n) name_0`` fields of a struct body or parameter list, renumbered."""

    def wgsl(fm: re.Match[str]) -> str:
        location = wanted.get(demangle(fm.group(3)), int(fm.group(1)))
        return f"@location({location}){fm.group(2)}{fm.group(3)}{fm.group(4)}"

    return re.sub(r"@location\((\d+)\)(\s*)(\w+)(\s*:)", wgsl, body)


def _entry_head(text: str, entry: str) -> re.Match[str] | None:
    """``fn entry(parameters) -> result {``: group 1 the parameters, group 2 the result type."""
    return re.search(
        rf"fn\s+{re.escape(entry)}\s*\((.*?)\)\s*(?:->\s*([^{{]*?))?\s*\{{", text, re.DOTALL
    )


# Slang's attribute of a bare result, its located form, the built-ins' (``bare_result_wgsl``).
_RESULT_ATTRIBUTES = (
    r"@location\(\d+\)",
    "@location({})",
    {BuiltIn.Depth: "@builtin(frag_depth)", BuiltIn.SampleMask: "@builtin(sample_mask)"},
)


def bare_result_wgsl(text: str, entry: str, output: StageVariable) -> str:
    """A pixel entry point that returns a bare value (``float main() : SV_Depth``, ``float4
    main() : SV_Target1``) gets from Slang's WGSL a ``pixelOutput_0`` struct whose one member
    is ``@location(0) output_0`` whatever the semantic; it is given the reflection's location,
    or the built-in Slang writes for the same output inside a struct."""
    m = _entry_head(text, entry)
    result = (m.group(2) or "").strip() if m else ""
    return with_bare_result(text, result, output, _RESULT_ATTRIBUTES)


def relocate_wgsl(text: str, entry: str, ins: dict[str, int], outs: dict[str, int]) -> str:
    """The WGSL entry point's input and output locations set to the reflection's."""
    m = _entry_head(text, entry)
    if not m:
        return text
    params, result = m.group(1), (m.group(2) or "").strip()
    new_params = _relocate_fields(params, ins)
    new_result = result
    if result.startswith("@location"):
        new_result = re.sub(r"@location\(\d+\)", f"@location({outs.get('result', 0)})", result)
    head = text[: m.start(1)] + new_params + text[m.end(1) : m.start(2) if m.group(2) else m.end(1)]
    if m.group(2):
        head += new_result + text[m.end(2) : m.end()]
    else:
        head += text[m.end(1) : m.end()]
    text = head + text[m.end() :]
    for struct_name in re.findall(r":\s*(\w+)", params):
        text = patch_struct(text, struct_name, lambda body: _relocate_fields(body, ins))
    if re.fullmatch(r"\w+", result):
        text = patch_struct(text, result, lambda body: _relocate_fields(body, outs))
    return text


# The sampling WGSL spells as an interpolation's second argument, which Slang leaves out of its
# WGSL (the stage variable is interpolated at the pixel's centre instead).
_SAMPLING = {Interpolation.Sample: "sample", Interpolation.Centroid: "centroid"}


def interpolate_wgsl(
    text: str,
    entry: str,
    inputs: Sequence[StageVariable],
    outputs: Sequence[StageVariable],
) -> str:
    """The WGSL entry point's ``sample``/``centroid`` stage variables (Slang drops both) given
    ``@interpolate(perspective, sample)`` (``centroid``), on the vertex stage's outputs and
    the pixel stage's inputs alike, as WebGPU's stage link requires."""
    ins = {v.name: _SAMPLING[v.interp] for v in inputs if v.interp in _SAMPLING}
    outs = {v.name: _SAMPLING[v.interp] for v in outputs if v.interp in _SAMPLING}
    m = _entry_head(text, entry)
    if m is None or not (ins or outs):
        return text

    def sampled(wanted: dict[str, str]) -> Callable[[str], str]:
        def field(fm: re.Match[str]) -> str:
            sampling = wanted.get(demangle(fm.group(2)))
            if sampling is None:
                return fm.group(0)
            return f"@interpolate(perspective, {sampling}) {fm.group(1)}{fm.group(2)}{fm.group(3)}"

        return lambda body: _SAMPLED_FIELD.sub(field, body)

    params, result = m.group(1), (m.group(2) or "").strip()
    text = text[: m.start(1)] + sampled(ins)(params) + text[m.end(1) :]
    for struct_name in re.findall(r":\s*(\w+)", params):
        text = patch_struct(text, struct_name, sampled(ins))
    if re.fullmatch(r"\w+", result):
        text = patch_struct(text, result, sampled(outs))
    return text


_SAMPLED_FIELD = re.compile(r"(?:@interpolate\([^)]*\)\s*)?(@location\(\d+\)\s*)(\w+)(\s*:)")


_MATRIX = re.compile(r"mat(\d)x(\d)")
_IO_ATTRIBUTES = re.compile(r"@(?:location|builtin|interpolate)\([^)]*\)\s*|@invariant\b\s*")


def _wide(t: WgslType) -> bool:
    return t.name == "array" or _MATRIX.fullmatch(t.name) is not None


def _pieces(value: str, t: WgslType) -> list[tuple[str, WgslType]]:
    """The vectors one location each of a wide value holds (an array's elements; a matrix's
    columns as SPIR-V stores them, which are the rows of Slang's WGSL matrix), as
    (expression, type)."""
    m = _MATRIX.fullmatch(t.name)
    if m is None:
        element, count = t.args[0], t.args[1]
        assert isinstance(element, WgslType) and isinstance(count, int)
        if _wide(element):  # an array of matrices: each element's columns
            return [p for k in range(count) for p in _pieces(f"{value}[{k}]", element)]
        return [(f"{value}[{k}]", element) for k in range(count)]
    columns, rows = int(m.group(1)), int(m.group(2))
    vector = WgslType(f"vec{columns}", t.args)
    return [(f"transpose({value})[{k}]", vector) for k in range(rows)]


def _whole(t: WgslType, parts: list[str]) -> str:
    """The wide value of type ``t`` from its :func:`_pieces`."""
    m = _MATRIX.fullmatch(t.name)
    if m is None:
        element = t.args[0]
        assert isinstance(element, WgslType)
        if _wide(element):
            n = len(_pieces("", element))
            parts = [_whole(element, parts[i : i + n]) for i in range(0, len(parts), n)]
        return f"{t}({', '.join(parts)})"
    return f"transpose(mat{m.group(2)}x{m.group(1)}<{t.args[0]}>({', '.join(parts)}))"


def _attributes(attrs: dict[str, tuple[str, ...]], location: int | None = None) -> str:
    out = []
    for name, args in attrs.items():
        if name == "location" and location is not None:
            args = (str(location),)
        out.append(f"@{name}({', '.join(args)}) " if args else f"@{name} ")
    return "".join(out)


@dataclass(frozen=True)
class Distances:
    """One entry point's clip distances, by source name: the vertex outputs WGSL writes as the
    ``clip_distances`` built-in (in semantic-index order: the array's order, as DXC packs
    them), and the pixel inputs it leaves out (WGSL cannot read clip distances)."""

    written: tuple[str, ...] = ()
    dropped: frozenset[str] = frozenset()

    def special(self, name: str) -> bool:
        return demangle(name) in self.written or demangle(name) in self.dropped


CLIP_DISTANCES = "oneshader_clip_distances"  # the built-in's member in the wrapper's struct


def _scalars(value: str, t: WgslType) -> list[str]:
    """The f32 values of a clip distance (a scalar, vector or array of them), in order."""
    if t.name == "array":
        element, count = t.args[0], t.args[1]
        assert isinstance(element, WgslType) and isinstance(count, int)
        return [x for k in range(count) for x in _scalars(f"{value}[{k}]", element)]
    if t.name.startswith("vec"):
        return [f"{value}[{k}]" for k in range(int(t.name[3]))]
    return [value]


def _clip_member(count: int) -> str:
    return f"@builtin(clip_distances) {CLIP_DISTANCES} : array<f32, {count}>"


def _split(name: str, t: WgslType, attrs: dict[str, tuple[str, ...]], value: str) -> list[str]:
    """The declarations (members or parameters) that carry ``value``, a stage variable
    declared ``attrs name : t``, one location each when it is wide."""
    if "location" not in attrs or not _wide(t):
        return [f"{_attributes(attrs)}{name} : {t}"]
    base = int(attrs["location"][0])
    return [
        f"{_attributes(attrs, base + k)}{split_member(name, k)} : {piece}"
        for k, (_, piece) in enumerate(_pieces(value, t))
    ]


def _wraps(members: list[_Member], distances: Distances) -> bool:
    """Whether stage variables ``members`` need the wrapper: one is wide or a distance."""
    return any(
        ("location" in m.attrs and _wide(m.type)) or distances.special(m.name) for m in members
    )


def _split_struct(t: WgslType, parsed: _Parsed, made: dict[str, str], distances: Distances) -> str:
    """The name of ``t``'s copy whose wide members are split and whose distances are gathered
    into the built-in (or left out), declared once in ``made``."""
    members = parsed.structs[t.name]
    role = "locations"  # a struct may be an output with distances and an input without them
    if any(demangle(m.name) in distances.written for m in members):
        role = "clip_distances"
    elif any(demangle(m.name) in distances.dropped for m in members):
        role = "without_distances"
    name = f"{t.name}_{role}"
    if name not in made:
        lines: list[str] = []
        for m in parsed.structs[t.name]:
            if demangle(m.name) in distances.dropped:
                continue
            if demangle(m.name) in distances.written:
                if m.name == _first_written(parsed.structs[t.name], distances):
                    lines.append(
                        _clip_member(len(_gathered(parsed.structs[t.name], distances, "v.")))
                    )
                continue
            lines += _split(m.name, m.type, m.attrs, f"v.{m.name}")
        made[name] = "struct " + name + "\n{\n" + "".join(f"    {x},\n" for x in lines) + "};\n"
    return name


def _first_written(members: list[_Member], distances: Distances) -> str:
    return next(m.name for m in members if demangle(m.name) in distances.written)


def _gathered(members: list[_Member], distances: Distances, value: str) -> list[str]:
    """The clip distances' f32 values, from the members of ``value``, in the built-in's order."""
    by_name = {demangle(m.name): m for m in members}
    return [
        x
        for n in distances.written
        if n in by_name
        for x in _scalars(value + by_name[n].name, by_name[n].type)
    ]


def _rebuilt(
    name: str, t: WgslType, attrs: dict[str, tuple[str, ...]], value: str, distances: Distances
) -> str:
    """The wide value a split declaration ``name`` carries, rebuilt from ``value``'s members
    (a parameter: ``value`` is empty, its pieces are parameters); a dropped distance is zero."""
    if demangle(name) in distances.dropped:
        return f"{t}()"  # the shader does not read it (else an error before)
    if "location" not in attrs or not _wide(t):
        return value + name
    count = len(_pieces("", t))
    return _whole(t, [value + split_member(name, k) for k in range(count)])


def _unlocated(text: str, struct: str, names: set[str]) -> str:
    """Slang's struct ``struct`` without the locations of members ``names`` (its own numbers,
    which the reflection's may now share: the wrapper carries those members otherwise)."""
    if not names:
        return text
    pattern = rf"@location\(\d+\)\s*(?=(?:{'|'.join(map(re.escape, names))})\s*:)"
    return patch_struct(text, struct, lambda body: re.sub(pattern, "", body))


def wrap_stage_interfaces(text: str, distances: Mapping[str, Distances] | None = None) -> str:
    """The module with every entry point that passes an array or matrix between stages (or
    takes one as a vertex input) wrapped: WGSL passes only scalars and vectors, so the
    wrapper declares one vector per location (at the locations SPIR-V gives, ``view_0__1``
    at the location after ``view_0__0``) and rebuilds the value for the function Slang wrote,
    which is renamed ``<entry>_unsplit`` and loses its stage and interface attributes. An entry
    point with clip distances (``distances``) is wrapped too: the wrapper writes them as the
    ``clip_distances`` built-in (``enable clip_distances;``), or leaves pixel inputs out."""
    distances = distances or {}
    if "@location" not in text and not distances:
        return text
    parsed = parse_wgsl(text)
    made: dict[str, str] = {}
    wrappers: list[str] = []
    clipped = False
    for fn in parsed.functions.values():
        stage = next((s for s in ("vertex", "fragment") if s in fn.attrs), None)
        io = [*fn.params, *([fn.result] if fn.result else [])]
        dist = distances.get(fn.name, Distances())
        if stage is None or not any(
            _wraps([p], dist) or _wraps(parsed.structs.get(p.type.name, []), dist) for p in io
        ):
            continue
        inner = f"{fn.name}_unsplit"
        head = re.search(rf"@{stage}\s*fn\s+{re.escape(fn.name)}\s*\([^{{]*\{{", text)
        assert head is not None, fn.name
        unstaged = head.group(0)[len(f"@{stage}") :].replace(fn.name, inner, 1)
        text = text[: head.start()] + _IO_ATTRIBUTES.sub("", unstaged) + text[head.end() :]
        params, args = [], []
        for p in fn.params:
            members = parsed.structs.get(p.type.name, [])
            if _wraps(members, dist) and not p.attrs:
                params.append(f"{p.name} : {_split_struct(p.type, parsed, made, dist)}")
                rebuilt = [_rebuilt(m.name, m.type, m.attrs, f"{p.name}.", dist) for m in members]
                args.append(f"{p.type}({', '.join(rebuilt)})")
                text = _unlocated(
                    text, p.type.name, {m.name for m in members if dist.special(m.name)}
                )
            else:
                if demangle(p.name) not in dist.dropped:
                    params += _split(p.name, p.type, p.attrs, p.name)
                args.append(_rebuilt(p.name, p.type, p.attrs, "", dist))
        call = f"{inner}({', '.join(args)})"
        result, body = "", f"    {call};\n"
        members = parsed.structs.get(fn.result.type.name, []) if fn.result else []
        if fn.result is not None and _wraps(members, dist):
            result = f" -> {_split_struct(fn.result.type, parsed, made, dist)}"
            values = []
            for m in members:
                if demangle(m.name) in dist.written:
                    if m.name == _first_written(members, dist):
                        gathered = _gathered(members, dist, "v.")
                        values.append(f"array<f32, {len(gathered)}>({', '.join(gathered)})")
                        clipped = True
                elif "location" in m.attrs and _wide(m.type):
                    values += [e for e, _ in _pieces(f"v.{m.name}", m.type)]
                else:
                    values.append(f"v.{m.name}")
            text = _unlocated(
                text, fn.result.type.name, {m.name for m in members if dist.special(m.name)}
            )
            body = f"    let v = {call};\n    return {result[4:]}({', '.join(values)});\n"
        elif fn.result is not None:
            result = f" -> {_attributes(fn.result.attrs)}{fn.result.type}"
            body = f"    return {call};\n"
        wrappers.append(f"@{stage}\nfn {fn.name}({', '.join(params)}){result}\n{{\n{body}}}\n")
    if not wrappers:
        return text
    if clipped:
        text = "enable clip_distances;\n" + text
    return text + "\n" + "\n".join([*made.values(), *wrappers])
