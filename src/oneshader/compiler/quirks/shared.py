"""The warnings a shared Slang request may give and still be used (``record.SharedWarning``):
most are emitted by Slang's front end, once for the request whatever its targets, so every
target gets it as a request of its own gives it; two by one target's own passes, which that
target alone gets: E41012 (the SPIR-V profile upgraded with the capabilities the code uses),
SPIR-V's, and E41026 (a switch's fall-through restructured), WGSL's. A request giving any
other diagnostic (an error, or another warning of a target's own passes) is left, and each
of its targets is compiled alone. Measured on this Slang over every corpus
bench/corpus.py reads (``--shared-check`` compares a shared request's warnings with each
target's own request's); where each is emitted, read in Slang's source."""

from __future__ import annotations

from oneshader.compiler.quirks.record import SharedWarning
from oneshader.reflection.model import Stage, Target


def _kernel(body: str, before: str = "") -> str:
    return (
        f"RWStructuredBuffer<uint> o;\n{before}[numthreads(1,1,1)]\n"
        f"void main(uint3 i : SV_DispatchThreadID) {{ {body} }}\n"
    )


_UNINITIALIZED = "the checks of the module's IR as lowered, before any target's passes"

SHARED_WARNINGS: tuple[SharedWarning, ...] = (
    SharedWarning("E10002", "octal literal", "the lexer", _kernel("o[0] = 010;")),
    SharedWarning(
        "E15601",
        "unknown #pragma ignored",
        "the preprocessor",
        _kernel("o[0] = 1;", "#pragma not_a_pragma\n"),
    ),
    SharedWarning(
        "E20101",
        "potentially unintended empty statement",
        "the parser",
        _kernel("if (i.x > 1); o[0] = 1;"),
    ),
    SharedWarning(
        "E30051",
        "potentially aliased out parameter",
        "the semantic checks (calls)",
        _kernel("uint x; f(x, x); o[0] = x;", "void f(out uint a, out uint b) { a = 1; b = 2; }\n"),
    ),
    SharedWarning(
        "E30056",
        "non-short-circuiting ?: is deprecated",
        "the semantic checks (expressions)",
        _kernel("uint2 v = i.xy > 1 ? i.xy : i.yx; o[0] = v.x;"),
    ),
    SharedWarning(
        "E30081",
        "implicit conversion not recommended",
        "the semantic checks (conversions)",
        _kernel("float f = i.x * 0.5; int cut = f; o[0] = cut;"),
    ),
    SharedWarning(
        "E30816",
        "inheritance is unstable",
        "the semantic checks (declarations)",
        _kernel(
            "B s; s.a = i.x; s.b = 2; o[0] = s.a + s.b;",
            "struct A { uint a; };\nstruct B : A { uint b; };\n",
        ),
    ),
    SharedWarning(
        "E31000",
        "unknown attribute",
        "the semantic checks (attributes)",
        _kernel("o[0] = 1;").replace("[numthreads(1,1,1)]", "[numthreads(1,1,1)] [NotAnAttribute]"),
    ),
    SharedWarning(
        "E38052",
        "vertex shader without an SV_Position output",
        "the semantic checks (entry points)",
        "float4 main(float4 p : POSITION) : COLOR0 { return p; }\n",
        Stage.Vertex,
    ),
    SharedWarning(
        "E41000",
        "unreachable code",
        "the lowering to IR",
        _kernel("o[0] = 1; return; o[1] = 2;"),
    ),
    SharedWarning(
        "E41012",
        "profile implicitly upgraded",
        "SPIR-V's own passes (the capabilities its code uses, against the profile's)",
        "Texture2D<float4> t;\nSamplerState s;\n"
        "float4 main(float4 p : SV_Position) : SV_Target { return t.GatherRed(s, p.xy); }\n",
        Stage.Pixel,
        Target.SpirV,
    ),
    SharedWarning(
        "E41015",
        "use of an uninitialized out parameter",
        _UNINITIALIZED,
        _kernel("uint x; f(x); o[0] = x;", "void f(out uint a) { o[1] = a; a = 1; }\n"),
    ),
    SharedWarning(
        "E41016",
        "use of an uninitialized variable",
        _UNINITIALIZED,
        _kernel("uint x, y; y += x; o[0] = y;"),
    ),
    SharedWarning(
        "E41017",
        "use of an uninitialized global variable",
        _UNINITIALIZED,
        _kernel("o[0] = g;", "static uint g;\n"),
    ),
    SharedWarning(
        "E41018",
        "returning without initializing an out parameter",
        _UNINITIALIZED,
        _kernel("uint x; f(x); o[0] = 1;", "void f(out uint a) { }\n"),
    ),
    SharedWarning(
        "E41024",
        "comma operator in an expression",
        "the semantic checks (expressions)",
        _kernel("uint x = (i.x, 2); o[0] = x;"),
    ),
    SharedWarning(
        "E41026",
        "switch fall-through restructured",
        "WGSL's own passes (WGSL has no fall-through: the cases are restructured, code "
        "duplicated; SPIR-V's and Metal's passes reconverge the switch without a warning)",
        _kernel(
            "uint x = 0; switch (i.x) { case 0: x += 2; case 1: x += 3; break; "
            "default: x = 7; break; } o[0] = x;"
        ),
        only=Target.Wgsl,
    ),
    SharedWarning(
        "E41035",
        "possible use of an uninitialized variable",
        _UNINITIALIZED,
        _kernel("uint2 x; if (i.x > 3) { x.xy = i.xy; } o[0] = x.x;"),
    ),
)

SHARED_CODES = frozenset(w.code for w in SHARED_WARNINGS)
# the codes one target alone gives, and that target
ONE_TARGET_CODES = {w.code: w.only for w in SHARED_WARNINGS if w.only is not None}
