"""The C preprocessor as DXC and Slang apply it to HLSL, owned here so that every token keeps its
origin (docs/compiler.md "The source model").

Object-like, function-like and variadic macros (``__VA_ARGS__``, GNU's ``, ## __VA_ARGS__``),
``#`` and ``##``, ``defined``, ``__LINE__``/``__FILE__``/``__COUNTER__``, ``#if`` arithmetic,
``#pragma once`` and include guards (a guarded file included again is not read again, so
cyclic includes under guards build as DXC builds them). What Slang handles itself passes
through as written: ``#pragma`` (but ``once``), ``#line``, ``#warning`` and unknown directives.

The cost is linear in the input: each file is lexed once; a guarded or ``#pragma once`` file
included again costs one look-up; the lines of an ``#if`` branch not taken are skipped by their
first token.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from oneshader.compiler.source.lexer import Token, lex_directives
from oneshader.compiler.source.scanner import include_named
from oneshader.diagnostics import Code

__all__ = ["Inclusion", "PreprocessorError", "Unit", "preprocess"]

# What Slang defines before any source (measured: the same for every target).
SLANG_PREDEFINED = (
    ("__SLANG__", "1"),
    ("__SLANG_COMPILER__", "1"),
    ("__HLSL__", "1"),
    ("__HLSL_VERSION", "2018"),
)
# Errors Slang gave before oneshader preprocessed keep Slang's codes.
_INCLUDE_NOT_FOUND = "E15300"
_ERROR_DIRECTIVE = "E15900"
_MAX_DEPTH = 100  # includes nested deeper are a cycle without guards (Python's stack)
# Tokens all macro expansions of one unit may make: a few kilobytes of macros can ask for
# billions (a "macro bomb"), and the build's own process reads sources with this model (the
# cluster's bundles, permutations). Real code stays far below: FidelityFX's heaviest pass, the
# most macro-heavy code measured, makes about 22,000.
MAX_EXPANDED_TOKENS = 1 << 20
_PASSED = frozenset({"pragma", "line", "warning"})  # handed to Slang as written


class PreprocessorError(Exception):
    """A positioned error: the file's path, line, column and what was expected."""

    def __init__(
        self, path: Path, line: int, col: int, message: str, code: str = Code.PREPROCESSOR
    ) -> None:
        super().__init__(message)
        self.path, self.line, self.col, self.message, self.code = path, line, col, message, code


@dataclass
class _Macro:
    params: tuple[str, ...] | None  # None: object-like
    variadic: bool
    body: list[Token]


@dataclass
class Inclusion:
    """One file as one ``#include`` (or the compile) brought it in: the tokens placed in it, in
    order (a macro's expansion placed where the invocation is written), and the files its
    lines include, by line."""

    path: Path
    file: int
    tokens: list[Token] = field(default_factory=list)
    children: list[tuple[int, Inclusion]] = field(default_factory=list)


@dataclass
class Unit:
    """A compile's source after preprocessing: the main file's inclusion (and so the tree of
    every inclusion), the files by id, each file's line count, and the files in the order
    first read."""

    main: Inclusion
    paths: list[Path]
    line_counts: list[int]

    def inclusions(self) -> Iterator[Inclusion]:
        """Every inclusion, each before the ones it makes (the order of the text)."""
        todo = [self.main]
        while todo:
            inc = todo.pop()
            yield inc
            todo.extend(child for _, child in reversed(inc.children))

    def digest(self) -> str:
        """Everything of this unit a compile depends on, as one digest: the files read, and
        each inclusion's tokens with their origins (diagnostics are placed from them). Two
        compiles of units with equal digests and equal options but the defines are alike:
        the defines reach nothing but the preprocessor."""
        h = hashlib.sha256()
        for path, lines in zip(self.paths, self.line_counts, strict=True):
            h.update(f"{path}\0{lines}\n".encode())
        for inc in self.inclusions():
            h.update(
                f"@{inc.file} {[(line, child.file) for line, child in inc.children]}\n".encode()
            )
            for t in inc.tokens:
                h.update(
                    f"{t.kind} {t.text!r} {t.file} {t.line} {t.col} {t.space} {t.site}\n".encode()
                )
        return h.hexdigest()


