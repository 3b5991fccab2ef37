"""The readers on real Slang output. The SPIR-V reader is held against an independent one:
spirv-dis's text of the same module (capabilities, decorations, execution modes, names)."""

from __future__ import annotations

import re

import pytest
from verify_support import compiled, manifest_shaders

from module_validation import disassembled
from oneshader.compiler.verify.crosscheck import read_output
from oneshader.reflection.model import Target

_SPIRV_SHADERS = [s["file"] for s in manifest_shaders() if "spirv" in s["targets"]]


@pytest.mark.parametrize("file", _SPIRV_SHADERS)
def test_spirv_reader_agrees_with_spirv_dis(file: str) -> None:
    result = compiled(file)
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    (out,) = [o for o in result.outputs if o.target is Target.SpirV]
    text = disassembled(out.data, "--raw-id")
    module = read_output(out)
    assert module is not None

    assert module.capabilities == set(re.findall(r"OpCapability (\w+)", text))

    names = dict(re.findall(r'OpName %(\d+) "([^"]*)"', text))
    decos: dict[str, dict[str, int]] = {}
    for ident, deco, value in re.findall(r"OpDecorate %(\d+) (\w+) (\d+)\b", text):
        decos.setdefault(ident, {})[deco] = int(value)
    seen = 0
    for found in module.resources.values():
        for res in found:
            ident = next(i for i, n in names.items() if n == res.emitted)
            d = decos.get(ident, {})
            assert (res.set, res.binding) == (d.get("DescriptorSet"), d.get("Binding")), res
            seen += res.binding is not None
    assert seen == len(re.findall(r"OpDecorate %\d+ Binding ", text))

    spec_ids = {names[i]: d["SpecId"] for i, d in decos.items() if "SpecId" in d}
    assert {k: v.index for k, v in module.spec_constants.items()} == spec_ids

    entry_ids = dict(re.findall(r'OpEntryPoint \w+ %(\d+) "(\w+)"', text))
    sizes = {
        entry_ids[fid]: (int(x), int(y), int(z))
        for fid, x, y, z in re.findall(r"OpExecutionMode %(\d+) LocalSize (\d+) (\d+) (\d+)", text)
    }
    assert {n: e.workgroup for n, e in module.entries.items() if e.workgroup} == sizes

    # uses: the resource variables each OpEntryPoint lists in its interface (SPIR-V 1.4+).
    storage = dict(re.findall(r"%(\d+) = OpVariable %\d+ (\w+)", text))
    for name, interface in re.findall(r'OpEntryPoint \w+ %\d+ "(\w+)"((?: %\d+)*)', text):
        listed = {
            names[i].removesuffix(".counter").removesuffix(".elements")
            for i in re.findall(r"%(\d+)", interface)
            if storage.get(i) in ("Uniform", "StorageBuffer", "UniformConstant", "PushConstant")
        }
        assert module.entries[name].uses == listed, name

    locations = sorted(d["Location"] for d in decos.values() if "Location" in d)
    read = sorted(
        v.location
        for e in module.entries.values()
        for v in (*e.inputs, *e.outputs)
        if v.location is not None
    )
    # A variable listed by two entry points is read twice; every decorated one at least once.
    assert set(read) == set(locations)


@pytest.mark.parametrize(
    ("file", "target"),
    [
        (s["file"], t)
        for s in manifest_shaders()
        for t in (Target.Msl, Target.Wgsl)
        if t.value in s["targets"]
    ],
)
def test_text_readers_find_every_entry_point(file: str, target: Target) -> None:
    result = compiled(file)
    assert result.ok
    entries = {e.name: e.stage.value for e in result.reflection.entry_points}
    found: dict[str, str] = {}
    for out in result.outputs:
        if out.target is target:
            module = read_output(out)
            assert module is not None
            found.update({n: e.stage for n, e in module.entries.items()})
    found = {("main" if n == "main_0" else n): s for n, s in found.items()}
    assert found == entries
