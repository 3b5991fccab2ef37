"""A hatchling build hook: building a wheel compiles the project's shaders into it.

Registered as the ``oneshader`` hook (entry point group ``hatch``) and configured under
``[tool.hatch.build.hooks.oneshader]`` with the keys of ``[tool.oneshader]`` (which it reads
first; the hook's table overrides it), for example::

    [tool.hatch.build.hooks.oneshader]
    sources = ["shaders"]
    out = "src/mypkg/shaders"
    bindings = "src/mypkg/generated"

The outputs are built incrementally into ``out`` like ``oneshader build`` does, then put into the
wheel at the place ``out`` has in the package (whether or not version control ignores them). An
sdist ships the sources only; the wheel built from it compiles them.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.plugin import hookimpl

from oneshader.buildtask.builder import Build
from oneshader.buildtask.config import (
    PYPROJECT,
    TOOL_TABLE,
    BuildConfig,
    TableLocator,
    merge,
    pyproject_settings,
    settings_from_table,
)
from oneshader.buildtask.progress import Progress
from oneshader.buildtask.scheduler import WorkerPool
from oneshader.buildtask.sources import project_name
from oneshader.diagnostics import Code, UserError
from oneshader.fsutil import display_path, read_file

HOOK_TABLE = "tool.hatch.build.hooks.oneshader"
# A wheel is built in an isolated environment made from [build-system] requires: pip install
# in the user's environment cannot help there.
HOOK_INSTALL_HINT = (
    'add "oneshader[compiler]" to requires in the [build-system] table of pyproject.toml'
)


class OneshaderBuildError(Exception):
    """The wheel cannot be built: a shader failed or the configuration is wrong."""


class OneshaderBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "oneshader"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root).resolve()
        errors = io.StringIO()
        progress = Progress(sys.stderr, errors, quiet=True, live=False)
        try:
            config = self._config(root)
            # its own zygote: no server outlives a wheel
            with WorkerPool(
                config.jobs, install_hint=HOOK_INSTALL_HINT, limits=config.limits
            ) as pool:
                build = Build(config, pool, progress)
                report = build.run()
        except UserError as err:  # the configuration, or OUT cannot be written
            raise OneshaderBuildError(
                "\n".join(d.format(with_excerpt=True) for d in err.diagnostics)
            ) from None
        if not report.ok:
            raise OneshaderBuildError(
                f"oneshader: shaders failed to build:\n{errors.getvalue()}{report.summary()}"
            )
        sys.stderr.write(errors.getvalue() + report.summary() + "\n")  # warnings, summary
        if version == "editable":  # the project's own folders are on the path already
            return
        force_include = build_data.setdefault("force_include", {})
        files = [config.out / s.path for r in build.state.shaders.values() for s in r.outputs]
        if config.bindings is not None:
            files.extend(p for p in sorted(config.bindings.rglob("*")) if p.is_file())
        for path in files:
            rel = project_name(path, root)
            force_include[str(path)] = self.build_config.get_distribution_path(rel)

    def _config(self, root: Path) -> BuildConfig:
        pyproject = root / PYPROJECT
        layers = [pyproject_settings(pyproject)] if pyproject.is_file() else []
        table = self.config
        if table:
            text = read_file(pyproject).decode("utf-8") if pyproject.is_file() else ""
            where = TableLocator(display_path(pyproject), text, HOOK_TABLE)
            known = {k: v for k, v in table.items() if k not in _HATCH_KEYS}
            layers.append(settings_from_table(known, root, where))
        if not layers:
            raise UserError.at(
                PYPROJECT, 0, 0, f"no [{TOOL_TABLE}] nor [{HOOK_TABLE}]", Code.BAD_USAGE
            )
        return merge(root, layers, quiet=True, pyproject=pyproject if pyproject.is_file() else None)


# Keys hatchling itself understands in every hook's table.
_HATCH_KEYS = frozenset(
    {
        "dependencies",
        "require-runtime-dependencies",
        "require-runtime-features",
        "enable-by-default",
    }
)


@hookimpl
def hatch_register_build_hook() -> type[BuildHookInterface]:  # type: ignore[type-arg]
    return OneshaderBuildHook