# Reads a file named by an #include: (path, the name as written, the including file and the
# name's line and column); returns its text or raises.
Loader = Callable[[Path, str, Path, int, int], str]


def preprocess(
    main: Path,
    text: str,
    include_dirs: Sequence[str],
    defines: Sequence[tuple[str, str]],
    load: Loader,
) -> Unit:
    """The unit of ``main`` (its ``text`` read already); ``defines`` as ``-D`` gives them
    (an empty value defines the name as 1, as DXC's ``-D NAME`` does)."""
    pp = _Preprocessor(include_dirs, load)
    for name, value in (*SLANG_PREDEFINED, *defines):
        pp.macros[name] = _Macro(None, False, lex_directives(value or "1", -1)[0])
    root = pp.run_file(main, text, 0)
    return Unit(root, pp.paths, pp.line_counts)


class _Preprocessor:
    def __init__(self, include_dirs: Sequence[str], load: Loader) -> None:
        self.include_dirs = tuple(include_dirs)
        self.load = load
        self.macros: dict[str, _Macro] = {}
        self.paths: list[Path] = []
        self.line_counts: list[int] = []
        # each file read: its id, its tokens and its directive lines (``lex_directives``)
        self.lexed: dict[Path, tuple[int, list[Token], list[tuple[int, int]]]] = {}
        self.once: set[Path] = set()
        self.guards: dict[Path, str | None] = {}  # the include guard of a file read whole
        self.counter = 0
        self.expanded = 0  # tokens made by macro expansion so far (MAX_EXPANDED_TOKENS)

    # -- files -------------------------------------------------------------------------------

    def run_file(self, path: Path, text: str, depth: int) -> Inclusion:
        lexed = self.lexed.get(path)
        if lexed is None:
            file = len(self.paths)
            self.paths.append(path)
            self.line_counts.append(text.count("\n") + 1)
            tokens, directives = lex_directives(text, file)
            lexed = self.lexed[path] = (file, tokens, directives)
            self.guards[path] = _guard_of(tokens, directives)
        inc = Inclusion(path, lexed[0])
        _FileRun(self, inc, lexed[1], lexed[2], depth).run()
        return inc

    def include(self, at: Inclusion, name: Token, written: str, depth: int) -> Inclusion | None:
        here = self.paths[at.file]
        found = self.resolve(here, written)
        if found is None:
            raise PreprocessorError(
                here,
                name.line,
                name.col,
                f"include file not found: failed to find include file '{written}' (relative to "
                "this file or in an include folder, -I)",
                _INCLUDE_NOT_FOUND,
            )
        guard = self.guards.get(found)
        if found in self.once or (guard is not None and guard in self.macros):
            return None
        if depth >= _MAX_DEPTH:
            raise PreprocessorError(
                here,
                name.line,
                name.col,
                f"'{written}' is included {_MAX_DEPTH} files deep: an include cycle without an "
                "include guard (#ifndef X / #define X) or #pragma once",
            )
        text = (
            "" if found in self.lexed else self.load(found, written, here, name.line, name.col + 1)
        )
        return self.run_file(found, text, depth + 1)

    def resolve(self, here: Path, written: str) -> Path | None:
        found = include_named(here, written, self.include_dirs)
        return found.resolve() if found is not None else None

    # -- macros ------------------------------------------------------------------------------

    def expand(self, tokens: list[Token], file: int) -> list[Token]:
        """``tokens`` with every macro expanded (rescanned, hide sets as C's preprocessor
        keeps them); ``file`` is the file the tokens are placed in."""
        macros = self.macros
        words = set(map(_TEXT, tokens))
        if words.isdisjoint(macros) and words.isdisjoint(_BUILTINS):
            return tokens[:]  # most runs of text: no name that may expand (a search at C's speed)
        # the tokens before the first that may expand are placed as they are: the stack holds
        # the rest
        first = next(
            (
                k
                for k, t in enumerate(tokens)
                if t.kind == "id" and (t.text in macros or t.text in _BUILTINS)
            ),
            len(tokens),
        )
        out: list[Token] = tokens[:first]
        stack = tokens[first:][::-1]
        while stack:
            t = stack.pop()
            if t.kind != "id":
                out.append(t)
                continue
            name = t.text
            macro = macros.get(name)
            if macro is None or name in t.hide:
                builtin = self.builtin(t, file) if macro is None and name in _BUILTINS else None
                out.append(builtin or t)
                continue
            site = t.site or (t.line, t.col, name)
            if macro.params is None:
                body = self.substitute(macro, [], t.hide | {name}, site, file)
                stack.extend(reversed(body))
                continue
            if not stack or stack[-1].kind != "punct" or stack[-1].text != "(":
                out.append(t)
                continue
            args, close = self.arguments(stack, t, file)
            hide = (t.hide & close.hide) | {name}
            params = len(macro.params)
            if params == 0 and args == [[]]:
                args = []
            if macro.variadic:
                if len(args) < params - 1:
                    raise self.error(
                        t, file, f"macro '{name}' takes at least {params - 1} arguments"
                    )
                while len(args) < params:
                    args.append([])
                if len(args) > params:
                    joined = args[params - 1]
                    for extra in args[params:]:
                        joined = [*joined, _copy(close, ",", "punct"), *extra]
                    args = [*args[: params - 1], joined]
            elif len(args) != params:
                raise self.error(
                    t, file, f"macro '{name}' takes {params} arguments, {len(args)} given"
                )
            body = self.substitute(macro, args, hide, site, file)
            stack.extend(reversed(body))
        return out

    def arguments(
        self, stack: list[Token], name: Token, file: int
    ) -> tuple[list[list[Token]], Token]:
        """The arguments of a function-like invocation whose ``(`` is on top of ``stack``
        (taken off it, with the closing ``)``)."""
        stack.pop()
        args: list[list[Token]] = [[]]
        depth = 0
        while stack:
            t = stack.pop()
            if t.kind == "punct":
                if t.text == "(":
                    depth += 1
                elif t.text == ")":
                    if depth == 0:
                        return args, t
                    depth -= 1
                elif t.text == "," and depth == 0:
                    args.append([])
                    continue
            args[-1].append(t)
        raise self.error(name, file, f"unterminated invocation of macro '{name.text}'")

    def substitute(
        self,
        macro: _Macro,
        args: list[list[Token]],
        hide: frozenset[str],
        site: tuple[int, int, str],
        file: int,
    ) -> list[Token]:
        params = {p: i for i, p in enumerate(macro.params or ())}
        expanded: dict[int, list[Token]] = {}
        body = macro.body
        out: list[Token] = []
        i = 0
        while i < len(body):
            b = body[i]
            pasted_next = i + 1 < len(body) and body[i + 1].text == "##"
            stringized = b.text == "#" and b.kind == "punct" and macro.params is not None
            if stringized and i + 1 < len(body) and body[i + 1].text in params:
                out.append(_copy(b, _stringized(args[params[body[i + 1].text]]), "str"))
                i += 2
                continue
            if b.text == "##" and b.kind == "punct" and i + 1 < len(body):
                rhs_tok = body[i + 1]
                rhs = args[params[rhs_tok.text]] if rhs_tok.text in params else [rhs_tok]
                if (
                    not rhs
                    and out
                    and out[-1].text == ","
                    and rhs_tok.text == "__VA_ARGS__"
                    and macro.variadic
                ):
                    out.pop()  # GNU: ", ## __VA_ARGS__" drops the comma when there are none
                elif rhs and out:
                    lhs = out.pop()
                    glued = lex_directives(lhs.text + rhs[0].text, lhs.file)[0]
                    for t in glued:
                        t.line, t.col, t.space, t.hide = lhs.line, lhs.col, lhs.space, lhs.hide
                    out.extend([*glued, *(_copy(t) for t in rhs[1:])])
                elif rhs:
                    out.extend(_copy(t) for t in rhs)
                i += 2
                continue
            if b.kind == "id" and b.text in params:
                index = params[b.text]
                if pasted_next:
                    piece = args[index]
                else:
                    if index not in expanded:
                        expanded[index] = self.expand([_copy(t) for t in args[index]], file)
                    piece = expanded[index]
                first = len(out)
                out.extend(_copy(t) for t in piece)
                if len(out) > first:
                    out[first].space = b.space
                i += 1
                continue
            out.append(_copy(b))
            i += 1
        self.expanded += len(out)
        if self.expanded > MAX_EXPANDED_TOKENS:
            raise PreprocessorError(
                self.paths[file],
                site[0],
                site[1],
                f"the expansion of '{site[2]}' makes more than {MAX_EXPANDED_TOKENS:,} tokens: "
                "a macro that doubles itself at every level? expected a bounded expansion",
            )
        for t in out:
            t.hide = t.hide | hide
            t.site = site
        if out:
            out[0].space = True
        return out

    def builtin(self, t: Token, file: int) -> Token | None:
        if t.text == "__LINE__":
            return _copy(t, str(t.site[0] if t.site else t.line), "num")
        if t.text == "__FILE__":
            return _copy(t, '"' + self.paths[file].as_posix() + '"', "str")
        if t.text == "__COUNTER__":
            self.counter += 1
            return _copy(t, str(self.counter - 1), "num")
        return None

    def error(self, t: Token, file: int, message: str) -> PreprocessorError:
        line, col = (t.site[0], t.site[1]) if t.site else (t.line, t.col)
        return PreprocessorError(self.paths[file], line, col, message)

    # -- #if ---------------------------------------------------------------------------------

    def condition(self, tokens: list[Token], directive: Token, file: int) -> bool:
        """Whether the ``#if``/``#elif`` expression ``tokens`` is true."""
        resolved: list[Token] = []
        i = 0
        while i < len(tokens):
            t = tokens[i]
            if t.kind == "id" and t.text == "defined":
                j = i + 1
                paren = j < len(tokens) and tokens[j].text == "("
                j += paren
                if j >= len(tokens) or tokens[j].kind != "id":
                    raise self.error(t, file, "'defined' expects a macro name")
                value = tokens[j].text in self.macros or tokens[j].text in _BUILTINS
                if paren:
                    j += 1
                    if j >= len(tokens) or tokens[j].text != ")":
                        raise self.error(t, file, "'defined(' expects a closing ')'")
                resolved.append(_copy(t, "1" if value else "0", "num"))
                i = j + 1
                continue
            resolved.append(t)
            i += 1
        expanded = self.expand(resolved, file)
        if not expanded:
            raise self.error(directive, file, f"#{directive.text} expects an expression")
        return _Expression(expanded, lambda t, m: self.error(t, file, m), directive).value() != 0


