"""Storage textures declared for what the shader does to them: ``write`` when it only writes,
``read`` when it only reads, ``read_write`` when it does both.

Slang declares every RWTexture ``read_write`` (WGSL) and leaves SPIR-V's images undecorated
(read and write). Core WebGPU allows ``read_write`` for r32float/r32sint/r32uint only, so a
``RWTexture2D<float4>`` the shader only writes failed on a default device. The access is read
from the emitted code (WGSL's texture calls, SPIR-V's image instructions: both when both were
built, a use either cannot classify counts as read and write), then written into the WGSL
declaration and as SPIR-V's NonWritable/NonReadable decorations, which naga and Vulkan read.
Metal keeps ``access::read_write`` (docs/compiler.md).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Mapping

from oneshader.compiler.emitted.common import emitted_name, emitted_pattern
from oneshader.compiler.emitted.spirv_ops import (
    DECO_NON_READABLE,
    DECO_NON_WRITABLE,
    MAGIC,
    OP_DECORATE,
    OP_DECORATE_ID,
    OP_DECORATE_STRING,
    OP_FUNCTION,
    OP_MEMBER_DECORATE,
    OP_MEMBER_DECORATE_STRING,
    OP_NAME,
    OP_VARIABLE,
)
from oneshader.reflection.model import Access, Resource, ResourceKind, Target

__all__ = ["storage_access", "with_access"]

_READ, _WRITE = 1, 2
_ACCESS = {0: Access.WriteOnly, _READ: Access.ReadOnly, _WRITE: Access.WriteOnly}
_WGSL_ACCESS = {Access.ReadOnly: "read", Access.WriteOnly: "write"}

# SPIR-V opcodes: what passes an image on, what uses it, and how.
_OP_LOAD, _OP_COPY_OBJECT, _OP_ACCESS_CHAIN, _OP_IN_BOUNDS_ACCESS_CHAIN = 61, 83, 65, 66
_OP_IMAGE_TEXEL_POINTER, _OP_IMAGE_READ, _OP_IMAGE_WRITE = 60, 98, 99
_QUERIES = frozenset({103, 104, 106, 107})  # OpImageQuerySizeLod, Size, Levels, Samples
_DECORATIONS = frozenset(
    {OP_DECORATE, OP_MEMBER_DECORATE, OP_DECORATE_ID, OP_DECORATE_STRING, OP_MEMBER_DECORATE_STRING}
)
_STORAGE_UNIFORM_CONSTANT = 0

_WGSL_CALL = re.compile(
    r"\b(textureLoad|textureStore|textureDimensions|textureNumLayers)\(\s*\(?\s*$"
)
_WGSL_USE = {"textureLoad": _READ, "textureStore": _WRITE}


def _is_storage_texture(r: Resource) -> bool:
    return r.kind is ResourceKind.UnorderedAccess and r.rtype.name.startswith("RWTexture")


def storage_access(
    outputs: Mapping[Target, bytes], resources: Iterable[Resource]
) -> dict[str, Access]:
    """Per storage texture of ``resources``: what the WGSL and SPIR-V of ``outputs`` do to it
    (a texture only measured counts as written: ``write`` is the access every device has)."""
    names = [r.name for r in resources if _is_storage_texture(r)]
    if not names:
        return {}
    seen = dict.fromkeys(names, 0)
    if Target.Wgsl in outputs:
        for name, bits in _wgsl_uses(outputs[Target.Wgsl].decode(), names).items():
            seen[name] |= bits
    if Target.SpirV in outputs:
        for name, bits in _spirv_uses(outputs[Target.SpirV], names).items():
            seen[name] |= bits
    return {name: _ACCESS.get(bits, Access.ReadWrite) for name, bits in seen.items()}


def _wgsl_uses(text: str, names: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name in names:
        decl = re.search(rf"\bvar\s+({emitted_pattern(emitted_name(name))})\s*:[^;]*;", text)
        if decl is None:
            continue
        bits = 0
        for m in re.finditer(rf"\b{re.escape(decl.group(1))}\b", text):
            if decl.start() <= m.start() < decl.end():
                continue
            call = _WGSL_CALL.search(text[max(0, m.start() - 40) : m.start()])
            bits |= _WGSL_USE.get(call.group(1), 0) if call else _READ | _WRITE
        out[name] = bits
    return out


def _instructions(words: list[int]) -> Iterable[tuple[int, int, list[int]]]:
    i = 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if count == 0:
            raise ValueError("malformed SPIR-V instruction")
        yield i, opcode, words[i + 1 : i + count]
        i += count


def _name(operands: list[int]) -> str:
    raw = struct.pack(f"<{len(operands) - 1}I", *operands[1:])
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _spirv_uses(data: bytes, names: list[str]) -> dict[str, int]:
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    if not words or words[0] != MAGIC:
        return {}
    wanted = set(names)
    named: dict[int, str] = {}
    origin: dict[int, str] = {}  # id -> the storage texture it is (the variable, a load of it)
    bits: dict[str, int] = {}
    in_code = False  # uses are read in function bodies only (literals elsewhere look like ids)
    for _, opcode, ops in _instructions(words):
        in_code = in_code or opcode == OP_FUNCTION
        if opcode == OP_NAME and ops:
            named[ops[0]] = _name(ops)
        elif opcode == OP_VARIABLE and ops[2] == _STORAGE_UNIFORM_CONSTANT:
            if named.get(ops[1]) in wanted:
                origin[ops[1]] = named[ops[1]]
                bits[named[ops[1]]] = 0
        elif not in_code or not origin:
            continue
        elif opcode in (_OP_LOAD, _OP_COPY_OBJECT, _OP_ACCESS_CHAIN, _OP_IN_BOUNDS_ACCESS_CHAIN):
            if ops[2] in origin:
                origin[ops[1]] = origin[ops[2]]
                rest = ops[3:] if opcode != _OP_LOAD else []
                for used in rest:  # an index that is itself an image (never): read and write
                    if used in origin:
                        bits[origin[used]] |= _READ | _WRITE
        elif opcode == _OP_IMAGE_READ and ops[2] in origin:
            bits[origin[ops[2]]] |= _READ
        elif opcode == _OP_IMAGE_WRITE and ops[0] in origin:
            bits[origin[ops[0]]] |= _WRITE
        elif opcode in _QUERIES and ops[2] in origin:
            continue
        else:  # atomics through OpImageTexelPointer, a call, a phi: read and write
            for used in ops:
                if used in origin:
                    bits[origin[used]] |= _READ | _WRITE
    return bits


def with_access(
    outputs: Mapping[Target, bytes], access: Mapping[str, Access]
) -> dict[Target, bytes]:
    """``outputs`` with the WGSL declarations and SPIR-V decorations of ``access``."""
    out = dict(outputs)
    narrowed = {name: a for name, a in access.items() if a is not Access.ReadWrite}
    if not narrowed:
        return out
    if Target.Wgsl in out:
        text = out[Target.Wgsl].decode()
        for name, a in narrowed.items():
            text = re.sub(
                rf"(\bvar\s+{emitted_pattern(emitted_name(name))}\s*:\s*"
                r"(?:binding_array<\s*)?texture_storage_\w+<\s*\w+\s*,\s*)read_write\b",
                rf"\g<1>{_WGSL_ACCESS[a]}",
                text,
            )
        out[Target.Wgsl] = text.encode()
    if Target.SpirV in out:
        out[Target.SpirV] = _decorated(out[Target.SpirV], narrowed)
    return out


def _decorated(data: bytes, access: Mapping[str, Access]) -> bytes:
    """The module with NonWritable (read-only) or NonReadable (write-only) on the variables."""
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    named: dict[int, str] = {}
    last_annotation = 0
    variables: list[int] = []
    for i, opcode, ops in _instructions(words):
        if opcode == OP_FUNCTION:
            break  # (names, decorations and global variables all come before the functions)
        if opcode == OP_NAME and ops:
            named[ops[0]] = _name(ops)
        if opcode in _DECORATIONS:
            last_annotation = i + len(ops) + 1
        if opcode == OP_VARIABLE and ops[2] == _STORAGE_UNIFORM_CONSTANT:
            variables.append(ops[1])
    insert: list[int] = []
    for vid in variables:
        a = access.get(named.get(vid, ""))
        if a is not None:
            deco = DECO_NON_WRITABLE if a is Access.ReadOnly else DECO_NON_READABLE
            insert += [(3 << 16) | OP_DECORATE, vid, deco]
    if insert and last_annotation:
        words[last_annotation:last_annotation] = insert
    return struct.pack(f"<{len(words)}I", *words)
