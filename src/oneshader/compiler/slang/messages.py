"""Diagnostics: Slang's machine-readable ones turned into oneshader's.

With ``-enable-machine-readable-diagnostics`` Slang prints one tab-separated line per message:
code, severity, file, line, column, end line, end column, text. A ``span`` line carries the detail
of the message before it and is folded into it; ``note`` lines stay notes. Slang repeats whole
groups (once per pass); equal diagnostics are kept once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import takewhile

from oneshader.compiler.api import TARGET_NAMES
from oneshader.compiler.source.lexer import Token, lex
from oneshader.diagnostics import Diagnostic, Severity, source_excerpt
from oneshader.reflection.model import Target

_SEVERITIES = {
    "error": Severity.ERROR,
    "fatal": Severity.ERROR,
    "internal": Severity.ERROR,
    "internal error": Severity.ERROR,  # E99999, an unimplemented case of a back end
    "fatal error": Severity.ERROR,
    "warning": Severity.WARNING,
    "note": Severity.NOTE,
    "info": Severity.NOTE,
}

# Warnings oneshader answers itself (binding overlaps are checked per target with its own rule;
# a register without vk::binding is DXC's default mapping; Metal's renaming of an entry point
# called main to main_0 is documented and expected by the cross-check; a loose global uniform is
# DXC's $Globals, which oneshader reflects as such). Requests ask Slang not to write them
# (``-warnings-disable``); they are dropped here all the same.
SUPPRESSED = frozenset({"E39001", "E39019", "E39029", "E40100"})


# One message: code, kind, file, line, column, end line, end column, text. The file comes
# first and may hold tabs and newlines (a user's file name may): it ends where the four
# numbers begin.
_RECORD = re.compile(
    r"([^\t\n]*)\t([a-z]+(?: [a-z]+)?)\t(.*?)\t(-?\d+)\t(-?\d+)\t-?\d+\t-?\d+\t([^\n]*)", re.DOTALL
)
_RECORD_START = re.compile(r"[^\t\n]*\t[a-z]+(?: [a-z]+)?\t")


# A path of this machine inside a message's text (Slang names files by where it read them):
# given back as the file's name for users, as the message's file is.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~/])(?:/|[A-Za-z]:[\\/])[\w.+-]+(?:[\\/][\w.+-]+)+")


def _records(output: str) -> Iterator[tuple[str, ...]]:
    """The messages of Slang's output; a line that does not complete a message yet (a file
    name with a newline) is joined with the next."""
    pending = ""
    for raw in output.split("\n"):
        if pending and _RECORD_START.match(raw) and not _RECORD.fullmatch(pending):
            pending = ""  # an incomplete line before a new message: not a message
        pending = f"{pending}\n{raw}" if pending else raw
        m = _RECORD.fullmatch(pending)
        if m:
            yield m.groups()
            pending = ""
        elif not _RECORD_START.match(pending):
            pending = ""  # a stray line (a message's continuation): skipped, as ever


def parse(
    output: str,
    name_of: Callable[[str], str],
    text_of: Callable[[str], str | None],
    origin_of: Callable[[str, int, int], tuple[int, int]] | None = None,
) -> list[Diagnostic]:
    """Diagnostics from Slang's output; ``name_of`` maps Slang's path to the name users see,
    ``text_of`` gives a file's text for the excerpt (None when unknown), ``origin_of`` where a
    position of the text Slang was given is written (the source map)."""
    out: list[Diagnostic] = []
    seen: set[tuple[str, int, int, str, str]] = set()
    inserted: set[int] = set()
    split: dict[str, list[str]] = {}  # each file's lines
    suppressed_group = False
    for record in _records(output):
        code, kind, path, line_s, col_s, message = record
        message = message.strip()
        if kind == "span":
            if out and not suppressed_group and message and out[-1].code == code:
                prev = out.pop()
                if message.lower().startswith(prev.message.lower()):
                    detail = message  # the span restates the title with the detail
                else:
                    detail = f"{prev.message}: {message}"
                out.append(replace(prev, message=detail))
            continue
        severity = _SEVERITIES.get(kind)
        if severity is None:
            continue
        if severity is not Severity.NOTE:
            suppressed_group = code in SUPPRESSED and severity is Severity.WARNING
        if suppressed_group:
            continue
        # (placed only once kept: most of Slang's messages are warnings oneshader answers)
        line, col = int(line_s), int(col_s)
        if line < 1:  # past the 32-bit line counter (#line 4294967295): unknown, not -1
            line, col = 0, 0
        if origin_of is not None and path and line:
            line, col = origin_of(path, line, col)
        file = name_of(path)
        message = _ABSOLUTE_PATH.sub(lambda m: name_of(m.group(0)), message)
        text = text_of(path) if path and line else None
        excerpt = source_excerpt(text, line, col) if text else ""
        out.append(Diagnostic(file, line, col, severity, message, code, excerpt))
        if text is not None and text not in split:  # once a file, not once a message
            split[text] = text.split("\n")
        lines = split[text] if text is not None else []
        if 0 < line <= len(lines) and col > len(lines[line - 1]) + 1:
            inserted.add(len(out) - 1)
    # The same message at a column the user's line does not have (inside a declaration a
    # rewrite appended, a companion counter) is the user's declaration's message again.
    in_line = {(d.file, d.line, d.code, d.message) for i, d in enumerate(out) if i not in inserted}
    result = []
    for i, d in enumerate(out):
        key = (d.file, d.line, d.column, d.code, d.message)
        if key in seen or (i in inserted and key[:2] + key[3:] in in_line):
            continue
        seen.add(key)
        result.append(d)
    return result


_UNAVAILABLE = re.compile(
    r"entrypoint '(?P<entry>[^']*)' uses features that are not available in '(?P<stage>\w+)' stage"
)
_USE = re.compile(r"see using of '(?P<name>[^']+)'")


# Slang's internal names of constructs its notes name, as HLSL writes them.
AS_WRITTEN = {"__ShapeBuffer": "Buffer<T>/RWBuffer<T>"}


def unavailable_at_uses(
    diags: Sequence[Diagnostic], user_files: Collection[str], hints: Mapping[str, str]
) -> list[Diagnostic]:
    """The errors of ``diags`` with each E36107 ("unavailable features in entry point", at the
    entry point's name, naming nothing) replaced by one error per construct Slang's notes say
    the entry point uses (``see using of 'clip'``), at the use in the user's file, with the
    construct's hint from ``hints`` where there is one. An E36107 whose notes point at no user
    file stays as it is."""
    out: list[Diagnostic] = []
    for i, d in enumerate(diags):
        if not d.is_error:
            continue
        if d.code != "E36107":
            out.append(d)
            continue
        notes = list(takewhile(lambda n: n.severity is Severity.NOTE, diags[i + 1 :]))
        m = _UNAVAILABLE.search(d.message)
        stage = f"{m.group('stage')} entry point '{m.group('entry')}'" if m else "entry point"
        uses = [
            (n, u.group("name"))
            for n in notes
            if n.file in user_files and (u := _USE.search(n.message))
        ]
        if not uses:
            out.append(d)
            continue
        for note, name in uses:
            hint = hints.get(name, "rewrite it without this construct")
            construct = AS_WRITTEN.get(name, name)
            message = (
                f"'{construct}' (used by {stage}) cannot be expressed for this target (Slang: "
                f"unavailable feature); {hint}, or build without this target"
            )
            out.append(replace(note, severity=Severity.ERROR, code="E36107", message=message))
    return out


def explain(d: Diagnostic, text: str | None = None) -> Diagnostic:
    """Slang's errors with, where the cause is known, what to write instead (name_targets
    names the target); ``text`` is the file's, to look at what precedes the error."""
    message = d.message
    if d.code == "E36107" and "cannot be expressed" not in message:
        message += " (a feature of this entry point cannot be expressed for this target)"
    elif d.code == "E55202":
        message += " (the target has no such built-in value; build without this target)"
    elif d.code == "E30019":
        types = _MISMATCH.search(message)
        expected, got = (types.group(1), types.group(2)) if types else ("", "")
        opened = _open_return(text, d.line, d.column) if text else None
        if expected == "void" and opened is not None:
            line, col = opened
            return replace(
                d,
                line=line,
                column=col,
                message=f"expected ';' after 'return': without it the next statement is read "
                f"as the value returned from a function returning void ({message})",
                excerpt=source_excerpt(text, line, col) if text else d.excerpt,
            )
        if _components(got) > _components(expected) > 0:
            message += (
                "; DXC truncates implicitly, Slang does not: make the conversion explicit "
                "(for example (float3)mul(m, v) or mul((float3x3)m, v.xyz))"
            )
    elif d.code == "E20001" and message.endswith("expected ';'") and text:
        after = _token_before(text, d.line, d.column)
        if after is not None and after[1] < d.line:  # the ';' is missing where the line ends
            line, col = after[1], after[2] + len(after[0])
            excerpt = source_excerpt(text, line, col)
            return replace(d, line=line, column=col, message="expected ';'", excerpt=excerpt)
    return replace(d, message=message)


