"""bench/corpus.py's per-corpus configuration files: an engine's conventions as data."""

from __future__ import annotations

import sys
from pathlib import Path

from oneshader.compiler.api import EntryPointSpec, RegisterShift
from oneshader.reflection.model import Stage

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_stage_by_name_suffix_default_stage_shifts_and_variants(tmp_path: Path) -> None:
    """MiniEngine's and FidelityFX's kind: the stage from the name's suffix (compute by
    default), one entry name (defined in an include, so not searched for), DXC's shifts, a
    group's own defines over the top-level ones, and a 16-bit variant of every file."""
    _tree(
        tmp_path / "tree",
        {
            "S/BlurCS.hlsl": '#include "x.hlsli"\n',
            "S/ModelVS.hlsl": "void main() {}\n",
            "S/Fill_16.hlsl": "void main() {}\n",
            "S/x.hlsli": "[numthreads(1,1,1)] void main() {}\n",
            "S/notes.txt": "",
        },
    )
    (tmp_path / "c.toml").write_text(
        'files = ["S/*.hlsl"]\nentry = "main"\ndefault-stage = "compute"\n'
        'shifts = { b = 0, t = 1000 }\ndefines = { A = "1", B = "2" }\n'
        'include-dirs = ["S"]\n'
        '[stages]\n"*VS.hlsl" = "vertex"\n'
        '[[variants]]\nname = ""\n'
        '[[variants]]\nname = "16bit"\ndefines = { HALF = "1" }\nenable-16bit-types = true\n'
        '[[group]]\nfiles = ["S/Fill*"]\ndefines = { B = "3" }\n'
        '[[group]]\nfiles = ["S/*"]\n'
    )
    root = tmp_path / "tree"
    found = corpus.discover(root, [], corpus.load_config(tmp_path / "c.toml", root))
    shaders = {s.name: s for s in found.shaders}
    assert sorted(shaders) == [
        "S/BlurCS.hlsl",
        "S/BlurCS.hlsl#16bit",
        "S/Fill_16.hlsl",
        "S/Fill_16.hlsl#16bit",
        "S/ModelVS.hlsl",
        "S/ModelVS.hlsl#16bit",
    ]
    blur, vs = shaders["S/BlurCS.hlsl#16bit"], shaders["S/ModelVS.hlsl"]
    assert blur.entries == (EntryPointSpec("main", Stage.Compute),)
    assert vs.entries == (EntryPointSpec("main", Stage.Vertex),)
    assert blur.shifts == (RegisterShift("b", 0), RegisterShift("t", 1000))
    assert blur.defines == (("A", "1"), ("B", "2"), ("HALF", "1"))
    assert shaders["S/Fill_16.hlsl"].defines == (("A", "1"), ("B", "3"))
    assert blur.enable_16bit_types and not vs.enable_16bit_types
    assert blur.include_dirs == (str(root / "S"),)
    assert blur.options((corpus.Target.SpirV,)).enable_16bit_types


def test_entry_candidates_extension_stages_and_overrides(tmp_path: Path) -> None:
    """Diligent's kind: the stage from the extension, the entry the first candidate the file
    defines (``{stem}``), an unbuilt stage skipped with its reason, per-file entry points."""
    _tree(
        tmp_path / "tree",
        {
            "a/font_ps.psh": "// main( in a comment\nvoid font_ps() {}\n",
            "a/blit.vsh": "void VSmain() {}\n",
            "a/cube.gsh": "void main() {}\n",
            "a/both.hlsl": "void VS() {}\nvoid PS() {}\n",
            "a/none.psh": "void other() {}\n",
        },
    )
    (tmp_path / "c.toml").write_text(
        'files = ["a/*"]\nentry = ["main", "{stem}", "VSmain"]\n'
        '[stages]\n"*.vsh" = "vertex"\n"*.psh" = "pixel"\n"*.gsh" = "geometry"\n'
        '[entry-points]\n"a/both.hlsl" = ["VS:vertex", "PS:pixel"]\n'
    )
    root = tmp_path / "tree"
    found = corpus.discover(root, [], corpus.load_config(tmp_path / "c.toml", root))
    entries = {s.name: s.entries for s in found.shaders}
    assert entries == {
        "a/both.hlsl": (EntryPointSpec("VS", Stage.Vertex), EntryPointSpec("PS", Stage.Pixel)),
        "a/blit.vsh": (EntryPointSpec("VSmain", Stage.Vertex),),
        "a/font_ps.psh": (EntryPointSpec("font_ps", Stage.Pixel),),
    }
    skipped = dict(found.skipped)
    assert "geometry" in skipped["a/cube.gsh"]
    assert skipped["a/none.psh"] == "no entry point named main or none or VSmain"


