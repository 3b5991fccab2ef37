"""Source rewrites: where the text handed to Slang differs from the file, and why.

Each rewrite keeps line numbers, and the columns before the change, so Slang's diagnostics still
point into the user's file (docs/compiler.md lists them).
"""

from __future__ import annotations

import re

from oneshader.compiler.source import Declaration, strip_comments

__all__ = [
    "blank_words",
    "counter_calls",
    "vk_builtins",
    "with_counter_buffers",
]


def blank_words(text: str, word: str) -> str:
    """The text with the keyword ``word`` blanked where it is a modifier (not in comments)."""
    clean = strip_comments(text)
    chars = list(text)
    for m in re.finditer(rf"\b{word}\b(?=\s+[A-Za-z_])", clean):
        for i in range(m.start(), m.end()):
            chars[i] = " "
    return "".join(chars)


# DXC's [[vk::builtin("X")]] names Slang knows as system-value semantics.
VK_BUILTINS = {
    "PointSize": "SV_PointSize",
    "BaseVertex": "SV_StartVertexLocation",
    "BaseInstance": "SV_StartInstanceLocation",
}
VK_BUILTIN = re.compile(r'\[\[\s*vk::builtin\(\s*"(\w+)"\s*\)\s*\]\]([^;:,)]*)(:\s*\w+)?')


def vk_builtins(text: str) -> str:
    """DXC's ``[[vk::builtin("PointSize")]] float s : PSIZE`` as Slang's ``float s :
    SV_PointSize`` (and BaseVertex/BaseInstance as SV_StartVertex/InstanceLocation)."""
    clean = strip_comments(text)
    out, last = [], 0
    for m in VK_BUILTIN.finditer(clean):
        semantic = VK_BUILTINS.get(m.group(1))
        if semantic is None:
            continue
        out.append(text[last : m.start()])
        out.append(" " * (m.start(2) - m.start()))
        out.append(text[m.start(2) : m.end(2)].rstrip())
        out.append(f" : {semantic}")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


COUNTER_CALL = re.compile(r"\b(\w+)\s*\.\s*(Increment|Decrement)Counter\s*\(\s*\)")


def counter_calls(text: str) -> list[re.Match[str]]:
    return list(COUNTER_CALL.finditer(strip_comments(text)))


def with_counter_buffers(text: str, names: dict[str, Declaration]) -> str:
    """RW structured buffer counters as Slang can compile them (it rejects IncrementCounter):
    a companion ``RWStructuredBuffer<Atomic<uint>> X_counter`` declared at the end of X's line
    and ``X.IncrementCounter()`` as ``X_counter[0].add(1u)`` (the same length), which returns the
    old value as DXC's does; DecrementCounter returns the new one, as DXC's."""
    out, last = [], 0
    for m in counter_calls(text):
        name = m.group(1)
        if name not in names:
            continue
        out.append(text[last : m.start()])
        if m.group(2) == "Increment":
            out.append(f"{name}_counter[0].add(1u)")
        else:
            out.append(f"({name}_counter[0].sub(1u)-1u)")
        last = m.end()
    out.append(text[last:])
    text = "".join(out)
    lines = text.split("\n")
    for name, decl in names.items():
        if decl.file and 1 <= decl.line <= len(lines):
            lines[decl.line - 1] += f" RWStructuredBuffer<Atomic<uint>> {name}_counter;"
    return "\n".join(lines)