_MISMATCH = re.compile(r"expected an expression of type '([^']*)', got '([^']*)'")
_VECTOR = re.compile(r"vector<\w+,\s*(\d+)>$")
_MATRIX = re.compile(r"matrix<\w+,\s*(\d+),\s*(\d+)>$")
_SCALARS = frozenset(
    {"float", "int", "uint", "bool", "half", "double", "int64_t", "uint64_t", "int16_t"}
)


def _components(type_name: str) -> int:
    """Scalars in a Slang vector/matrix/scalar type name (0 for any other type)."""
    if m := _VECTOR.match(type_name):
        return int(m.group(1))
    if m := _MATRIX.match(type_name):
        return int(m.group(1)) * int(m.group(2))
    return 1 if type_name in _SCALARS else 0


def _open_return(text: str, line: int, col: int) -> tuple[int, int] | None:
    """Where a ``return`` ends (line, column just after it) whose statement runs on, without a
    ';', to 1-based ``line``/``col`` across a line end: the ';' after it is missing."""
    last = _last_before(text, line, col, lambda t: t.text in (";", "{", "}", "return"))
    if last is None or last.text != "return" or last.line >= line:
        return None
    return last.line, last.col + len(last.text)


def _token_before(text: str, line: int, col: int) -> tuple[str, int, int] | None:
    """The token before 1-based ``line``/``col`` of ``text`` (comments skipped): (token, line,
    column), None at the start of the file or outside it."""
    last = _last_before(text, line, col, lambda t: True)
    return None if last is None else (last.text, last.line, last.col)