_BUILTINS = frozenset({"__LINE__", "__FILE__", "__COUNTER__"})
_TEXT = operator.attrgetter("text")


def _copy(t: Token, text: str | None = None, kind: str | None = None) -> Token:
    return Token(
        kind or t.kind,
        t.text if text is None else text,
        t.file,
        t.line,
        t.col,
        t.space,
        t.hide,
        t.site,
    )


def _stringized(tokens: list[Token]) -> str:
    parts = []
    for i, t in enumerate(tokens):
        text = (
            t.text.replace("\\", "\\\\").replace('"', '\\"') if t.kind in ("str", "chr") else t.text
        )
        parts.append((" " if i and t.space else "") + text)
    return '"' + "".join(parts) + '"'


def _guard_of(tokens: list[Token], directives: list[tuple[int, int]]) -> str | None:
    """The macro X of a file that is all ``#ifndef X`` / ``#define X`` ... ``#endif`` (or
    ``#if !defined(X)``), whose second inclusion is then nothing: the first line, the last
    (nothing after it) and at least three lines."""
    if not directives or directives[0][0] != 0 or len(tokens) < 2:
        return None  # the first line, looked at first: most files begin otherwise
    if tokens[1].text not in ("ifndef", "if"):
        return None
    if len(directives) < 3 and len(tokens) == sum(b - a for a, b in directives):
        return None  # (fewer than three lines: two directives and no text)
    first = [t.text for t in tokens[: directives[0][1]]]
    if first[:2] == ["#", "ifndef"] and len(first) == 3:
        name = first[2]
    elif first[:4] == ["#", "if", "!", "defined"] and len(first) in (5, 7):
        name = first[-2] if len(first) == 7 else first[4]
    else:
        return None
    depth = 0
    for a, b in directives:
        if a + 1 >= b:
            continue
        word = tokens[a + 1].text
        if word in ("if", "ifdef", "ifndef"):
            depth += 1
        elif word == "endif":
            depth -= 1
            if depth == 0:
                return name if b == len(tokens) else None
        elif word in ("else", "elif") and depth == 1:
            return None
    return None


