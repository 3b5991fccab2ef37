"""What the WGSL and MSL text patches share: a struct's body found, and rewritten in place;
the struct Slang makes of an entry point's bare return value."""

from __future__ import annotations

import re
from collections.abc import Callable


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


def bare_result_attribute(body: str, old: str, new: str) -> str:
    """The ``output_<n>`` member of a :data:`SLANG_RESULT` body with attribute ``new`` for the
    first match of the pattern ``old``."""
    return re.sub(old, lambda _: new, body, count=1) if re.search(r"\boutput_\d+\b", body) else body
