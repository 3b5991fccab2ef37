"""The quirk registry (compiler/quirks/): its records are unique, docs/compiler.md shows them as
they are, and each probe still needs its quirk with plain Slang (the day Slang builds a probe
into a valid module, its record can go, and this test says so)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from module_validation import module_errors
from oneshader.compiler.api import CompileOptions
from oneshader.compiler.quirks import docs, rewrites
from oneshader.compiler.quirks.record import EVERY_TARGET, Context, Probe, Rewrite
from oneshader.compiler.quirks.refusals import REFUSALS
from oneshader.compiler.quirks.rewrites import REWRITES
from oneshader.compiler.quirks.tokens import sequence, variants, word_in
from oneshader.compiler.slang import capi as S
from oneshader.compiler.slang.facts import SLANG_STAGE_ID
from oneshader.compiler.slang.request import slang_args
from oneshader.compiler.source.query import Edit, Stream, blanks, lexed
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.reflection.model import Stage, Target

ROOT = Path(__file__).resolve().parents[2]
_SUFFIX = {Target.SpirV: ".spv", Target.Msl: ".metal", Target.Wgsl: ".wgsl"}


def test_every_record_has_its_own_id_and_a_sentence() -> None:
    ids = [r.id for r in (*REWRITES, *REFUSALS)]
    assert len(ids) == len(set(ids))
    assert all(r.doc and r.targets for r in (*REWRITES, *REFUSALS))


def test_the_docs_show_the_records_as_they_are() -> None:
    """docs/compiler.md's rewrite list and refusal table are made from the records: edit a
    record, then run ``python -m oneshader.compiler.quirks.docs docs/compiler.md``."""
    text = (ROOT / "docs" / "compiler.md").read_text()
    assert docs.updated(text) == text


def _blank_word(word: str, new: str = "") -> Rewrite:
    """A record that blanks every ``word`` of a file (or writes ``new`` there)."""

    def edits(src: SourceSet, path: Path, s: Stream, plan: object) -> list[Edit]:
        spans = [(s.start(i), s.end(i)) for i in s.words((word,))]
        return [(a, b, new) for a, b in spans] if new else blanks(s.text, spans)

    return Rewrite(f"blank-{word}", EVERY_TARGET, "", lambda c: True, edits)


def _rewrite_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: tuple[Rewrite, ...], text: str
) -> str:
    shader = tmp_path / "s.hlsl"
    shader.write_text(text)
    src = SourceSet(str(shader), "s.hlsl", ())
    src.read()
    monkeypatch.setattr(rewrites, "REWRITES", records)
    path = next(iter(src.texts))
    return rewrites.rewritten(src, path, tuple((r.id, True) for r in records))


def test_the_records_edits_are_applied_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records' span edits of one stream are made in one pass: neither reads the other's."""
    text = "float a; float b;\n"
    out = _rewrite_with(tmp_path, monkeypatch, (_blank_word("a"), _blank_word("b")), text)
    assert out == "float  ; float  ;\n"