class _FileRun:
    """The lines of one inclusion: directives obeyed, text lines expanded in runs (a macro's
    arguments may span lines), the branches not taken skipped."""

    def __init__(
        self,
        pp: _Preprocessor,
        inc: Inclusion,
        tokens: list[Token],
        directives: list[tuple[int, int]],
        depth: int,
    ):
        self.pp, self.inc, self.tokens, self.depth = pp, inc, tokens, depth
        self.directives = directives
        # each open #if: (active now, a branch was taken, the enclosing is active, its token)
        self.conds: list[tuple[bool, bool, bool, Token]] = []
        self.run_tokens: list[Token] = []

    @property
    def active(self) -> bool:
        return not self.conds or self.conds[-1][0]

    def run(self) -> None:
        """The text from one directive line to the next (every line of it, as one run) where
        the branch is taken, and each directive obeyed."""
        tokens = self.tokens
        a = 0  # the first token after the last directive line
        for start, end in self.directives:
            if a < start and (not self.conds or self.conds[-1][0]):
                self.run_tokens.extend(tokens[a:start])
            self.directive(tokens[start + 1 : end], tokens[start])
            a = end
        if a < len(tokens) and (not self.conds or self.conds[-1][0]):
            self.run_tokens.extend(tokens[a:])
        self.flush()
        if self.conds:
            t = self.conds[-1][3]
            raise PreprocessorError(
                self.pp.paths[self.inc.file], t.line, t.col, f"#{t.text} without #endif"
            )

    def flush(self) -> None:
        if self.run_tokens:
            self.inc.tokens.extend(self.pp.expand(self.run_tokens, self.inc.file))
            self.run_tokens = []

    def fail(self, t: Token, message: str) -> PreprocessorError:
        return PreprocessorError(self.pp.paths[self.inc.file], t.line, t.col, message)

    def directive(self, rest: list[Token], hash_: Token) -> None:
        if not rest:
            return  # the null directive
        word, args = rest[0], rest[1:]
        name = word.text
        if name in ("if", "ifdef", "ifndef"):
            if not self.active:
                self.conds.append((False, True, False, word))
            else:
                self.flush()
                value = self.test(name, args, word)
                self.conds.append((value, value, True, word))
            return
        if name in ("elif", "else", "endif"):
            if not self.conds:
                raise self.fail(word, f"#{name} without #if")
            _, taken, outer, opened = self.conds[-1]
            if name == "endif":
                self.conds.pop()
            elif opened.text == "else":
                raise self.fail(word, f"#{name} after #else")
            elif name == "else":
                self.conds[-1] = (outer and not taken, True, outer, word)
            else:
                value = outer and not taken and self.test("if", args, word)
                self.conds[-1] = (value, taken or value, outer, opened)
            return
        if not self.active:
            return
        self.flush()
        if name == "define":
            self.define(args, word)
        elif name == "undef":
            if not args or args[0].kind != "id":
                raise self.fail(word, "#undef expects a macro name")
            self.pp.macros.pop(args[0].text, None)
        elif name == "include":
            self.include(args, word)
        elif name == "error":
            message = "".join((" " if i and t.space else "") + t.text for i, t in enumerate(args))
            error = self.fail(word, f"preprocessor error: #error: {message}")
            error.code = _ERROR_DIRECTIVE
            raise error
        elif name == "pragma" and args and args[0].text == "once":
            self.pp.once.add(self.pp.paths[self.inc.file])
        elif name in _PASSED or word.kind == "id":
            # handed to Slang as written (one token: the directive's text on its line)
            text = "#" + "".join((" " if t.space else "") + t.text for t in rest)
            self.inc.tokens.append(
                Token("raw", text, self.inc.file, hash_.line, hash_.col, hash_.space)
            )

    def test(self, name: str, args: list[Token], word: Token) -> bool:
        if name == "if":
            return self.pp.condition(args, word, self.inc.file)
        if not args or args[0].kind != "id":
            raise self.fail(word, f"#{name} expects a macro name")
        defined = args[0].text in self.pp.macros or args[0].text in _BUILTINS
        return defined if name == "ifdef" else not defined

    def define(self, args: list[Token], word: Token) -> None:
        if not args or args[0].kind != "id":
            raise self.fail(word, "#define expects a macro name")
        name = args[0]
        if name.text == "defined":
            raise self.fail(name, "'defined' cannot be a macro name")
        rest = args[1:]
        if rest and rest[0].text == "(" and not rest[0].space:
            params: list[str] = []
            variadic = False
            i = 1
            while i < len(rest) and rest[i].text != ")":
                t = rest[i]
                if t.text == "...":
                    variadic = True
                    params.append("__VA_ARGS__")
                elif t.kind == "id":
                    params.append(t.text)
                    if i + 1 < len(rest) and rest[i + 1].text == "...":  # GNU named variadic
                        variadic = True
                        i += 1
                elif t.text != ",":
                    raise self.fail(t, f"'{t.text}' in the parameter list of macro '{name.text}'")
                i += 1
            if i >= len(rest):
                raise self.fail(name, f"the parameter list of macro '{name.text}' is not closed")
            self.pp.macros[name.text] = _Macro(tuple(params), variadic, rest[i + 1 :])
        else:
            self.pp.macros[name.text] = _Macro(None, False, rest)

    def include(self, args: list[Token], word: Token) -> None:
        if args and args[0].kind != "str" and args[0].text != "<":
            args = self.pp.expand(args, self.inc.file)
        if args and args[0].kind == "str" and len(args[0].text) >= 2:
            written, at = args[0].text[1:-1], args[0]
        elif args and args[0].text == "<" and any(t.text == ">" for t in args):
            end = next(i for i, t in enumerate(args) if t.text == ">")
            written = "".join(
                (" " if i > 1 and t.space else "") + t.text for i, t in enumerate(args[1:end], 1)
            )
            at = args[0]
        else:
            raise self.fail(word, '#include expects "file" or <file>')
        child = self.pp.include(self.inc, at, written, self.depth)
        if child is not None:
            self.inc.children.append((word.line, child))


