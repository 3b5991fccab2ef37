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
from dataclasses import dataclass

__all__ = ["Token", "lex", "strip_comments"]

_LEX = re.compile(
    r"""(\n)
      | ((?:[ \t\f\v\r]+|\\\r?\n|//(?:[^\n\\]|\\.|\\\n)*|/\*.*?(?:\*/|\Z))+)
      | ([A-Za-z_][A-Za-z0-9_]*)
      | (\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*)
      | ("(?:\\.|[^"\\\n])*"?)
      | ('(?:\\.|[^'\\\n])*'?)
      | (\#\#|\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|::|&&|\|\||[-+*/%&|^!=<>]=|[^\s])""",
    re.VERBOSE | re.DOTALL,
)
# The kind of each group of _LEX (1: a newline, 2: whitespace and comments).
_KINDS = ("", "nl", "", "id", "num", "str", "chr", "punct")


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


def lex(text: str, file: int) -> list[Token]:
    """The tokens of ``text`` (newline tokens end each logical line; the last line ends with one
    too). Unterminated literals and comments become tokens as far as they go: judging them is
    the compiler's job, with the position this keeps."""
    out: list[Token] = []
    append = out.append
    line, start, space = 1, 0, False
    for m in _LEX.finditer(text):
        group = m.lastindex or 0
        if group == 1:
            append(Token("nl", "\n", file, line, m.start() - start + 1))
            line, start, space = line + 1, m.end(), False
        elif group == 2:
            space = True
            value = m.group()
            newlines = value.count("\n")
            if newlines:
                line += newlines
                start = m.start() + value.rfind("\n") + 1
        else:
            begin = m.start()
            append(Token(_KINDS[group], m.group(), file, line, begin - start + 1, space))
            space = False
    if not out or out[-1].kind != "nl":
        out.append(Token("nl", "\n", file, line, len(text) - start + 1))
    return out


_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*["\n]?', re.DOTALL)
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
