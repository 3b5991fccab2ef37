"""Helpers shared by the verifier's tests: the corpus compiled once, a layout packer (the SPIR-V
tools and the wgpu device are ``module_validation``'s)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from module_validation import device
from oneshader.compiler.emitted.common import round_up
from oneshader.reflection.model import EntryPoint, ScalarKind, TypeKind, TypeLayout

_FORMATS = {
    ScalarKind.Float: "f",
    ScalarKind.Int: "i",
    ScalarKind.UInt: "I",
    ScalarKind.Bool: "I",
    ScalarKind.Float16: "e",
    ScalarKind.Int16: "h",
    ScalarKind.UInt16: "H",
    ScalarKind.Int64: "q",
    ScalarKind.UInt64: "Q",
    ScalarKind.Float64: "d",
}


def pack(layout: TypeLayout, value: Any, buf: bytearray, offset: int = 0) -> None:
    """Write ``value`` into ``buf`` at ``offset`` following nothing but ``layout``.

    Scalars are numbers, vectors sequences, matrices ``value[row][col]`` in math order, arrays
    sequences, structs dicts by member name.
    """
    kind = layout.kind
    if kind is TypeKind.Scalar:
        struct.pack_into("<" + _FORMATS[layout.scalar], buf, offset, value)
    elif kind is TypeKind.Vector:
        size = struct.calcsize(_FORMATS[layout.scalar])
        for i, v in enumerate(value):
            struct.pack_into("<" + _FORMATS[layout.scalar], buf, offset + i * size, v)
    elif kind is TypeKind.Matrix:
        scalar = struct.calcsize(_FORMATS[layout.scalar])
        for r in range(layout.rows):
            for c in range(layout.cols):
                if layout.packing.name == "ColumnMajor":
                    at = offset + c * layout.mstride + r * scalar
                else:
                    at = offset + r * layout.mstride + c * scalar
                struct.pack_into("<" + _FORMATS[layout.scalar], buf, at, value[r][c])
    elif kind is TypeKind.Array:
        assert layout.element is not None
        for i, v in enumerate(value):
            pack(layout.element, v, buf, offset + i * layout.stride)
    else:
        for member in layout.members:
            pack(member.type, value[member.name], buf, offset + member.offset)


def element_stride(layout: TypeLayout) -> int:
    """The stride of a structured buffer's element: its size rounded up to its alignment."""
    return round_up(layout.size, layout.align)


CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_TARGETS = {"spirv": "SpirV", "msl": "Msl", "wgsl": "Wgsl"}


def manifest_shaders() -> list[dict[str, Any]]:
    """The corpus's ``[[shader]]`` entries (files that must build), in manifest order."""
    import tomllib

    data = tomllib.loads((CORPUS / "manifest.toml").read_text(encoding="utf-8"))
    return list(data["shader"])


_COMPILED: dict[str, Any] = {}


def corpus_options(file: str) -> Any:
    """The CompileOptions of one corpus shader: its manifest targets and entry points."""
    from oneshader.compiler import CompileOptions, EntryPointSpec, stage_from_name
    from oneshader.reflection.model import Target

    entry = next(s for s in manifest_shaders() if s["file"] == file)
    specs = tuple(
        EntryPointSpec(name, stage_from_name(stage))
        for name, stage in (e.split(":") for e in entry.get("entries", []))
    )
    return CompileOptions(
        targets=tuple(Target[_TARGETS[t]] for t in entry["targets"]),
        source_name=file,
        include_dirs=(str(CORPUS),),
        entry_points=specs,
    )


def compiled(file: str) -> Any:
    """The CompileResult of one corpus shader for its manifest targets, compiled once per run."""
    if file not in _COMPILED:
        from oneshader.compiler import compile_file

        _COMPILED[file] = compile_file(str(CORPUS / file), corpus_options(file))
    return _COMPILED[file]


