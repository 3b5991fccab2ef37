"""The bodies of ``oneshader reflection check|format|show``.

Each takes file names and returns the exit status: 0 all well, 1 a file is invalid, unreadable or
(with ``format --check``) not canonical. Problems are one ``FILE:LINE:COL: error: message`` line on
standard error per file, never a traceback; the other files are still processed.
"""

from __future__ import annotations

import enum
import json
import os
import struct
import sys
from pathlib import Path

from oneshader.diagnostics import GCC, Reporter, UserError
from oneshader.fsutil import write_if_changed
from oneshader.reflection import spelling
from oneshader.reflection.format import ReflectionFormat, display_text, read_bytes
from oneshader.reflection.model import (
    BuiltIn,
    EntryPoint,
    ScalarKind,
    ShaderReflection,
    Slot,
    Stage,
    StageVariable,
    Target,
    TypeKind,
    TypeLayout,
    VertexFormat,
)
from oneshader.reflection.validate import read_checked_file

__all__ = [
    "check",
    "describe_type",
    "diff",
    "format_files",
    "layout_rows",
    "show",
    "summary",
]


def _note(report: Reporter, file: str, text: str) -> None:
    print(report.plain(f"{file}: {text}", file), file=sys.stderr)


def check(files: list[str], report: Reporter = GCC) -> int:
    """The grammar and the layouts of each file, as the generator checks them."""
    status = 0
    for file in files:
        try:
            read_checked_file(file)
        except UserError as err:
            report.print(err.diagnostics, sys.stderr)
            status = 1
    return status


def format_files(files: list[str], *, check: bool, write: bool, report: Reporter = GCC) -> int:
    """Print the canonical form, or (``check``) say which files are not canonical, or
    (``write``) rewrite the ones that are not, atomically."""
    status = 0
    for file in files:
        try:
            data = read_bytes(file)
            canonical = ReflectionFormat.write(ReflectionFormat.read(data, file=file))
        except UserError as err:
            report.print(err.diagnostics, sys.stderr)
            status = 1
            continue
        if check:
            if canonical != data:
                _note(report, file, "not in canonical form")
                status = 1
        elif write:
            try:
                if write_if_changed(file, canonical):
                    _note(report, file, "reformatted")
            except OSError as err:
                failed = UserError.at(file, 0, 0, f"cannot write: {err.strerror or err}")
                report.print(failed.diagnostics, sys.stderr)
                status = 1
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(canonical)
            sys.stdout.buffer.flush()
    return status


def show(file: str, *, as_json: bool = False, report: Reporter = GCC) -> int:
    """The readable summary, or (``as_json``) the model as JSON: for tools, so only a file that
    ``check`` accepts (its layouts too)."""
    try:
        if as_json:
            from oneshader.reflection.json_export import to_json_text

            text = to_json_text(read_checked_file(file))
        else:
            text = summary(ReflectionFormat.read_file(file))
    except UserError as err:
        report.print(err.diagnostics, sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def _reflections(path: str) -> dict[str, str]:
    """The reflection files of ``path`` (a file, or a folder searched below) by the name that
    pairs them: the path below the folder, or nothing for a file given alone."""
    if not os.path.isdir(path):
        return {"": path}
    base = Path(path)
    return {f.relative_to(base).as_posix(): str(f) for f in sorted(base.rglob("*.reflection"))}


def diff(old: str, new: str, *, as_json: bool = False, report: Reporter = GCC) -> int:
    """``oneshader reflection diff OLD NEW``: every change, breaking or compatible for host code
    built against OLD (docs/bindings.md); 1 if anything breaks or a file cannot be read."""
    from oneshader.reflection.abi import Change, diff_reflections

    olds, news = _reflections(old), _reflections(new)
    if (len(olds) == 1 and "" in olds) != (len(news) == 1 and "" in news):
        raise UserError.at(new, 0, 0, "compare a file with a file, a folder with a folder")
    changes: list[Change] = []
    status = 0
    for key in sorted(olds.keys() | news.keys()):
        if key not in news:
            changes.append(Change(key, "shader", "", "", True, "removed (no reflection in NEW)"))
            continue
        if key not in olds:
            changes.append(Change(key, "shader", "", "", False, "added"))
            continue
        try:
            a, b = read_checked_file(olds[key]), read_checked_file(news[key])
        except UserError as err:
            report.print(err.diagnostics, sys.stderr)
            status = 1
            continue
        changes += diff_reflections(a, b, key or a.source)
    broken = sum(c.breaking for c in changes)
    if as_json:
        document = {
            "format": "oneshader-reflection-diff",
            "version": 1,
            "breaking": broken,
            "compatible": len(changes) - broken,
            "changes": [
                {
                    "shader": c.shader,
                    "record": c.record,
                    "name": c.name,
                    "member": c.member,
                    "class": c.kind,
                    "change": c.what,
                }
                for c in changes
            ],
        }
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=True) + "\n")
    else:
        lines = [display_text(c.line()) for c in changes]
        lines.append(f"{broken} breaking, {len(changes) - broken} compatible")
        sys.stdout.write("\n".join(lines) + "\n")
    return 1 if broken or status else 0


