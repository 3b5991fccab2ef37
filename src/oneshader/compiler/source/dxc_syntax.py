"""Declarations DXC parses and Slang does not, rewritten into what Slang parses.

Two self-contained rewrites of one file's text, for the source scanner and for the text handed
to Slang alike (``SourceSet.read`` scans their result; ``slang.request`` applies them first), so
that both read the same declarations. Each keeps every line where it was; the columns after a
change on its line move. (They stand beside the other rewrites of ``source/`` until the quirk
registry of the source model takes them over as records.)

- A struct type declared with its variables (``[[vk::push_constant]] struct { uint a; } pc;``,
  ``static const struct S { ... } s = ...;``): Slang refuses an attribute on a struct
  declaration (E31002) and cannot read an anonymous struct's variable. The struct is declared
  on its own and the variable after it, with the attributes and qualifiers moved to it: ``struct
  oneshader_anon_pc { uint a; }; [[vk::push_constant]] oneshader_anon_pc pc;`` (an anonymous
  struct is named for its first variable; the reflection's layout has no name for it).
- An out-of-line member function (HLSL 2021: ``R S::f(...) { ... }`` for a ``R f(...);``
  declared in ``struct S``), which Slang does not parse (E20001 at ``::``): the definition
  becomes a Slang ``extension S { R f(...) { ... } }`` where it stands, and the declaration in
  the struct is blanked (``static`` moves from it to the definition).
"""

from __future__ import annotations

import re

from oneshader.compiler.source.scanner import closing, strip_comments

__all__ = ["ANONYMOUS_STRUCT", "dxc_declarations", "out_of_line_methods", "struct_declarators"]

ANONYMOUS_STRUCT = "oneshader_anon_"  # the name given an anonymous struct: this + its variable

_STRUCT_HEAD = re.compile(r"\bstruct\b(?:\s+([A-Za-z_]\w*))?\s*\{")
_DECLARATOR = re.compile(r"\s*([A-Za-z_]\w*)[^;{}]*;")
# What may stand before a struct declared with its variables: attributes and qualifiers.
_PREFIX = re.compile(
    r"(?:\s+|\[\[[^\[\]]*\]\]|\[[^\[\]]*\]"
    r"|\b(?:static|const|uniform|groupshared|extern|volatile|precise|shared)\b)*"
)
_METHOD_HEAD = re.compile(r"\b([A-Za-z_]\w*)\s*::\s*([A-Za-z_]\w*)\s*\(")
_RETURN_TYPE = re.compile(r"\s*[A-Za-z_][\w\s<>,]*")


def dxc_declarations(text: str) -> str:
    """Both rewrites of this module, in order."""
    return out_of_line_methods(struct_declarators(text))


def _statement_start(clean: str, at: int) -> int:
    """Where the statement holding offset ``at`` starts: after the last ``;``, ``{``, ``}`` or
    preprocessor line before it."""
    start = max(clean.rfind(c, 0, at) for c in ";{}") + 1
    directive = clean.rfind("\n#", start, at)
    if directive >= 0:
        start = clean.find("\n", directive + 1) + 1 or at
    return start


def _depth(clean: str, at: int) -> int:
    return clean.count("{", 0, at) - clean.count("}", 0, at)


def _edited(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` span replaced, from the last one back."""
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _blank(text: str, start: int, end: int) -> tuple[int, int, str]:
    return start, end, re.sub(r"[^\n]", " ", text[start:end])


def struct_declarators(text: str) -> str:
    """Each global struct declared with its variables split into the struct and the variables
    (module docstring)."""
    if "struct" not in text:
        return text
    clean = strip_comments(text)
    edits: list[tuple[int, int, str]] = []
    for m in _STRUCT_HEAD.finditer(clean):
        end = closing(clean, m.end() - 1)
        declarator = _DECLARATOR.match(clean, end) if end > 0 else None
        if declarator is None or _depth(clean, m.start()) != 0:
            continue
        start = _statement_start(clean, m.start())
        prefix = clean[start : m.start()]
        if not _PREFIX.fullmatch(prefix):
            continue  # (typedef struct ..., or what this does not know)
        name = m.group(1) or f"{ANONYMOUS_STRUCT}{declarator.group(1)}"
        if prefix.strip():
            edits.append(_blank(text, start, m.start()))
        if m.group(1) is None:
            edits.append((m.start() + len("struct"), m.start() + len("struct"), f" {name}"))
        moved = " ".join(prefix.split())
        edits.append((end, end, f"; {moved} {name}" if moved else f"; {name}"))
    return _edited(text, edits) if edits else text


def out_of_line_methods(text: str) -> str:
    """Each out-of-line member function of a struct of this file made an ``extension`` of it
    in place, and its declaration in the struct blanked (module docstring)."""
    if "::" not in text:
        return text
    clean = strip_comments(text)
    structs = {
        m.group(1): m
        for m in _STRUCT_HEAD.finditer(clean)
        if m.group(1) and _depth(clean, m.start()) == 0
    }
    edits: list[tuple[int, int, str]] = []
    blanked: set[tuple[str, str]] = set()
    for m in _METHOD_HEAD.finditer(clean):
        owner, method = m.group(1), m.group(2)
        if owner not in structs or _depth(clean, m.start()) != 0:
            continue
        start = _statement_start(clean, m.start())
        head = _RETURN_TYPE.fullmatch(clean, start, m.start())
        params_end = closing(clean, m.end() - 1)
        body = re.compile(r"\s*\{").match(clean, params_end) if params_end > 0 else None
        if head is None or not clean[start : m.start()].strip() or body is None:
            continue
        end = closing(clean, body.end() - 1)
        if end < 0:
            continue
        static = (owner, method) in blanked or _blank_prototypes(
            text, clean, structs[owner], method, edits
        )
        blanked.add((owner, method))
        first = start + len(clean[start : m.start()]) - len(clean[start : m.start()].lstrip())
        edits.append((first, first, f"extension {owner} {{ {'static ' if static else ''}"))
        edits.append(_blank(text, m.start(1), m.start(2)))  # Owner::
        edits.append((end, end, " }"))
    return _edited(text, edits) if edits else text


def _blank_prototypes(
    text: str, clean: str, struct: re.Match[str], method: str, edits: list[tuple[int, int, str]]
) -> bool:
    """Blanks (into ``edits``) each body-less declaration of ``method`` in ``struct``'s body;
    whether one was ``static``."""
    body_end = closing(clean, struct.end() - 1)
    static = False
    prototype = re.compile(rf"\b{re.escape(method)}\s*\(")
    for p in prototype.finditer(clean, struct.end(), body_end):
        if _depth(clean, p.start()) - _depth(clean, struct.end()) != 0:
            continue
        params_end = closing(clean, p.end() - 1)
        semicolon = re.compile(r"\s*;").match(clean, params_end) if params_end > 0 else None
        if semicolon is None:
            continue
        start = _statement_start(clean, p.start())
        static = static or re.search(r"\bstatic\b", clean[start : p.start()]) is not None
        edits.append(_blank(text, start, semicolon.end()))
    return static
