"""The shader's files as read: the main file and its includes, their scans, names and positions.

Every later step asks this one place for a declaration, a struct, a function or the text of a
file, and builds its positioned errors here, so a message names a file as the user wrote it
(``source_name`` and paths relative to it, never a path of the build machine).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Collection, Hashable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from oneshader.compiler.api import InputFile
from oneshader.compiler.source import rewrite
from oneshader.compiler.source.dxc_syntax import dxc_declarations
from oneshader.compiler.source.kinds import RTYPES
from oneshader.compiler.source.lexer import Token
from oneshader.compiler.source.preprocess import Inclusion, PreprocessorError, Unit, preprocess
from oneshader.compiler.source.query import (
    Stream,
    file_stream,
    lexed_from,
    template_argument,
    words_of,
)
from oneshader.compiler.source.scanner import (
    Declaration,
    Field,
    SourceFile,
    StructDef,
    include_named,
    scan,
)
from oneshader.compiler.source.sourcemap import Rendered, render, slang_text
from oneshader.diagnostics import Code, Diagnostic, Severity, UserError, source_excerpt
from oneshader.fsutil import read_regular
from oneshader.reflection.model import (
    COUNTED_TYPES,
    MEASURED_TYPES,
    SUBPASS_INPUT_TYPES,
    ResourceTypeKind,
)

UNREADABLE = Code.UNREADABLE_SOURCE  # not UTF-8 text of a regular file
ABSOLUTE_INCLUDE = Code.ABSOLUTE_INCLUDE


def not_utf8(name: str, data: bytes, err: UnicodeDecodeError) -> UserError:
    """The error for a file that is not UTF-8, at the first bad byte (its line and column)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return UserError.at(name, 1, 1, "the file is UTF-16: save it as UTF-8", UNREADABLE)
    start = data.rfind(b"\n", 0, err.start) + 1
    line = data.count(b"\n", 0, err.start) + 1
    col = len(data[start : err.start].decode("utf-8", "replace")) + 1
    message = f"not UTF-8: byte 0x{data[err.start]:02x} ({err.reason}); save the file as UTF-8"
    return UserError.at(name, line, col, message, UNREADABLE)


_INTERLOCKED = frozenset(
    f"Interlocked{op}"
    for op in ("CompareExchange", "CompareStore", "Exchange", "Add", "And", "Or", "Xor")
) | {"InterlockedMin", "InterlockedMax"}
_COUNTERS = frozenset({"IncrementCounter", "DecrementCounter"})
_BOOLS = frozenset({"bool", "bool1", "bool2", "bool3", "bool4"})
_DISTANCES = ("SV_CLIPDISTANCE", "SV_CULLDISTANCE")
_UNSET = object()


@dataclass(frozen=True)
class Call:
    """A call found in a file as compiled: ``token`` is where it is reported (its name, or for
    a counter, the buffer's), ``name`` the function or method, ``obj`` the object a method is
    called on (a counter's buffer), ``arg`` the first argument's leading word ("" for none)."""

    path: Path
    token: Token
    name: str
    obj: str | None
    arg: str = ""


def _word(t: Token) -> str:
    """The leading word characters of a token (what ``\\w*`` takes there)."""
    words = words_of(t.text) if t.kind in ("id", "num") else []
    return words[0] if words and t.text.startswith(words[0]) else ""