def _last_before(text: str, line: int, col: int, wanted: Callable[[Token], bool]) -> Token | None:
    """The last token of ``text`` (as the source model's lexer reads it) that starts before
    1-based ``line``/``col`` and is ``wanted``; None when there is none or the position is
    outside the text."""
    if not 1 <= line <= text.count("\n") + 1:
        return None
    last = None
    for t in lex(text, 0):
        if (t.line, t.col) >= (line, col):
            break
        if t.kind != "nl" and wanted(t):
            last = t
    return last


def dedupe(diags: Sequence[Diagnostic]) -> list[Diagnostic]:
    """Each message once; a message without a position is dropped when Slang also gave it with
    one."""
    positioned = {(d.file, d.code, d.message) for d in diags if d.line}
    seen: set[tuple[str, int, int, str]] = set()
    out = []
    for d in diags:
        key = (d.file, d.line, d.column, d.message)
        if key in seen or (not d.line and (d.file, d.code, d.message) in positioned):
            continue
        seen.add(key)
        out.append(d)
    return out


_TARGET_SPECIFIC = frozenset({"E36107", "E55202", "E99997", "E00101"})


def name_targets(per_target: dict[Target, list[Diagnostic]]) -> list[Diagnostic]:
    """Slang's errors in target order; one that not every target gave (or that is about the
    target by nature) starts with the target's name, as oneshader's own target errors do."""
    every = [{(d.file, d.line, d.code) for d in errs} for errs in per_target.values()]
    common = set.intersection(*every) if every else set()
    out = []
    for target, errs in per_target.items():
        name = TARGET_NAMES[target]
        for d in errs:
            specific = (d.file, d.line, d.code) not in common or d.code in _TARGET_SPECIFIC
            if specific and not d.message.startswith(f"{name}:"):
                d = replace(d, message=f"{name}: {d.message}")
            out.append(d)
    return out


_UNSUPPORTED_SEMANTIC = re.compile(r"system value semantic '(\w+)' is not supported")


def unsupported_semantic(message: str) -> str | None:
    """The semantic Slang's "system value semantic not supported" (E55202) names, or None."""
    m = _UNSUPPORTED_SEMANTIC.search(message)
    return m.group(1) if m else None


def names_back(message: str, back: Mapping[str, str]) -> str:
    """``message`` with each whole word of ``back``'s keys as its value (the names Slang was
    given for a user's names, back)."""
    if not back:
        return message
    words = re.compile(r"\b(" + "|".join(re.escape(n) for n in back) + r")\b")
    return words.sub(lambda m: back[m.group(1)], message)
