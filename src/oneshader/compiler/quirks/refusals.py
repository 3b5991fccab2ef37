"""Constructs a target lacks, refused before Slang runs at the first token that asks for one
(Slang would drop them silently, write a module its target's validator refuses, or fail without
a position). One record each; ``refused`` raises them all, in one place."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator

from oneshader.compiler.api import TARGET_NAMES
from oneshader.compiler.quirks.record import EVERY_TARGET, Probe, Refusal
from oneshader.compiler.quirks.tokens import Trigger, sequence, variants, word_in
from oneshader.compiler.source.lexer import Token
from oneshader.compiler.source.query import Stream
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Code, Diagnostic
from oneshader.reflection.model import ScalarKind, Target

_WGSL = frozenset({Target.Wgsl})
_MSL = frozenset({Target.Msl})
_KERNEL = "RWStructuredBuffer<uint> o;\n[numthreads(1,1,1)] void main() {{ {} }}\n"


_STENCIL_REF = sequence([":"], ["SV_StencilRef"], folded=True)
_FLOAT_ATOMIC = sequence(["Atomic"], ["<"], ["float", "half", "float16_t", "float32_t"])
# (a trigger that records of several targets share is one object: looked for once a file)
_DOUBLE = word_in(variants("double", matrices=True) | variants("float64_t"))
_BUFFER_POINTER = sequence(["vk"], ["::"], ["BufferPointer"])
_EXT_BUILTIN = sequence(["vk"], ["::"], ["ext_builtin_input", "ext_builtin_output"])


def _stencil_ref(s: Stream) -> tuple[Token, str] | None:
    """``: SV_StencilRef`` (any case), at the colon."""
    found = _STENCIL_REF(s)
    return None if found is None else (found[0], found[1][1:])


def _float_atomic(s: Stream) -> tuple[Token, str] | None:
    """``Atomic<float>`` (``half``...), its ``>`` alone or in a ``>>``."""
    found = _FLOAT_ATOMIC(s)
    return None if found is None else (found[0], found[1] + ">")


_TEXTURES = [
    f"{prefix}Texture{shape}"
    for prefix in ("", "RW", "RasterizerOrdered")
    for shape in ("1D", "1DArray", "2D", "2DArray", "3D", "Cube", "CubeArray", "2DMS", "2DMSArray")
]


_HALF_TEXELS = sequence(_TEXTURES, ["<"], variants("half", "float16_t"))


def _half_texels(s: Stream) -> tuple[Token, str] | None:
    """A texture of ``half`` (``float16_t``) texels, ``Texture2D<half4>``, at the type."""
    return _HALF_TEXELS(s)


def _say(text: str) -> Callable[[Target], str]:
    return lambda _target: text


REFUSALS: tuple[Refusal, ...] = (
    Refusal(
        "wgsl-int64",
        _WGSL,
        word_in(variants("int64_t", "uint64_t")),
        _say(
            "WGSL: no 64-bit integers ({token}); use uint2 pairs or build without the wgsl target"
        ),
        "WGSL: 64-bit integers (`int64_t`, `uint64_t` and their vectors).",
        Probe(_KERNEL.format("uint64_t x = o[1]; o[0] = uint(x * x);"), Target.Wgsl),
        scalars=frozenset({ScalarKind.Int64, ScalarKind.UInt64}),
    ),
    Refusal(
        "wgsl-double",
        _WGSL,
        _DOUBLE,
        _say("WGSL: no 64-bit floats ({token}); use float or build without the wgsl target"),
        "WGSL: 64-bit floats (`double`, `float64_t`, their vectors and matrices).",
        Probe(_KERNEL.format("double x = o[1]; o[0] = uint(x * x);"), Target.Wgsl),
        scalars=frozenset({ScalarKind.Float64}),
    ),
    Refusal(
        "wgsl-int16",
        _WGSL,
        word_in(variants("int16_t", "uint16_t")),
        _say("WGSL: no 16-bit integers ({token}); use int/uint or build without the wgsl target"),
        "WGSL: 16-bit integers (`int16_t`, `uint16_t` and their vectors).",
        Probe(_KERNEL.format("uint16_t x = uint16_t(o[1]); o[0] = uint(x * x);"), Target.Wgsl),
        scalars=frozenset({ScalarKind.Int16, ScalarKind.UInt16}),
    ),
    Refusal(
        "wgsl-half-texels",
        _WGSL,
        _half_texels,
        _say(
            "WGSL: a texture of 16-bit texels ({token}>): WGSL's textures hold f32, i32 or u32 "
            "(a half texture is sampled as float on every target); declare its texels float "
            "(float4 for half4) or build without the wgsl target"
        ),
        "WGSL: a texture of `half` (`float16_t`) texels, `Texture2D<half4>` (Slang's WGSL "
        "fails in its own module, E41400, without a position).",
        Probe(
            "Texture2D<half4> t;\n" + _KERNEL.format("o[0] = uint(t.Load(int3(0, 0, 0)).x);"),
            Target.Wgsl,
        ),
    ),
    Refusal(
        "wgsl-float-atomic",
        _WGSL,
        _float_atomic,
        _say(
            "WGSL: atomics are integers only ({token}); use Atomic<uint> or Atomic<int> (fixed "
            "point for a sum) or build without the wgsl target"
        ),
        "WGSL: `Atomic<float>` (and of `half`): WGSL's atomics are integers.",
        Probe(
            "RWStructuredBuffer<Atomic<float>> o;\n[numthreads(1,1,1)] void main() "
            "{ o[0].add(1.0); }\n",
            Target.Wgsl,
        ),
    ),
    Refusal(
        "msl-double",
        _MSL,
        _DOUBLE,
        _say("Metal: no 64-bit floats ({token}); use float or build without the msl target"),
        "Metal: 64-bit floats (`double`, `float64_t`, their vectors and matrices).",
        Probe(_KERNEL.format("double x = o[1]; o[0] = uint(x * x);"), Target.Msl, "double"),
        scalars=frozenset({ScalarKind.Float64}),
    ),
    Refusal(
        "wgsl-min16-int",
        _WGSL,
        word_in(variants("min12int", "min16int", "min12uint", "min16uint", matrices=True)),
        _say(
            "WGSL: no 16-bit integers ({token}, 16-bit with -enable-16bit-types); use int/uint, "
            "build without -enable-16bit-types or without the wgsl target"
        ),
        "WGSL, with `-enable-16bit-types`: the minimum-precision integers (`min16int`, "
        "`min12int`, `min16uint`...), which are then 16-bit integers.",
        Probe(_KERNEL.format("int16_t x = int16_t(o[1]); o[0] = uint(x * x);"), Target.Wgsl),
        sixteen_bit=True,
        scalars=frozenset({ScalarKind.Int16, ScalarKind.UInt16}),
    ),
    *(
        Refusal(
            f"{t.value}-buffer-pointer",
            frozenset({t}),
            _BUFFER_POINTER,
            _say(
                f"{TARGET_NAMES[t]}: {{token}} (a buffer device address) {why}; pass the buffer "
                f"as a StructuredBuffer or ByteAddressBuffer, or build without the {t.value} "
                "target"
            ),
            f"{TARGET_NAMES[t]}: `vk::BufferPointer` (a buffer device address) {why}"
            + ("" if t is Target.Wgsl else " (the reflection format has no pointer type)")
            + ".",
            None
            if t is not Target.Wgsl
            else Probe(
                "struct G { float4 a; };\nstruct PC { vk::BufferPointer<G> p; };\n"
                "[[vk::push_constant]] PC pc;\nRWStructuredBuffer<float> o;\n"
                "[numthreads(1,1,1)] void main() { o[0] = pc.p.Get().a.x; }\n",
                t,
            ),
        )
        for t, why in [
            (Target.SpirV, "has no record in the reflection format"),
            (Target.Msl, "is not emitted for Metal"),
            (Target.Wgsl, "does not exist in WGSL"),
        ]
    ),
    *(
        Refusal(
            f"{t.value}-ext-builtin",
            frozenset({t}),
            _EXT_BUILTIN,
            _say(
                f"{TARGET_NAMES[t]}: [[{{token}}]] (an inline SPIR-V built-in) is ignored by "
                "Slang: the variable would be an ordinary static and the built-in lost; use the "
                "HLSL system-value semantic (SV_StencilRef, ...) on an entry point's input or "
                "output instead"
            ),
            f"{TARGET_NAMES[t]}: `[[vk::ext_builtin_input]]`/`[[vk::ext_builtin_output]]` "
            "(inline SPIR-V built-ins: Slang ignores the attribute, the variable would be an "
            "ordinary static).",
            Probe(
                "[[vk::ext_builtin_input(/* NumWorkgroups */ 24)]] static const uint3 n;\n"
                + _KERNEL.format("o[0] = n.x;"),
                t,
                "E31000",
            ),
        )
        for t in Target
    ),
    *(
        Refusal(
            f"{t.value}-stencil-ref",
            frozenset({t}),
            _stencil_ref,
            _say(
                f"{TARGET_NAMES[t]}: {{token}} (a stencil reference output) is not built: the "
                "reflection format has no record for it, and a host would take it for a colour "
                "attachment"
            ),
            f"{TARGET_NAMES[t]}: an `SV_StencilRef` output (the reflection format has no "
            "built-in for it; it was taken for a colour output).",
            None,
        )
        for t in Target
    ),
)
assert all(r.targets <= EVERY_TARGET for r in REFUSALS)
# Each record's targets in ``Target``'s order (a frozenset's look-up of an enum costs).
_TARGETS = {r.id: tuple(t for t in Target if t in r.targets) for r in REFUSALS}


def refused(
    src: SourceSet, targets: Collection[Target], sixteen_bit: bool
) -> dict[Target, list[Diagnostic]]:
    """Every refusal of ``REFUSALS`` for ``targets`` but those of records that name their
    ``scalars`` (``unless_dead``): per file, each record's first token, at that token as
    written (a macro's at its invocation)."""
    out: dict[Target, list[Diagnostic]] = {}
    for record, target, diag in _found(src, targets, sixteen_bit):
        if not record.scalars:
            out.setdefault(target, []).append(diag)
    return out


def unless_dead(
    src: SourceSet, targets: Collection[Target], sixteen_bit: bool
) -> dict[Target, list[tuple[Diagnostic, frozenset[ScalarKind]]]]:
    """The refusals of the records that name their ``scalars``, each with them: the driver
    raises one where Slang fails on the target, or the target's code or the reflection holds
    such a type; where neither does (Slang dropped the construct as dead code: a local never
    read), the target builds."""
    out: dict[Target, list[tuple[Diagnostic, frozenset[ScalarKind]]]] = {}
    for record, target, diag in _found(src, targets, sixteen_bit):
        if record.scalars:
            out.setdefault(target, []).append((diag, record.scalars))
    return out


def _found(
    src: SourceSet, targets: Collection[Target], sixteen_bit: bool
) -> list[tuple[Refusal, Target, Diagnostic]]:
    """Every record's first token per file, looked for once per read (``refused`` and
    ``unless_dead`` each take their share)."""
    key = ("refusals", frozenset(targets), sixteen_bit)
    found: list[tuple[Refusal, Target, Diagnostic]] = src.derived(
        key, lambda: list(_look(src, targets, sixteen_bit))
    )
    return found


def _look(
    src: SourceSet, targets: Collection[Target], sixteen_bit: bool
) -> Iterator[tuple[Refusal, Target, Diagnostic]]:
    for path in src.texts:
        stream = src.stream(path)
        looked: dict[Trigger, tuple[Token, str] | None] = {}  # each trigger's, once a file
        for record in REFUSALS:
            wanted = [t for t in _TARGETS[record.id] if t in targets]
            if not wanted or (record.sixteen_bit and not sixteen_bit):
                continue
            trigger = record.trigger
            if trigger not in looked:
                looked[trigger] = trigger(stream)
            found = looked[trigger]
            if found is None:
                continue
            token, spelled = found
            for target in wanted:
                message = record.message(target).format(token=spelled)
                yield record, target, src.at_token(path, token, message, Code.NOT_ON_TARGET)