class SourceSet:
    def __init__(
        self,
        path: str,
        name: str,
        include_dirs: tuple[str, ...],
        defines: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.path = Path(path).resolve()
        self.named = Path(path).absolute()  # as given: a link is a name of its own
        self.name = name
        self.include_dirs = include_dirs
        self.defines = defines
        self.written: dict[Path, str] = {}  # each file as read (excerpts, doc comments)
        # each file as Slang compiles it (the source model: docs/compiler.md): its first
        # inclusion preprocessed, lines and unexpanded columns kept; every query reads these
        self.texts: dict[Path, str] = {}
        self.maps: dict[Path, Rendered] = {}
        self.unit: Unit | None = None
        self._first: dict[Path, Inclusion] = {}
        self._by_name: dict[str, Path] = {}
        self.sources: dict[Path, SourceFile] = {}
        self.inputs: list[InputFile] = []
        self._shown: dict[str, str] = {}
        # the main file's path, resolved already, resolves to itself (``resolved``)
        self._resolved: dict[str, Path] = {str(self.path): self.path}
        # what is derived from the texts, computed once: every stage asks again (the texts are
        # read once, by ``read``, which empties it)
        self._derived: dict[Hashable, Any] = {}

    def _once(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        found = self._derived.get(key, _UNSET)  # (one look-up: a key's hash is not kept)
        if found is _UNSET:
            found = self._derived[key] = compute()
        return found

    def derived(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """What a later stage derives from the texts alone (``key`` names it, with whatever
        else it depends on), computed once per read."""
        return self._once(key, compute)

    # -- names and positions -------------------------------------------------------------------

    def display(self, slang_path: str) -> str:
        """The name users see for a path Slang or the scanner gives (asked once per declaration:
        remembered, since resolving a path costs system calls)."""
        shown = self._shown.get(slang_path)
        if shown is None:
            shown = self._shown[slang_path] = self._display(slang_path)
        return shown

    def resolved(self, file: str) -> Path:
        """``Path(file).resolve()``, remembered: every step asks it of the files declarations
        name, and resolving a path costs system calls (OSError as ``resolve`` raises it)."""
        found = self._resolved.get(file)
        if found is None:
            found = self._resolved[file] = Path(file).resolve()
        return found

    def _display(self, slang_path: str) -> str:
        if not slang_path:
            return self.name
        try:
            resolved = self.resolved(slang_path)
        except OSError:
            return Path(slang_path).name
        if resolved == self.path:
            return self.name
        try:
            rel = resolved.relative_to(self.path.parent)
        except ValueError:
            for d in self.include_dirs:
                try:
                    return resolved.relative_to(Path(d).resolve()).as_posix()
                except ValueError:
                    continue
            if resolved not in self.written and not resolved.is_file():
                return Path(slang_path).name  # Slang's own module (hlsl.meta.slang): its name
            return resolved.as_posix()  # outside the project: its full name, never a look-alike
        base = Path(self.name).parent
        return (base / rel).as_posix() if base.as_posix() != "." else rel.as_posix()

    def text_of(self, slang_path: str) -> str | None:
        """The text as written of a file Slang names (for excerpts)."""
        try:
            return self.written.get(self.resolved(slang_path))
        except OSError:
            return None

    def origin_of(self, slang_path: str, line: int, col: int) -> tuple[int, int]:
        """Where a position of the text Slang was given is written (``Rendered.origin``)."""
        try:
            rendered = self.maps.get(self.resolved(slang_path)) if slang_path else None
        except OSError:
            rendered = None
        return rendered.origin(line, col) if rendered is not None else (line, col)

    def displayed_text(self, file: str) -> str | None:
        """The text as written of the file diagnostics name ``file`` (None for a file not
        read)."""
        path = self._displayed_path(file)
        return self.written.get(path) if path is not None else None

    def _displayed_path(self, file: str) -> Path | None:
        if len(self._by_name) != len(self.written):
            self._by_name = {self.display(str(p)): p for p in self.written}
        return self._by_name.get(file)

    def error(self, file: str, line: int, col: int, message: str, code: str = "") -> Diagnostic:
        """An error at a position of a file's text (``texts``): shown where it is written."""
        path = self._displayed_path(file)
        if path is not None and path in self.maps:
            line, col = self.maps[path].origin(line, col)
        text = self.displayed_text(file)
        excerpt = source_excerpt(text, line, col) if text and line else ""
        return Diagnostic(file, line, col, Severity.ERROR, message, code, excerpt)

    def error_in(
        self, path: str | Path, line: int, col: int, message: str, code: str = ""
    ) -> Diagnostic:
        """An error in a file of this set named by its path as read (shown as users see it)."""
        return self.error(self.display(str(path)), line, col, message, code)

    def at_decl(self, decl: Declaration, message: str, code: str = "") -> Diagnostic:
        return self.error(self.display(decl.file), decl.line, decl.column, message, code)

    # -- reading and looking up ----------------------------------------------------------------

    def read(self) -> None:
        """Read the main file and preprocess it (``preprocess``): the files its active
        ``#include`` lines name are read as met; each file's status and digest as read go to
        ``inputs``. A file that is not a regular file, not UTF-8, an absolute include outside
        the include folders, or a preprocessor error is a positioned error."""
        self._derived.clear()
        self.inputs.append(self._read(self.path, self.name, 0, 0, self.named))

        def load(path: Path, written: str, here: Path, line: int, col: int) -> str:
            where = self.display(str(here))
            if Path(written).is_absolute() and not self._in_include_dir(path):
                message = (
                    f"'{written}' is an absolute include outside the include folders: "
                    "name it relative to this file or to an include folder (-I)"
                )
                raise UserError.at(where, line, col, message, ABSOLUTE_INCLUDE)
            named = include_named(here, written, self.include_dirs)
            self.inputs.append(self._read(path, where, line, col, named))
            return self.written[path]

        try:
            unit = preprocess(
                self.path, self.written[self.path], self.include_dirs, self.defines, load
            )
        except PreprocessorError as err:
            error = self.error_in(err.path, err.line, err.col, err.message, err.code)
            raise UserError([error]) from None
        self.unit = unit
        for inc in unit.inclusions():
            if inc.path not in self._first:
                self._first[inc.path] = inc
                rendered = self.maps[inc.path] = render(inc, unit.line_counts[inc.file])
                self.texts[inc.path] = rendered.text
                # what the queries and rewrites lex this text to, from its tokens
                lexed_from(
                    rendered.text, inc.tokens, rendered.offsets, rendered.columns, rendered.plain
                )
                self.sources[inc.path] = self._scan(inc.path, rendered)

    def _scan(self, path: Path, rendered: Rendered) -> SourceFile:
        """The scan of a file as compiled, with DXC's declarations Slang does not parse as
        Slang is given them (``dxc_declarations``): from the file's tokens where those leave
        the text as it is (nearly always), else from the text they make."""
        text = self.dxc_declared(path)
        if text != rendered.text:
            return scan(str(path), text)
        s = self.stream(path)
        return scan(str(path), text, s.tokens, s.offsets, s.position)

    def dxc_declared(self, path: Path) -> str:
        """A file's text as compiled with DXC's declarations Slang does not parse rewritten
        (``dxc_declarations``): what the scanner reads and the first rewrite record makes,
        made once a read."""
        found: str = self._once(("dxc declared", path), lambda: dxc_declarations(self.texts[path]))
        return found

    def tokens(self, path: Path) -> list[Token]:
        """The tokens of a file as compiled (its first inclusion, macros expanded), in order."""
        first = self._first.get(path)
        return first.tokens if first is not None else []

    def stream(self, path: Path) -> Stream:
        """The tokens of a file as compiled with where each stands in ``texts[path]`` (the
        queries of ``source/query.py`` read these)."""
        found: Stream = self._once(("stream", path), lambda: self._stream(path))
        return found

    def _stream(self, path: Path) -> Stream:
        first = self._first.get(path)
        if first is None:
            return Stream(path, self.texts.get(path, ""), [], [])
        return file_stream(path, self.texts[path], first.tokens, self.maps[path].offsets)

    def streams(self) -> Iterator[Stream]:
        """Every file's stream, in include order (``include_order``)."""
        for p in self.include_order():
            yield self.stream(p)

    def at_token(self, path: Path, token: Token, message: str, code: str = "") -> Diagnostic:
        """An error at a token of ``tokens(path)``: where it is written, or for a token a macro
        made, where the invocation is."""
        line, col = (token.site[0], token.site[1]) if token.site else (token.line, token.col)
        file = self.display(str(path))
        text = self.displayed_text(file)
        excerpt = source_excerpt(text, line, col) if text else ""
        return Diagnostic(file, line, col, Severity.ERROR, message, code, excerpt)

    def slang_text(self, texts: dict[Path, str]) -> str:
        """The text handed to Slang: every file's text of ``texts`` (rewritten) in place of the
        ``#include`` lines, between ``#line`` markers (``sourcemap.slang_text``)."""
        assert self.unit is not None
        unit = self.unit
        return slang_text(
            unit.main,
            texts,
            self._first,
            lambda inc: render(inc, unit.line_counts[inc.file]).text,
            self.line_name,
        )

    def line_name(self, path: Path) -> str:
        """The file name a ``#line`` marker gives Slang: the path, or where it holds a quote, a
        backslash or a line break (which Slang's ``#line`` cannot spell), a stand-in that
        ``resolved`` maps back."""
        name = path.as_posix()
        if any(c in name for c in '"\\\n\r'):
            name = f"oneshader-file-{self.unit.paths.index(path) if self.unit else 0}.hlsl"
            self._resolved[name] = path
        return name

    def _read(self, path: Path, where: str, line: int, col: int, named: Path | None) -> InputFile:
        """One file into ``texts``; errors at ``where:line:col`` (the main file's name, or the
        include directive naming the file). ``named``: the path that led to it, links kept."""
        try:
            data, st = read_regular(path)
            read_ns = time.time_ns()
        except OSError as err:
            why = err.strerror or str(err)
            raise UserError.at(where, line, col, f"cannot read: {why}", UNREADABLE) from None
        name = self.display(str(path))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise not_utf8(name, data, err) from None
        self.written[path] = text.replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads
        digest = hashlib.sha256(data).hexdigest()
        return InputFile(
            str(path),
            st.st_mtime_ns,
            st.st_size,
            digest,
            read_ns,
            str(named) if named is not None and named != path else "",
            f"{st.st_dev}:{st.st_ino}",
        )

    def _in_include_dir(self, path: Path) -> bool:
        return any(path.is_relative_to(Path(d).resolve()) for d in self.include_dirs)

    def final_inputs(self) -> tuple[InputFile, ...]:
        """``inputs`` after the compile: Slang reads the includes again itself (all but those
        inlined), so one whose status moved since it was read here has an unknown digest."""
        out = [self.inputs[0]] if self.inputs else []
        for f in self.inputs[1:]:
            try:
                st = os.stat(f.path)
                moved = (st.st_mtime_ns, st.st_size) != (f.mtime_ns, f.size)
            except OSError:
                moved = True
            out.append(replace(f, sha256="") if moved else f)
        return tuple(out)

    def declarations(self) -> dict[str, Declaration]:
        """Every global declaration by name; a global struct of nothing but resources as one
        resource per field, ``x.field``, declared where ``x`` is (as Slang and DXC flatten it)."""
        return dict(self._once("declarations", self._declarations))

    def _declarations(self) -> dict[str, Declaration]:
        out: dict[str, Declaration] = {}
        for src in self.sources.values():
            for d in src.declarations:
                for one in self.flattened(d):
                    out.setdefault(one.name, one)
        return out

    def flattened(self, decl: Declaration) -> list[Declaration]:
        """``decl``, or the fields of a struct of resources it declares (see declarations)."""
        fields = [] if decl.array is not None else self.resource_struct(decl.base)
        if not fields:
            return [decl]
        return [
            replace(
                decl, name=f"{decl.name}.{f.name}", base=b, type_text=f.type_text, array=f.array
            )
            for f, b in fields
        ]

    def resource_struct(self, type_name: str) -> list[tuple[Field, str]]:
        """The fields of struct ``type_name`` with their resource types' names, when it holds
        nothing but resources; [] for any other type."""
        sdef = None if type_name in RTYPES else self.struct(type_name)
        if sdef is None or sdef.kind != "struct" or not sdef.fields:
            return []
        bases = [f.type_text.split("<")[0].strip() for f in sdef.fields]
        if any(b not in RTYPES for b in bases):
            return []
        return list(zip(sdef.fields, bases, strict=True))

    def buffer_bools(self) -> dict[tuple[str, str], tuple[Path, int, int]]:
        """The bool members of what buffers hold, by (owner, member) as layouts name them (a
        cbuffer's members: the block; a buffer's struct at any depth: the struct; a loose
        global uniform: ``$Globals``), each with where its name is written (file, line,
        column)."""
        found: dict[tuple[str, str], tuple[Path, int, int]] = self._once(
            "buffer bools", self._buffer_bools
        )
        return found

    def _buffer_bools(self) -> dict[tuple[str, str], tuple[Path, int, int]]:
        out: dict[tuple[str, str], tuple[Path, int, int]] = {}
        if not any("bool" in self.dxc_declared(p) for p in self.sources):
            return out  # every type below is spelled in the texts scanned: none is a bool
        for d in self.declarations().values():
            if d.base in ("cbuffer", "tbuffer"):
                self._bools_in(out, d.name, frozenset())
            elif d.base in RTYPES:
                held = template_argument(d.type_text)
                if held is not None:
                    self._bools_in(out, held, frozenset())
            elif d.base in _BOOLS:
                constant = d.attribute("vk::constant_id") or {"const", "static"} & set(d.modifiers)
                if not constant and "groupshared" not in d.modifiers:  # a loose global uniform
                    out[("$Globals", d.name)] = (self.resolved(d.file), d.line, d.column)
            else:
                self._bools_in(out, d.base, frozenset())
        return out

    def _bools_in(
        self, out: dict[tuple[str, str], tuple[Path, int, int]], owner: str, seen: frozenset[str]
    ) -> None:
        """``_buffer_bools`` of struct ``owner`` at any depth (a method, not a closure calling
        itself: that cycle would keep the source set for the cycle collector)."""
        sdef = None if owner in seen else self.struct(owner)
        if sdef is None or sdef.kind not in ("struct", "cbuffer", "tbuffer"):
            return
        where = self.struct_file(owner) or self.path
        for f in sdef.fields:
            base = f.type_text.split("<")[0].split()[-1]
            if base in _BOOLS:
                out[(owner, f.name)] = (where, f.line, f.column)
            else:
                self._bools_in(out, base, seen | {owner})

    def holds_resources(self, type_name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether struct ``type_name`` holds a resource at any depth (in a nested struct too)."""
        sdef = None if type_name in RTYPES or type_name in seen else self.struct(type_name)
        if sdef is None or sdef.kind != "struct":
            return False
        bases = [f.type_text.split("<")[0].strip() for f in sdef.fields]
        return any(b in RTYPES or self.holds_resources(b, seen | {type_name}) for b in bases)

    def declaration_order(self) -> Callable[[Declaration], tuple[int, int]]:
        """A sort key for where DXC creates a declaration: its file's place in the include
        order, then its place in the file's scan (a namespace's declarations in place, which
        Slang lists last; a cbuffer's resources before the cbuffer). A declaration made up at a
        position (DXC's ``$Globals``) sorts with the declaration scanned there."""
        files = {p: i for i, p in enumerate(self.include_order())}
        places = {
            (p, d.line, d.column): i
            for p, scanned in self.sources.items()
            for i, d in reversed(list(enumerate(scanned.declarations)))
        }

        def key(decl: Declaration) -> tuple[int, int]:
            path = self.resolved(decl.file)
            return files.get(path, 0), places.get((path, decl.line, decl.column), 0)

        return key

    def renamed_blocks(self) -> dict[str, str]:
        """cbuffers/tbuffers that declare a member of their own name (DXC-era code's
        ``cbuffer ubo { UBO ubo; }``), each with the name Slang is given instead: with
        ``-no-mangle`` Slang puts the block's name in scope too, so ``ubo.x`` is ambiguous
        there, not in HLSL. The new name is ``<name>_<n>``, which the readers of emitted code
        demangle back to ``<name>``; ``n`` is the first that no file of the shader spells.
        (Asked by every step that names the block: worked out once, after ``read``.)"""
        renamed: dict[str, str] = self._once("renamed_blocks", self._renamed_blocks)
        return renamed

    def _renamed_blocks(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for d in self.declarations().values():
            block = self.struct(d.name) if d.base in ("cbuffer", "tbuffer") else None
            if block is None or block.kind != d.base or block.field(d.name) is None:
                continue
            spelled = self.identifiers()
            n = 0
            while f"{d.name}_{n}" in spelled:
                n += 1
            out[d.name] = f"{d.name}_{n}"
        return out

    def struct(self, name: str) -> StructDef | None:
        for src in self.sources.values():
            if name in src.structs:
                return src.structs[name]
        return None

    def function(self, name: str) -> StructDef | None:
        for src in self.sources.values():
            if name in src.functions:
                return src.functions[name]
        return None

    def function_file(self, name: str) -> Path:
        """The file that defines function ``name`` (the main file if none does)."""
        return next((p for p, s in self.sources.items() if name in s.functions), self.path)

    def struct_file(self, name: str) -> Path | None:
        """The file that declares struct ``name``."""
        return next((p for p, s in self.sources.items() if name in s.structs), None)

    def identifiers(self) -> frozenset[str]:
        """Every identifier of every file as compiled."""
        found: frozenset[str] = self._once(
            "identifiers",
            lambda: frozenset(w for s in self.streams() for w, at in s.index_of_words() if at),
        )
        return found

    def include_order(self) -> list[Path]:
        """Every file read, each after the files it includes (as the preprocessor meets their
        text when the includes come first), the main file last."""
        return list(self._once("include_order", self._include_order))

    def _include_order(self) -> list[Path]:
        order: list[Path] = []
        if self.unit is None:
            return order

        seen: set[Path] = set()
        todo: list[tuple[Inclusion, bool]] = [(self.unit.main, False)]
        while todo:  # after the files it includes: post-order, without recursion
            inc, done = todo.pop()
            if done:
                order.append(inc.path)
            elif inc.path not in seen:
                seen.add(inc.path)
                todo.append((inc, True))
                todo.extend((child, False) for _, child in reversed(inc.children))
        return order

    def counter_uses(self) -> list[Call]:
        """Every ``X.IncrementCounter()``/``DecrementCounter()`` of every file (``X[i]`` too), in
        include order: ``obj`` is X, ``name`` the method, ``token`` X's."""
        return list(self._once("counter_uses", self._counter_uses))

    def _counter_uses(self) -> list[Call]:
        out = []
        for s in self.streams():
            for i in s.calls(_COUNTERS):
                j = s.object_of(i)
                if j >= 0 and s.is_(i + 2, ")"):
                    out.append(Call(s.path, s.tokens[j], s.tokens[i].text, s.tokens[j].text))
        return out

    def interlocked_calls(self) -> list[Call]:
        """Every HLSL ``Interlocked*`` call of every file, in include order: ``obj`` is a method
        call's object (the word before its ``.``), ``name`` the function, ``arg`` the first
        argument's leading word; at the function's name."""

        def calls() -> list[Call]:
            out = []
            for s in self.streams():
                for i in s.calls(_INTERLOCKED):
                    before = s.at(i - 2)
                    obj = before.text if s.is_(i - 1, ".") and before.kind == "id" else None
                    out.append(Call(s.path, s.tokens[i], s.tokens[i].text, obj, _word(s.at(i + 2))))
            return out

        return list(self._once("interlocked calls", calls))

    def unit_point_sizes(self) -> set[str]:
        """Members declared ``[[vk::builtin("PointSize")]]`` that the code only sets to 1.0."""
        names = {
            f.name
            for scanned in self.sources.values()
            for sdef in scanned.structs.values()
            for f in sdef.fields
            if any(a.name == "vk::builtin" and a.args[:1] == ("PointSize",) for a in f.attributes)
        }
        return self._unit_point_sizes(names) if names else set()

    def _unit_point_sizes(self, names: Collection[str]) -> set[str]:
        """Of ``names``, the members every ``.name`` of which is a statement ``<object>.name =
        1.0;`` (``1``, ``1.0f``, ``(1.0)``...)."""
        uses = {n: 0 for n in names}
        sets = dict(uses)
        for s in self.streams():
            for i in s.words(names):
                if not s.is_(i - 1, "."):
                    continue
                name = s.tokens[i].text
                uses[name] += 1
                sets[name] += s.is_(i + 1, "=") and s.one_assigned(i + 1) > 0
        return {n for n in names if uses[n] and uses[n] == sets[n]}

    def has_distances(self) -> bool:
        """Whether any file writes an SV_ClipDistance or SV_CullDistance semantic."""

        def written() -> bool:
            return any(
                s.is_(i - 1, ":")
                for s in self.streams()
                if s.words_hold("DISTANCE")  # (most shaders: no word that could be one)
                for i in s.words_where(
                    lambda w: (
                        len(w) >= 15
                        and w[:15].upper() in _DISTANCES
                        and (len(w) == 15 or w[15:].isdigit())
                    )
                )
            )

        found: bool = self._once("distances", written)
        return found

    def append_consume(self) -> dict[str, Declaration]:
        """Append/consume structured buffers (declared in any file): their counter is hidden."""
        return self.declared_as(COUNTED_TYPES)

    def measured_buffers(self) -> list[str]:
        """The global buffers (structured, byte-address; not arrays) whose ``GetDimensions`` the
        code calls, in declaration order: Metal's companion holds their lengths. A name that is
        also a function's parameter is left out (a call on the parameter would read the
        global's length): Slang's error stays at the call."""
        return list(self._once("measured buffers", self._measured_buffers))

    def _measured_buffers(self) -> list[str]:
        found = [d for d in self.declared_as(MEASURED_TYPES).values() if d.array is None]
        if not found or not any(s.any_word(("GetDimensions",)) for s in self.streams()):
            return []  # (most shaders: no such buffer, or no GetDimensions at all)
        params = {
            f.name for s in self.sources.values() for fn in s.functions.values() for f in fn.fields
        }
        found = [d for d in found if d.name not in params]
        names = {d.name for d in found}
        called = {
            s.tokens[i].text
            for s in self.streams()
            for i in s.words(names)
            if s.free(i) and s.is_(s.method(i), "GetDimensions")
        }
        return [d.name for d in sorted(found, key=self.declaration_order()) if d.name in called]

    def storage_typed_buffers(self) -> tuple[str, ...]:
        """The typed buffers WGSL holds as storage arrays (``rewrite.typed_buffer_edits``):
        all but those whose ``GetDimensions`` a file calls."""

        def storage() -> tuple[str, ...]:
            names = self.declared_as({ResourceTypeKind.Buffer, ResourceTypeKind.RWBuffer})
            measured = {
                s.tokens[i].text
                for s in self.streams()
                for i in s.words(names)
                if s.is_(i + 1, ".") and s.is_(i + 2, "GetDimensions")
            }
            return tuple(n for n in names if n not in measured)

        found: tuple[str, ...] = self._once("storage typed buffers", storage)
        return found

    def mutating_methods(self) -> tuple[tuple[Path, int, int], ...]:
        """Where each method of a struct that assigns to the struct's own members begins (its
        first token, in the text as compiled): DXC lets an HLSL method change its object, a
        Slang method only when declared ``[mutating]`` (E30047/E30011 otherwise)."""

        def found() -> tuple[tuple[Path, int, int], ...]:
            out = []
            for s in self.streams():
                out += [(s.path, *s.line_col(i)) for i in _mutating_methods(s)]
            return tuple(out)

        result: tuple[tuple[Path, int, int], ...] = self._once("mutating methods", found)
        return result

    def byte_atomic_buffers(self) -> tuple[str, ...]:
        """The RW byte-address buffers WGSL can hold as ``array<atomic<u32>>`` (``rewrite.
        byte_atomics``): an ``Interlocked*`` on them, and every use in any file a one-word
        ``Load``, ``Store`` or ``Interlocked*`` but ``InterlockedMin``/``Max`` (signed or not by
        the value's type). Any other use (``Load2``, ``Load<T>``, ``GetDimensions``, the buffer
        passed to a function) leaves it a plain buffer, where Slang refuses the atomic
        (OS1015)."""

        def atomic() -> tuple[str, ...]:
            out = []
            for name in self.declared_as({ResourceTypeKind.RWByteAddressBuffer}):
                methods = {
                    _byte_method(s, i)
                    for s in self.streams()
                    for i in s.words((name,))
                    if not s.is_(i - 1, ".", "RWByteAddressBuffer")
                }
                if None not in methods and any(m and m.startswith("Interlocked") for m in methods):
                    out.append(name)
            return tuple(out)

        found: tuple[str, ...] = self._once("byte atomics", atomic)
        return found

    def declared_as(self, rtypes: Collection[ResourceTypeKind]) -> dict[str, Declaration]:
        """The resources of the types ``rtypes`` declared in any file, in declaration order
        (looked up by type: the triggers ask for types most shaders do not declare)."""
        by_type = self._by_type()
        found = [names for t, names in by_type.items() if t in rtypes]
        if len(found) > 1:  # more than one type's: their names in declaration order
            names = {n for f in found for n in f}
            return {n: d for n, d in self.declarations().items() if n in names}
        return dict(found[0]) if found else {}

    def _by_type(self) -> dict[ResourceTypeKind, dict[str, Declaration]]:
        """``declarations`` of resources by resource type, each in declaration order (made
        once a read)."""

        def by_type() -> dict[ResourceTypeKind, dict[str, Declaration]]:
            out: dict[ResourceTypeKind, dict[str, Declaration]] = {}
            for n, d in self.declarations().items():
                rtype = RTYPES.get(d.base)
                if rtype is not None:
                    out.setdefault(rtype[0], {})[n] = d
            return out

        found: dict[ResourceTypeKind, dict[str, Declaration]] = self._once("by type", by_type)
        return found

    def subpass_inputs(self) -> dict[str, Declaration]:
        """Vulkan input attachments (``SubpassInput``/``SubpassInputMS``) declared in any file."""
        return self.declared_as(SUBPASS_INPUT_TYPES)

    def counted_rw(self) -> dict[str, Declaration]:
        """RW structured buffers (declared in any file) whose counter the code uses."""
        decls = self.declarations()
        out: dict[str, Declaration] = {}
        for call in self.counter_uses():
            d = decls.get(call.obj or "")
            if d is not None and d.base == "RWStructuredBuffer":
                out[d.name] = d
        return out

    def counters_by_first_use(self) -> list[str]:
        """RW structured buffers whose counter the code uses, in order of first use (when DXC
        creates those counters)."""
        counted = self.counted_rw()
        order: list[str] = []
        for call in self.counter_uses():
            if call.obj in counted and call.obj not in order:
                order.append(call.obj)
        return order


def _byte_method(s: Stream, i: int) -> str | None:
    """The method of ``rewrite.BYTE_ATOMIC_METHODS`` called on the buffer at ``i`` (None: any
    other use, such as ``Load2`` or passing the buffer on)."""
    m = s.method(i)
    return s.tokens[m].text if m >= 0 and s.tokens[m].text in rewrite.BYTE_ATOMIC_METHODS else None


_ASSIGNING = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="})


def _mutating_methods(s: Stream) -> list[int]:
    """The first token of each method, inside a ``struct``'s braces, whose body assigns to (or
    increments) a member of that struct, by its bare name or through ``this``: ``n += 1;``,
    ``acc.x = v;``, ``++n``, ``this.n = 0``. Static methods and those already ``[mutating]``
    are left alone."""
    out: list[int] = []
    i = 0
    for found in s.words(("struct",)):  # each struct once (not every token of the file)
        if found < i:
            continue
        i = found
        if s.at(i + 1).kind != "id":
            continue
        brace = i + 2
        while brace < len(s) and not s.is_(brace, "{", ";"):
            brace += 1
        if not s.is_(brace, "{"):
            i = brace
            continue
        end = s.closing(brace)
        if end < 0:
            break
        if s.text.find("{", s.start(brace) + 1, s.start(end - 1)) < 0:
            i = end  # no method's body in it: most structs, read at C's speed
            continue
        members: set[str] = set()
        methods: list[tuple[int, int, int]] = []  # (first token, body's brace, body's end)
        k, start = brace + 1, brace + 1
        while k < end - 1:
            t = s.at(k)
            if t.text == "(" and s.at(k - 1).kind == "id":
                close = s.closing(k)
                if close > 0 and s.is_(close, "{", "const"):
                    body = close if s.is_(close, "{") else close + 1
                    if s.is_(body, "{"):
                        body_end = s.closing(body)
                        methods.append((start, body, body_end))
                        k = start = body_end
                        continue
                k = close if close > 0 else k + 1
                continue
            if t.text == ";":
                if s.at(k - 1).kind == "id" or s.is_(k - 1, "]"):
                    j = k - 1
                    if s.is_(j, "]"):
                        j = s.opening(j) - 1
                    if s.at(j).kind == "id":
                        members.add(s.at(j).text)
                k = start = k + 1
                continue
            if t.text == "{":  # a nested struct's body
                k = start = s.closing(k)
                if k < 0:
                    break
                continue
            k += 1
        for first, body, body_end in methods:
            head = {s.at(x).text for x in range(first, body)}
            if "static" in head or "mutating" in head:
                continue
            if _assigns(s, body, body_end, members):
                out.append(first)
        i = end
    return out


def _assigns(s: Stream, a: int, b: int, members: set[str]) -> bool:
    """Whether tokens ``a``..``b`` assign to one of ``members`` (or increment it)."""
    for k in range(a, b):
        t = s.at(k)
        if t.kind != "id" or t.text not in members:
            continue
        before = s.at(k - 1).text
        if before == "." and not s.is_(k - 2, "this"):
            continue
        if before in ("++", "--"):
            return True
        j = k + 1
        while s.is_(j, "[", "."):
            if s.is_(j, "["):
                j = s.closing(j)
                if j < 0:
                    return False
            else:
                j += 2
        if s.at(j).text in _ASSIGNING or s.at(j).text in ("++", "--"):
            return True
    return False
