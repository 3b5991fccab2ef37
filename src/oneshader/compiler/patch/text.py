"""Text patches of emitted WGSL and MSL: locations, depth textures, MSL argument indices.

Slang's WGSL numbers varyings by semantic index and declares compared textures as colour
textures; these helpers rewrite exactly the attributes oneshader decides (docs/compiler.md), by
the names Slang gives declarations (the source name, or the source name plus ``_<n>``).
"""

from __future__ import annotations

import re

from oneshader.compiler.emitted.common import resource_name
from oneshader.compiler.front.rewrite import postfix_start
from oneshader.reflection.model import Stage

DEPTH_TEXTURES = {
    "texture_2d": "texture_depth_2d",
    "texture_2d_array": "texture_depth_2d_array",
    "texture_cube": "texture_depth_cube",
    "texture_cube_array": "texture_depth_cube_array",
}


WGSL_COMPARE = re.compile(r"texture(?:SampleCompare(?:Level)?|GatherCompare)\(\s*\(?\s*$")


def relocate_fields(body: str, attr: str, wanted: dict[str, int]) -> str:
    """``@location(n) name_0`` / ``name_0 [[attribute(n)]]`` fields of a struct body, renumbered."""
    if attr == "location":

        def wgsl(fm: re.Match[str]) -> str:
            location = wanted.get(re.sub(r"_[0-9]+$", "", fm.group(3)), int(fm.group(1)))
            return f"@location({location}){fm.group(2)}{fm.group(3)}{fm.group(4)}"

        return re.sub(r"@location\((\d+)\)(\s*)(\w+)(\s*:)", wgsl, body)

    def msl(fm: re.Match[str]) -> str:
        location = wanted.get(re.sub(r"_[0-9]+$", "", fm.group(1)), int(fm.group(3)))
        return f"{fm.group(1)}{fm.group(2)}[[{attr}({location})]]"

    return re.sub(rf"(\w+)(\s*)\[\[{attr}\((\d+)\)\]\]", msl, body)


def patch_struct(text: str, name: str, attr: str, wanted: dict[str, int]) -> str:
    sm = re.search(rf"struct\s+{re.escape(name)}\s*\{{(.*?)\}};", text, re.DOTALL)
    if not sm or not wanted:
        return text
    body = relocate_fields(sm.group(1), attr, wanted)
    return text[: sm.start(1)] + body + text[sm.end(1) :]


def relocate_wgsl(text: str, entry: str, ins: dict[str, int], outs: dict[str, int]) -> str:
    """The WGSL entry point's input and output locations set to the reflection's."""
    m = re.search(
        rf"fn\s+{re.escape(entry)}\s*\((.*?)\)\s*(?:->\s*([^{{]*?))?\s*\{{", text, re.DOTALL
    )
    if not m:
        return text
    params, result = m.group(1), (m.group(2) or "").strip()
    new_params = relocate_fields(params, "location", ins)
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
        text = patch_struct(text, struct_name, "location", ins)
    if re.fullmatch(r"\w+", result):
        text = patch_struct(text, result, "location", outs)
    return text


def relocate_msl(
    text: str, entry: str, stage: Stage, ins: dict[str, int], outs: dict[str, int]
) -> str:
    """Metal: vertex inputs ([[attribute(n)]]) and fragment outputs ([[color(n)]]); varyings
    are matched by [[user(...)]] semantics, not numbers."""
    kind = {Stage.Vertex: "vertex", Stage.Pixel: "fragment"}.get(stage)
    if kind is None:
        return text
    names = (entry, f"{entry}_0") if entry == "main" else (entry,)
    for name in names:
        m = re.search(
            rf"\[\[{kind}\]\]\s*(\w+)\s+{re.escape(name)}\s*\((.*?)\)\s*\{{", text, re.DOTALL
        )
        if not m:
            continue
        if stage is Stage.Vertex:
            sm = re.search(r"(\w+)\s+\w+\s*\[\[stage_in\]\]", m.group(2))
            if sm:
                text = patch_struct(text, sm.group(1), "attribute", ins)
        else:
            text = patch_struct(text, m.group(1), "color", outs)
        break
    return text