_BINARY = {
    "*": 10, "/": 10, "%": 10, "+": 9, "-": 9, "<<": 8, ">>": 8, "<": 7, ">": 7, "<=": 7,
    ">=": 7, "==": 6, "!=": 6, "&": 5, "^": 4, "|": 3, "&&": 2, "||": 1,
}  # fmt: skip


class _Expression:
    """An ``#if`` expression's value (C's integer arithmetic; a name left after expansion
    is 0, ``true`` 1)."""

    def __init__(
        self,
        tokens: list[Token],
        error: Callable[[Token, str], PreprocessorError],
        directive: Token,
    ) -> None:
        self.tokens, self.error, self.i, self.directive = tokens, error, 0, directive

    def value(self) -> int:
        v = self.conditional()
        if self.i < len(self.tokens):
            t = self.tokens[self.i]
            raise self.error(t, f"unexpected '{t.text}' in the #if expression")
        return v

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def conditional(self) -> int:
        v = self.binary(1)
        t = self.peek()
        if t is not None and t.text == "?":
            self.i += 1
            a = self.conditional()
            t = self.peek()
            if t is None or t.text != ":":
                raise self.error(t or self.tokens[-1], "expected ':' in the #if expression")
            self.i += 1
            b = self.conditional()
            return a if v else b
        return v

    def binary(self, least: int) -> int:
        v = self.unary()
        while True:
            t = self.peek()
            prec = _BINARY.get(t.text, 0) if t is not None and t.kind == "punct" else 0
            if t is None or prec < least:
                return v
            self.i += 1
            if t.text == "&&":
                rhs = self.binary(prec + 1)
                v = int(bool(v) and bool(rhs))
            elif t.text == "||":
                rhs = self.binary(prec + 1)
                v = int(bool(v) or bool(rhs))
            else:
                v = self.apply(t, v, self.binary(prec + 1))

    def apply(self, op: Token, a: int, b: int) -> int:
        if op.text in ("/", "%") and b == 0:
            raise self.error(op, "division by zero in the #if expression")
        results: Mapping[str, Callable[[], int]] = {
            "*": lambda: a * b,
            "/": lambda: int(a / b),
            "%": lambda: a - int(a / b) * b,
            "+": lambda: a + b,
            "-": lambda: a - b,
            "<<": lambda: a << b if 0 <= b < 64 else 0,
            ">>": lambda: a >> b if 0 <= b < 64 else 0,
            "<": lambda: int(a < b),
            ">": lambda: int(a > b),
            "<=": lambda: int(a <= b),
            ">=": lambda: int(a >= b),
            "==": lambda: int(a == b),
            "!=": lambda: int(a != b),
            "&": lambda: a & b,
            "^": lambda: a ^ b,
            "|": lambda: a | b,
        }
        return results[op.text]()

    def unary(self) -> int:
        t = self.peek()
        if t is None:
            raise self.error(
                self.tokens[-1] if self.tokens else self.directive, "the #if expression ends early"
            )
        self.i += 1
        if t.kind == "punct" and t.text in ("+", "-", "~", "!"):
            v = self.unary()
            return {"+": v, "-": -v, "~": ~v, "!": int(not v)}[t.text]
        if t.kind == "punct" and t.text == "(":
            v = self.conditional()
            close = self.peek()
            if close is None or close.text != ")":
                raise self.error(close or t, "expected ')' in the #if expression")
            self.i += 1
            return v
        if t.kind == "num":
            return _integer(t, self.error)
        if t.kind == "chr" and len(t.text) >= 3:
            body = t.text[1:-1]
            return ord(body[-1]) if body.startswith("\\") else ord(body[0])
        if t.kind == "id":
            return 1 if t.text == "true" else 0
        raise self.error(t, f"unexpected '{t.text}' in the #if expression")


def _integer(t: Token, error: Callable[[Token, str], PreprocessorError]) -> int:
    text = t.text.rstrip("uUlL")
    try:
        if text[:2] in ("0x", "0X"):
            return int(text[2:], 16)
        if text[:2] in ("0b", "0B"):
            return int(text[2:], 2)
        if len(text) > 1 and text[0] == "0":
            return int(text, 8)
        return int(text)
    except ValueError:
        raise error(
            t, f"'{t.text}' is not an integer (an #if expression computes integers)"
        ) from None
