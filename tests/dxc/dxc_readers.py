"""Tiny, independent readers of emitted code, so the DXC tests do not trust the compiler's own.

They read only what these tests compare: descriptor decorations, stage-variable locations and
built-ins (SPIR-V); ``@group/@binding`` globals and entry-point ``@location``s (WGSL);
``[[buffer/texture/sampler(n)]]`` arguments, ``[[attribute(n)]]``, ``[[color(n)]]`` and
``[[point_size]]`` (MSL). Names are demangled the way Slang mangles them (``albedo_0``).
"""

from __future__ import annotations

import re
import struct
from collections import defaultdict
from dataclasses import dataclass, field

_OP_NAME, _OP_ENTRY_POINT, _OP_VARIABLE, _OP_DECORATE = 5, 15, 59, 71
_D_BUILTIN, _D_LOCATION, _D_BINDING, _D_SET = 11, 30, 33, 34
_SC_NAMES = {0: "UniformConstant", 1: "Input", 2: "Uniform", 3: "Output", 9: "PushConstant"}
_SC_NAMES[12] = "StorageBuffer"
_BUILTINS = {0: "Position", 1: "PointSize", 3: "ClipDistance", 4: "CullDistance"}
_BUILTINS |= {15: "FragCoord", 17: "FrontFacing", 22: "FragDepth", 26: "WorkgroupId"}
_BUILTINS |= {27: "LocalInvocationId", 28: "GlobalInvocationId", 29: "LocalInvocationIndex"}
_BUILTINS |= {42: "VertexIndex", 43: "InstanceIndex", 4424: "BaseVertex", 4425: "BaseInstance"}


def demangle(name: str) -> str:
    return re.sub(r"_\d+$", "", name)


@dataclass
class SpirvVar:
    id: int
    name: str
    storage: str
    set: int | None = None
    binding: int | None = None
    location: int | None = None
    builtin: str | None = None


@dataclass
class SpirvModule:
    version: tuple[int, int]
    variables: list[SpirvVar]

    def descriptors(self) -> list[SpirvVar]:
        return [v for v in self.variables if v.storage not in ("Input", "Output", "Function")]

    def stage_vars(self, storage: str) -> list[SpirvVar]:
        return [v for v in self.variables if v.storage == storage]


def _string(words: tuple[int, ...]) -> str:
    raw = struct.pack(f"<{len(words)}I", *words)
    return raw.split(b"\0", 1)[0].decode()


def read_spirv(data: bytes) -> SpirvModule:
    if len(data) < 20 or len(data) % 4:
        raise ValueError("not a SPIR-V module")
    words = struct.unpack(f"<{len(data) // 4}I", data)
    if words[0] != 0x07230203:
        raise ValueError("bad SPIR-V magic")
    version = ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF)
    names: dict[int, str] = {}
    decorations: dict[int, dict[int, int]] = defaultdict(dict)
    variables: list[tuple[int, int]] = []
    i = 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if count == 0:
            raise ValueError("zero-length SPIR-V instruction")
        operands = words[i + 1 : i + count]
        if op == _OP_NAME:
            names[operands[0]] = _string(operands[1:])
        elif op == _OP_DECORATE and len(operands) >= 3:
            decorations[operands[0]][operands[1]] = operands[2]
        elif op == _OP_VARIABLE:
            variables.append((operands[1], operands[2]))
        i += count
    out = []
    for vid, sc in variables:
        d = decorations.get(vid, {})
        builtin = d.get(_D_BUILTIN)
        out.append(
            SpirvVar(
                id=vid,
                name=names.get(vid, ""),
                storage=_SC_NAMES.get(sc, "Function" if sc == 7 else f"sc{sc}"),
                set=d.get(_D_SET),
                binding=d.get(_D_BINDING),
                location=d.get(_D_LOCATION),
                builtin=None if builtin is None else _BUILTINS.get(builtin, f"BuiltIn{builtin}"),
            )
        )
    return SpirvModule(version, out)


def spirv_resource_name(var: SpirvVar) -> str:
    """A descriptor's source name: Slang names a counter ``x.counter`` and elements ``x.elements``;
    DXC-style ``counter.var.x`` is accepted too."""
    name = var.name
    if name.startswith("counter.var."):
        return name[len("counter.var.") :] + ".counter"
    return name.removesuffix(".elements")