def renumber_msl(text: str, indices: dict[str, tuple[str, int]]) -> str:
    """Every ``name_N [[buffer|texture|sampler(n)]]`` argument given oneshader's index for it."""

    def number(m: re.Match[str]) -> str:
        want = indices.get(resource_name(m.group(1)))
        if want is None or want[0] != m.group(3):
            return m.group(0)
        return f"{m.group(1)}{m.group(2)}[[{m.group(3)}({want[1]})]]"

    text = re.sub(r"(\w+)(\s*)\[\[(buffer|texture|sampler)\((\d+)\)\]\]", number, text)

    def array_index(m: re.Match[str]) -> str:
        want = indices.get(resource_name(m.group(2)))
        if want is None:
            return m.group(0)
        return f"{m.group(1)} [[{want[0]}({want[1]})]]"

    # Slang gives a Metal argument that is an array (of textures, of samplers) no index.
    return re.sub(
        r"(array<(?:texture|depth|sampler)[^;{}()]*?(?:\([^;{}()]*\)[^;{}()]*?)*>\s+(\w+))(?=\s*[,)])",
        array_index,
        text,
    )


def metal_vectors(text: str, resource: str, vectors: list[tuple[tuple[str, ...], bool]]) -> str:
    """Metal's vector members at the given paths (member names from the struct of the argument
    ``resource``) declared packed (True: ``packed_float3``, 12 bytes, 4-aligned, HLSL's layout;
    every read converted back to the vector type, as Metal code does) or aligned (False:
    ``float4`` for Slang's ``packed_float4``, which converts on assignment)."""
    param = re.search(
        rf"(\w+)\s+(?:constant|device|const\s+device)\s*\*\s*{re.escape(resource)}(?:_\d+)?\s*\[\[",
        text,
    )
    if param is None:
        return text
    packed: dict[str, str] = {}  # emitted member name -> its unpacked type
    for path, pack in vectors:
        struct_name = param.group(1)
        for i, member in enumerate(path):
            body = re.search(rf"struct\s+{re.escape(struct_name)}\s*\{{(.*?)\}};", text, re.S)
            if body is None:
                break
            decl = re.search(
                rf"(?m)^\s*(?:array<\s*)?(?P<type>\w+)[^;\n]*?\s"
                rf"(?P<name>{re.escape(member)}(?:_\d+)?)\s*;",
                body.group(1),
            )
            if decl is None:
                break
            if i + 1 < len(path):
                struct_name = decl.group("type")
                continue
            vector = decl.group("type")
            start = body.start(1) + decl.start("type")
            if pack and re.fullmatch(r"[a-z]+[234]", vector):
                text = text[:start] + f"packed_{vector}" + text[start + len(vector) :]
                packed[decl.group("name")] = vector
            elif not pack and vector.startswith("packed_"):
                text = text[:start] + vector[len("packed_") :] + text[start + len(vector) :]
    for name, vector in packed.items():
        text = _unpacked_reads(text, name, vector)
    return text


def _unpacked_reads(text: str, member: str, vector: str) -> str:
    """Each ``expr.member``/``expr->member`` read in function bodies wrapped as
    ``vector(expr.member)``; writes (an assignment follows) and addresses are left alone."""
    out: list[str] = []
    last = 0
    for m in re.finditer(rf"(?:\.|->)\s*{re.escape(member)}\b", text):
        start = postfix_start(text, m.start())
        after = text[m.end() :]
        if re.match(r"\s*(?:\.\s*[xyzwrgba]+\s*)?(?:[-+*/%&|^]|<<|>>)?=(?!=)", after):
            continue
        if text[:start].rstrip().endswith("&") and not text[:start].rstrip().endswith("&&"):
            continue
        out.append(text[last:start])
        out.append(f"{vector}({text[start : m.end()]})")
        last = m.end()
    out.append(text[last:])
    return "".join(out)
