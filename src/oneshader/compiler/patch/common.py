"""What the WGSL and MSL text patches share: a struct's body found, and rewritten in place."""

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
