"""Build settings: ``[tool.oneshader]`` in pyproject.toml, overridden by the command line.

Every mistake in either is a :class:`~oneshader.diagnostics.UserError` positioned at the key that
holds it (tomllib gives no positions, so the key is located in the text), which the CLI reports
with exit status 2.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oneshader.buildtask.filerules import (
    VARIANT_NAME,
    FileRule,
    Variant,
    is_glob,
    permutation_variants,
)
from oneshader.buildtask.stages import DEFAULT_ENTRY, StageRule, stage_from_profile
from oneshader.codegen.shared import SharedGroup, make_group
from oneshader.compiler.api import (
    BindRegister,
    CompileLimits,
    EntryPointSpec,
    RegisterShift,
    stage_from_name,
)
from oneshader.compiler.process import policy
from oneshader.diagnostics import Code, Diagnostic, Severity, UserError, source_excerpt
from oneshader.fsutil import display_path as display_path  # its home before fsutil
from oneshader.fsutil import named_path, read_file
from oneshader.reflection.model import Stage, Target

PYPROJECT = "pyproject.toml"
TOOL_TABLE = "tool.oneshader"
REGISTER_CLASSES = "btsu"
MATRIX_LAYOUTS = ("column-major", "row-major")
CACHE_MODES = ("read", "write", "readwrite")  # what buildtask.cache.CacheMode takes
CACHE_VARIABLE = "ONESHADER_CACHE"
CACHE_MODE_VARIABLE = "ONESHADER_CACHE_MODE"
SCHEDULER_VARIABLE = "ONESHADER_SCHEDULER"
SCHEDULER_PROTOCOLS = ("tcp://", "tls://")
PLACEMENTS = ("auto", "dxc")
_KNOWN_KEYS = frozenset(
    {
        "sources",
        "out",
        "targets",
        "include-dirs",
        "defines",
        "entry-points",
        "stages",
        "variants",
        "permutations",
        "file-targets",
        "bindings",
        "jobs",
        "time-limit",
        "memory-limit",
        "bind-register",
        "matrix-layout",
        "cache",
        "cache-mode",
        "scheduler",
        "enable-16bit-types",
        "placement",
        "shared-groups",
        *(f"{c}-shift" for c in REGISTER_CLASSES),
    }
)


@dataclass(frozen=True)
class Settings:
    """Build settings as given by one layer (pyproject or command line); None means "not given".

    Relative paths are already resolved against the layer's base folder (the project root for
    pyproject.toml, the cwd for the command line).
    """

    sources: tuple[Path, ...] | None = None
    out: Path | None = None
    targets: tuple[Target, ...] | None = None
    include_dirs: tuple[Path, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    entry_points: Mapping[Path, tuple[EntryPointSpec, ...]] = field(default_factory=dict)
    bindings: Path | None = None
    jobs: int | None = None
    shifts: Mapping[str, tuple[RegisterShift, ...]] = field(default_factory=dict)
    bind_registers: tuple[BindRegister, ...] | None = None
    time_limit: float | None = None
    memory_limit: int | None = None
    row_major: bool | None = None
    enable_16bit_types: bool | None = None  # DXC's -enable-16bit-types
    file_rules: tuple[FileRule, ...] = ()  # variants and file-targets, in the file's order
    cache: str | None = None  # a shared cache's fsspec URL (a plain path already absolute)
    cache_mode: str | None = None
    scheduler: str | None = None  # a Dask scheduler's address (tcp:// or tls://)
    dxc_placement: bool | None = None  # placement = "dxc" / --placement dxc
    stage_rules: tuple[StageRule, ...] = ()  # [tool.oneshader.stages], in the file's order
    command_entry: EntryPointSpec | None = None  # -E/-T: every file of this build
    shared_groups: tuple[SharedGroup, ...] = ()  # [tool.oneshader.shared-groups]


@dataclass(frozen=True)
class BuildConfig:
    """The merged settings one build runs with; every path is absolute."""

    root: Path
    sources: tuple[Path, ...]
    out: Path
    targets: tuple[Target, ...]
    include_dirs: tuple[Path, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    entry_points: Mapping[Path, tuple[EntryPointSpec, ...]] = field(default_factory=dict)
    shifts: tuple[RegisterShift, ...] = ()
    bind_registers: tuple[BindRegister, ...] = ()
    row_major: bool = False  # DXC's -Zpr
    enable_16bit_types: bool = False  # DXC's -enable-16bit-types
    dxc_placement: bool = False  # registers placed exactly as DXC (b0, t0, u0 on one binding)
    stage_rules: tuple[StageRule, ...] = ()
    command_entry: EntryPointSpec | None = None
    variant_rules: tuple[FileRule, ...] = ()
    permutation_rules: tuple[FileRule, ...] = ()
    target_rules: tuple[FileRule, ...] = ()
    bindings: Path | None = None
    shared_groups: tuple[SharedGroup, ...] = ()
    jobs: int = 1
    force: bool = False
    quiet: bool = False
    pyproject: Path | None = None
    server_idle_seconds: float | None = None  # None: no compile server, a private zygote
    limits: CompileLimits = field(default_factory=CompileLimits)
    depfile: Path | None = None  # where to write the make rules of the outputs (--depfile)
    cache: str | None = None  # the shared cache's URL (docs/build.md, "A shared cache")
    cache_mode: str = "readwrite"
    scheduler: str | None = None  # compile on this Dask cluster (docs/build.md, "A cluster")


def available_cpus() -> int:
    """The CPUs this process may run on (fewer than the machine's under an affinity mask)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def find_project_root(start: Path) -> tuple[Path, Path | None]:
    """The folder of the nearest pyproject.toml at or above ``start`` (and the file), else start."""
    for folder in (start, *start.parents):
        candidate = folder / PYPROJECT
        if candidate.is_file():
            return folder, candidate
    return start, None


# --- parsing values -------------------------------------------------------------------------


class TableLocator:
    """Positions of keys in a TOML table, found in the text: tomllib keeps none."""

    def __init__(self, file: str, text: str, table: str) -> None:
        self.file = file
        self.lines = text.splitlines()
        self.table = table
        self.header = 0
        parts = r"\s*\.\s*".join(re.escape(p) for p in table.split("."))
        header = re.compile(r"^\s*\[\s*" + parts + r"\s*\]\s*(#.*)?$")
        for i, line in enumerate(self.lines):
            if header.match(line):
                self.header = i + 1
                break

    def key(self, key: str) -> tuple[int, int]:
        """(line, column) of ``key = ...`` inside the table, or the table header."""
        if self.header:
            pattern = re.compile(r'^(\s*)(?:"' + re.escape(key) + r'"|' + re.escape(key) + r")\s*=")
            for i in range(self.header, len(self.lines)):
                line = self.lines[i]
                if line.lstrip().startswith("["):
                    break
                m = pattern.match(line)
                if m:
                    return i + 1, len(m.group(1)) + 1
        sub = TableLocator(self.file, "\n".join(self.lines), f"{self.table}.{key}") if key else None
        if sub is not None and sub.header:
            return sub.header, 1
        return self.header, 1 if self.header else 0

    def error(self, key: str, message: str) -> UserError:
        line, col = self.key(key)
        excerpt = source_excerpt("\n".join(self.lines), line, col)
        return UserError(
            [Diagnostic(self.file, line, col, Severity.ERROR, message, Code.BAD_CONFIG, excerpt)]
        )


def _str_list(value: object) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def parse_targets(text: str) -> tuple[Target, ...] | None:
    """``spirv,msl,wgsl`` (any order, any subset) in canonical order; None if a name is unknown
    or empty (``""``, ``spirv,,wgsl``: a mistake, not "all")."""
    names = [n.strip().lower() for n in text.split(",")]
    by_name = {t.value: t for t in Target} | {"metal": Target.Msl, "spv": Target.SpirV}
    if not names or any(n not in by_name for n in names):
        return None
    chosen = {by_name[n] for n in names}
    return tuple(t for t in Target if t in chosen)


MAX_UINT = 2**32 - 1  # registers, spaces, shifts, bindings and sets are 32-bit unsigned, as DXC's


def _number(value: object) -> int | None:
    """A 32-bit unsigned number (an int, or its decimal digits), None for anything else."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_UINT:
        return value
    return None


def _space(value: object) -> int | str | None:
    """A register space: a number, or "all" (None); a string error message otherwise."""
    if isinstance(value, str) and value.lower() == "all":
        return None
    number = _number(value)
    if number is not None:
        return number
    return f"a space must be a number from 0 to {MAX_UINT} or 'all', not {value!r}"


def _shift(cls: str, shift: object, space: object) -> RegisterShift | str:
    number = _number(shift)
    if number is None:
        return f"a {cls}-shift must be a number from 0 to {MAX_UINT}, not {shift!r}"
    shift = number
    sp = _space(space)
    if isinstance(sp, str):
        return sp
    return RegisterShift(cls, shift, sp)


_REGISTER = re.compile(r"^([btsu])(\d+)$")


def _bind_register(reg: object, space: object, binding: object, set_: object) -> BindRegister | str:
    match = _REGISTER.match(reg) if isinstance(reg, str) else None
    if match is None or int(match.group(2)) > MAX_UINT:
        return f"a register must look like b0, t3, s1 or u2, not {reg!r}"
    nums: list[int] = []
    for what, v in (("space", space), ("binding", binding), ("set", set_)):
        number = _number(v)
        if number is None:
            return f"a bind-register {what} must be a number from 0 to {MAX_UINT}, not {v!r}"
        nums.append(number)
    return BindRegister(match.group(), nums[0], nums[1], nums[2])


def cache_url(value: str, base: Path) -> str:
    """A cache location as given: a URL with a protocol (``s3://...``, ``file://...``, fsspec's
    chained ``a::b``) is kept, a plain path is taken relative to ``base``."""
    if "://" in value or "::" in value:
        return value
    return str((base / value).resolve())


def _cache_mode(value: object, error: Callable[[str], UserError]) -> str:
    if not isinstance(value, str) or value.strip().lower() not in CACHE_MODES:
        raise error(f"the cache mode must be read, write or readwrite, not {value!r}")
    return value.strip().lower()


def _scheduler(value: object, error: Callable[[str], UserError]) -> str:
    if not isinstance(value, str) or not value.strip().startswith(SCHEDULER_PROTOCOLS):
        raise error(
            f"a Dask scheduler's address is tcp://HOST:PORT or tls://HOST:PORT, not {value!r}"
        )
    return value.strip()


def env_settings(cwd: Path) -> Settings:
    """The environment's layer, between pyproject.toml and the command line: the shared cache
    (``ONESHADER_CACHE``, ``ONESHADER_CACHE_MODE``) and the cluster (``ONESHADER_SCHEDULER``)."""
    url = os.environ.get(CACHE_VARIABLE, "").strip()
    mode = os.environ.get(CACHE_MODE_VARIABLE, "").strip()
    scheduler = os.environ.get(SCHEDULER_VARIABLE, "").strip()

    def error(variable: str) -> Callable[[str], UserError]:
        return lambda message: UserError.at(variable, 0, 0, message, Code.BAD_USAGE)

    return Settings(
        cache=cache_url(url, cwd) if url else None,
        cache_mode=_cache_mode(mode, error(CACHE_MODE_VARIABLE)) if mode else None,
        scheduler=_scheduler(scheduler, error(SCHEDULER_VARIABLE)) if scheduler else None,
    )


def _define(text: str) -> tuple[str, str] | None:
    name, _, value = text.partition("=")
    name = name.strip()
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return None
    return name, value if "=" in text else "1"


def _defines(
    raw: Mapping[str, Any], error: Callable[[str], UserError]
) -> tuple[tuple[str, str], ...]:
    """A table of NAME = value (a string, number or boolean; true/false become 1/0)."""
    out = []
    for name, value in raw.items():
        if _define(name) is None or isinstance(value, dict | list):
            raise error(f"bad define {name!r} = {value!r}")
        if isinstance(value, bool):
            value = int(value)
        out.append((name, str(value)))
    return tuple(out)


def _shared_groups(table: Mapping[str, Any], where: TableLocator) -> tuple[SharedGroup, ...]:
    """``shared-groups``: NAME = { group = N, shaders = [globs of source names] }, each
    remembered with its position (the generator's errors point there)."""
    if "shared-groups" not in table:
        return ()
    raw = table["shared-groups"]
    if not isinstance(raw, dict):
        raise where.error(
            "shared-groups",
            "'shared-groups' must be a table: NAME = { group = N, shaders = [...] }",
        )
    at = TableLocator(where.file, "\n".join(where.lines), f"{where.table}.shared-groups")
    out = []
    for name, spec in raw.items():
        locate, key = (at, name) if at.header else (where, "shared-groups")
        line, column = locate.key(key)
        made = make_group(name, spec, locate.file, line, column)
        if isinstance(made, str):
            raise locate.error(key, made)
        out.append(made)
    return tuple(out)


def _file_rules(table: Mapping[str, Any], base: Path, where: TableLocator) -> tuple[FileRule, ...]:
    """``variants`` (file = { name = { DEFINE = value } }) and ``file-targets`` (file = [...]):
    keys are paths or globs relative to ``base``, and each must name at least one file."""
    rules: list[FileRule] = []
    for key in ("variants", "permutations", "file-targets"):
        if key not in table:
            continue
        raw = table[key]
        if not isinstance(raw, dict):
            raise where.error(key, f"'{key}' must be a table: file or glob = ...")
        at = TableLocator(where.file, "\n".join(where.lines), f"{where.table}.{key}")
        for pattern, value in raw.items():
            locate, at_key = (at, pattern) if at.header else (where, key)

            def error(
                message: str, locate: TableLocator = locate, at_key: str = at_key
            ) -> UserError:
                return locate.error(at_key, message)

            if is_glob(pattern):
                try:
                    found = any(p.is_file() for p in base.glob(pattern))
                except (NotImplementedError, ValueError):  # an absolute or empty pattern
                    message = f"{key}: a glob must be relative to the project, not {pattern!r}"
                    raise error(message) from None
                if not found:
                    raise error(f"{key}: {pattern!r} matches no file")
            elif not (base / pattern).is_file():
                raise error(f"{key} for {pattern!r}, which is not a file")
            if key == "permutations":
                if not isinstance(value, dict) or not value:
                    raise error(
                        f"permutations of {pattern!r} must be a table: DEFINE = [values...]"
                    )
                for axis in value:
                    if _define(axis) is None or "=" in axis:
                        raise error(f"permutations of {pattern!r}: bad define name {axis!r}")
                made = permutation_variants(value)
                if isinstance(made, str):
                    raise error(f"permutations of {pattern!r}: {made}")
                rules.append(FileRule(pattern, base.resolve(), variants=made, permutations=True))
                continue
            if key == "file-targets":
                items = _str_list(value)
                targets = parse_targets(",".join(items)) if items else None
                if targets is None:
                    raise error(f"targets of {pattern!r} must list spirv, msl, wgsl; got {value!r}")
                rules.append(FileRule(pattern, base.resolve(), targets=targets))
                continue
            if not isinstance(value, dict) or not value:
                raise error(f"variants of {pattern!r} must be a table: name = {{ DEFINE = value }}")
            variants = []
            for name, defines in value.items():
                if not VARIANT_NAME.fullmatch(name):
                    raise error(
                        f"variant name {name!r} must be letters, digits and _ (it names files "
                        "and Python modules)"
                    )
                if not isinstance(defines, dict):
                    raise error(f"variant {name!r} must be a table of DEFINE = value")
                variants.append(Variant(name, _defines(defines, error)))
            rules.append(FileRule(pattern, base.resolve(), variants=tuple(variants)))
    return tuple(rules)


def settings_from_table(table: Mapping[str, Any], base: Path, where: TableLocator) -> Settings:
    """Validate a ``[tool.oneshader]``-shaped table; relative paths are taken from ``base``."""
    for key in table:
        if key not in _KNOWN_KEYS:
            known = ", ".join(sorted(_KNOWN_KEYS))
            raise where.error(key, f"unknown key '{key}' in [{where.table}] (known: {known})")

    def paths(key: str) -> tuple[Path, ...] | None:
        if key not in table:
            return None
        items = _str_list(table[key])
        if items is None:
            raise where.error(key, f"'{key}' must be a list of paths (strings)")
        return tuple(base / p for p in items)

    def one_path(key: str) -> Path | None:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, str) or not value:
            raise where.error(key, f"'{key}' must be a path (a string)")
        return base / value

    targets = None
    if "targets" in table:
        raw = table["targets"]
        items = _str_list(raw)
        targets = parse_targets(",".join(items)) if items else None
        if targets is None:
            raise where.error("targets", f"'targets' must list spirv, msl, wgsl; got {raw!r}")

    defines: tuple[tuple[str, str], ...] = ()
    if "defines" in table:
        raw = table["defines"]
        if not isinstance(raw, dict):
            raise where.error("defines", "'defines' must be a table of NAME = value")
        defines = _defines(raw, lambda m: where.error("defines", m))

    entry_points: dict[Path, tuple[EntryPointSpec, ...]] = {}
    if "entry-points" in table:
        raw = table["entry-points"]
        if not isinstance(raw, dict):
            raise where.error("entry-points", "'entry-points' must be a table: file = [{...}]")
        # errors point at the file's line when the entry points are a [tool.oneshader.*] table
        at = TableLocator(where.file, "\n".join(where.lines), f"{where.table}.entry-points")
        folders: dict[Path, Path] = {}  # resolved once each: a project names one file a shader
        for file, specs in raw.items():
            locate = at if at.header else where
            key = file if at.header else "entry-points"
            if not isinstance(specs, list) or not specs:
                raise locate.error(
                    key, f"entry points of {file!r} must be a list of {{name, stage}}"
                )
            out: list[EntryPointSpec] = []
            for spec in specs:
                stage: Stage | None = None
                if isinstance(spec, dict) and isinstance(spec.get("stage"), str):
                    try:
                        stage = stage_from_name(spec["stage"])
                    except ValueError:
                        stage = None
                if (
                    stage is None
                    or not isinstance(spec.get("name"), str)
                    or set(spec) - {"name", "stage"}
                ):
                    raise locate.error(
                        key,
                        f'entry point of {file!r} must be {{name = "...", stage = '
                        f'"vertex"|"pixel"|"compute"}} (or vs, ps, fragment, fs, cs), got {spec!r}',
                    )
                out.append(EntryPointSpec(spec["name"], stage))
            if not (base / file).is_file():
                raise locate.error(key, f"entry points for {file!r}, which is not a file")
            entry_points[named_path(base / file, folders)] = tuple(out)

    jobs = None
    if "jobs" in table:
        jobs = table["jobs"]
        if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
            raise where.error("jobs", f"'jobs' must be a positive number, got {jobs!r}")

    limits: dict[str, float | int] = {}
    for key in ("time-limit", "memory-limit"):
        if key in table:
            value = table[key]
            whole = key == "memory-limit"
            if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
                value = -1
            if not 0 < value < float("inf"):
                unit = "MiB" if whole else "seconds"
                raise where.error(key, f"'{key}' must be a positive number of {unit}")
            limits[key] = value

    shifts: dict[str, tuple[RegisterShift, ...]] = {}
    for cls in REGISTER_CLASSES:
        key = f"{cls}-shift"
        if key not in table:
            continue
        raw = table[key]
        if not isinstance(raw, list) or not all(isinstance(e, list) and len(e) == 2 for e in raw):
            raise where.error(key, f"'{key}' must be a list of [shift, space|\"all\"] pairs")
        made = [_shift(cls, *e) for e in raw]
        for m in made:
            if isinstance(m, str):
                raise where.error(key, m)
        shifts[cls] = tuple(m for m in made if isinstance(m, RegisterShift))

    binds = None
    if "bind-register" in table:
        raw = table["bind-register"]
        if not isinstance(raw, list) or not all(isinstance(e, list) and len(e) == 4 for e in raw):
            raise where.error(
                "bind-register", "'bind-register' must be a list of [reg, space, binding, set]"
            )
        made_b = [_bind_register(*e) for e in raw]
        for b in made_b:
            if isinstance(b, str):
                raise where.error("bind-register", b)
        binds = tuple(b for b in made_b if isinstance(b, BindRegister))

    dxc_placement = None
    if "placement" in table:
        placement = table["placement"]
        if placement not in PLACEMENTS:
            raise where.error(
                "placement",
                f"'placement' must be \"auto\" (classes that collide shifted apart, the "
                f'default) or "dxc" (DXC\'s bindings exactly), got {placement!r}',
            )
        dxc_placement = placement == "dxc"

    stage_rules: list[StageRule] = []
    if "stages" in table:
        raw = table["stages"]
        if not isinstance(raw, dict):
            raise where.error("stages", '\'stages\' must be a table: "*VS.hlsl" = "vertex"')
        for pattern, value in raw.items():
            spec = value if isinstance(value, dict) else {"stage": value}
            try:
                stage = (
                    stage_from_name(spec["stage"]) if isinstance(spec.get("stage"), str) else None
                )
            except ValueError:
                stage = None
            entry = spec.get("entry", DEFAULT_ENTRY)
            if stage is None or not isinstance(entry, str) or set(spec) - {"stage", "entry"}:
                raise where.error(
                    "stages",
                    f'stage of {pattern!r} must be "vertex", "pixel" or "compute" (or vs, ps, '
                    f'fs, cs), or {{ stage = "...", entry = "NAME" }}; got {value!r}',
                )
            stage_rules.append(StageRule(pattern, stage, entry))

    row_major = None
    if "matrix-layout" in table:
        layout = table["matrix-layout"]
        if layout not in MATRIX_LAYOUTS:
            raise where.error(
                "matrix-layout",
                f'\'matrix-layout\' must be "column-major" (HLSL\'s default) or "row-major" '
                f"(DXC's -Zpr), got {layout!r}",
            )
        row_major = layout == "row-major"
    sixteen = table.get("enable-16bit-types")
    if sixteen is not None and not isinstance(sixteen, bool):
        raise where.error(
            "enable-16bit-types",
            f"'enable-16bit-types' must be true or false (DXC's -enable-16bit-types), got "
            f"{sixteen!r}",
        )

    cache = None
    if "cache" in table:
        value = table["cache"]
        if not isinstance(value, str) or not value.strip():
            raise where.error("cache", "'cache' must be a folder or an fsspec URL (a string)")
        cache = cache_url(value.strip(), base)
    cache_mode = None
    if "cache-mode" in table:
        cache_mode = _cache_mode(table["cache-mode"], lambda m: where.error("cache-mode", m))
    scheduler = None
    if "scheduler" in table:
        scheduler = _scheduler(table["scheduler"], lambda m: where.error("scheduler", m))

    return Settings(
        sources=paths("sources"),
        out=one_path("out"),
        targets=targets,
        include_dirs=paths("include-dirs") or (),
        defines=defines,
        entry_points=entry_points,
        file_rules=_file_rules(table, base, where),
        bindings=one_path("bindings"),
        jobs=jobs,
        shifts=shifts,
        bind_registers=binds,
        time_limit=limits.get("time-limit"),
        memory_limit=int(limits["memory-limit"]) if "memory-limit" in limits else None,
        row_major=row_major,
        cache=cache,
        cache_mode=cache_mode,
        scheduler=scheduler,
        enable_16bit_types=sixteen,
        dxc_placement=dxc_placement,
        stage_rules=tuple(stage_rules),
        shared_groups=_shared_groups(table, where),
    )


def read_pyproject(path: Path, table_name: str = TOOL_TABLE) -> tuple[Mapping[str, Any], str]:
    """The table ``table_name`` (dotted) of a pyproject.toml, {} if absent, and the file's text
    (for positioning later errors); positioned errors."""
    shown = display_path(path)
    try:
        text = read_file(path).decode("utf-8")
        data = tomllib.loads(text)
    except OSError as err:
        raise UserError.at(shown, 0, 0, f"cannot read: {err.strerror}", Code.BAD_CONFIG) from None
    except UnicodeDecodeError:
        raise UserError.at(shown, 0, 0, "not UTF-8 text", Code.BAD_CONFIG) from None
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        line, col = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err)) or "invalid TOML"
        raise UserError.at(shown, line, col, f"invalid TOML: {msg}", Code.BAD_CONFIG) from None
    node: Any = data
    for part in table_name.split("."):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    if not isinstance(node, dict):
        where = TableLocator(shown, text, table_name)
        raise where.error(table_name, f"[{table_name}] must be a table")
    return node, text


