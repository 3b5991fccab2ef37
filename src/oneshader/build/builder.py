"""One build: decide what is stale, compile it on the workers, write outputs, keep the state.

Order matters for safety. Outputs are written (each atomically) before the state records them,
and the state also stamps the outputs, so a build killed at any point leaves, at worst, outputs
the next build sees as stale and rewrites. A shader that fails loses its outputs and its record:
nothing in OUT looks current for a source that does not compile.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from oneshader import __version__
from oneshader.build.config import BuildConfig
from oneshader.build.lock import OutLock
from oneshader.build.outputs import (
    REFLECTION_SUFFIX,
    planned_files,
    remove_files,
    sweep_temporaries,
    write_files,
)
from oneshader.build.progress import Progress
from oneshader.build.scheduler import WorkerPool
from oneshader.build.sources import ShaderJob, discover, project_name
from oneshader.build.state import BuildState, Checker, ShaderRecord, Stamp, is_current, stamp
from oneshader.compiler.api import CompileResult
from oneshader.diagnostics import Diagnostic, Severity

SAVE_EVERY_SECONDS = 0.5


@dataclass
class BuildReport:
    built: list[str] = field(default_factory=list)
    up_to_date: int = 0
    failed: list[str] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)
    removed: int = 0
    seconds: float = 0.0
    bindings_failed: bool = False

    @property
    def ok(self) -> bool:
        return not self.failed and not self.bindings_failed

    def summary(self) -> str:
        parts = [f"{len(self.built)} built", f"{self.up_to_date} up to date"]
        parts.append(f"{len(self.failed)} failed")
        if self.removed:
            parts.append(f"{self.removed} stale outputs removed")
        text = f"oneshader build: {', '.join(parts)} in {self.seconds:.2f}s"
        if self.crashed:
            text += "\n  compiler crashed on: " + ", ".join(self.crashed)
        others = [f for f in self.failed if f not in self.crashed]
        if others:
            text += "\n  failed: " + ", ".join(others)
        if self.bindings_failed:
            text += "\n  bindings were not generated"
        return text


def toolchain_version() -> str:
    """What identifies the code that produces outputs: a change rebuilds everything."""
    from oneshader.compiler import compiler_version

    return f"oneshader {__version__}; {compiler_version()}"


class Build:
    def __init__(self, config: BuildConfig, pool: WorkerPool, progress: Progress) -> None:
        self.config = config
        self.pool = pool
        self.progress = progress
        self.report = BuildReport()
        self.state = BuildState()
        self._last_save = 0.0
        self._source_stamps: dict[str, Stamp] = {}
        self._started_ns = 0
        self._before: dict[Path, tuple[int, int]] = {}  # dependencies as they were at the start

    # --- the steps ---------------------------------------------------------------------------

    def run(self) -> BuildReport:
        t0 = time.perf_counter()
        cfg = self.config
        jobs = discover(cfg)
        with OutLock(cfg.out, self.progress.message):
            sweep_temporaries(cfg.out)
            self.state, why = BuildState.load(cfg.out)
            if why:
                self.progress.message(f"note: {why}; rebuilding everything")
            toolchain = toolchain_version()
            rebuild_all = cfg.force or self.state.toolchain != toolchain
            self.state.toolchain = toolchain
            self._remove_gone(jobs)
            todo = self._stale(jobs, rebuild_all)
            self.report.up_to_date = len(jobs) - len(todo)
            self._started_ns = time.time_ns()
            for job in todo:
                self._source_stamps[job.stem] = self._stamp_source(job)
                self._note_dependencies(job)
            if todo:
                self.progress.begin(len(todo))
                try:
                    self.pool.run(
                        todo,
                        lambda job: self.progress.start(job.source_name),
                        self._finished,
                        self.progress.tick,
                    )
                except KeyboardInterrupt:  # keep what was built: the state says exactly that
                    self.state.save(cfg.out)
                    raise
            if cfg.bindings is not None:
                self._bindings(jobs)
            if self.state.dirty or todo or why:
                self.state.save(cfg.out)
        self.report.seconds = time.perf_counter() - t0
        return self.report

    def inputs(self) -> set[Path]:
        """Every file the current outputs were built from (what ``--watch`` watches)."""
        root = self.config.root
        return {root / s.path for rec in self.state.shaders.values() for s in rec.inputs}

    def _remove_gone(self, jobs: list[ShaderJob]) -> None:
        """Outputs of shaders whose source was deleted or renamed go."""
        wanted = {j.stem for j in jobs}
        for stem in sorted(set(self.state.shaders) - wanted):
            record = self.state.shaders.pop(stem)
            self.report.removed += remove_files(self.config.out, (s.path for s in record.outputs))
            self.state.dirty = True

    def _stale(self, jobs: list[ShaderJob], rebuild_all: bool) -> list[ShaderJob]:
        checker = Checker()
        todo = []
        for job in jobs:
            record = self.state.shaders.get(job.stem)
            if rebuild_all or record is None or record.source != job.source_name:
                todo.append(job)
                continue
            current, refreshed = is_current(
                record, job.key, self.config.root, self.config.out, checker
            )
            self.state.dirty |= refreshed
            if not current:
                todo.append(job)
        return todo

    def _stamp_source(self, job: ShaderJob) -> Stamp:
        """The source as it is when handed to the compiler: an edit during the compile then
        shows as a change next time instead of being recorded as built."""
        try:
            return stamp(job.source, job.source_name)
        except OSError:
            return Stamp(job.source_name, 0, -1, "")

    def _note_dependencies(self, job: ShaderJob) -> None:
        """(mtime, size) of the files the shader read last time, before it is compiled again."""
        record = self.state.shaders.get(job.stem)
        for s in record.inputs[1:] if record else ():
            path = self.config.root / s.path
            if path not in self._before:
                try:
                    st = path.stat()
                    self._before[path] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    self._before[path] = (-1, -1)

    def _dependency_stamp(self, path: Path, name: str) -> Stamp:
        """A dependency, stamped after the compile: one that moved since the build started (or,
        if new, since then) is recorded as unknown, since what the compiler read is unknown."""
        expect = self._before.get(path)
        if expect is None:
            st = path.stat()
            if st.st_mtime_ns > self._started_ns:
                return Stamp(name, 0, st.st_size, "")
        return stamp(path, name, expect=expect)

    def _finished(self, job: ShaderJob, result: CompileResult, seconds: float) -> None:
        for diag in result.diagnostics:
            self.progress.diagnostic(diag)
        old = self.state.shaders.pop(job.stem, None)
        old_outputs = [s.path for s in old.outputs] if old else []
        self.state.dirty = True
        files: list[tuple[str, bytes]] = []
        if result.ok:
            try:
                files = planned_files(job, result)
            except ValueError as err:
                message = f"internal error, no reflection written: {err}"
                diag = Diagnostic(job.source_name, 0, 0, Severity.ERROR, message, "OS3003")
                result = CompileResult(diagnostics=(*result.diagnostics, diag))
                self.progress.diagnostic(diag)
        if not result.ok:
            if result.crashed and not any(d.is_error for d in result.diagnostics):
                self.progress.diagnostic(
                    Diagnostic(
                        job.source_name, 0, 0, Severity.ERROR, "the compiler crashed", "OS3002"
                    )
                )
            self.report.failed.append(job.source_name)
            if result.crashed:
                self.report.crashed.append(job.source_name)
            self.report.removed += remove_files(self.config.out, old_outputs)
            self.progress.finish(
                job.source_name, "crashed" if result.crashed else "failed", seconds
            )
            self._maybe_save()
            return
        outputs = write_files(self.config.out, files)
        written = {rel for rel, _ in files}
        self.report.removed += remove_files(
            self.config.out, (p for p in old_outputs if p not in written)
        )
        inputs = [self._source_stamps[job.stem]]
        seen = {job.source}
        for dep in result.dependencies:
            path = Path(dep).resolve()
            if path in seen:
                continue
            seen.add(path)
            name = project_name(path, self.config.root)
            try:
                inputs.append(self._dependency_stamp(path, name))
            except OSError:
                inputs.append(Stamp(name, 0, -1, ""))
        self.state.shaders[job.stem] = ShaderRecord(job.source_name, job.key, inputs, outputs)
        self.report.built.append(job.source_name)
        self.progress.finish(job.source_name, "built", seconds)
        self._maybe_save()

    def _maybe_save(self) -> None:
        """Save now and then during a long build, so that a killed build keeps most of its work."""
        now = time.perf_counter()
        if now - self._last_save >= SAVE_EVERY_SECONDS:
            self.state.save(self.config.out)
            self._last_save = now

    def _bindings(self, jobs: list[ShaderJob]) -> None:
        """Generate bindings from every current reflection; skipped when none changed."""
        assert self.config.bindings is not None
        reflections: list[Path] = []
        digest = hashlib.sha256(project_name(self.config.bindings, self.config.root).encode())
        for job in jobs:
            record = self.state.shaders.get(job.stem)
            if record is None:
                continue
            for s in record.outputs:
                if s.path.endswith(REFLECTION_SUFFIX):
                    reflections.append(self.config.out / s.path)
                    digest.update(f"{s.path}\0{s.sha256}\0".encode())
        key = digest.hexdigest()
        if (
            key == self.state.extra.get("bindings")
            and self.config.bindings.is_dir()
            and not self.config.force
        ):
            return
        from oneshader.codegen import generate
        from oneshader.diagnostics import UserError

        try:
            generate(reflections, self.config.bindings, root=self.config.out)
        except UserError as err:
            for diag in err.diagnostics:
                self.progress.diagnostic(diag)
            self.report.bindings_failed = True
            self.state.extra.pop("bindings", None)
            return
        self.state.extra["bindings"] = key
        self.state.dirty = True
