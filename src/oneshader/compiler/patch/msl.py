"""Text patches of emitted MSL: oneshader's argument indices, and the entry points' vertex
inputs and fragment outputs (varyings are matched by ``[[user(...)]]`` semantics, not numbers).
"""

from __future__ import annotations

import re

from oneshader.compiler.emitted.common import demangle, resource_name
from oneshader.compiler.patch.common import patch_struct
from oneshader.reflection.model import Stage


def _relocate_fields(body: str, attr: str, wanted: dict[str, int]) -> str:
    """``name_0 [[attribute(n)]]`` (or ``color``) fields of a struct body, renumbered."""

    def msl(fm: re.Match[str]) -> str:
        location = wanted.get(demangle(fm.group(1)), int(fm.group(3)))
        return f"{fm.group(1)}{fm.group(2)}[[{attr}({location})]]"

    return re.sub(rf"(\w+)(\s*)\[\[{attr}\((\d+)\)\]\]", msl, body)


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
                text = patch_struct(
                    text, sm.group(1), lambda body: _relocate_fields(body, "attribute", ins)
                )
        else:
            text = patch_struct(
                text, m.group(1), lambda body: _relocate_fields(body, "color", outs)
            )
        break
    return text


def renumber_msl(text: str, indices: dict[str, tuple[str, int]]) -> str:
    """Every ``name_N [[buffer|texture|sampler(n)]]`` argument given oneshader's index for it."""

    def number(m: re.Match[str]) -> str:
        want = indices.get(resource_name(m.group(1)))
        if want is None or want[0] != m.group(3):
            return m.group(0)
        return f"{m.group(1)}{m.group(2)}[[{m.group(3)}({want[1]})]]"

    return re.sub(r"(\w+)(\s*)\[\[(buffer|texture|sampler)\((\d+)\)\]\]", number, text)