def test_the_shipped_configurations_load(tmp_path: Path) -> None:
    """Every bench/corpora/*.toml parses with known keys only."""
    names = sorted(p.stem for p in (BENCH / "corpora").glob("*.toml"))
    assert names == ["diligent", "dxc", "ffx", "miniengine", "sascha", "vksamples"]
    for name in names:
        config = corpus.load_config(BENCH / "corpora" / f"{name}.toml", tmp_path)
        assert config.groups and config.variants


def test_validate_plain_counts_only_the_modules_the_validators_accept(tmp_path: Path) -> None:
    """``--validate-plain``: plain Slang's SPIR-V and WGSL face spirv-val and naga, as
    oneshader's do; an invalid module is a failure naming the validator, never a success."""
    import base64

    from oneshader.reflection.model import Target

    _tree(
        tmp_path,
        {
            "a.comp.hlsl": "RWStructuredBuffer<uint> B;\n"
            "[numthreads(1,1,1)] void main() { B[0] = 1; }\n"
        },
    )
    shader = corpus.discover(tmp_path, []).shaders[0]
    answers = corpus.plain_slang([shader], (Target.SpirV, Target.Wgsl), 1, validate=True)
    assert [a["ok"] for a in answers.values()] == [True, True]
    assert not any("code" in a for a in answers.values())

    bad = {
        ("x", Target.SpirV): {
            "ok": True,
            "error": "",
            "code": base64.b64encode(b"\0" * 20).decode(),
        },
        ("x", Target.Wgsl): {
            "ok": True,
            "error": "",
            "code": base64.b64encode(b"fn f( {").decode(),
        },
        ("x", Target.Msl): {"ok": True, "error": "", "code": base64.b64encode(b"?").decode()},
    }
    corpus._validated(bad, 1)  # type: ignore[arg-type]
    assert bad[("x", Target.SpirV)]["invalid"] and "spirv-val" in str(
        bad[("x", Target.SpirV)]["error"]
    )
    assert bad[("x", Target.Wgsl)]["invalid"] and "naga" in str(bad[("x", Target.Wgsl)]["error"])
    assert bad[("x", Target.Msl)] == {"ok": True, "error": ""}  # Metal: no validator here


def test_cost_pairs_after_the_full_turns() -> None:
    """``--pairs`` turns add ``-j 1`` builds and plain processes beside them, not ``-j N``
    builds: the parallel figure takes the full turns' builds alone, the paired ratios every
    turn; the ratios come with their quartiles from four turns on."""
    full, pairs = 2, 3
    builds = [(10.0 + k, 11.0) for k in range(full + pairs)]
    together = [(9.0, 9.0)] * (full + pairs)
    cost = corpus.Cost(20, builds, [(30.0, 30.0)] * full, together, [(6.0, 12.0)] * full, 2)
    assert cost.in_turns() == [10.0, 6.0, 11.0, 6.0]
    walls, _ = cost.paired()
    assert len(walls) == full + pairs and walls[-1] == 14.0 / 9.0
    assert corpus._spread([1.1, 1.2, 1.3]) == "1.10x, 1.20x, 1.30x (median 1.20x)"
    shown = corpus._spread([1.0, 1.1, 1.2, 1.3, 1.4])
    assert shown.endswith("(median 1.20x, quartiles 1.05x-1.35x)")
