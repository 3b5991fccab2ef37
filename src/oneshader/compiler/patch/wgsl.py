"""Text patches of emitted WGSL: the entry points' locations, and the names of the depth
textures a compared texture becomes.

Slang's WGSL numbers varyings by semantic index and declares compared textures as colour
textures; these helpers rewrite exactly the attributes oneshader decides (docs/compiler.md), by
the names Slang gives declarations (the source name, or the source name plus ``_<n>``).
"""

from __future__ import annotations

import re

from oneshader.compiler.emitted.common import demangle
from oneshader.compiler.patch.common import patch_struct

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


def relocate_wgsl(text: str, entry: str, ins: dict[str, int], outs: dict[str, int]) -> str:
    """The WGSL entry point's input and output locations set to the reflection's."""
    m = re.search(
        rf"fn\s+{re.escape(entry)}\s*\((.*?)\)\s*(?:->\s*([^{{]*?))?\s*\{{", text, re.DOTALL
    )
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
