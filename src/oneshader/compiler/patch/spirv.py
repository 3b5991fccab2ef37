"""Patches of a finished SPIR-V module, by name: bindings, debug names, locations, formats.

oneshader decides the SPIR-V bindings itself (DXC's rules, docs/compiler.md) and Slang does not
apply all of them (per-space shifts, -fvk-bind-register, counter placement). Patching the
decorations of the finished module is exact and cheap: a decoration is three words after the
header, and a missing one is inserted into the annotation section.
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Iterator, Mapping

from oneshader.compiler.emitted.common import EmittedCodeError
from oneshader.compiler.emitted.spirv import Declarations, declarations
from oneshader.compiler.emitted.spirv_ops import (
    BASE_IMAGE_FORMATS,
    BUILTIN_SUBGROUP_LOCAL_INVOCATION_ID,
    BUILTIN_SUBGROUP_SIZE,
    CAP_SAMPLE_RATE_SHADING,
    CAP_STORAGE_IMAGE_EXTENDED_FORMATS,
    DECO_BINDING,
    DECO_BUILTIN,
    DECO_DESCRIPTOR_SET,
    DECO_FLAT,
    DECO_LOCATION,
    DECO_SAMPLE,
    MAGIC,
    MODEL_FRAGMENT,
    OP_CAPABILITY,
    OP_DECORATE,
    OP_DECORATE_ID,
    OP_DECORATE_STRING,
    OP_ENTRY_POINT,
    OP_EXECUTION_MODE,
    OP_EXECUTION_MODE_ID,
    OP_FIRST_TYPE,
    OP_FUNCTION,
    OP_LAST_TYPE,
    OP_MEMBER_DECORATE,
    OP_MEMBER_DECORATE_STRING,
    OP_NAME,
    OP_TYPE_ARRAY,
    OP_TYPE_IMAGE,
    OP_TYPE_POINTER,
    OP_TYPE_RUNTIME_ARRAY,
    OP_VARIABLE,
    STORAGE_FUNCTION,
    STORAGE_INPUT,
    STORAGE_OUTPUT,
)

_ANNOTATIONS = (
    OP_DECORATE,
    OP_MEMBER_DECORATE,
    OP_DECORATE_ID,
    OP_DECORATE_STRING,
    OP_MEMBER_DECORATE_STRING,
)
_SLOT_DECORATIONS = (DECO_BINDING, DECO_DESCRIPTOR_SET)


_MAGIC_BYTES = struct.pack("<I", MAGIC)


def _string(raw: bytes, start: int, end: int) -> str:
    """The literal string in words ``start`` to ``end`` of the module's bytes ``raw`` (sliced
    from the bytes, not packed from the words)."""
    stop = raw.find(b"\0", start * 4, end * 4)
    return raw[start * 4 : stop if stop >= 0 else end * 4].decode("utf-8", "replace")


def _words(data: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def _instructions(words: list[int], declarations: bool = False) -> Iterator[tuple[int, int, int]]:
    """(index, word count, opcode) of every instruction after the header; ``declarations``:
    only those before the first function, where SPIR-V's layout puts every capability, entry
    point, execution mode, debug name, decoration, type and global variable (the patches that
    read no code skip the functions, most of a module)."""
    i = 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if count == 0:
            raise ValueError("malformed SPIR-V instruction")
        if declarations and opcode == OP_FUNCTION:
            return
        yield i, count, opcode
        i += count


@functools.lru_cache(maxsize=16)
def _instruction_bytes(
    opcodes: frozenset[int], at: int, words: tuple[frozenset[int], ...]
) -> re.Pattern[bytes]:
    """The bytes of an instruction of one of ``opcodes`` (of any word count) whose words from
    its ``at``-th operand on are one of each of ``words``."""

    def one_of(values: frozenset[int], size: str) -> bytes:
        packed = (re.escape(struct.pack(size, v)) for v in sorted(values))
        return b"(?:" + b"|".join(packed) + b")"

    skipped = b".{%d}" % (2 + 4 * (at - 1))  # the word count, the operands before
    operands = b"".join(one_of(values, "<I") for values in words)
    return re.compile(one_of(opcodes, "<H") + skipped + operands, re.S)


def _may_hold(data: bytes, opcodes: frozenset[int], at: int, *words: frozenset[int]) -> bool:
    """Whether the module ``data`` may hold an instruction of one of ``opcodes`` whose words
    from its ``at``-th operand on are one of each of ``words``: one search of its bytes, where a
    walk of its declarations takes a Python step an instruction (bytes that match across
    instructions, or in a string, only cost the walk). A patch that needs such an instruction
    leaves a module without one as it is."""
    return _instruction_bytes(opcodes, at, words).search(data) is not None


def _decorate(target: int, decoration: int, value: int) -> list[int]:
    """An OpDecorate with one literal."""
    return [(4 << 16) | OP_DECORATE, target, decoration, value]


def rebind(
    data: bytes,
    bindings: Mapping[str, tuple[int, int]],
    renames: Mapping[str, str] | None = None,
) -> bytes:
    """The module with every global variable named in ``bindings`` at (set, binding); debug
    names in ``renames`` are replaced (same or shorter word count is not required)."""
    if len(data) < 20 or len(data) % 4:
        raise ValueError("not a SPIR-V module")
    read = _read(data)
    if read is not None and _bound_as(read, bindings, renames or {}, data):
        return data
    words = _words(data)
    if words[0] != MAGIC:
        raise ValueError("not a SPIR-V module (or not little-endian)")
    names: dict[int, str] = {}
    spelled: set[str] = set()  # every debug name (an id may have two)
    variables: set[int] = set()
    decorations: dict[tuple[int, int], int] = {}  # (id, decoration) -> index of its literal
    last_annotation = 0
    first_type = 0
    for i, count, opcode in _instructions(words, declarations=True):
        if opcode == OP_NAME:
            names[words[i + 1]] = spelling = _string(data, i + 2, i + count)
            spelled.add(spelling)
        elif (
            opcode == OP_DECORATE
            and count >= 4
            and words[i + 2] in (DECO_BINDING, DECO_DESCRIPTOR_SET)
        ):
            decorations[(words[i + 1], words[i + 2])] = i + 3
        if opcode in _ANNOTATIONS:
            last_annotation = i + count
        if opcode == OP_VARIABLE and words[i + 3] != STORAGE_FUNCTION:
            variables.add(words[i + 2])
        if not first_type and OP_FIRST_TYPE <= opcode <= OP_LAST_TYPE:
            first_type = i
    insert: list[int] = []
    for vid in sorted(variables):
        name = names.get(vid)
        if name is None or name not in bindings:
            continue
        dset, binding = bindings[name]
        for deco, value in ((DECO_DESCRIPTOR_SET, dset), (DECO_BINDING, binding)):
            at = decorations.get((vid, deco))
            if at is not None:
                words[at] = value
            else:
                insert += _decorate(vid, deco, value)
    if insert:
        where = last_annotation or first_type
        if not where:
            raise ValueError("SPIR-V module without an annotation or type section")
        words[where:where] = insert
    if renames and not spelled.isdisjoint(renames):
        words = _rename(words, renames)
    return struct.pack(f"<{len(words)}I", *words)


def _rename(words: list[int], renames: Mapping[str, str]) -> list[int]:
    raw = struct.pack(f"<{len(words)}I", *words)
    out = words[:5]
    end = 5  # where the declarations end: the functions are copied whole
    for i, count, opcode in _instructions(words, declarations=True):
        if opcode == OP_NAME and (name := _string(raw, i + 2, i + count)) in renames:
            new = renames[name].encode() + b"\0"
            new += b"\0" * (-len(new) % 4)
            literal = list(struct.unpack(f"<{len(new) // 4}I", new))
            out += [((2 + len(literal)) << 16) | OP_NAME, words[i + 1], *literal]
        else:
            out += words[i : i + count]
        end = i + count
    return out + words[end:]


def relocate(
    data: bytes, entry: str, inputs: Mapping[str, int], outputs: Mapping[str, int]
) -> bytes:
    """The module with the Location of ``entry``'s stage variables set by leaf name.

    Slang names inputs ``param.field`` (or ``param``) and outputs ``entryPointParam_<entry>.field``
    (or ``entryPointParam_<entry>`` for a returned value, which is ``result`` here); an ``out``
    parameter's output is named as the parameter (``param.field`` or ``param``).
    """
    read = _read(data)
    if read is not None and _located_as(read, entry, inputs, outputs):
        return data
    words = _words(data)
    names: dict[int, str] = {}
    storage: dict[int, int] = {}
    locations: dict[int, int] = {}
    interface: list[int] = []
    last_annotation = 0
    for i, count, opcode in _instructions(words, declarations=True):
        if opcode == OP_NAME:
            names[words[i + 1]] = _string(data, i + 2, i + count)
        elif opcode == OP_ENTRY_POINT:
            raw = struct.pack(f"<{count - 3}I", *words[i + 3 : i + count])
            name = raw.split(b"\0", 1)[0].decode()
            if name == entry:
                used = (len(name) + 1 + 3) // 4
                interface = words[i + 3 + used : i + count]
        elif opcode == OP_DECORATE and count >= 4 and words[i + 2] == DECO_LOCATION:
            locations[words[i + 1]] = i + 3
        elif opcode == OP_VARIABLE:
            storage[words[i + 2]] = words[i + 3]
        if opcode in _ANNOTATIONS:
            last_annotation = i + count
    insert: list[int] = []
    prefix = f"entryPointParam_{entry}"
    for vid in interface:
        name = names.get(vid, "")
        cls = storage.get(vid)
        if cls == STORAGE_INPUT:
            wanted = inputs.get(name.rsplit(".", 1)[-1])
        elif cls == STORAGE_OUTPUT:
            leaf = "result" if name == prefix or not name else name.rsplit(".", 1)[-1]
            wanted = outputs.get(leaf)
        else:
            continue
        if wanted is None:
            continue
        at = locations.get(vid)
        if at is not None:
            words[at] = wanted
        else:
            insert += _decorate(vid, DECO_LOCATION, wanted)
    if insert:
        words[last_annotation:last_annotation] = insert
    return struct.pack(f"<{len(words)}I", *words)


def _read(data: bytes) -> Declarations | None:
    """The reader's declarations of a little-endian module (shared with the reader, which reads
    the module a patch leaves as it is), or None where the patch's own walk must decide
    (another byte order, a module the reader refuses, an entry point named beyond ASCII)."""
    if len(data) < 20 or len(data) % 4 or data[:4] != _MAGIC_BYTES:
        return None
    try:
        m, _ = declarations(data)
    except EmittedCodeError:
        return None
    return m if all(name.isascii() for _, _, name, _ in m.entries) else None


def _bound_as(
    m: Declarations,
    bindings: Mapping[str, tuple[int, int]],
    renames: Mapping[str, str],
    data: bytes,
) -> bool:
    """Whether :func:`rebind` would leave the module as it is: every global variable named in
    ``bindings`` already at its (set, binding), and no debug name of ``renames`` in it (looked
    for as its bytes: a name found elsewhere only costs the walk)."""
    if any(old.encode() + b"\0" in data for old in renames):
        return False
    for vid, (_, storage) in m.variables.items():
        wanted = bindings.get(m.names.get(vid, ""))
        if wanted is None or storage == "Function" or vid not in m.names:
            continue
        values = m.deco(vid).values
        if (values.get(DECO_DESCRIPTOR_SET), values.get(DECO_BINDING)) != wanted:
            return False
    return True


def _located_as(
    m: Declarations, entry: str, inputs: Mapping[str, int], outputs: Mapping[str, int]
) -> bool:
    """Whether :func:`relocate` would leave the module as it is: each stage variable of
    ``entry`` it would locate already at that location (Slang's locations mostly are)."""
    interface = next((i for _, _, n, i in reversed(m.entries) if n == entry), ())
    prefix = f"entryPointParam_{entry}"
    for vid in interface:
        name = m.names.get(vid, "")
        storage = m.variables.get(vid, (0, ""))[1]
        if storage == "Input":
            wanted = inputs.get(name.rsplit(".", 1)[-1])
        elif storage == "Output":
            leaf = "result" if name == prefix or not name else name.rsplit(".", 1)[-1]
            wanted = outputs.get(leaf)
        else:
            continue
        if wanted is not None and m.deco(vid).values.get(DECO_LOCATION) != wanted:
            return False
    return True


def set_image_formats(data: bytes, formats: Mapping[str, int]) -> bytes:
    """Give the storage images of the named variables an ImageFormat where Slang left Unknown
    (DXC infers the format from the texel type; so does Slang's WGSL). Only ``Unknown`` is
    changed, so images that already have a format keep it.

    Slang declares one image type for every ``RWTexture2D<T>`` of the same scalar (``float4``
    and ``float2`` share ``OpTypeImage %float 2D ... Unknown``), so a format is a property of
    the type, not of the variable: where the variables of one type want different formats
    (or one wants none), each other format gets its own copy of the type, of the arrays and
    pointers leading to it, and the variable, its access chains and loads are retyped to it,
    as DXC declares one image type per format."""
    if not formats or not _may_hold(data, frozenset({OP_TYPE_IMAGE}), 8, frozenset({0})):
        return data  # (no format to give, or no image without one)
    words = _words(data)
    m = _TypeGraph(data, words)
    users: dict[int, list[tuple[int, int]]] = {}  # image type -> [(variable, format)]
    for vid, ptr in m.var_type.items():
        tid = m.image_of(ptr)
        if tid is not None and words[m.images[tid]] == 0:
            users.setdefault(tid, []).append((vid, formats.get(m.names.get(vid, ""), 0)))
    retyped: dict[int, int] = {}  # variable -> the format its own copy of the type has
    for tid, vs in users.items():
        wanted = list(dict.fromkeys(f for _, f in vs))
        if wanted == [0]:
            continue
        kept = 0 if 0 in wanted else wanted[0]  # the format the shared type itself takes
        words[m.images[tid]] = kept
        retyped.update((vid, f) for vid, f in vs if f != kept)
    if retyped:
        words = m.retype(retyped)
    return struct.pack(f"<{len(words)}I", *words)


_OP_LOAD, _OP_ACCESS_CHAIN, _OP_IN_BOUNDS_ACCESS_CHAIN, _OP_COPY_OBJECT = 61, 65, 66, 83


class _TypeGraph:
    """The names, variables and the pointer/array/image types of a module, and what copying an
    image type with another format takes (:meth:`retype`)."""

    def __init__(self, data: bytes, words: list[int]) -> None:
        self.words = words
        self.names: dict[int, str] = {}
        self.var_type: dict[int, int] = {}  # variable -> its pointer type
        self.pointee: dict[int, int] = {}
        self.element: dict[int, int] = {}
        self.images: dict[int, int] = {}  # image type id -> index of its format operand
        self.at: dict[int, tuple[int, int]] = {}  # type id -> (index, word count)
        for i, count, opcode in _instructions(words):
            if opcode == OP_NAME:
                self.names[words[i + 1]] = _string(data, i + 2, i + count)
            elif opcode == OP_VARIABLE:
                self.var_type[words[i + 2]] = words[i + 1]
            elif opcode == OP_TYPE_POINTER:
                self.pointee[words[i + 1]] = words[i + 3]
            elif opcode in (OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY):
                self.element[words[i + 1]] = words[i + 2]
            elif opcode == OP_TYPE_IMAGE and count >= 9:
                self.images[words[i + 1]] = i + 8
            if OP_FIRST_TYPE <= opcode <= OP_LAST_TYPE:
                self.at[words[i + 1]] = (i, count)

    def image_of(self, tid: int) -> int | None:
        """The image type a pointer (or array) type leads to, if it leads to one."""
        tid = self.pointee.get(tid, tid)
        while tid in self.element:
            tid = self.element[tid]
        return tid if tid in self.images else None

    def retype(self, formats: Mapping[int, int]) -> list[int]:
        """The words with each variable of ``formats`` (and the access chains and loads made
        from it) typed by a copy of its image type that has the given format. A copy follows
        the type it copies (its operands, copies too, precede it)."""
        words = self.words
        copies = _TypeCopies(self, words[3])
        copy = copies.copy
        derived = dict(formats)  # ids whose type follows a variable's copy -> its format
        out = list(words)
        for i, _count, opcode in _instructions(words):
            if opcode == OP_VARIABLE and words[i + 2] in formats:
                out[i + 1] = copy(words[i + 1], formats[words[i + 2]])
            elif (
                opcode in (_OP_LOAD, _OP_ACCESS_CHAIN, _OP_IN_BOUNDS_ACCESS_CHAIN, _OP_COPY_OBJECT)
                and words[i + 3] in derived
                and words[i + 1] in self.at
                and (self.image_of(words[i + 1]) is not None)
            ):
                fmt = derived[words[i + 2]] = derived[words[i + 3]]
                out[i + 1] = copy(words[i + 1], fmt)
        result: list[int] = []
        last = 0
        for at in sorted(copies.inserted):
            result += out[last:at] + copies.inserted[at]
            last = at
        result += out[last:]
        result[3] = copies.bound
        return result


class _TypeCopies:
    """:meth:`_TypeGraph.retype`'s copies of types, each made once, its words to be written
    after the type it copies (an object, not a closure calling itself: that cycle would keep
    the module's words for the cycle collector)."""

    def __init__(self, graph: _TypeGraph, bound: int) -> None:
        self.graph = graph
        self.bound = bound  # the next free id
        self.made: dict[tuple[int, int], int] = {}
        self.inserted: dict[int, list[int]] = {}  # index after which -> words

    def copy(self, tid: int, fmt: int) -> int:
        """The id of a copy of type ``tid`` whose image has format ``fmt``."""
        key = (tid, fmt)
        if key in self.made:
            return self.made[key]
        graph = self.graph
        i, count = graph.at[tid]
        new = graph.words[i : i + count]
        if tid in graph.images:
            new[8] = fmt
        elif tid in graph.pointee:
            new[3] = self.copy(graph.pointee[tid], fmt)
        else:
            new[2] = self.copy(graph.element[tid], fmt)
        new[1] = self.made[key] = self.bound
        self.bound += 1
        self.inserted.setdefault(i + count, []).extend(new)
        return new[1]


# Execution models that have a workgroup (GLCompute, Kernel, the NV and EXT task/mesh stages)
# and the execution modes that size one (LocalSize, LocalSizeHint, LocalSizeId)
_WORKGROUP_MODELS = frozenset({5, 6, 5267, 5268, 5364, 5365})
_WORKGROUP_MODES = frozenset({17, 18, 38})
_EXECUTION_MODES = frozenset({OP_EXECUTION_MODE, OP_EXECUTION_MODE_ID})


def without_stray_workgroup_sizes(data: bytes) -> bytes:
    """The module without the workgroup size of an entry point that has none: DXC ignores
    ``[numthreads]`` on a vertex or pixel entry point (DXC's vk.push-constant.static), Slang
    wrote it as LocalSize, which the reflection (no workgroup outside compute) and Vulkan's
    rules refuse; a module without one is returned as is."""
    if not _may_hold(data, _EXECUTION_MODES, 2, _WORKGROUP_MODES):
        return data
    read = _read(data)
    if read is not None and all(model in _WORKGROUP_MODELS for model, *_ in read.entries):
        return data  # (a compute module's sizes: every entry point has a workgroup)
    words = _words(data)
    entries = [
        i for i, _, opcode in _instructions(words, declarations=True) if opcode == OP_ENTRY_POINT
    ]
    models = {words[i + 2]: words[i + 1] for i in entries}
    stray = [
        (i, count)
        for i, count, opcode in _instructions(words, declarations=True)
        if opcode in (OP_EXECUTION_MODE, OP_EXECUTION_MODE_ID)
        and words[i + 2] in _WORKGROUP_MODES
        and models.get(words[i + 1], 5) not in _WORKGROUP_MODELS
    ]
    if not stray:
        return data
    for i, count in reversed(stray):
        del words[i : i + count]
    return struct.pack(f"<{len(words)}I", *words)


def with_sample_rate_shading(data: bytes) -> bytes:
    """The module with ``OpCapability SampleRateShading`` where a stage variable is decorated
    ``Sample`` (HLSL's ``sample`` interpolation) and Slang left the capability out, which makes
    the module invalid for Vulkan (spirv-val); a module that needs nothing is returned as is."""
    if not _may_hold(data, frozenset({OP_DECORATE}), 2, frozenset({DECO_SAMPLE})):
        return data
    words = _words(data)
    needed = any(
        opcode == OP_DECORATE and count >= 3 and words[i + 2] == DECO_SAMPLE
        for i, count, opcode in _instructions(words, declarations=True)
    )
    return _with_capability(data, CAP_SAMPLE_RATE_SHADING) if needed else data


# The image formats beyond Vulkan's base ones (SPIR-V's ImageFormat values below 40).
_EXTENDED_FORMATS = frozenset(f for f in range(40) if f not in BASE_IMAGE_FORMATS)


def with_extended_formats(data: bytes) -> bytes:
    """The module with ``OpCapability StorageImageExtendedFormats`` where an image type has a
    format beyond Vulkan's base ones (``rg32f``, ``r16f``, ...: ``set_image_formats`` infers
    them from the texel type, as DXC) and the module lacks it (spirv-val refuses the format)."""
    if not _may_hold(data, frozenset({OP_TYPE_IMAGE}), 8, _EXTENDED_FORMATS):
        return data
    read = _read(data)
    if read is not None and (
        "StorageImageExtendedFormats" in read.capabilities
        or not any(
            op == OP_TYPE_IMAGE and len(ops) >= 7 and ops[6] in _EXTENDED_FORMATS
            for op, ops in read.types.values()
        )
    ):
        return data  # (bytes that only look like such an image type: the search's guess)
    words = _words(data)
    needed = any(
        opcode == OP_TYPE_IMAGE and count >= 9 and words[i + 8] in _EXTENDED_FORMATS
        for i, count, opcode in _instructions(words, declarations=True)
    )
    return _with_capability(data, CAP_STORAGE_IMAGE_EXTENDED_FORMATS) if needed else data


# StorageImageReadWithoutFormat, StorageImageWriteWithoutFormat
_WITHOUT_FORMAT_CAPABILITIES = frozenset({55, 56})


def without_format_capabilities(data: bytes) -> bytes:
    """The module without ``StorageImage{Read,Write}WithoutFormat`` once no storage image is
    left with format Unknown (Slang declares them for images it gave no format, which
    ``set_image_formats`` then gives one): wgpu (naga) refuses modules that declare them."""
    if not _may_hold(data, frozenset({OP_CAPABILITY}), 1, _WITHOUT_FORMAT_CAPABILITIES):
        return data
    words = _words(data)
    drop: list[int] = []
    for i, count, opcode in _instructions(words, declarations=True):
        if opcode == OP_CAPABILITY and words[i + 1] in _WITHOUT_FORMAT_CAPABILITIES:
            drop.append(i)
        elif opcode == OP_TYPE_IMAGE and count >= 9 and words[i + 7] == 2 and words[i + 8] == 0:
            return data  # an image still without a format needs them
    for i in reversed(drop):
        del words[i : i + 2]
    return struct.pack(f"<{len(words)}I", *words) if drop else data


# Integer built-ins a pixel shader reads that Slang declares without Flat (wave intrinsics).
_INTEGER_INPUT_BUILTINS = frozenset({BUILTIN_SUBGROUP_SIZE, BUILTIN_SUBGROUP_LOCAL_INVOCATION_ID})


def with_flat_integer_inputs(data: bytes) -> bytes:
    """The module with ``Flat`` on the integer built-ins a fragment entry point reads where
    Slang left it out (``WaveGetLaneCount``/``WaveGetLaneIndex`` in a pixel shader: Vulkan
    requires Flat on every integer fragment input, VUID-StandaloneSpirv-Flat-04744)."""
    if not _may_hold(
        data, frozenset({OP_DECORATE}), 2, frozenset({DECO_BUILTIN}), _INTEGER_INPUT_BUILTINS
    ):
        return data
    words = _words(data)
    fragment: set[int] = set()
    flat: set[int] = set()
    builtins: dict[int, int] = {}  # variable id -> the index after its BuiltIn decoration
    for i, count, opcode in _instructions(words, declarations=True):
        if opcode == OP_ENTRY_POINT and words[i + 1] == MODEL_FRAGMENT:
            name_end = next(k for k in range(i + 3, i + count) if words[k] >> 24 == 0)
            fragment.update(words[name_end + 1 : i + count])
        elif opcode == OP_DECORATE and count >= 3 and words[i + 2] == DECO_FLAT:
            flat.add(words[i + 1])
        elif (
            opcode == OP_DECORATE
            and count >= 4
            and words[i + 2] == DECO_BUILTIN
            and words[i + 3] in _INTEGER_INPUT_BUILTINS
        ):
            builtins[words[i + 1]] = i + count
    missing = sorted(
        ((at, v) for v, at in builtins.items() if v in fragment and v not in flat), reverse=True
    )
    if not missing:
        return data
    for at, v in missing:
        words[at:at] = [(3 << 16) | OP_DECORATE, v, DECO_FLAT]
    return struct.pack(f"<{len(words)}I", *words)


def _with_capability(data: bytes, capability: int) -> bytes:
    """The module with ``OpCapability capability`` after its other capabilities (as it is if
    it has it)."""
    words = _words(data)
    last_capability = 5
    for i, count, opcode in _instructions(words, declarations=True):
        if opcode == OP_CAPABILITY:
            if words[i + 1] == capability:
                return data
            last_capability = i + count
    words[last_capability:last_capability] = [(2 << 16) | OP_CAPABILITY, capability]
    return struct.pack(f"<{len(words)}I", *words)