def pyproject_settings(path: Path, table_name: str = TOOL_TABLE) -> Settings:
    table, text = read_pyproject(path, table_name)
    return settings_from_table(
        table, path.parent, TableLocator(display_path(path), text, table_name)
    )


def _cli_error(message: str) -> UserError:
    return UserError.at("oneshader build", 0, 0, message, Code.BAD_USAGE)


def _placement(given: str | None) -> bool | None:
    return None if given is None else given == "dxc"


def settings_from_args(args: Any, cwd: Path) -> Settings:
    """The command line's layer (``args`` is the namespace of ``oneshader build``)."""
    targets = None
    if getattr(args, "targets", None) is not None:
        targets = parse_targets(args.targets)
        if targets is None:
            raise _cli_error(f"--targets must list spirv, msl, wgsl; got {args.targets!r}")
    defines = []
    for d in getattr(args, "defines", None) or ():
        parsed = _define(d)
        if parsed is None:
            raise _cli_error(f"-D expects NAME or NAME=VALUE, got {d!r}")
        defines.append(parsed)
    jobs = getattr(args, "jobs", None)
    if jobs is not None and jobs < 1:
        raise _cli_error(f"-j must be at least 1, got {jobs}")
    shifts: dict[str, tuple[RegisterShift, ...]] = {}
    for cls in REGISTER_CLASSES:
        given = getattr(args, f"{cls}_shift", None) or []
        made = [_shift(cls, n, s) for n, s in given]
        for m in made:
            if isinstance(m, str):
                raise _cli_error(f"--fvk-{cls}-shift: {m}")
        if made:
            shifts[cls] = tuple(m for m in made if isinstance(m, RegisterShift))
    binds = None
    if getattr(args, "bind_register", None):
        made_b = [_bind_register(*e) for e in args.bind_register]
        for b in made_b:
            if isinstance(b, str):
                raise _cli_error(f"--fvk-bind-register: {b}")
        binds = tuple(b for b in made_b if isinstance(b, BindRegister))
    cache = getattr(args, "cache", None)
    cache_mode = getattr(args, "cache_mode", None)
    scheduler = getattr(args, "scheduler", None)
    command_entry = None
    entry, profile = getattr(args, "entry", None), getattr(args, "profile", None)
    if profile is not None:
        try:
            command_entry = EntryPointSpec(entry or DEFAULT_ENTRY, stage_from_profile(profile))
        except ValueError as err:
            raise _cli_error(f"-T: {err}") from None
    elif entry is not None:
        raise _cli_error(f"-E {entry} needs -T PROFILE (vs_6_0, ps_6_0, cs_6_0), as DXC")
    paths = getattr(args, "paths", None)
    out = getattr(args, "output", None)
    bindings = getattr(args, "bindings", None)
    return Settings(
        sources=tuple(cwd / p for p in paths) if paths else None,
        out=cwd / out if out else None,
        targets=targets,
        include_dirs=tuple(cwd / d for d in getattr(args, "include_dirs", None) or ()),
        defines=tuple(defines),
        bindings=cwd / bindings if bindings else None,
        jobs=jobs,
        shifts=shifts,
        bind_registers=binds,
        row_major=getattr(args, "row_major", None),
        cache=cache_url(cache, cwd) if cache else None,
        cache_mode=_cache_mode(cache_mode, _cli_error) if cache_mode else None,
        scheduler=_scheduler(scheduler, _cli_error) if scheduler else None,
        enable_16bit_types=getattr(args, "enable_16bit_types", None),
        dxc_placement=_placement(getattr(args, "placement", None)),
        command_entry=command_entry,
    )


