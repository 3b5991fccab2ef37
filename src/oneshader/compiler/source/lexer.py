"""HLSL's preprocessing tokens, each with where it is written: the one place a regular
expression reads the source (the lexer of the source model, docs/compiler.md "The source model").

One pass over a file's text (linear in its size: a comment or a blank line is one match), the
same tokens as a C preprocessor makes: identifiers, numbers (pp-numbers), string and character
literals, punctuators; comments and line splices are whitespace, a newline ends a logical line
unless it is spliced.
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass

__all__ = ["Token", "lex", "lex_directives", "strip_comments"]

_LEX = re.compile(
    r"""\n
      | (?:[ \t\f\v\r]+|\\\r?\n|//[^\n\\]*(?:\\.[^\n\\]*)*
           |/\*[^*]*(?:\*+[^*/][^*]*)*(?:\*+/|\**\Z))+
      | [A-Za-z_][A-Za-z0-9_]*
      | \.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*
      | "[^"\\\n]*(?:\\.[^"\\\n]*)*"?
      | '[^'\\\n]*(?:\\.[^'\\\n]*)*'?
      | \#\#|\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|::|&&|\|\||[-+*/%&|^!=<>]=|[^\s]
      | .""",
    re.VERBOSE | re.DOTALL,
)
# (the last: a white space character of no other kind, \x85 or \xa0, which is skipped: every
# character is in one match, so each match's offset is the sum of the lengths before it). A
# comment's or a literal's inside is read by runs of the characters that cannot end it (the
# "unrolled" form: one step a run, not one alternation a character), the same matches.


@dataclass(slots=True)
class Token:
    """One preprocessing token. ``line``/``col`` (1-based) are where it is written in ``file``;
    ``space``: whitespace (or a comment) comes before it on its line; ``hide``: the macros
    whose expansion made it (they are not expanded again in it); ``site``: for a token an
    expansion made, where the outermost macro invocation is written (line, column, macro),
    else None."""

    kind: str  # id, num, str, chr, punct, nl (end of a logical line)
    text: str
    file: int
    line: int
    col: int
    space: bool = False
    hide: frozenset[str] = frozenset()
    site: tuple[int, int, str] | None = None


# A match's kind by its first character: "blank" is white space or a comment; a "/" (a
# comment or the operator), a "\\" (a line splice or the punctuator) and a "." (a number or
# the operator) are told apart by the character after it.
_KIND = {
    **{c: "id" for c in string.ascii_letters + "_"},
    **{c: "num" for c in string.digits},
    **{c: "blank" for c in " \t\f\v\r"},
    '"': "str",
    "'": "chr",
    "\n": "nl",
}


def lex(text: str, file: int) -> list[Token]:
    """The tokens of ``text`` (newline tokens end each logical line; the last line ends with one
    too). Unterminated literals and comments become tokens as far as they go: judging them is
    the compiler's job, with the position this keeps."""
    return _lex(text, file, True)[0]


def lex_directives(text: str, file: int) -> tuple[list[Token], list[tuple[int, int]]]:
    """The tokens of ``text`` without newline tokens, and where each directive line's tokens
    are (start, end: a logical line whose first token is ``#``): the preprocessor walks the
    text from one directive to the next, not line by line."""
    return _lex(text, file, False)


def _lex(text: str, file: int, newlines: bool) -> tuple[list[Token], list[tuple[int, int]]]:
    out: list[Token] = []
    directives: list[tuple[int, int]] = []
    append = out.append
    kind_of = _KIND.get
    line, start, space, at = 1, 0, False, 0  # ``at``: the offset of the match
    first = 0  # the index of the logical line's first token
    # each match's text, without a match object a token (``findall`` of a pattern without
    # groups); its kind from its first character
    for m in _LEX.findall(text):
        c = m[0]
        kind = kind_of(c, "punct")
        if kind == "punct" and len(m) > 1:
            if (c == "/" and m[1] in "/*") or c == "\\":
                kind = "blank"
            elif c == "." and m[1].isdigit():
                kind = "num"
        if kind == "blank":
            space = True
            breaks = m.count("\n")
            if breaks:
                line += breaks
                start = at + m.rfind("\n") + 1
            at += len(m)
        elif kind == "nl":
            if len(out) > first and out[first].text == "#":
                directives.append((first, len(out)))
            if newlines:
                append(Token("nl", "\n", file, line, at - start + 1))
            first = len(out)
            at += 1
            line, start, space = line + 1, at, False
        elif kind == "punct" and c.isspace():
            at += 1
        else:
            append(Token(kind, m, file, line, at - start + 1, space))
            at, space = at + len(m), False
    if len(out) > first and out[first].text == "#":
        directives.append((first, len(out)))
    if newlines and (not out or out[-1].kind != "nl"):
        out.append(Token("nl", "\n", file, line, len(text) - start + 1))
    return out, directives


_COMMENT_OR_STRING = re.compile(
    r"//[^\n]*"
    r"|/\*[^*]*(?:\*+[^*/][^*]*)*(?:\*+/|\**\Z)"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*["\n]?',
    re.DOTALL,
)
_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(m: re.Match[str]) -> str:
    text = m.group(0)
    return text if text[0] == '"' else _NOT_NEWLINE.sub(" ", text)


@functools.lru_cache(maxsize=256)
def strip_comments(text: str) -> str:
    """The text with comments blanked out (newlines kept), so offsets and positions survive;
    string literals are kept whole (a ``//`` inside one is no comment). Cached: every rewrite and
    scan of a compile asks for the same few texts."""
    return _COMMENT_OR_STRING.sub(_blank, text)