# --------------------------------------------------------------------------------------------
# The summary.


def _innermost(t: TypeLayout) -> TypeLayout:
    while t.kind is TypeKind.Array and t.element is not None:
        t = t.element
    return t


def describe_type(t: TypeLayout) -> str:
    """HLSL-like spelling: ``float4x4``, ``Light[8]``, ``float[]`` (unsized)."""
    return spelling.describe_type(t, display_text)


def _notes(t: TypeLayout) -> str:
    notes = []
    if t.kind is TypeKind.Array and t.element is not None:
        notes.append(f"stride {t.stride}")
        gap = t.stride - t.element.size
        if gap > 0:
            notes.append(f"{gap} padding bytes per element")
    inner = _innermost(t)
    if inner.kind is TypeKind.Matrix:
        notes.append(f"{inner.packing.name} mstride {inner.mstride}")
    return ", ".join(notes)


def layout_rows(layout: TypeLayout) -> list[tuple[int, int, int, str, str, str]]:
    """(offset, size, align, name, type, notes) rows, padding gaps included as ``(padding)``
    rows. Members of nested structs follow their member row, indented, at absolute offsets
    (arrays of structs show element 0). Iterative: a deep layout is no problem."""
    rows: list[tuple[int, int, int, str, str, str]] = []
    if layout.kind is not TypeKind.Struct:
        rows.append((0, layout.size, layout.align, "", describe_type(layout), _notes(layout)))
        return rows
    # A frame: [struct, base offset, indent, name prefix, next member index, end so far]
    stack: list[list[object]] = [[layout, 0, 0, "", 0, 0]]
    while stack:
        frame = stack[-1]
        struct, base, indent, prefix, index, cursor = frame
        assert isinstance(struct, TypeLayout) and isinstance(base, int)
        assert isinstance(indent, int) and isinstance(prefix, str)
        assert isinstance(index, int) and isinstance(cursor, int)
        pad = "  " * indent
        if index == len(struct.members):
            stack.pop()
            end = base + struct.size
            if end > cursor:
                rows.append((cursor, end - cursor, 0, f"{pad}(padding)", "", ""))
            continue
        m = struct.members[index]
        offset = base + m.offset
        if offset > cursor:
            rows.append((cursor, offset - cursor, 0, f"{pad}(padding)", "", ""))
        name = prefix + display_text(m.name)
        t = m.type
        rows.append((offset, t.size, t.align, pad + name, describe_type(t), _notes(t)))
        frame[4] = index + 1
        frame[5] = max(cursor, offset + t.size)
        inner = _innermost(t)
        if inner.kind is TypeKind.Struct and inner.members:
            dims = "[0]" * (describe_type(t).count("["))
            stack.append([inner, offset, indent + 1, f"{name}{dims}.", 0, offset])
    return rows


def _table(header: list[str], rows: list[list[str]], right: set[int], indent: str) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = []
    for r in [header, *rows]:
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)]
        out.append((indent + "  ".join(cells)).rstrip())
    return out


