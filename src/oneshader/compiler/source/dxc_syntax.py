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

from oneshader.compiler.source.query import Stream, blank, edited, lexed, spelled

__all__ = ["ANONYMOUS_STRUCT", "dxc_declarations", "out_of_line_methods", "struct_declarators"]

ANONYMOUS_STRUCT = "oneshader_anon_"  # the name given an anonymous struct: this + its variable

# What may stand before a struct declared with its variables: attributes and qualifiers.
_QUALIFIERS = frozenset(
    ("static", "const", "uniform", "groupshared", "extern", "volatile", "precise", "shared")
)


def dxc_declarations(text: str) -> str:
    """Both rewrites of this module, in order."""
    return out_of_line_methods(struct_declarators(text))


def _close(c: Stream, i: int) -> int:
    """The index of the bracket closing the one at ``i``, or -1."""
    past = c.closing(i)
    return past - 1 if past > 0 else -1


def _struct_head(c: Stream, i: int) -> tuple[str | None, int] | None:
    """At a ``struct`` token, its name (None: anonymous) and the index of its ``{``."""
    if not c.seq(i, "struct") or not c.word(i):
        return None
    if c.word(i + 1) and c.seq(i + 2, "{"):
        return c.tokens[i + 1].text, i + 2
    return (None, i + 1) if c.seq(i + 1, "{") else None


def _statement_offset(c: Stream, first: int) -> int:
    """Where the statement whose first token is ``first`` starts in the text: just past the
    ``;``, ``{`` or ``}`` before it, or at the line after a preprocessor line (0 at the top)."""
    if first == 0:
        return 0
    before = c.tokens[first - 1]
    if before.text in (";", "{", "}"):
        return c.end(first - 1)
    at = c.text.find("\n", c.end(first - 1))
    return at + 1 if at >= 0 else c.start(first)


def _prefix(c: Stream, i: int, j: int) -> bool:
    """Whether tokens ``i`` to ``j`` are attributes (``[[...]]``, ``[...]``) and qualifiers."""
    while i < j:
        t = c.tokens[i]
        if t.kind == "id" and t.text in _QUALIFIERS:
            i += 1
            continue
        if t.text != "[":
            return False
        double = c.seq(i + 1, "[")
        k = i + 2 if double else i + 1
        while k < j and c.tokens[k].text not in ("[", "]"):
            k += 1
        if not c.seq(k, "]") or (double and not c.seq(k + 1, "]")):
            return False
        i = k + 2 if double else k + 1
    return i == j


def _declarator(c: Stream, end: int) -> str | None:
    """After a struct's ``}`` (token ``end``), the first variable's name when a declarator list
    ending in ``;`` follows (no brace before the ``;``)."""
    if not c.word(end + 1):
        return None
    for k in range(end + 2, len(c)):
        if c.tokens[k].text == ";":
            return c.tokens[end + 1].text
        if c.tokens[k].text in ("{", "}"):
            return None
    return None


def struct_declarators(text: str) -> str:
    """Each global struct declared with its variables split into the struct and the variables
    (module docstring)."""
    if "struct" not in text:
        return text
    c = lexed(text)
    edits: list[tuple[int, int, str]] = []
    for i in c.words(("struct",)):
        head = _struct_head(c, i)
        if head is None:
            continue
        name, brace = head
        end = _close(c, brace)
        variable = _declarator(c, end) if end > 0 else None
        if variable is None or c.depth(i) != 0:
            continue
        first = c.statement_start(i)
        if not _prefix(c, first, i):
            continue  # (typedef struct ..., or what this does not know)
        name = name or f"{ANONYMOUS_STRUCT}{variable}"
        if first < i:
            edits.append(blank(text, _statement_offset(c, first), c.start(i)))
        if head[0] is None:
            edits.append((c.end(i), c.end(i), f" {name}"))
        moved = spelled(c, first, i)
        after = c.end(end)
        edits.append((after, after, f"; {moved} {name}" if moved else f"; {name}"))
    return edited(text, edits) if edits else text


def _return_type(c: Stream, i: int, j: int) -> bool:
    """Whether tokens ``i`` to ``j`` can be a function's result type (a name first, then names,
    numbers, ``<``, ``>`` and commas)."""
    return (
        j > i
        and c.word(i)
        and all(ch.isalnum() or ch in "_<>," for t in c.tokens[i:j] for ch in t.text)
    )


def out_of_line_methods(text: str) -> str:
    """Each out-of-line member function of a struct of this file made an ``extension`` of it
    in place, and its declaration in the struct blanked (module docstring)."""
    if "::" not in text:
        return text
    c = lexed(text)
    heads = [(i, head) for i in c.words(("struct",)) if (head := _struct_head(c, i)) is not None]
    named = {head[0] for _, head in heads if head[0] is not None}
    if not any(c.seq(i + 1, "::") for i in c.words(named)):
        return text  # (no struct's name before "::": the braces' depths are not counted)
    structs: dict[str, int] = {}
    for i, (name, brace) in heads:
        if name is not None and c.depth(i) == 0:
            structs[name] = brace
    if not structs:
        return text
    edits: list[tuple[int, int, str]] = []
    blanked: set[tuple[str, str]] = set()
    for i in c.words(structs):  # a struct's name (not every token: "::" is in most files)
        if not (c.seq(i + 1, "::") and c.word(i + 2) and c.seq(i + 3, "(")):
            continue
        owner, method = c.tokens[i].text, c.tokens[i + 2].text
        if c.depth(i) != 0:
            continue
        first = c.statement_start(i)
        params_end = _close(c, i + 3)
        if not _return_type(c, first, i) or params_end < 0 or not c.seq(params_end + 1, "{"):
            continue
        end = _close(c, params_end + 1)
        if end < 0:
            continue
        static = (owner, method) in blanked or _blank_prototypes(c, structs[owner], method, edits)
        blanked.add((owner, method))
        at = c.start(first)
        edits.append((at, at, f"extension {owner} {{ {'static ' if static else ''}"))
        edits.append(blank(text, c.start(i), c.start(i + 2)))  # Owner::
        edits.append((c.end(end), c.end(end), " }"))
    return edited(text, edits) if edits else text


def _blank_prototypes(
    c: Stream, brace: int, method: str, edits: list[tuple[int, int, str]]
) -> bool:
    """Blanks (into ``edits``) each body-less declaration of ``method`` in the body of the
    struct whose ``{`` is token ``brace``; whether one was ``static``."""
    body_end = _close(c, brace)
    if body_end < 0:
        body_end = len(c)
    static = False
    for p in range(brace + 1, body_end):
        if not (c.seq(p, method, "(") and c.word(p)) or c.depth(p) != c.depth(brace + 1):
            continue
        params_end = _close(c, p + 1)
        if params_end < 0 or not c.seq(params_end + 1, ";"):
            continue
        first = c.statement_start(p)
        static = static or any(c.tokens[k].text == "static" for k in range(first, p))
        edits.append(blank(c.text, _statement_offset(c, first), c.end(params_end + 1)))
    return static
