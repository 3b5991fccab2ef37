"""A build killed with SIGKILL, two builds on one OUT, and outputs that are never torn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from build_helpers import BuildRun, make_project, run_cli, summary_counts

from oneshader.buildtask.lock import OutLock
from oneshader.buildtask.noop import NOOP_NAME
from oneshader.buildtask.state import STATE_NAME, BuildState
from oneshader.fsutil import TEMPORARY_SUFFIX
from oneshader.reflection.format import ReflectionFormat
from process_helpers import assert_no_process_left

SPIRV_MAGIC = b"\x03\x02\x23\x07"


def assert_outputs_whole(out: Path) -> int:
    """Every output in OUT is complete: reflections parse, SPIR-V starts with its magic and is
    a whole number of words, no temporaries are left; the number of outputs."""
    count = 0
    for p in out.rglob("*"):
        if not p.is_file() or p.name in (STATE_NAME, ".oneshader.lock", NOOP_NAME):
            continue
        assert not p.name.endswith(TEMPORARY_SUFFIX), f"left-over temporary {p.name}"
        data = p.read_bytes()
        if p.suffix == ".reflection":
            ReflectionFormat.read(data, file=p.name)
        elif p.suffix == ".spv":
            assert data[:4] == SPIRV_MAGIC and len(data) % 4 == 0, p.name
        else:
            assert data, p.name
        count += 1
    return count


def test_sigkill_mid_build_then_rebuild_repairs(tmp_path: Path) -> None:
    # enough shaders that, even on a loaded machine, the kill lands long before the last one
    kernels = 24
    root = make_project(tmp_path / "proj", kernels=kernels)
    shaders = kernels + 3
    out = root / "out"
    cmd = [sys.executable, "-m", "oneshader.cli", "build", "-q", "-j", "1"]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(out.glob("*.reflection")):
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)  # in the middle: some shaders written, others not
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert list(out.glob("*.reflection")), "the build never got going"
    assert_no_process_left(root)  # the zygote and its worker saw their channels close

    result = run_cli(root, "-q")
    assert result.returncode == 0, result.stderr
    built, up_to_date, failed = summary_counts(result.stdout)
    assert failed == 0 and built + up_to_date == shaders and built >= 1
    assert assert_outputs_whole(out) == shaders * 4  # .spv .metal .wgsl .reflection
    again = run_cli(root, "-q")
    assert summary_counts(again.stdout) == (0, shaders, 0)


def test_a_torn_write_left_behind_is_swept_and_rebuilt(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", kernels=1)
    assert run_cli(root, "-q").returncode == 0
    out = root / "out"
    left = out / f".K0.spv.abc123xy{TEMPORARY_SUFFIX}"  # a temporary a kill left
    left.write_bytes(SPIRV_MAGIC)
    (out / "K0.spv").write_bytes(SPIRV_MAGIC[:2])  # and damage done behind our back
    result = run_cli(root, "-q")
    assert result.returncode == 0
    assert summary_counts(result.stdout) == (1, 3, 0)
    assert not left.exists()
    assert_outputs_whole(out)


def _plant(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not the build's")
    return path


def test_files_of_other_programs_under_out_are_never_swept(project: Path, build: BuildRun) -> None:
    """Only the temporaries of files this build writes go: git's pack temporaries, an editor's
    notes, another project's nested OUT (its in-flight temporaries and state), a temporary of
    another name or of an older naming all stay, wherever they are under OUT."""
    assert build("shaders", "-o", ".")[0] == 0  # OUT is the project itself, .git included
    others = [
        _plant(project / ".git" / "objects" / ".pack.abcdef.tmp"),
        _plant(project / ".git" / "objects" / f".pack.abcdefgh{TEMPORARY_SUFFIX}"),
        _plant(project / "shaders" / ".notes.123456.tmp"),
        _plant(project / ".K0.spv.abc123xy.tmp"),  # another program's temporary of that name
        _plant(project / f".Other.spv.abcdefgh{TEMPORARY_SUFFIX}"),  # not one of our outputs
        _plant(project / "b" / f".K0.spv.abcdefgh{TEMPORARY_SUFFIX}"),  # a nested OUT's
        _plant(project / "b" / f".{STATE_NAME}.abcdefgh{TEMPORARY_SUFFIX}"),
    ]
    ours = [
        _plant(project / f".K0.spv.abcdefgh{TEMPORARY_SUFFIX}"),
        _plant(project / "ui" / f".Lit.reflection.k_9zz0a1{TEMPORARY_SUFFIX}"),
        _plant(project / f".{STATE_NAME}.abcdefgh{TEMPORARY_SUFFIX}"),
    ]
    assert build("shaders", "-o", ".")[0] == 0
    assert [p for p in others if not p.exists()] == []
    assert [p for p in ours if p.exists()] == []


def test_nested_output_folders_keep_each_others_temporaries(project: Path, build: BuildRun) -> None:
    """One project writes to ``out``, another to ``out/nested``: the outer build does not look
    into the inner one's folder, so the inner one's in-flight temporaries survive it."""
    inner = project / "out" / "nested"
    assert build("shaders/K1.hlsl", "-o", "out/nested")[0] == 0
    in_flight = [
        _plant(inner / f".K1.spv.abcdefgh{TEMPORARY_SUFFIX}"),
        _plant(inner / ".K1.wgsl.abcdefgh.tmp"),  # as an older oneshader named them
    ]
    assert build()[0] == 0
    assert [p for p in in_flight if not p.exists()] == []
    assert (inner / "K1.spv").is_file()


def test_two_builds_at_once_wait_for_each_other(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", kernels=2)
    out = root / "out"
    release = threading.Event()
    held = threading.Event()

    def hold() -> None:  # a third party holds the lock until both builds are waiting
        with OutLock(out, lambda _msg: None):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    env = dict(os.environ, CI="1")
    cmd = [sys.executable, "-m", "oneshader.cli", "build"]
    procs = [
        subprocess.Popen(
            cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
        )
        for _ in range(2)
    ]
    # both are waiting: each says so first (a fixed sleep was too short on a loaded machine,
    # where a build's start alone can take longer)
    firsts = [p.stderr.readline() if p.stderr else "" for p in procs]
    assert all("waiting for another build of this output folder" in f for f in firsts), firsts
    assert all(p.poll() is None for p in procs)
    release.set()
    holder.join()
    results = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), results
    for _stdout, stderr in results:
        assert "waiting for another build" not in stderr  # said once, first
    counts = sorted(summary_counts(stdout) for stdout, _ in results)
    assert counts == [(0, 5, 0), (5, 0, 0)]  # one built, the other found it all done
    assert assert_outputs_whole(out) == 5 * 4
    state, why = BuildState.load(out)
    assert why == "" and len(state.shaders) == 5


def test_ctrl_c_keeps_what_was_built(tmp_path: Path) -> None:
    # enough shaders that, even on a loaded machine, the kill lands long before the last one
    kernels = 24
    root = make_project(tmp_path / "proj", kernels=kernels)
    shaders = kernels + 3
    out = root / "out"
    cmd = [sys.executable, "-m", "oneshader.cli", "build", "-q", "-j", "1"]
    pipe = subprocess.PIPE
    # its own process group, which ^C on a terminal signals whole: the build and its compilers;
    # ^C as a terminal delivers it even where this run was started in the background (a shell
    # starts background jobs with SIGINT ignored, and children inherit that)
    proc = subprocess.Popen(
        cmd,
        cwd=root,
        stdout=pipe,
        stderr=pipe,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    # a third reflection on disk means the second shader is recorded (one is finished after the
    # other, its outputs written before its record): at least two records are then kept
    while time.monotonic() < deadline and len(list(out.glob("*.reflection"))) < 3:
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in stderr and "crashed" not in stderr
    assert_no_process_left(root)
    state, why = BuildState.load(out)
    assert why == "" and 2 <= len(state.shaders) < shaders
    result = run_cli(root, "-q")
    assert result.returncode == 0
    assert summary_counts(result.stdout) == (shaders - len(state.shaders), len(state.shaders), 0)
    assert assert_outputs_whole(out) == shaders * 4


@pytest.mark.invalid_modules("stand-in code files: only which build they come from matters")
def test_a_shaders_outputs_change_as_one_unit_for_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build killed between two code files of a shader (here: its disk fills up) leaves no
    reflection beside them: a reflection present sits beside the code of its own build."""
    from oneshader.buildtask import outputs

    out = tmp_path / "out"
    out.mkdir()
    (out / "S.spv").write_bytes(b"v1 spirv")
    (out / "S.wgsl").write_bytes(b"v1 wgsl")
    (out / "S.reflection").write_bytes(b"v1 reflection")
    real = outputs.atomic_write
    written: list[str] = []

    def dies_after_one(path: Any, data: bytes, *, durable: bool = True) -> os.stat_result:
        if written:
            raise OSError(28, "No space left on device", str(path))
        written.append(str(path))
        return real(path, data, durable=durable)

    monkeypatch.setattr(outputs, "atomic_write", dies_after_one)
    files = [("S.spv", b"v2 spirv"), ("S.wgsl", b"v2 wgsl"), ("S.reflection", b"v2 refl")]
    with pytest.raises(OSError):
        outputs.write_files(out, files)
    assert (out / "S.spv").read_bytes() == b"v2 spirv"
    assert (out / "S.wgsl").read_bytes() == b"v1 wgsl"
    assert not (out / "S.reflection").exists()  # readers can tell: no reflection, no shader
