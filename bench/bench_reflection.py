"""Reflection format throughput: MB/s of ReflectionFormat.write and .read on a large, realistic
file, against json.dumps/json.loads of the same model measured in the same run, and the read time
per MB at several sizes to show that it grows linearly.

Run: python bench/bench_reflection.py [--mb 10]
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
from typing import Any

from timing import best

from oneshader.reflection import (
    BuiltIn,
    DeviceFeatures,
    EntryPoint,
    Interpolation,
    MatrixPacking,
    PushBlock,
    Resource,
    ResourceKind,
    ResourceTypeKind,
    ScalarKind,
    ShaderReflection,
    Slot,
    SpecConstant,
    SpecSlot,
    Stage,
    StageVariable,
    StructMember,
    Target,
    TypeKind,
    TypeLayout,
    VertexFormat,
)
from oneshader.reflection import format as format_module
from oneshader.reflection.format import ReflectionFormat

TARGETS = (Target.SpirV, Target.Msl, Target.Wgsl)


def scalar(kind: ScalarKind = ScalarKind.Float) -> TypeLayout:
    return TypeLayout(TypeKind.Scalar, kind, size=4, align=4)


def vector(n: int) -> TypeLayout:
    return TypeLayout(
        TypeKind.Vector, ScalarKind.Float, rows=n, size=4 * n, align=16 if n > 2 else 8
    )


def matrix() -> TypeLayout:
    return TypeLayout(
        TypeKind.Matrix,
        ScalarKind.Float,
        rows=4,
        cols=4,
        size=64,
        align=16,
        mstride=16,
        packing=MatrixPacking.ColumnMajor,
    )


def material(i: int, depth: int) -> TypeLayout:
    """A struct of matrices, vectors, arrays and a nested struct ``depth`` levels deep."""
    members = [
        StructMember("world", 0, matrix()),
        StructMember("tint", 64, vector(4)),
        StructMember("offset", 80, vector(3)),
        StructMember("roughness", 92, scalar()),
        StructMember(
            "weights",
            96,
            TypeLayout(TypeKind.Array, size=128, align=16, length=8, stride=16, element=scalar()),
        ),
    ]
    size = 224
    if depth > 0:
        inner = material(i, depth - 1)
        members.append(StructMember(f"layer{depth}", size, inner))
        size += inner.size
    return TypeLayout(
        TypeKind.Struct, name=f"Material{i}_{depth}", size=size, align=16, members=tuple(members)
    )


def slots(i: int) -> tuple[Slot, ...]:
    return tuple(Slot(t, i % 4, i) for t in TARGETS)


def realistic_model(scale: int) -> ShaderReflection:
    """Resources of every common kind with deep layouts, push blocks, spec constants and many
    entry points; ``scale`` multiplies everything."""
    resources: list[Resource] = []
    for i in range(scale):
        resources.append(
            Resource(
                f"Material{i}",
                ResourceKind.ConstantBuffer,
                ResourceTypeKind.ConstantBuffer,
                stages=(Stage.Vertex, Stage.Pixel),
                hlsl=f"ConstantBuffer<Material{i}>",
                slots=slots(4 * i),
                layout=material(i, 3),
            )
        )
        resources.append(
            Resource(
                f"Albedo{i}",
                ResourceKind.ShaderResource,
                ResourceTypeKind.Texture2D,
                stages=(Stage.Pixel,),
                hlsl="Texture2D<float4>",
                slots=slots(4 * i + 1),
                layout=vector(4),
            )
        )
        resources.append(
            Resource(
                f"Particles{i}",
                ResourceKind.UnorderedAccess,
                ResourceTypeKind.AppendStructuredBuffer,
                stages=(Stage.Compute,),
                hlsl="AppendStructuredBuffer<Particle>",
                slots=slots(4 * i + 2),
                counters=slots(4 * i + 3),
                layout=material(i, 1),
            )
        )
        resources.append(
            Resource(
                f"Output{i}",
                ResourceKind.UnorderedAccess,
                ResourceTypeKind.RWTexture2D,
                stages=(Stage.Compute,),
                hlsl="RWTexture2D<float4>",
                format="rgba8",
                slots=slots(4 * i + 3),
                layout=vector(4),
            )
        )
    pushes = [
        PushBlock(f"Push{i}", (Stage.Vertex,), material(i, 0), (Slot(Target.Msl, 0, 30),))
        for i in range(max(1, scale // 10))
    ]
    specs = [
        SpecConstant(
            f"Quality{i}",
            i,
            ScalarKind.UInt,
            3,
            tuple(SpecSlot(t, i, f"Quality{i}") for t in TARGETS),
        )
        for i in range(max(1, scale // 10))
    ]
    entries: list[EntryPoint] = []
    for i in range(scale):
        inputs = tuple(
            StageVariable(
                f"attr{k}",
                f"TEXCOORD{k}",
                k,
                k,
                scalar=ScalarKind.Float,
                components=4,
                format=VertexFormat.Float32x4,
                offset=16 * k,
            )
            for k in range(6)
        )
        outputs = (
            StageVariable("pos", "SV_Position", builtin=BuiltIn.Position, components=4),
            StageVariable("uv", "TEXCOORD0", 0, 0, components=2, interp=Interpolation.Linear),
        )
        entries.append(
            EntryPoint(
                f"VSMain{i}",
                Stage.Vertex,
                stride=96,
                features=DeviceFeatures.Float16,
                inputs=inputs,
                outputs=outputs,
                uses=(f"Material{i}", f"Albedo{i}"),
                pushuse=(pushes[i % len(pushes)].name,),
                specuse=(specs[i % len(specs)].name,),
            )
        )
        entries.append(
            EntryPoint(
                f"CSMain{i}",
                Stage.Compute,
                workgroup=(64, 1, 1),
                uses=(f"Particles{i}", f"Output{i}"),
            )
        )
    return ShaderReflection(
        "Shaders/Big.hlsl", TARGETS, tuple(resources), tuple(pushes), tuple(specs), tuple(entries)
    )


def to_json(obj: Any) -> Any:
    """A plain JSON tree of a model (what a JSON file of the same content would hold)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.name
    if isinstance(obj, tuple):
        return [to_json(x) for x in obj]
    return obj


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=10.0, help="size of the large file")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    per_unit = len(ReflectionFormat.write(realistic_model(10))) / 10
    scale = max(1, round(args.mb * 1e6 / per_unit))
    model = realistic_model(scale)
    data = ReflectionFormat.write(model)
    assert ReflectionFormat.read(data) == model
    tree = to_json(model)
    text = json.dumps(tree)
    mb = len(data) / 1e6
    jmb = len(text) / 1e6

    w = best(lambda: ReflectionFormat.write(model), args.repeat)
    r = best(lambda: ReflectionFormat.read(data), args.repeat)
    jw = best(lambda: json.dumps(tree), args.repeat)
    jr = best(lambda: json.loads(text), args.repeat)
    lines = data.count(b"\n")
    print(f"reflection file: {mb:.2f} MB, {lines} lines; same model as JSON: {jmb:.2f} MB")
    print(f"write: {mb / w:7.1f} MB/s ({w:.3f} s)   json.dumps: {jmb / jw:7.1f} MB/s ({jw:.3f} s)")
    print(f"read:  {mb / r:7.1f} MB/s ({r:.3f} s)   json.loads: {jmb / jr:7.1f} MB/s ({jr:.3f} s)")
    print(f"time ratio write/json.dumps: {w / jw:.2f}   read/json.loads: {r / jr:.2f}")
    print("(json.dumps/loads only serialise a plain tree; the reader also validates and builds")
    print(" the typed, frozen model, so the ratio is the price of that work.)")

    # The reader memoises the conversion of repeated lines; without that (a file where no line
    # repeats) every attribute is converted:
    saved = format_module._MEMO_SIZE
    format_module._MEMO_SIZE = 0
    try:
        nr = best(lambda: ReflectionFormat.read(data), args.repeat)
    finally:
        format_module._MEMO_SIZE = saved
    print(f"read without the memo (no repeated lines): {mb / nr:7.1f} MB/s ({nr:.3f} s), ", end="")
    print(f"ratio to json.loads {nr / jr:.2f}")

    print("linear scaling of read (seconds per MB should stay flat):")
    base = None
    for factor in (0.125, 0.25, 0.5, 1.0):
        s = max(1, round(scale * factor))
        d = ReflectionFormat.write(realistic_model(s))
        t = best(lambda d=d: ReflectionFormat.read(d), args.repeat)  # type: ignore[misc]
        per_mb = t / (len(d) / 1e6)
        base = base or per_mb
        print(f"  {len(d) / 1e6:6.2f} MB: {t:.3f} s, {per_mb:.4f} s/MB ({per_mb / base:.2f}x)")


if __name__ == "__main__":
    main()