def merge(
    root: Path,
    layers: Sequence[Settings],
    *,
    force: bool = False,
    quiet: bool = False,
    pyproject: Path | None = None,
    server_idle_seconds: float | None = None,
    depfile: Path | None = None,
) -> BuildConfig:
    """Later layers override earlier ones; include dirs of later layers come first, defines and
    register shifts of a later layer replace those of the same name (register class)."""
    sources: tuple[Path, ...] | None = None
    out = bindings = None
    targets: tuple[Target, ...] | None = None
    jobs: int | None = None
    includes: list[Path] = []
    defines: dict[str, str] = {}
    entry_points: dict[Path, tuple[EntryPointSpec, ...]] = {}
    shifts: dict[str, tuple[RegisterShift, ...]] = {}
    binds: tuple[BindRegister, ...] = ()
    limits = CompileLimits()
    row_major = False
    cache: str | None = None
    cache_mode = "readwrite"
    scheduler: str | None = None
    sixteen = False
    dxc_placement = False
    stage_rules: list[StageRule] = []
    command_entry: EntryPointSpec | None = None
    variant_rules: dict[str, FileRule] = {}
    permutation_rules: dict[str, FileRule] = {}
    target_rules: dict[str, FileRule] = {}
    shared_groups: tuple[SharedGroup, ...] = ()
    for layer in layers:
        shared_groups = layer.shared_groups or shared_groups
        sources = layer.sources if layer.sources is not None else sources
        out = layer.out or out
        bindings = layer.bindings or bindings
        targets = layer.targets or targets
        jobs = layer.jobs or jobs
        includes = [*layer.include_dirs, *includes]
        defines.update(layer.defines)
        entry_points.update(layer.entry_points)
        shifts.update(layer.shifts)
        binds = layer.bind_registers if layer.bind_registers is not None else binds
        limits = CompileLimits(
            layer.time_limit or limits.seconds, layer.memory_limit or limits.memory_mib
        )
        row_major = layer.row_major if layer.row_major is not None else row_major
        cache = layer.cache or cache
        cache_mode = layer.cache_mode or cache_mode
        scheduler = layer.scheduler or scheduler
        if layer.enable_16bit_types is not None:
            sixteen = layer.enable_16bit_types
        if layer.dxc_placement is not None:
            dxc_placement = layer.dxc_placement
        stage_rules = [*layer.stage_rules, *stage_rules]  # a later layer's patterns first
        command_entry = layer.command_entry or command_entry
        for rule in layer.file_rules:  # a later layer's rule for a pattern replaces an earlier's
            kind = permutation_rules if rule.permutations else variant_rules
            (kind if rule.variants else target_rules)[rule.pattern] = rule
    where = display_path(pyproject) if pyproject else "oneshader build"
    if not sources:
        raise UserError.at(
            where,
            0,
            0,
            "no shader sources: pass PATH or set 'sources' in [tool.oneshader]",
            Code.BAD_USAGE,
        )
    if out is None:
        raise UserError.at(
            where,
            0,
            0,
            "no output folder: pass -o OUT or set 'out' in [tool.oneshader]",
            Code.BAD_USAGE,
        )
    return BuildConfig(
        root=root,
        sources=tuple(dict.fromkeys(p.resolve() if p.is_dir() else named_path(p) for p in sources)),
        out=out.resolve(),
        targets=targets or tuple(Target),
        include_dirs=tuple(dict.fromkeys(p.resolve() for p in includes)),
        defines=tuple(sorted(defines.items())),
        entry_points=entry_points,
        shifts=tuple(s for cls in REGISTER_CLASSES for s in shifts.get(cls, ())),
        bind_registers=binds,
        row_major=row_major,
        enable_16bit_types=sixteen,
        dxc_placement=dxc_placement,
        stage_rules=tuple(stage_rules),
        command_entry=command_entry,
        variant_rules=tuple(variant_rules.values()),
        permutation_rules=tuple(permutation_rules.values()),
        target_rules=tuple(target_rules.values()),
        bindings=bindings.resolve() if bindings else None,
        shared_groups=shared_groups,
        jobs=jobs or available_cpus(),
        force=force,
        quiet=quiet,
        pyproject=pyproject,
        server_idle_seconds=server_idle_seconds,
        limits=limits,
        depfile=depfile,
        cache=cache,
        cache_mode=cache_mode,
        scheduler=scheduler,
    )


def load_config(args: Any, cwd: Path | None = None) -> BuildConfig:
    """The configuration of ``oneshader build`` run in ``cwd`` with ``args``."""
    cwd = (cwd or Path.cwd()).resolve()
    root, pyproject = find_project_root(cwd)
    layers = [pyproject_settings(pyproject)] if pyproject else []
    layers.append(env_settings(cwd))
    layers.append(settings_from_args(args, cwd))
    return merge(
        root,
        layers,
        force=bool(getattr(args, "force", False)),
        quiet=bool(getattr(args, "quiet", False)),
        pyproject=pyproject,
        server_idle_seconds=policy.server_idle_seconds(getattr(args, "no_server", False)),
        depfile=cwd / args.depfile if getattr(args, "depfile", None) else None,
    )