# --- WGSL -------------------------------------------------------------------------------------

_WGSL_GLOBAL = re.compile(r"((?:@\w+\s*\([^)]*\)\s*)+)var(?:<[^>]*>)?\s+(\w+)\s*:")
_WGSL_ATTR = re.compile(r"@(\w+)\s*\(\s*([^)]*?)\s*\)")
_WGSL_STRUCT = re.compile(r"struct\s+(\w+)\s*\{(.*?)\}", re.S)
_WGSL_ENTRY = re.compile(
    r"@(vertex|fragment|compute)\s*(?:@workgroup_size\([^)]*\)\s*)?fn\s+(\w+)\s*\((.*?)\)"
    r"\s*(?:->\s*((?:@\w+\s*\([^)]*\)\s*)*)([\w<>, ]+?))?\s*\{",
    re.S,
)


@dataclass
class WgslGlobal:
    name: str
    group: int | None
    binding: int | None


@dataclass
class WgslEntry:
    stage: str
    name: str
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    input_builtins: list[str] = field(default_factory=list)
    output_builtins: list[str] = field(default_factory=list)


def _attrs(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in _WGSL_ATTR.finditer(text)}


def wgsl_globals(code: str) -> list[WgslGlobal]:
    out = []
    for m in _WGSL_GLOBAL.finditer(code):
        a = _attrs(m.group(1))
        group = int(a["group"]) if "group" in a else None
        binding = int(a["binding"]) if "binding" in a else None
        out.append(WgslGlobal(demangle(m.group(2)), group, binding))
    return out


def _split_params(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def wgsl_entries(code: str) -> list[WgslEntry]:
    structs = {m.group(1): _split_params(m.group(2)) for m in _WGSL_STRUCT.finditer(code)}

    def collect(decl_attrs: str, type_name: str, locs: list[int], builtins: list[str]) -> None:
        a = _attrs(decl_attrs)
        if "location" in a:
            locs.append(int(a["location"]))
        elif "builtin" in a:
            builtins.append(a["builtin"])
        elif type_name.strip() in structs:
            for member in structs[type_name.strip()]:
                if ":" in member:
                    head, _, typ = member.rpartition(":")
                    collect(head, typ, locs, builtins)

    entries = []
    for m in _WGSL_ENTRY.finditer(code):
        e = WgslEntry(m.group(1), m.group(2))
        for param in _split_params(m.group(3)):
            if ":" in param:
                head, _, typ = param.rpartition(":")
                collect(head, typ, e.inputs, e.input_builtins)
        if m.group(5):
            collect(m.group(4) or "", m.group(5), e.outputs, e.output_builtins)
        entries.append(e)
    return entries


# --- MSL --------------------------------------------------------------------------------------

# name [[other(0)]]... [[buffer(n)]] (a rasterizer-ordered view has [[raster_order_group(0)]])
_MSL_ARG = re.compile(
    r"(\w+)\s*(?:\[\[[^\]]*\]\]\s*)*\[\[\s*(buffer|texture|sampler)\s*\(\s*(\d+)\s*\)\s*\]\]"
)
_MSL_ATTRIBUTE = re.compile(r"\[\[\s*attribute\s*\(\s*(\d+)\s*\)\s*\]\]")
_MSL_COLOR = re.compile(r"\[\[\s*color\s*\(\s*(\d+)\s*\)\s*\]\]")


@dataclass
class MslArgument:
    name: str
    kind: str
    index: int


def msl_arguments(code: str) -> list[MslArgument]:
    return [
        MslArgument(demangle(m.group(1)), m.group(2), int(m.group(3)))
        for m in _MSL_ARG.finditer(code)
    ]


def msl_attributes(code: str) -> list[int]:
    return [int(m.group(1)) for m in _MSL_ATTRIBUTE.finditer(code)]


def msl_colors(code: str) -> list[int]:
    return [int(m.group(1)) for m in _MSL_COLOR.finditer(code)]


def msl_has_attribute(code: str, name: str) -> bool:
    """Whether the MSL carries ``[[name]]`` (``point_size``, ``base_instance``, ...)."""
    return re.search(rf"\[\[\s*{name}\s*\]\]", code) is not None
