"""Text patches of emitted WGSL: the entry points' locations, and the names of the depth
textures a compared texture becomes.

Slang's WGSL numbers varyings by semantic index and declares compared textures as colour
textures; these helpers rewrite exactly the attributes oneshader decides (docs/compiler.md), by
the names Slang gives declarations (the source name, or the source name plus ``_<n>``).
"""

from __future__ import annotations

import re

from oneshader.compiler.emitted.common import demangle, split_member
from oneshader.compiler.emitted.wgsl import WgslType, _Parsed, parse_wgsl
from oneshader.compiler.patch.common import patch_struct, with_bare_result
from oneshader.reflection.model import BuiltIn, StageVariable

DEPTH_TEXTURES = {
    "texture_2d": "texture_depth_2d",
    "texture_2d_array": "texture_depth_2d_array",
    "texture_cube": "texture_depth_cube",
    "texture_cube_array": "texture_depth_cube_array",
}


WGSL_COMPARE = re.compile(r"texture(?:SampleCompare(?:Level)?|GatherCompare)\(\s*\(?\s*$")


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


def _wide_struct(t: WgslType, parsed: _Parsed) -> bool:
    members = parsed.structs.get(t.name, [])
    return any("location" in m.attrs and _wide(m.type) for m in members)


def _split_struct(t: WgslType, parsed: _Parsed, made: dict[str, str]) -> str:
    """The name of ``t``'s copy whose wide members are split (declared once, in ``made``)."""
    name = f"{t.name}_locations"
    if name not in made:
        lines = [
            line
            for m in parsed.structs[t.name]
            for line in _split(m.name, m.type, m.attrs, f"v.{m.name}")
        ]
        made[name] = "struct " + name + "\n{\n" + "".join(f"    {x},\n" for x in lines) + "};\n"
    return name


def _rebuilt(name: str, t: WgslType, attrs: dict[str, tuple[str, ...]], value: str) -> str:
    """The wide value a split declaration ``name`` carries, rebuilt from ``value``'s members
    (a parameter: ``value`` is empty, its pieces are parameters)."""
    if "location" not in attrs or not _wide(t):
        return value + name
    count = len(_pieces("", t))
    return _whole(t, [value + split_member(name, k) for k in range(count)])


def split_wide_varyings(text: str) -> str:
    """The module with every entry point that passes an array or matrix between stages (or
    takes one as a vertex input) wrapped: WGSL passes only scalars and vectors, so the
    wrapper declares one vector per location (at the locations SPIR-V gives, ``view_0__1``
    at the location after ``view_0__0``) and rebuilds the value for the function Slang wrote,
    which is renamed ``<entry>_unsplit`` and loses its stage and interface attributes."""
    if "@location" not in text:
        return text
    parsed = parse_wgsl(text)
    made: dict[str, str] = {}
    wrappers: list[str] = []
    for fn in parsed.functions.values():
        stage = next((s for s in ("vertex", "fragment") if s in fn.attrs), None)
        io = [*fn.params, *([fn.result] if fn.result else [])]
        if stage is None or not any(
            ("location" in p.attrs and _wide(p.type)) or _wide_struct(p.type, parsed) for p in io
        ):
            continue
        inner = f"{fn.name}_unsplit"
        head = re.search(rf"@{stage}\s*fn\s+{re.escape(fn.name)}\s*\([^{{]*\{{", text)
        assert head is not None, fn.name
        unstaged = head.group(0)[len(f"@{stage}") :].replace(fn.name, inner, 1)
        text = text[: head.start()] + _IO_ATTRIBUTES.sub("", unstaged) + text[head.end() :]
        params, args = [], []
        for p in fn.params:
            if _wide_struct(p.type, parsed) and not p.attrs:
                params.append(f"{p.name} : {_split_struct(p.type, parsed, made)}")
                members = parsed.structs[p.type.name]
                rebuilt = [_rebuilt(m.name, m.type, m.attrs, f"{p.name}.") for m in members]
                args.append(f"{p.type}({', '.join(rebuilt)})")
            else:
                params += _split(p.name, p.type, p.attrs, p.name)
                args.append(_rebuilt(p.name, p.type, p.attrs, ""))
        call = f"{inner}({', '.join(args)})"
        result, body = "", f"    {call};\n"
        if fn.result is not None and _wide_struct(fn.result.type, parsed):
            result = f" -> {_split_struct(fn.result.type, parsed, made)}"
            values = [
                expr
                for m in parsed.structs[fn.result.type.name]
                for expr in (
                    [e for e, _ in _pieces(f"v.{m.name}", m.type)]
                    if "location" in m.attrs and _wide(m.type)
                    else [f"v.{m.name}"]
                )
            ]
            body = f"    let v = {call};\n    return {result[4:]}({', '.join(values)});\n"
        elif fn.result is not None:
            result = f" -> {_attributes(fn.result.attrs)}{fn.result.type}"
            body = f"    return {call};\n"
        wrappers.append(f"@{stage}\nfn {fn.name}({', '.join(params)}){result}\n{{\n{body}}}\n")
    if not wrappers:
        return text
    return text + "\n" + "\n".join([*made.values(), *wrappers])