def _slot(s: Slot) -> str:
    if s.target is Target.Msl:
        return f"Msl index {s.binding}"
    if s.target is Target.Wgsl:
        return f"Wgsl group {s.set} binding {s.binding}"
    return f"SpirV set {s.set} binding {s.binding}"


def _layout_lines(t: TypeLayout, indent: str) -> list[str]:
    title = f"{indent}layout {describe_type(t)}: size {t.size}, align {t.align}"
    rows = [
        [str(o), str(s), str(a) if a else "", n, ty, notes]
        for o, s, a, n, ty, notes in layout_rows(t)
    ]
    header = ["offset", "size", "align", "name", "type", "notes"]
    return [title, *_table(header, rows, {0, 1, 2}, indent + "  ")]


def _names_of(members: tuple[enum.Enum, ...]) -> str:
    return ", ".join(m.name for m in members) or "none"


def _vars(title: str, variables: tuple[StageVariable, ...]) -> list[str]:
    if not variables:
        return []
    rows = []
    for v in variables:
        t = spelling.describe_variable(v.scalar, v.components)
        rows.append(
            [
                "-" if v.location is None else str(v.location),
                display_text(v.name),
                display_text(v.semantic) + (str(v.index) if v.index else ""),
                t,
                "" if v.builtin is BuiltIn.None_ else v.builtin.name,
                "" if v.format is VertexFormat.None_ else v.format.name,
                "" if v.format is VertexFormat.None_ else str(v.offset),
                v.interp.name,
            ]
        )
    header = ["location", "name", "semantic", "type", "builtin", "format", "offset", "interp"]
    return [f"  {title}", *_table(header, rows, {0, 6}, "    ")]


def _entry_lines(e: EntryPoint) -> list[str]:
    line = f"entry {display_text(e.name)}: {e.stage.name}"
    if e.stage is Stage.Compute:
        line += f", workgroup {e.workgroup[0]}x{e.workgroup[1]}x{e.workgroup[2]}"
    if e.stage is Stage.Vertex:
        line += f", vertex stride {e.stride}"
    out = [line]
    if e.features:
        out.append("  features " + ", ".join(f.name or "" for f in e.features))
    out += _vars("inputs", e.inputs)
    out += _vars("outputs", e.outputs)
    for title, names in (("uses", e.uses), ("pushuse", e.pushuse), ("specuse", e.specuse)):
        if names:
            out.append(f"  {title} {', '.join(display_text(n) for n in names)}")
    return out


def summary(model: ShaderReflection) -> str:
    """The text of ``oneshader reflection show``."""
    out = [f"source {display_text(model.source)}", f"targets {_names_of(model.targets)}"]
    for r in model.resources:
        out.append("")
        line = f"resource {display_text(r.name)}: {r.rtype.name} ({r.kind.name})"
        if r.count != 1:
            line += f", count {r.count}"
        line += f", stages {_names_of(r.stages)}"
        out.append(line)
        if r.hlsl:
            out.append(f"  hlsl {display_text(r.hlsl)}")
        if r.format is not None:
            out.append(f"  format {display_text(r.format)}")
        out += [f"  slot {_slot(s)}" for s in r.slots]
        out += [f"  counter {_slot(s)}" for s in r.counters]
        if r.layout is not None:
            out += _layout_lines(r.layout, "  ")
    for p in model.push_blocks:
        out.append("")
        out.append(f"push {display_text(p.name)}: stages {_names_of(p.stages)}")
        out += [f"  slot {_slot(s)}" for s in p.slots]
        if p.layout is not None:
            out += _layout_lines(p.layout, "  ")
    for c in model.spec_constants:
        out.append("")
        default = f"default bits {c.default}"
        if c.scalar is ScalarKind.Float:
            default += f" ({struct.unpack('<f', struct.pack('<I', c.default))[0]!r})"
        out.append(f"spec {display_text(c.name)}: id {c.id}, {c.scalar.name}, {default}")
        out += [
            f"  slot {s.target.name} index {s.index} name {display_text(s.name)}" for s in c.slots
        ]
    for e in model.entry_points:
        out.append("")
        out += _entry_lines(e)
    return "\n".join(out) + "\n"