def test_overlapping_edits_of_two_records_are_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two records editing one span would each undo the other: the loop refuses, naming
    both, rather than pick one."""
    records = (_blank_word("a"), replace(_blank_word("a", "c"), id="again"))
    with pytest.raises(rewrites.OverlappingEdits, match="'blank-a' and 'again'"):
        _rewrite_with(tmp_path, monkeypatch, records, "float a;\n")
    # a record that reads the edited text sees the first one's result instead
    records = (records[0], replace(records[1], reads_edited=True))
    assert _rewrite_with(tmp_path, monkeypatch, records, "float a;\n") == "float  ;\n"
    # the same edit found by both is made once
    records = (_blank_word("a"), replace(_blank_word("a"), id="again"))
    assert _rewrite_with(tmp_path, monkeypatch, records, "float a;\n") == "float  ;\n"


def test_a_refusal_without_a_probe_is_a_gap_of_the_reflection_format() -> None:
    """Only what oneshader itself cannot say (no record in the reflection format) is refused
    without a probe of Slang."""
    unprobed = [r for r in REFUSALS if r.probe is None]
    assert unprobed and all("reflection format" in r.doc for r in unprobed), [
        r.id for r in unprobed
    ]


def _plain_slang(probe: Probe) -> tuple[bool, str, bytes]:
    lib = S.library()
    args = slang_args(probe.target, CompileOptions())
    entries = [("main", SLANG_STAGE_ID[Stage.Compute])]
    req = S.Request(lib, args, ("probe.hlsl", probe.source), entries)
    try:
        result = req.compile()
        return result.ok, result.diagnostics, result.code
    finally:
        req.close()


_PROBED = [r for r in (*REWRITES, *REFUSALS) if r.probe is not None]


@pytest.mark.parametrize("record", _PROBED, ids=[r.id for r in _PROBED])
def test_slang_still_needs_the_quirk(record: object) -> None:
    probe = record.probe  # type: ignore[attr-defined]
    assert isinstance(probe, Probe)
    ok, diagnostics, code = _plain_slang(probe)
    if probe.still:
        needed = probe.still in diagnostics or probe.still in code.decode(errors="replace")
    else:
        suffix = _SUFFIX[probe.target]
        needed = not ok or (suffix != ".metal" and module_errors(suffix, code, "probe") != "")
    assert needed, f"plain Slang builds the probe of quirk '{record.id}': retire the record"  # type: ignore[attr-defined]


def test_a_refusal_is_found_in_the_tokens_as_compiled(tmp_path: Path) -> None:
    """A refused construct in a comment or an ``#if`` branch not taken is not refused; one a
    macro makes is refused at the invocation (the regex over the text found the ``#define``)."""
    from oneshader.compiler import compile_file

    main = "[numthreads(1,1,1)] void main() { REAL y = o[1]; o[0] = (float)(y * y); }"
    source = (
        "// a double in a comment\n#define REAL double\n#if 0\nint64_t x;\n#endif\n"
        f"RWStructuredBuffer<float> o;\n{main}\n"
    )
    (tmp_path / "s.hlsl").write_text(source)
    options = CompileOptions(targets=(Target.Wgsl,), source_name="s.hlsl")
    result = compile_file(str(tmp_path / "s.hlsl"), options)
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert (error.line, error.column, error.code) == (7, main.index("REAL") + 1, "OS1003")
    assert "no 64-bit floats (double)" in error.message and "REAL y" in error.excerpt


_DEAD = """RWStructuredBuffer<uint> o;
[numthreads(1,1,1)] void main()
{
    int64_t unused = 5;  // never read: Slang's code holds no 64-bit type
    double d = 2.0;
    uint16_t s = 3;
    o[0] = 1;
}
"""


@pytest.mark.parametrize("targets", [(Target.Msl,), (Target.Wgsl,), tuple(Target)])
def test_a_type_refusal_stands_only_where_the_module_or_the_reflection_holds_the_type(
    tmp_path: Path, targets: tuple[Target, ...]
) -> None:
    """A refused type (``refusals.unless_dead``) in dead code builds, as plain Slang's module:
    Slang drops it, so the module is the shader as written; live, or in a resource the
    reflection states (even one no code reads), it is refused at the first token that asks
    for it, on the target that lacks it."""
    from oneshader.compiler import compile_file

    def build(source: str) -> list[str]:
        (tmp_path / "s.hlsl").write_text(source)
        options = CompileOptions(targets=targets, source_name="s.hlsl")
        result = compile_file(str(tmp_path / "s.hlsl"), options)
        assert result.ok == (not [d for d in result.diagnostics if d.is_error])
        return [f"{d.line}:{d.column} {d.message.split(';')[0]}" for d in result.diagnostics]

    assert build(_DEAD) == []
    live = (
        "RWStructuredBuffer<uint> o;\n"
        "[numthreads(1,1,1)] void main() { double d = o[1]; o[0] = uint(d * d); }\n"
    )
    expected = {
        Target.Msl: "2:35 Metal: no 64-bit floats (double)",
        Target.Wgsl: "2:35 WGSL: no 64-bit floats (double)",
    }
    assert build(live) == [expected[t] for t in targets if t in expected]
    unread = "cbuffer C { uint64_t big; float f; }\nStructuredBuffer<double> sd;\n" + _DEAD
    expected_unread = {
        Target.Msl: ["2:18 Metal: no 64-bit floats (double)"],
        Target.Wgsl: [
            "1:13 WGSL: no 64-bit integers (uint64_t)",
            "2:18 WGSL: no 64-bit floats (double)",
        ],
    }
    assert build(unread) == [e for t in targets for e in expected_unread.get(t, [])]


# A trigger finds its first token through the stream's index of its identifiers where a part
# of it is identifiers (quirks.tokens): the same token as trying every position.
_TRIGGER_TEXT = """\
struct S { float4 c : sv_stencilref; Atomic<half> a; };
Texture2D<float> t0; RWTexture2D < half4 > t1; Texture2D<half> t2;
float4 main(float4 p : SV_STENCILREF) : SV_Target { int64_t i; vk::BufferPointer<S> b; }
"""


def test_triggers_find_the_first_run_as_every_position_would() -> None:
    s = lexed(_TRIGGER_TEXT)

    def naive(parts: list[list[str]], folded: bool = False) -> int | None:
        n = len(parts)
        for i in range(len(s) - n + 1):
            texts = [s.tokens[i + k].text for k in range(n)]
            if all(
                (t.upper() in {p.upper() for p in ps}) if folded and k == n - 1 else t in ps
                for k, (t, ps) in enumerate(zip(texts, parts, strict=True))
            ):
                return i
        return None

    cases: list[tuple[list[list[str]], bool]] = [
        ([[":"], ["SV_StencilRef"]], True),
        ([["Atomic"], ["<"], ["float", "half"]], False),
        ([["Texture2D", "RWTexture2D"], ["<"], sorted(variants("half"))], False),
        ([["vk"], ["::"], ["BufferPointer"]], False),
        ([["<"], ["half4"]], False),
        ([["t2"]], False),
    ]
    for parts, folded in cases:
        found = sequence(*parts, folded=folded)(s)
        at = naive(parts, folded)
        assert (found[0] if found else None) is (s.tokens[at] if at is not None else None), parts
    first = word_in(variants("int64_t", "half"))(s)
    assert first is not None and first[1] == "half"


_PER_TARGET_SOURCES = (
    *(r.probe.source for r in REWRITES if r.probe is not None),
    "struct V { float4 p : SV_Position; float s : PSIZE; };\n"
    "void main(out V v, out float4 c : COLOR0) { v.p = 0; v.s = 1; c = fwidth(c); clip(c.x); }\n",
)


@pytest.mark.parametrize("text", _PER_TARGET_SOURCES)
def test_a_plan_not_per_target_is_the_same_for_every_target(tmp_path: Path, text: str) -> None:
    """``rewrites.plan`` works out a record's plan once for every target unless the record is
    ``per_target``: such a plan must not read the target (nor the padding)."""
    shader = tmp_path / "s.hlsl"
    shader.write_text(text)
    src = SourceSet(str(shader), "s.hlsl", ())
    src.read()
    for stage in (Stage.Compute, Stage.Vertex, Stage.Pixel):
        plans = {
            r.id: {r.plan(Context(src, t, ("pad",), (("main", stage),))) for t in Target}
            for r in REWRITES
            if not r.per_target
        }
        assert all(len(found) == 1 for found in plans.values()), plans
