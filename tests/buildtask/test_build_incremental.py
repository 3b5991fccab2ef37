"""``oneshader build`` end to end with the real compiler: layout, incremental rebuilds, removal
of stale outputs, failures, diagnostics and exit codes."""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from build_helpers import BuildRun, fork_path_only, kernel, summary_counts

from oneshader import fsutil
from oneshader.buildtask.builder import STALE_KEY
from oneshader.buildtask.command import run_once
from oneshader.buildtask.config import load_config
from oneshader.buildtask.progress import Progress
from oneshader.buildtask.scheduler import WorkerPool
from oneshader.buildtask.state import STATE_NAME, BuildState
from oneshader.cli import make_parser
from oneshader.compiler.api import CompileOptions, CompileResult
from oneshader.compiler.process.worker import CompilerWorker, _Child
from oneshader.fsutil import TEMPORARY_SUFFIX
from oneshader.reflection.format import ReflectionFormat
from process_helpers import parent_of

ALL = ["Sprite", "ui/Lit", "NoMarkup", "K0", "K1"]
SUFFIXES = [".spv", ".metal", ".reflection"]


def outputs(out: Path) -> set[str]:
    return {
        p.relative_to(out).as_posix()
        for p in out.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


def touch_later(path: Path, text: str) -> None:
    """Rewrite ``path`` and make sure its mtime moves (coarse clocks)."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 10_000_000, before + 10_000_000))


def test_full_build_mirrors_sources_with_project_relative_names(
    project: Path, build: BuildRun
) -> None:
    status, out, err = build()
    assert status == 0, err
    assert summary_counts(out) == (5, 0, 0)
    made = outputs(project / "out")
    for stem in ALL:
        for suffix in SUFFIXES:
            assert stem + suffix in made
        assert any(m.startswith(stem + ".") and m.endswith(".wgsl") for m in made), stem
    refl = ReflectionFormat.read((project / "out/ui/Lit.reflection").read_bytes())
    assert refl.source == "shaders/ui/Lit.hlsl"
    assert [
        e.name
        for e in ReflectionFormat.read(
            (project / "out/NoMarkup.reflection").read_bytes()
        ).entry_points
    ] == ["main"]
    for p in (project / "out").rglob("*"):
        if p.is_file():
            assert str(project).encode() not in p.read_bytes(), p  # no absolute paths anywhere


def test_noop_build_starts_no_compiler(project: Path, build: BuildRun) -> None:
    assert build()[0] == 0
    state_before = (project / "out" / STATE_NAME).read_bytes()

    def no_worker() -> CompilerWorker:
        raise AssertionError("a no-op build started a compiler")

    config = load_config(make_parser().parse_args(["build", "-q"]), project)
    with WorkerPool(2, no_worker) as pool:
        report = run_once(config, pool, Progress(quiet=True, live=False))
    assert report.ok and report.built == [] and report.up_to_date == 5
    state = json.loads((project / "out" / STATE_NAME).read_text())
    assert json.loads(state_before)["body"]["shaders"].keys() == state["body"]["shaders"].keys()
    assert summary_counts(build()[1]) == (0, 5, 0)


@fork_path_only
def test_the_pool_forks_all_its_workers_from_one_zygote(project: Path) -> None:
    config = load_config(make_parser().parse_args(["build", "-q", "-j", "2"]), project)
    with WorkerPool(2) as pool:
        report = run_once(config, pool, Progress(quiet=True, live=False))
        zygote = pool._zygote
        workers = [w for w in pool._workers if isinstance(w, CompilerWorker)]
        assert zygote is not None and zygote.starts == 1 and len(workers) == 2
        for worker in workers:
            assert worker.pid is not None
            assert parent_of(worker.pid) == zygote.pid
    assert report.ok and len(report.built) == 5
    assert pool._zygote is None and zygote.pid is None  # closed with the pool


def test_transitive_include_change_rebuilds_its_includers_only(
    project: Path, build: BuildRun
) -> None:
    assert build()[0] == 0
    spv_before = (project / "out/K0.spv").stat().st_mtime_ns
    math = project / "shaders/ui/inc/math.hlsli"
    touch_later(math, math.read_text().replace("saturate(", "0.5 * saturate("))
    status, out, err = build()
    assert status == 0, err
    assert summary_counts(out) == (1, 4, 0)
    assert (project / "out/K0.spv").stat().st_mtime_ns == spv_before
    # a touch without a change rebuilds nothing
    os.utime(math, ns=(time.time_ns(), time.time_ns()))
    assert summary_counts(build()[1]) == (0, 5, 0)


def test_option_change_rebuilds_and_dropped_targets_are_removed(
    project: Path, build: BuildRun
) -> None:
    assert build()[0] == 0
    spv = (project / "out/K0.spv").read_bytes()
    status, out, _ = build("-D", "SCALE=7")
    assert status == 0 and summary_counts(out) == (5, 0, 0)
    assert (project / "out/K0.spv").read_bytes() != spv  # the define reached the code
    assert summary_counts(build("-D", "SCALE=7")[1]) == (0, 5, 0)
    status, out, _ = build("-D", "SCALE=7", "--targets", "spirv")
    assert status == 0 and summary_counts(out) == (5, 0, 0)
    made = outputs(project / "out")
    assert not any(m.endswith((".metal", ".wgsl")) for m in made)
    assert {m for m in made if m.endswith(".spv")} == {s + ".spv" for s in ALL}


def test_deleted_and_renamed_sources_lose_their_outputs(project: Path, build: BuildRun) -> None:
    assert build()[0] == 0
    (project / "shaders/K0.hlsl").unlink()
    (project / "shaders/ui/Lit.hlsl").rename(project / "shaders/ui/Shaded.hlsl")
    status, out, _ = build()
    assert status == 0 and summary_counts(out) == (1, 3, 0)
    made = outputs(project / "out")
    assert not any(m.startswith(("K0.", "ui/Lit.")) for m in made)
    assert "ui/Shaded.reflection" in made


def test_force_rebuilds_everything(project: Path, build: BuildRun) -> None:
    assert build()[0] == 0
    assert summary_counts(build("--force")[1]) == (5, 0, 0)


def test_damaged_state_means_a_full_rebuild(project: Path, build: BuildRun) -> None:
    assert build()[0] == 0
    state = project / "out" / STATE_NAME
    data = bytearray(state.read_bytes())
    data[len(data) // 2] ^= 0x20
    state.write_bytes(bytes(data))
    status, out, err = build()
    assert status == 0
    assert summary_counts(out) == (5, 0, 0)
    assert "rebuilding everything" in err
    assert summary_counts(build()[1]) == (0, 5, 0)  # and the new state is trusted again


def test_edited_output_is_rebuilt(project: Path, build: BuildRun) -> None:
    assert build()[0] == 0
    (project / "out/K1.spv").write_bytes(b"torn")
    assert summary_counts(build()[1]) == (1, 4, 0)
    assert (project / "out/K1.spv").read_bytes()[:4] == b"\x03\x02\x23\x07"  # SPIR-V magic


def test_failing_shader_keeps_its_last_good_outputs_marked_stale_and_exits_1(
    project: Path, build: BuildRun
) -> None:
    """A running program and its generated module go on with the last good build; the state
    marks it stale, so every build retries the shader (and fails) until it compiles."""
    assert build()[0] == 0
    good = {m: (project / "out" / m).read_bytes() for m in outputs(project / "out")}
    bad = project / "shaders/K1.hlsl"
    broken = (Path(__file__).parent.parent / "corpus/errors/syntax.hlsl").read_text()
    touch_later(bad, broken)
    status, out, err = build()
    assert status == 1
    assert summary_counts(out) == (0, 4, 1)
    assert "failed: shaders/K1.hlsl" in out
    first = next(line for line in err.splitlines() if "error" in line)
    assert first.startswith("shaders/K1.hlsl:8:18: error ")  # path:line:col: error CODE: message
    assert " | " in err  # with a source excerpt
    assert {m: (project / "out" / m).read_bytes() for m in outputs(project / "out")} == good
    state, _ = BuildState.load(project / "out")
    assert state.shaders["K1"].key == STALE_KEY  # never current
    status, out, _ = build()
    assert status == 1 and summary_counts(out) == (0, 4, 1)  # retried, not remembered as built
    touch_later(bad, kernel("K1"))
    status, out, _ = build()
    assert status == 0 and summary_counts(out) == (1, 4, 0)


def test_failing_shader_whose_outputs_were_deleted_keeps_nothing(
    project: Path, build: BuildRun
) -> None:
    assert build()[0] == 0
    (project / "out/K1.spv").unlink()
    broken = (Path(__file__).parent.parent / "corpus/errors/syntax.hlsl").read_text()
    touch_later(project / "shaders/K1.hlsl", broken)
    assert build()[0] == 1
    assert not any(m.startswith("K1.") for m in outputs(project / "out"))
    assert "K1" not in BuildState.load(project / "out")[0].shaders


def test_shader_failing_its_first_build_has_no_outputs(project: Path, build: BuildRun) -> None:
    assert build()[0] == 0
    broken = (Path(__file__).parent.parent / "corpus/errors/syntax.hlsl").read_text()
    (project / "shaders/New.hlsl").write_text(broken)
    assert build()[0] == 1
    assert not any(m.startswith("New.") for m in outputs(project / "out"))


def test_bad_configuration_exits_2(project: Path, build: BuildRun) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('out = "out"', "out = 5"))
    status, _, err = build()
    assert status == 2
    assert err.startswith("pyproject.toml:7:1: error OS2004: 'out' must be a path")
    assert build("nope.hlsl", "-o", "x")[0] == 2


def test_paths_on_the_command_line_replace_the_configured_sources(
    project: Path, build: BuildRun
) -> None:
    status, out, _ = build("shaders/K0.hlsl", "-o", "single")
    assert status == 0 and summary_counts(out) == (1, 0, 0)
    assert {m.split(".")[0] for m in outputs(project / "single")} == {"K0"}
    refl = ReflectionFormat.read((project / "single/K0.reflection").read_bytes())
    assert refl.source == "shaders/K0.hlsl"


class OnVictim(CompilerWorker):
    """The real worker, that does something to its compiler process just as it is handed a
    file named ``Victim``. Requests are written one at a time (``queued_bytes``): one waiting
    behind another would be handed to the process while it still compiles the one before."""

    queued_bytes = 0

    def _write_pending(self) -> None:
        child = self._child
        if child is not None and self._sent == 0 and self._pending:
            path = self._pending[0][0]
            if Path(path).stem == "Victim":
                self.to_victim(child)
        super()._write_pending()

    def to_victim(self, child: _Child) -> None:
        raise NotImplementedError


class CrashingOn(OnVictim):
    """Its compiler process gets SIGSEGV: Slang's known crashes cannot be triggered on demand,
    their consequence can."""

    def to_victim(self, child: _Child) -> None:
        os.kill(child.pid, signal.SIGSEGV)
        select.select([child.channel], [], [], 30)  # its end of the channel closes as it dies


def test_a_compiler_crash_fails_that_shader_alone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "shaders/Victim.hlsl").write_text(kernel("Victim"))
    config = load_config(make_parser().parse_args(["build", "-q", "-j", "1"]), project)
    with WorkerPool(1, CrashingOn) as pool:
        report = run_once(config, pool, Progress(quiet=True, live=False))
    out, err = capsys.readouterr()
    assert report.crashed == ["shaders/Victim.hlsl"] == report.failed
    assert sorted(report.built) == sorted(
        f"shaders/{s}.hlsl" for s in ["Sprite", "ui/Lit", "NoMarkup", "K0", "K1"]
    )  # including ui/Lit, compiled after the crash by the restarted worker
    assert "compiler crashed on: shaders/Victim.hlsl" in out
    assert "shaders/Victim.hlsl: error" in err and "SIGSEGV" in err
    assert not any(m.startswith("Victim.") for m in outputs(project / "out"))


class HangingOn(OnVictim):
    """Its compiler process stops (SIGSTOP), under a short time limit for that file alone."""

    def to_victim(self, child: _Child) -> None:
        os.kill(child.pid, signal.SIGSTOP)

    def _reply(self, options: CompileOptions) -> CompileResult:
        self.timeout = 0.5 if Path(options.source_name).stem == "Victim" else 300
        return super()._reply(options)


def test_a_time_out_is_reported_as_one_not_as_a_crash(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "shaders/Victim.hlsl").write_text(kernel("Victim"))
    config = load_config(make_parser().parse_args(["build", "-q", "-j", "1"]), project)
    with WorkerPool(1, HangingOn) as pool:
        report = run_once(config, pool, Progress(quiet=True, live=False))
    out, err = capsys.readouterr()
    assert report.timed_out == ["shaders/Victim.hlsl"] == report.failed
    assert report.crashed == []
    assert "over the time limit: shaders/Victim.hlsl" in out
    assert "crashed" not in out and "failed:" not in out
    assert "shaders/Victim.hlsl: error OS9004:" in err


def test_bindings_are_generated_from_the_reflections(project: Path, build: BuildRun) -> None:
    status, _, err = build("--bindings", "gen")
    assert status == 0, err
    made = {p.relative_to(project / "gen").as_posix() for p in (project / "gen").rglob("*.py")}
    assert {"__init__.py", "Sprite.py", "ui/__init__.py", "ui/Lit.py", "K0.py"} <= made
    mtime = (project / "gen/K0.py").stat().st_mtime_ns
    assert build("--bindings", "gen")[0] == 0
    assert (project / "gen/K0.py").stat().st_mtime_ns == mtime  # nothing changed, nothing written
    compile((project / "gen/Sprite.py").read_text(), "Sprite.py", "exec")


def test_bindings_of_same_named_shaders_in_two_folders(project: Path, build: BuildRun) -> None:
    """Bindings mirror OUT's folders, so ``ui/Sprite`` and ``Sprite`` do not collide."""
    (project / "shaders/ui/Sprite.hlsl").write_text((project / "shaders/Sprite.hlsl").read_text())
    status, _, err = build("--bindings", "gen")
    assert status == 0, err
    top = (project / "gen/Sprite.py").read_text()
    nested = (project / "gen/ui/Sprite.py").read_text()
    assert '"shaders/Sprite.hlsl"' in top and '"shaders/ui/Sprite.hlsl"' in nested


class EditsDuringCompile(CompilerWorker):
    """The real worker; the user saves ``math.hlsli`` again while ``Lit`` is being compiled
    (after the compiler read it, before the build stamps it)."""

    def receive(self) -> CompileResult:
        path = self._pending[0][0]
        result = super().receive()
        if Path(path).stem == "Lit":
            math = Path(path).parent / "inc" / "math.hlsli"
            touch_later(math, math.read_text().replace("saturate(", "0.25 * saturate("))
        return result


def test_an_include_saved_during_the_compile_is_not_taken_as_built(
    project: Path, build: BuildRun
) -> None:
    assert build()[0] == 0
    math = project / "shaders/ui/inc/math.hlsli"
    touch_later(math, math.read_text().replace("saturate(", "0.5 * saturate("))
    config = load_config(make_parser().parse_args(["build", "-q", "-j", "1"]), project)
    with WorkerPool(1, EditsDuringCompile) as pool:
        report = run_once(config, pool, Progress(quiet=True, live=False))
    assert report.built == ["shaders/ui/Lit.hlsl"]
    status, out, _ = build()  # what the compiler read is unknown: compile again
    assert status == 0 and summary_counts(out) == (1, 4, 0)
    assert summary_counts(build()[1]) == (0, 5, 0)


class EditUndoneDuringCompile(CompilerWorker):
    """The real worker; ``K1`` is edited after the build looked at it and before the compiler
    reads it, and put back as soon as the compile is over (an undo in the editor)."""

    original = ""

    def submit(self, path: str, options: CompileOptions) -> None:
        if Path(path).stem == "K1":
            self.original = Path(path).read_text()
            touch_later(Path(path), self.original.replace("* 3u", "* 7u"))
        super().submit(path, options)

    def receive(self) -> CompileResult:
        path = self._pending[0][0]
        try:
            return super().receive()
        finally:
            if Path(path).stem == "K1":
                touch_later(Path(path), self.original)


def test_an_edit_undone_during_the_compile_is_not_recorded_as_current(
    project: Path, build: BuildRun
) -> None:
    config = load_config(make_parser().parse_args(["build", "-q", "-j", "1"]), project)
    with WorkerPool(1, EditUndoneDuringCompile) as pool:
        report = run_once(config, pool, Progress(quiet=True, live=False))
    assert "shaders/K1.hlsl" in report.built
    assert "* 7U" in (project / "out/K1.metal").read_text()  # what the compiler read
    status, out, _ = build()  # the outputs are the edit's, the source is not: compile again
    assert status == 0 and summary_counts(out) == (1, 4, 0)
    assert summary_counts(build()[1]) == (0, 5, 0)


def test_an_out_that_cannot_be_written_is_a_usage_error(project: Path, build: BuildRun) -> None:
    (project / "blocked").write_text("a file where OUT should be a folder")
    status, _, err = build("-o", "blocked")
    assert status == 2
    assert err.startswith("blocked: error OS2003: cannot write:")


def test_register_shifts_reach_the_compiler_and_rebuild(project: Path, build: BuildRun) -> None:
    reg = project / "shaders/Reg.hlsl"
    reg.write_text(
        kernel("Reg").replace(
            "RWStructuredBuffer<uint> Data;", "RWStructuredBuffer<uint> Data : register(u1);"
        )
    )

    def data_binding() -> int:
        refl = ReflectionFormat.read((project / "out/Reg.reflection").read_bytes())
        (data,) = [r for r in refl.resources if r.name == "Data"]
        (slot,) = [s for s in data.slots if s.target.value == "spirv"]
        return slot.binding

    assert build()[0] == 0
    assert data_binding() == 1
    status, out, err = build("--fvk-u-shift", "5", "all")
    assert status == 0, err
    assert summary_counts(out) == (6, 0, 0)
    assert data_binding() == 6


@pytest.mark.parametrize("special", ["fifo", "dev-zero"])
def test_only_regular_files_are_sources(project: Path, build: BuildRun, special: str) -> None:
    """A FIFO would block the build for ever, a link to /dev/zero read until memory runs out."""
    odd = project / "shaders/Odd.hlsl"
    if special == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to("/dev/zero")
    status, _, err = build()
    kind = "a FIFO" if special == "fifo" else "a device"
    assert status == 2 and err.startswith(f"shaders/Odd.hlsl: error OS2002: {kind}, not a regular")


def test_an_include_that_is_not_a_regular_file_is_a_positioned_error(
    project: Path, build: BuildRun
) -> None:
    (project / "shaders/K0.hlsl").write_text('#include "zero.hlsli"\n' + kernel("K0"))
    (project / "shaders/zero.hlsli").symlink_to("/dev/zero")
    status, _, err = build()
    assert status == 1
    assert "shaders/K0.hlsl:1:11: error OS1040: cannot read: a device, not a regular file" in err


def test_a_noop_build_of_a_read_only_out_succeeds(
    project: Path, build: BuildRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing to write, nothing to lock: a read-only OUT (a mounted image, a package) is up to
    date, even when a touched source only wants its stamp refreshed."""
    assert build()[0] == 0
    real = os.open

    def read_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system", os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    source = project / "shaders/K0.hlsl"
    os.utime(source, ns=(source.stat().st_mtime_ns + 10**9,) * 2)
    status, out, err = build()
    assert status == 0, err
    assert summary_counts(out) == (0, 5, 0)


def test_a_full_disk_is_reported_at_the_file_being_written(
    project: Path, build: BuildRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    # writes to the build's temporaries fail as on a full disk (the error names no file)
    temporaries: set[int] = set()
    real_create, real_write = fsutil._create_beside, os.write

    def create(target: Path) -> tuple[int, str]:
        fd, tmp = real_create(target)
        temporaries.add(fd)
        return fd, tmp

    def write(fd: int, data: bytes) -> int:
        if fd in temporaries:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(fsutil, "_create_beside", create)
    monkeypatch.setattr(os, "write", write)
    status, _, err = build("-j", "1", "shaders/K0.hlsl")
    assert status == 2
    assert err.startswith("out/K0.spv: error OS2003: cannot write: No space left on device"), err
    assert [p.name for p in (project / "out").iterdir() if p.name.endswith(TEMPORARY_SUFFIX)] == []
