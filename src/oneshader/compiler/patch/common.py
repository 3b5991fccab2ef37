"""What the WGSL and MSL text patches share: a struct's body found, and rewritten in place;
the struct Slang makes of an entry point's bare return value."""

from __future__ import annotations

import re
from collections.abc import Callable

from oneshader.reflection.model import BuiltIn, StageVariable


def struct_body(text: str, name: str) -> re.Match[str] | None:
    """``struct name { ... };`` in ``text``; group 1 is its body."""
    return re.search(rf"struct\s+{re.escape(name)}\s*\{{(.*?)\}};", text, re.DOTALL)


def patch_struct(text: str, name: str, relocate: Callable[[str], str]) -> str:
    """``text`` with the body of ``struct name { ... };`` passed through ``relocate``."""
    sm = struct_body(text, name)
    if not sm:
        return text
    body = relocate(sm.group(1))
    return text[: sm.start(1)] + body + text[sm.end(1) :]


# The struct Slang's WGSL and Metal return for an entry point's bare value (``float4 main() :
# SV_Target1``): one member, ``output_<n>``, whose attribute Slang writes without the semantic.
SLANG_RESULT = re.compile(r"(?:vertex|pixel|fragment)Output_\d+")


def with_bare_result(
    text: str, struct: str, output: StageVariable, attributes: tuple[str, str, dict[BuiltIn, str]]
) -> str:
    """``text`` with the ``output_<n>`` member of ``struct`` (a :data:`SLANG_RESULT`) given
    ``output``'s attribute: ``attributes`` is the pattern of the attribute Slang wrote, the
    located form (``{}`` for the location) and the built-ins' forms."""
    old, located, builtins = attributes
    if not SLANG_RESULT.fullmatch(struct):
        return text
    if output.builtin is BuiltIn.None_:
        new = located.format(output.location or 0)
    elif output.builtin in builtins:
        new = builtins[output.builtin]
    else:
        return text

    def attribute(body: str) -> str:
        if not re.search(r"\boutput_\d+\b", body):
            return body
        return re.sub(old, lambda _: new, body, count=1)

    return patch_struct(text, struct, attribute)
