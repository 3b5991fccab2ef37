"""One reflection -> the source of one Python module (standard library only).

The module holds the reflection as a literal of the model's dataclasses (the data) and thin typed
classes over ``oneshader.bindings`` (the behaviour): field descriptors carrying only their
offset, resource/entry namespaces and a typed ``constants()``. All layout logic stays in the
runtime, which builds the same structs whether this module was written to disk or made in memory
by ``oneshader.bindings.load``. Every line is written in ``ruff format``'s canonical form.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field

from oneshader.codegen.literal import INDENT, LINE_LENGTH, py_doc, py_str, render
from oneshader.codegen.names import MODULE_RESERVED, STRUCT_RESERVED, Scope, mangle_all
from oneshader.codegen.scalars import NUMPY_SCALARS
from oneshader.reflection.model import (
    BUFFER_LENGTHS,
    EntryPoint,
    ResourceKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    Stage,
    Target,
    TypeKind,
    TypeLayout,
)
from oneshader.reflection.spelling import describe_type
from oneshader.reflection.validate import check_reflection, innermost

__all__ = ["render_module", "struct_classes"]

_NUMPY = {kind: f"np.{name}" for kind, name in NUMPY_SCALARS.items()}
_PYTHON = {  # Python types of scalars; the other kinds are int
    ScalarKind.Bool: "bool",
    ScalarKind.Float: "float",
    ScalarKind.Float16: "float",
    ScalarKind.Float64: "float",
}


@dataclass
class _StructClass:
    layout: TypeLayout
    const: str  # the module constant holding the layout
    name: str = ""
    array: str = ""
    fields: list[str] = field(default_factory=list)


class _Module:
    def __init__(self, r: ShaderReflection) -> None:
        self.r = r
        self.structs: dict[TypeLayout, _StructClass] = {}  # in order of first use
        self.by_id: dict[int, str] = {}  # id() of every struct occurrence -> its constant
        self.order: list[_StructClass] = []  # inner structs first
        for res in r.resources:
            if res.layout is not None:
                self._collect(res.layout, res.name)
        for pb in r.push_blocks:
            if pb.layout is not None:
                self._collect(pb.layout, pb.name)
        scope = Scope(MODULE_RESERVED)
        for s in self.structs.values():
            s.name = scope.add(s.layout.name or s.name)
        for s in self.structs.values():
            s.array = scope.add(s.name + "Array")
        self.groups = _groups(r)
        self.group_classes = [scope.add(f"BindGroup{g}") for g in self.groups]
        reserved = STRUCT_RESERVED | MODULE_RESERVED | scope.given  # fields may not hide them
        for s in self.order:
            s.fields = mangle_all((m.name for m in s.layout.members), reserved)

    def _collect(self, t: TypeLayout, fallback: str) -> None:
        t = innermost(t)
        if t.kind is not TypeKind.Struct:
            return
        if t in self.structs:
            self.by_id[id(t)] = self.structs[t].const
            return
        s = _StructClass(t, f"_os_layout_{len(self.structs)}", name=fallback)
        self.structs[t] = s
        self.by_id[id(t)] = s.const
        for m in t.members:
            self._collect(m.type, m.name)
        self.order.append(s)


_BindingInfo = tuple[str, str]  # (name, runtime type alias of what it takes)


def _groups(r: ShaderReflection) -> dict[int, list[_BindingInfo]]:
    """Per WGSL group, its bindings in binding order: the order ``Shader.group_bindings``
    gives at run time (resources each followed by its counter, then push blocks; a stable
    sort by binding number)."""
    if Target.Wgsl not in r.targets:
        return {}
    found: list[tuple[int, int, _BindingInfo]] = []

    def add(name: str, slots: tuple[Slot, ...], kind: str) -> None:
        for s in slots:
            if s.target is Target.Wgsl:
                found.append((s.set, s.binding, (name, kind)))

    for res in r.resources:
        buffer = "Buffer" in res.rtype.name  # every buffer type's name says so
        if res.kind is ResourceKind.Sampler:
            kind = "_b.SamplerArg"
        else:
            kind = "_b.BufferArg" if buffer else "_b.TextureViewArg"
        add(res.name, res.slots, kind)
        if res.counters:
            add(f"{res.name}.counter", res.counters, "_b.BufferArg")
    for pb in r.push_blocks:
        add(pb.name, pb.slots, "_b.BufferArg")
    out: dict[int, list[_BindingInfo]] = {}
    for group, _, info in sorted(found, key=lambda f: (f[0], f[1])):
        out.setdefault(group, []).append(info)
    return out


def _line(text: str, level: int = 0) -> str:
    return INDENT * level + text + "\n"


def _call(head: str, args: list[str], level: int, end: str = "") -> str:
    """``head(args)end`` on one line if it fits, else one argument per line (ruff's two forms)."""
    one = f"{head}({', '.join(args)}){end}"
    if len(INDENT * level) + len(one) <= LINE_LENGTH:
        return _line(one, level)
    inner = "".join(_line(a + ",", level + 1) for a in args)
    return _line(head + "(", level) + inner + _line(")" + end, level)


def _field(
    m_type: TypeLayout, offset: int, module: _Module, *, single: bool
) -> tuple[str, list[str]]:
    leaf = innermost(m_type)
    if leaf.kind is TypeKind.Struct:
        cls = module.structs[leaf]
        if single and m_type.kind is TypeKind.Struct:
            return "_b.Nested", [str(offset), cls.name]
        return "_b.NestedArray", [str(offset), cls.array]
    if single and m_type.kind is TypeKind.Scalar:
        return "_b.Scalar", [str(offset), _PYTHON.get(m_type.scalar, "int")]
    return "_b.Value", [str(offset), _NUMPY[leaf.scalar]]


def _struct_source(s: _StructClass, module: _Module) -> str:
    out = ""
    for single in (True, False):
        cls = s.name if single else s.array
        base = (
            ("_b.Struct", f"layout={s.const}")
            if single
            else (f"_b.StructArray[{s.name}]", f"element={s.name}")
        )
        out += "\n\n" + _call(f"class {cls}", list(base), 0, ":")
        size = s.layout.size
        what = f"One {size}-byte struct." if single else f"{size}-byte structs, back to back."
        out += _line(f'"""{what}"""', 1) + "\n"
        out += _line("__slots__ = ()", 1)
        if s.fields:
            out += "\n"
        for py, m in zip(s.fields, s.layout.members, strict=True):
            kind, args = _field(m.type, m.offset, module, single=single)
            out += _call(f"{py} = {kind}", args, 1)
            doc = f"{describe_type(m.type)} at byte {m.offset}" + (f": {m.doc}" if m.doc else ".")
            out += _line(py_doc(doc), 1)
        if single and s.fields:
            out += _constructor(s, module)
        if single:
            out += "\n"
            out += _line("@staticmethod", 1)
            out += _line(f"def array(n: int, align: int = 1) -> {s.array}:", 1)
            out += _line(
                '"""n of these back to back (a structured buffer\'s contents), each '
                'align-aligned."""',
                2,
            )
            out += _line(f"return {s.array}(n, align)", 2)
    return out


def _param_type(m_type: TypeLayout, module: _Module) -> str:
    leaf = innermost(m_type)
    if leaf.kind is TypeKind.Struct:
        cls = module.structs[leaf]
        return f"{cls.name} | _b.Fields" if m_type.kind is TypeKind.Struct else cls.array
    if m_type.kind is TypeKind.Scalar:
        return _PYTHON.get(m_type.scalar, "int")
    return "_b.ArrayLike"


def _constructor(s: _StructClass, module: _Module) -> str:
    """``__init__`` with one typed keyword parameter per field, so a type checker rejects
    ``Frame(ViewPorj=...)`` and checks each value's type."""
    params = "".join(
        _line(f"{py}: {_param_type(m.type, module)} | None = None,", 2)
        for py, m in zip(s.fields, s.layout.members, strict=True)
    )
    out = "\n" + _line("def __init__(", 1) + _line("self,", 2) + _line("*,", 2) + params
    out += _line(") -> None:", 1)
    out += _line('"""Zeroed, then the fields given set."""', 2)
    out += _call("_b.Struct.__init__", ["self", *(f"{f}={f}" for f in s.fields)], 2)
    return out


def _bind_group_source(cls: str, group: int, infos: list[_BindingInfo]) -> str:
    """A class whose constructor takes the group's resources by name (checked, then bound)."""
    params = mangle_all((n for n, _ in infos), MODULE_RESERVED | {"self", "device"})
    doc = f"WGSL @group({group}): " + ", ".join(n for n, _ in infos) + "."
    out = f"\n\nclass {cls}(_b.BindGroup):\n" + _line(py_doc(doc), 1) + "\n"
    out += _line("__slots__ = ()", 1) + "\n"
    out += _line("def __init__(", 1) + _line("self,", 2) + _line("device: _b.Device,", 2)
    out += _line("*,", 2)
    out += "".join(_line(f"{p}: {kind},", 2) for p, (_, kind) in zip(params, infos, strict=True))
    out += _line(") -> None:", 1)
    out += _line('"""On a device (its default layouts) or on ``SHADER.layouts(...)``."""', 2)
    out += _call("_b.BindGroup.__init__", ["self", "SHADER", str(group), "device", *params], 2)
    return out


def _namespace(name: str, doc: str, method: str, names: list[str], notes: list[str]) -> str:
    """A namespace class; ``notes`` (built from ints and enum names only) become comments. Its
    attributes may not be the module's own names (the body names only SHADER and Final)."""
    out = f"\n\nclass {name}:\n" + _line(f'"""{doc}"""', 1)
    if names:
        out += "\n"
    for i, py in enumerate(mangle_all(names, MODULE_RESERVED)):
        if notes[i]:  # its own line: a trailing comment would count for line length
            out += _line(f"# {notes[i]}", 1)
        out += _line(f"{py}: Final = SHADER.{method}({i})", 1)
    return out


def _slots_note(slots: tuple[Slot, ...], stages: tuple[Stage, ...]) -> str:
    parts = []
    for s in slots:
        if s.target is Target.Msl:
            parts.append(f"msl {s.binding}")
        else:
            parts.append(f"{s.target.value} {s.set}/{s.binding}")
    where = ", ".join(parts) or "no slots"
    return f"{where}; {', '.join(st.name for st in stages) or 'no stages'}"


def _entry_note(e: EntryPoint) -> str:
    if e.stage is Stage.Compute:
        return f"Compute, workgroup {e.workgroup[0]}x{e.workgroup[1]}x{e.workgroup[2]}"
    if e.stage is Stage.Vertex:
        return f"Vertex, vertex stride {e.stride}"
    return e.stage.name


def _constants(module: _Module) -> str:
    specs = module.r.spec_constants
    py = mangle_all((c.name for c in specs), MODULE_RESERVED)
    doc = _line(
        '"""wgpu\'s ``constants`` dict; None (the default) keeps the shader\'s value."""', 1
    )
    if not specs:
        return "\n\ndef constants() -> dict[str, float]:\n" + doc + _line("return {}", 1)
    params = "".join(
        _line(f"{p}: {_PYTHON.get(c.scalar, 'int')} | None = None,", 1)
        for p, c in zip(py, specs, strict=True)
    )
    items = "".join(_line(f"{i}: {p},", 3) for i, p in enumerate(py))
    return (
        "\n\ndef constants(\n"
        + _line("*,", 1)
        + params
        + ") -> dict[str, float]:\n"
        + doc
        + _line("return SHADER.constants(", 1)
        + _line("{", 2)
        + items
        + _line("}", 2)
        + _line(")", 1)
    )


_EMBEDDED = {Target.Wgsl: "_os_code_wgsl", Target.SpirV: "_os_code_spirv"}


def _embedded(code: Mapping[Target, str | bytes]) -> tuple[str, list[str]]:
    """Module constants holding the built code (WGSL text; SPIR-V as base64), and the
    ``{target: constant}`` items for the Shader. Both are escaped string literals only."""
    out, items = "", []
    for target, const in _EMBEDDED.items():
        data = code.get(target)
        if data is None:
            continue
        if target is Target.SpirV:
            assert isinstance(data, bytes)
            text = base64.b64encode(data).decode("ascii")
        else:
            text = data if isinstance(data, str) else data.decode("utf-8", "replace")
        out += f"{const}: Final = {py_str(text)}\n"
        items.append(f"_m.Target.{target.name}: {const}")
    return out, items


def render_module(
    r: ShaderReflection,
    stem: str,
    code: Mapping[Target, str | bytes] | None = None,
    stale: str | None = None,
    shared: Mapping[int, tuple[str, int]] | None = None,
) -> str:
    """The module for ``r``; ``stem`` names its built code files (``<stem>.wgsl``, ...);
    ``code`` is the built code to embed (WGSL text, SPIR-V bytes), by target; ``stale`` says
    why the shader's latest build failed (``r`` and ``code`` being its last good build)."""
    check_reflection(r)
    module = _Module(r)
    out = f"# generated by oneshader from {py_str(r.source)}; do not edit\n"
    out += '"""Typed host bindings for one shader (see oneshader\'s docs/bindings.md)."""\n\n'
    out += "from __future__ import annotations\n\n"
    out += "from typing import Final\n\n"
    out += "import numpy as np\n\n"
    out += "from oneshader.bindings import runtime as _b\n"
    out += "from oneshader.reflection import model as _m\n\n"
    out += f"SOURCE: Final = {py_str(r.source)}\n"
    out += f"STEM: Final = {py_str(stem)}\n"
    out += (
        "# None, or why the shader's latest build failed: this module is then its last good one\n"
    )
    out += f"STALE: Final[str | None] = {'None' if stale is None else py_str(stale)}\n"
    placed: dict[int, str] = {}
    for s in module.order:  # inner structs first, so a layout names those it holds
        text = render(s.layout, "_m", 0, "x: Final = ", placed)
        out += f"{s.const}: Final = {text}\n"
        placed.update((k, v) for k, v in module.by_id.items() if v == s.const)
    out += f"REFLECTION: Final = {render(r, '_m', 0, 'REFLECTION: Final = ', module.by_id)}\n"
    constants, items = _embedded(code or {})
    out += constants
    args = ["REFLECTION", "STEM"]
    if items:
        args.append("{" + ", ".join(items) + "}")
    if shared:  # group -> (the shared group's name, its visibility in every sharing shader)
        pairs = [f"{g}: ({py_str(n)}, {v})" for g, (n, v) in sorted(shared.items())]
        args.append("shared={" + ", ".join(pairs) + "}")
    out += _call("SHADER: Final = _b.Shader", args, 0)
    for s in module.order:
        out += _struct_source(s, module)
    for cls, (group, infos) in zip(module.group_classes, module.groups.items(), strict=True):
        if shared and group in shared:  # one class for every shader sharing the group
            out += _bind_group_source(f"_os_{cls}", group, infos)
            out += f"\n\n{cls}: Final = _b.shared_class({py_str(shared[group][0])}, _os_{cls})\n"
        else:
            out += _bind_group_source(cls, group, infos)
    namespaces = (  # (class, docstring, Shader method, names, one comment per name)
        (
            "resources",
            "Slots per target (.spirv set/binding, .msl index, .wgsl group/binding), stages.",
            "resource",
            [x.name for x in r.resources],
            [_slots_note(x.slots, x.stages) for x in r.resources],
        ),
        (
            "push_blocks",
            "Push-constant blocks: SPIR-V push constants; a buffer slot on Metal and WGSL.",
            "push_block",
            [x.name for x in r.push_blocks],
            [_slots_note(x.slots, x.stages) for x in r.push_blocks],
        ),
        (
            "spec_constants",
            "Specialization constants: id, WGSL override key, default.",
            "spec_constant",
            [x.name for x in r.spec_constants],
            [f"id {x.id}, {x.scalar.name}" for x in r.spec_constants],
        ),
        (
            "entries",
            "Entry points: stage, workgroup size, vertex buffer layout, constants read.",
            "entry",
            [x.name for x in r.entry_points],
            [_entry_note(x) for x in r.entry_points],
        ),
    )
    for name, doc, method, names, notes in namespaces:
        out += _namespace(name, doc, method, names, notes)
    out += _constants(module)
    out += _buffer_lengths(module)
    return out


def _buffer_lengths(module: _Module) -> str:
    """``buffer_lengths(*, A: int, B: int)``: the contents of Metal's companion constant buffer
    of buffer lengths (``GetDimensions`` there), every buffer's size a required keyword, so
    that no length can be left out or put in another's place; nothing without the companion."""
    res = next((x for x in module.r.resources if x.name == BUFFER_LENGTHS), None)
    if res is None or res.layout is None or not res.layout.members:
        return ""
    cls = module.structs[res.layout]
    (index,) = [s.binding for s in res.slots if s.target is Target.Msl] or [0]
    doc = (
        _line('"""Metal only: the contents of the constant buffer ``$BufferLengths``', 1)
        + _line(f"(``[[buffer({index})]]``, {res.layout.size} bytes): each buffer's size", 1)
        + _line('in bytes as bound, which its GetDimensions reads there."""', 1)
    )
    params = "".join(_line(f"{f}: int,", 1) for f in cls.fields)
    return (
        "\n\ndef buffer_lengths(\n"
        + _line("*,", 1)
        + params
        + f") -> {cls.name}:\n"
        + doc
        + _call(f"return {cls.name}", [f"{f}={f}" for f in cls.fields], 1)
    )


def struct_classes(r: ShaderReflection) -> dict[str, tuple[str, TypeLayout]]:
    """{struct class name: (its array class name, its layout)} of the module for ``r``, the names
    exactly as :func:`render_module` gives them."""
    return {s.name: (s.array, s.layout) for s in _Module(r).order}