def unpack(layout: TypeLayout, data: bytes, offset: int = 0) -> Any:
    """Read a value at ``offset`` following nothing but ``layout`` (the inverse of :func:`pack`)."""
    kind = layout.kind
    fmt = "<" + _FORMATS.get(layout.scalar, "I")
    size = struct.calcsize(fmt)
    if kind is TypeKind.Scalar:
        return struct.unpack_from(fmt, data, offset)[0]
    if kind is TypeKind.Vector:
        return [struct.unpack_from(fmt, data, offset + i * size)[0] for i in range(layout.rows)]
    if kind is TypeKind.Matrix:
        out = []
        for r in range(layout.rows):
            row = []
            for c in range(layout.cols):
                if layout.packing.name == "ColumnMajor":
                    at = offset + c * layout.mstride + r * size
                else:
                    at = offset + r * layout.mstride + c * size
                row.append(struct.unpack_from(fmt, data, at)[0])
            out.append(row)
        return out
    if kind is TypeKind.Array:
        assert layout.element is not None
        return [
            unpack(layout.element, data, offset + i * layout.stride) for i in range(layout.length)
        ]
    return {m.name: unpack(m.type, data, offset + m.offset) for m in layout.members}


def compile_exec(name: str) -> Any:
    """A shader of ``tests/corpus/exec/`` compiled for the two targets that run here."""
    key = "exec/" + name
    if key not in _COMPILED:
        from oneshader.compiler import CompileOptions, compile_file
        from oneshader.reflection.model import Target

        options = CompileOptions(targets=(Target.SpirV, Target.Wgsl), source_name=key)
        result = compile_file(str(CORPUS / key), options)
        assert result.ok, "\n".join(d.format() for d in result.diagnostics)
        _COMPILED[key] = result
    return _COMPILED[key]


def dispatch(pipeline: Any, groups: dict[int, list[dict[str, Any]]], workgroups: int) -> None:
    """Run a compute ``pipeline`` once over ``workgroups`` workgroups in x, with a bind group per
    index of ``groups`` made from its entries."""
    dev = device()
    encoder = dev.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    for index, entries in sorted(groups.items()):
        layout = pipeline.get_bind_group_layout(index)
        cpass.set_bind_group(index, dev.create_bind_group(layout=layout, entries=entries))
    cpass.dispatch_workgroups(workgroups, 1, 1)
    cpass.end()
    dev.queue.submit([encoder.finish()])


def vertex_pipeline(module: Any, vs: EntryPoint, ps: str = "ps") -> Any:
    """A render pipeline of ``module``'s vertex entry point ``vs`` (one vertex buffer laid out
    from the reflection's inputs) and pixel entry point ``ps`` into one rgba8unorm target."""
    attributes = [
        {"format": v.format.value, "offset": v.offset, "shader_location": v.location}
        for v in vs.inputs
    ]
    return device().create_render_pipeline(
        layout="auto",
        vertex={
            "module": module,
            "entry_point": vs.name,
            "buffers": [{"array_stride": vs.stride, "attributes": attributes}],
        },
        fragment={"module": module, "entry_point": ps, "targets": [{"format": "rgba8unorm"}]},
    )


def render(draw: Any, size: int) -> Any:
    """The pixels, a (size, size, 4) uint8 array, of a cleared ``size`` x ``size`` rgba8unorm
    target after ``draw(render_pass)`` has recorded its draws into the pass."""
    import numpy as np
    import wgpu

    dev = device()
    texture = dev.create_texture(
        size=(size, size, 1),
        format="rgba8unorm",
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )
    encoder = dev.create_command_encoder()
    rpass = encoder.begin_render_pass(
        color_attachments=[
            {
                "view": texture.create_view(),
                "clear_value": (0, 0, 0, 0),
                "load_op": "clear",
                "store_op": "store",
            }
        ]
    )
    draw(rpass)
    rpass.end()
    dev.queue.submit([encoder.finish()])
    raw = dev.queue.read_texture(
        {"texture": texture, "origin": (0, 0, 0), "mip_level": 0},
        {"offset": 0, "bytes_per_row": size * 4, "rows_per_image": size},
        (size, size, 1),
    )
    return np.frombuffer(bytes(raw), np.uint8).reshape(size, size, 4)


def runtime_bindings(result: Any, folder: Path, stem: str) -> Any:
    """The runtime bindings (``oneshader.bindings.load``) of a successful compile ``result``,
    its code written into ``folder`` beside its reflection as ``stem.*``."""
    from oneshader.bindings import load
    from oneshader.reflection.format import ReflectionFormat

    assert result.reflection is not None, [d.format() for d in result.diagnostics]
    for o in result.outputs:
        (folder / f"{stem}{o.suffix}").write_bytes(o.data)
    (folder / f"{stem}.reflection").write_bytes(ReflectionFormat.write(result.reflection))
    return load(folder / f"{stem}.reflection")
