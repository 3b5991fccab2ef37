"""Links among the inputs: the build records what a compile read under the name it used (the
link's target, the file's identity and digest), so retargeting a link is a change; a link given
as a source names its outputs after itself."""

from __future__ import annotations

import os
from pathlib import Path

from build_helpers import BuildRun, summary_counts

from oneshader.buildtask.state import BuildState

SHADER = """#include "inc/common.hlsli"
RWStructuredBuffer<uint> Data;

[shader("compute")]
[numthreads(8, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Data[id.x] = id.x * VALUE;
}
"""


def _version(folder: Path, name: str, value: int) -> Path:
    path = folder / name
    path.write_text(f"static const uint VALUE = {value}u;\n")
    return path


def _relink(link: Path, target: str) -> None:
    """``ln -sfn target link``: the link replaced in one rename, as ln does."""
    tmp = link.with_name(link.name + ".new")
    os.symlink(target, tmp)
    os.replace(tmp, link)


def _setup(project: Path) -> Path:
    inc = project / "shaders" / "inc"
    inc.mkdir()
    _version(inc, "v1.hlsli", 111)
    _version(inc, "v2.hlsli", 222)
    os.symlink("v1.hlsli", inc / "common.hlsli")
    (project / "shaders" / "Linked.hlsl").write_text(SHADER)
    return inc


def _wgsl(project: Path) -> str:
    return (project / "out" / "Linked.wgsl").read_text()


def test_retargeting_a_linked_include_rebuilds_its_includers(
    project: Path, build: BuildRun
) -> None:
    inc = _setup(project)
    assert build()[0] == 0
    assert "111" in _wgsl(project)
    _relink(inc / "common.hlsli", "v2.hlsli")
    status, out, _ = build()
    assert status == 0
    assert summary_counts(out)[0] == 1  # Linked, and only it
    assert "222" in _wgsl(project) and "111" not in _wgsl(project)
    assert summary_counts(build()[1]) == (0, 6, 0)
    record = BuildState.load(project / "out")[0].shaders["Linked"]
    names = {s.path: s.real for s in record.inputs}
    assert names["shaders/inc/common.hlsli"] == "shaders/inc/v2.hlsli"


def test_a_retarget_to_a_file_of_the_same_size_and_time_is_seen(
    project: Path, build: BuildRun
) -> None:
    """What a stat of the link shows may not move at all (``cp -p`` copies the time): the
    recorded target and identity decide, not the size and mtime."""
    inc = _setup(project)
    st = (inc / "v1.hlsli").stat()
    os.utime(inc / "v2.hlsli", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert build()[0] == 0
    _relink(inc / "common.hlsli", "v2.hlsli")
    assert summary_counts(build()[1])[0] == 1
    assert "222" in _wgsl(project)


def test_retargeting_a_linked_include_folder_rebuilds(project: Path, build: BuildRun) -> None:
    shaders = project / "shaders"
    for name, value in (("inc1", 1), ("inc2", 2)):
        (shaders / name).mkdir()
        _version(shaders / name, "common.hlsli", value * 111)
    os.symlink("inc1", shaders / "inc")
    (shaders / "Linked.hlsl").write_text(SHADER)
    assert build()[0] == 0
    _relink(shaders / "inc", "inc2")
    assert summary_counts(build()[1])[0] == 1
    assert "222" in _wgsl(project)


def test_retargeting_a_linked_main_source_rebuilds(project: Path, build: BuildRun) -> None:
    inc = _setup(project)
    real = project / "real"
    real.mkdir()
    (real / "a.hlsl").write_text(SHADER.replace("inc/common.hlsli", "../shaders/inc/v1.hlsli"))
    (real / "b.hlsl").write_text(SHADER.replace("inc/common.hlsli", "../shaders/inc/v2.hlsli"))
    (project / "shaders" / "Linked.hlsl").unlink()
    os.symlink("../real/a.hlsl", project / "shaders" / "Linked.hlsl")
    assert build()[0] == 0
    assert "111" in _wgsl(project)
    _relink(project / "shaders" / "Linked.hlsl", "../real/b.hlsl")
    assert summary_counts(build()[1])[0] == 1
    assert "222" in _wgsl(project)
    assert summary_counts(build()[1])[0] == 0  # recorded as read, not always rebuilt
    assert inc.is_dir()


def test_a_linked_source_on_the_command_line_is_named_after_itself(
    project: Path, build: BuildRun
) -> None:
    (project / "real2.txt").write_text((project / "shaders" / "K0.hlsl").read_text())
    os.symlink("real2.txt", project / "s.hlsl")
    status, _, err = build("s.hlsl", "-o", "o2")
    assert status == 0, err
    assert sorted(p.name for p in (project / "o2").glob("s.*")) == [
        "s.metal",
        "s.reflection",
        "s.spv",
        "s.wgsl",
    ]
    assert 'source name="s.hlsl"' in (project / "o2" / "s.reflection").read_text()
