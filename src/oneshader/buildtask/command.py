"""``oneshader build``: exit 0 when every shader built (or was up to date), 1 when one failed,
2 on bad usage or configuration (a :class:`UserError`, printed by the CLI)."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from oneshader.buildtask import noop
from oneshader.buildtask.builder import Build, BuildReport
from oneshader.buildtask.config import BuildConfig, load_config
from oneshader.buildtask.progress import Progress
from oneshader.buildtask.scheduler import Compilers, WorkerPool
from oneshader.buildtask.sources import walk_shaders
from oneshader.diagnostics import UserError

WATCH_POLL_SECONDS = 0.3  # the whole tree (new shaders, the pyproject)
WATCH_INPUTS_SECONDS = 0.005  # the files the outputs were built from: an edit is seen at once
# A save is over once the files stay as they are this long: an editor's writes of one save
# follow each other within it. A save slower than that is not lost: it is a change after the
# stamps the build read, and the next round starts at once.
WATCH_SETTLE_SECONDS = 0.002


def run_once(
    config: BuildConfig,
    pool: Compilers,
    progress: Progress,
    inputs: set[Path] | None = None,
    noop_key: str | None = None,
) -> BuildReport:
    """One build and its summary; ``inputs``, if given, receives the files it depends on;
    ``noop_key``, if given, keys the record that lets the next such build be a fast no-op."""
    build = Build(config, pool, progress)
    build.noop_key = noop_key
    report = build.run()
    progress.summary(report.summary())
    if inputs is not None:
        inputs.update(build.inputs())
    return report


def _progress(args: argparse.Namespace, quiet: bool) -> Progress:
    return Progress(quiet=quiet, reporter=getattr(args, "reporter", None))


def build_command(args: argparse.Namespace, cwd: Path | None = None) -> int:
    if getattr(args, "watch", False):
        return watch(args, cwd)
    config = load_config(args, cwd)
    progress = _progress(args, config.quiet)
    pool = WorkerPool(
        config.jobs,
        server_idle_seconds=config.server_idle_seconds,
        limits=config.limits,
        early=getattr(args, "early_zygote", None),
        one_run=not config.scheduler,  # a cluster's pool may run again for what it gives back
    )
    compilers: Compilers = pool
    if config.scheduler:
        from oneshader.buildtask.cluster import ClusterPool

        compilers = ClusterPool(config.scheduler, pool, config.limits, progress.message)
    try:
        report = run_once(config, compilers, progress, noop_key=_noop_key(args, cwd))
    finally:
        compilers.close()
    refused = pool.refusal()
    if refused:
        progress.message(f"note: no compile server used: {refused}")
    elif pool.server is not None and pool.server.started and not config.quiet:
        minutes = pool.server.idle_seconds / 60
        progress.message(
            f"note: started a compile server for the next builds (it ends after {minutes:g} "
            "idle minutes; --no-server or ONESHADER_SERVER=0 for none)"
        )
    return 0 if report.ok else 1


def _noop_key(args: argparse.Namespace, cwd: Path | None) -> str | None:
    """The key of the command line the CLI ran (``args.noop_argv``, which :mod:`noop` checks
    before parsing anything), or None: no record for a build run another way."""
    argv = getattr(args, "noop_argv", None)
    if argv is None or cwd is not None or not noop.enabled():
        return None
    return noop.invocation_key(argv, os.getcwd())


# --- watch -----------------------------------------------------------------------------------


def _watched(config: BuildConfig | None, inputs: set[Path], cwd: Path) -> set[Path]:
    """Everything whose change should trigger a rebuild: the pyproject, every shader under the
    sources (new ones too), and every file the outputs were built from."""
    files = set(inputs)
    roots = list(config.sources) if config else [cwd]
    if config and config.pyproject:
        files.add(config.pyproject)
    else:
        files.add(cwd / "pyproject.toml")
    for root in roots:
        if root.is_dir():
            files.update(walk_shaders(root))
        else:
            files.add(root)
    return files


Stamps: TypeAlias = dict[Path, tuple[int, int] | None]


def _snapshot(files: set[Path]) -> Stamps:
    """The stamps of ``files`` (a stat each; None for a file that is not there)."""
    stamps: Stamps = {}
    for f in files:
        try:
            st = os.stat(f)
            stamps[f] = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamps[f] = None
    return stamps


def _as_read(files: set[Path], seen: Stamps) -> Stamps:
    """What the round that just ended read: ``seen``, the stamps when its change was seen,
    for the files it knew; the stamps now for the files it found (new includes). A save that
    lands while the build runs is then a change the next wait sees at once, not lost."""
    now = _snapshot(files - seen.keys())
    return {f: seen[f] if f in seen else now[f] for f in files}


def _wait_for_change(
    config: BuildConfig | None,
    inputs: set[Path],
    cwd: Path,
    files: set[Path],
    before: Stamps,
) -> Stamps:
    """Return the stamps once a watched file changed and then stayed as it is for a moment
    (an editor's save is over). The files known are stat'ed every few milliseconds (an edit of
    a shader or of one of its includes is seen at once); the walk of the whole tree, which
    finds new shaders, every :data:`WATCH_POLL_SECONDS`. ``before``: the stamps of ``files``
    the last build read."""
    walked = time.monotonic()
    pause = WATCH_INPUTS_SECONDS
    while True:
        if time.monotonic() - walked >= WATCH_POLL_SECONDS:
            files, walked = _watched(config, inputs, cwd), time.monotonic()
        t0 = time.monotonic()
        now = _snapshot(files)
        if now != {f: before.get(f) for f in files}:
            break
        # the stat'ing takes at most about 2% of a core however big the tree
        pause = max(WATCH_INPUTS_SECONDS, 50 * (time.monotonic() - t0))
        time.sleep(pause)
    while True:
        time.sleep(WATCH_SETTLE_SECONDS)
        later = _snapshot(files)
        if later == now:
            return now
        now = later


def watch(
    args: argparse.Namespace,
    cwd: Path | None = None,
    *,
    rounds: int | None = None,
    on_round: Callable[[int, int], None] | None = None,
) -> int:
    """Rebuild what changed on every save until interrupted; errors (in shaders or in the
    configuration) are reported and the watch goes on. ``rounds`` bounds it (for tests);
    ``on_round(n, status)`` is told the status of each build."""
    cwd = (cwd or Path.cwd()).resolve()
    pool: WorkerPool | None = None
    progress = _progress(args, bool(getattr(args, "quiet", False)))
    status = 0
    n = 0
    seen: Stamps = {}  # the watched files' stamps when the round's change was seen
    try:
        while rounds is None or n < rounds:
            config: BuildConfig | None = None
            inputs: set[Path] = set()
            try:
                config = load_config(args, cwd)
                if pool is None or (pool.size, pool.limits) != (config.jobs, config.limits):
                    if pool is not None:
                        pool.close()
                    pool = WorkerPool(
                        config.jobs,
                        server_idle_seconds=config.server_idle_seconds,
                        limits=config.limits,
                    )
                if not seen:  # the first round: what is there before the build reads it
                    seen = _snapshot(_watched(config, inputs, cwd))
                report = run_once(config, pool, progress, inputs)
                status = 0 if report.ok else 1
                pool.warm()  # the next edit's compile waits for no compiler to start
            except UserError as err:
                for d in err.diagnostics:
                    progress.diagnostic(d)
                status = 2
            n += 1
            files = _watched(config, inputs, cwd)
            before = _as_read(files, seen)
            if on_round is not None:
                on_round(n, status)
            if rounds is not None and n >= rounds:
                break
            progress.summary("watching for changes (Ctrl-C to stop)")
            seen = _wait_for_change(config, inputs, cwd, files, before)
    except KeyboardInterrupt:
        progress.summary("stopped watching")
    finally:
        if pool is not None:
            pool.close()
    return status
