"""[tool.oneshader] and the command line: merging, and positioned errors for bad values."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from build_helpers import BuildRun

from oneshader.buildtask.config import load_config, parse_targets
from oneshader.buildtask.sources import discover
from oneshader.cli import make_parser
from oneshader.compiler.api import BindRegister, CompileLimits, EntryPointSpec, RegisterShift
from oneshader.diagnostics import UserError
from oneshader.reflection.model import Stage, Target


def build_args(*argv: str) -> argparse.Namespace:
    return make_parser().parse_args(["build", *argv])


def write_project(root: Path, table: str) -> None:
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0"\n\n[tool.oneshader]\n' + table, encoding="utf-8"
    )


def test_pyproject_settings_are_read(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        'sources = ["shaders"]\nout = "build/out"\ntargets = ["wgsl", "spirv"]\n'
        'include-dirs = ["inc"]\njobs = 3\nbindings = "gen"\n'
        "defines = { QUALITY = 2, FAST = true }\n"
        'b-shift = [[10, "all"]]\nt-shift = [[20, 1]]\n'
        'bind-register = [["t3", 0, 7, 1]]\n'
        "[tool.oneshader.entry-points]\n"
        '"shaders/a.hlsl" = [{ name = "main", stage = "compute" }]\n',
    )
    sub = tmp_path / "shaders" / "deep"
    sub.mkdir(parents=True)
    (tmp_path / "shaders/a.hlsl").write_text("")
    cfg = load_config(build_args(), cwd=sub)  # found by walking up
    assert cfg.root == tmp_path.resolve()
    assert cfg.sources == ((tmp_path / "shaders").resolve(),)
    assert cfg.out == (tmp_path / "build/out").resolve()
    assert cfg.targets == (Target.SpirV, Target.Wgsl)
    assert cfg.include_dirs == ((tmp_path / "inc").resolve(),)
    assert cfg.jobs == 3
    assert cfg.bindings == (tmp_path / "gen").resolve()
    assert cfg.defines == (("FAST", "1"), ("QUALITY", "2"))
    assert cfg.shifts == (RegisterShift("b", 10, None), RegisterShift("t", 20, 1))
    assert cfg.bind_registers == (BindRegister("t3", 0, 7, 1),)
    ep = cfg.entry_points[(tmp_path / "shaders/a.hlsl").resolve()]
    assert ep == (EntryPointSpec("main", Stage.Compute),)


def test_entry_point_stages_take_the_compilers_aliases(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        'sources = ["s"]\nout = "o"\n[tool.oneshader.entry-points]\n'
        '"a.hlsl" = [{ name = "v", stage = "vs" }, { name = "p", stage = "Fragment" }]\n'
        '"b.hlsl" = [{ name = "c", stage = "cs" }]\n',
    )
    for name in ("a.hlsl", "b.hlsl"):
        (tmp_path / name).write_text("")
    cfg = load_config(build_args(), cwd=tmp_path)
    assert cfg.entry_points[(tmp_path / "a.hlsl").resolve()] == (
        EntryPointSpec("v", Stage.Vertex),
        EntryPointSpec("p", Stage.Pixel),
    )
    assert cfg.entry_points[(tmp_path / "b.hlsl").resolve()] == (
        EntryPointSpec("c", Stage.Compute),
    )


def test_command_line_overrides_pyproject(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        'sources = ["shaders"]\nout = "out"\ntargets = ["wgsl"]\ninclude-dirs = ["inc"]\n'
        'defines = { A = "1", B = "2" }\nb-shift = [[10, "all"]]\nu-shift = [[5, 0]]\njobs = 4\n',
    )
    (tmp_path / "other").mkdir()
    args = build_args(
        "other",
        "-o",
        "elsewhere",
        "--targets",
        "msl,spirv",
        "-I",
        "more",
        "-D",
        "B=3",
        "-D",
        "C",
        "--fvk-b-shift",
        "1",
        "2",
        "-j",
        "2",
        "--force",
        "--quiet",
    )
    cfg = load_config(args, cwd=tmp_path)
    assert cfg.sources == ((tmp_path / "other").resolve(),)
    assert cfg.out == (tmp_path / "elsewhere").resolve()
    assert cfg.targets == (Target.SpirV, Target.Msl)
    assert cfg.include_dirs == ((tmp_path / "more").resolve(), (tmp_path / "inc").resolve())
    assert cfg.defines == (("A", "1"), ("B", "3"), ("C", "1"))
    assert cfg.shifts == (RegisterShift("b", 1, 2), RegisterShift("u", 5, 0))
    assert cfg.jobs == 2 and cfg.force and cfg.quiet


def test_without_pyproject_the_command_line_is_enough(tmp_path: Path) -> None:
    cfg = load_config(build_args("x.hlsl", "-o", "out"), cwd=tmp_path)
    assert cfg.root == tmp_path.resolve() and cfg.pyproject is None
    assert cfg.targets == (Target.SpirV, Target.Msl, Target.Wgsl)
    assert cfg.jobs >= 1


@pytest.mark.parametrize(
    ("table", "line", "col", "fragment"),
    [
        ('sources = "shaders"\nout = 3\n', 7, 1, "'out' must be a path"),
        ('sources = ["s"]\nout = "o"\n  targets = ["dx12"]\n', 8, 3, "'targets' must list"),
        ('sources = ["s"]\nout = "o"\njobs = 0\n', 8, 1, "'jobs' must be a positive"),
        ('sources = ["s"]\nout = "o"\ntime-limit = -1\n', 8, 1, "'time-limit' must be a pos"),
        ('sources = ["s"]\nout = "o"\nmemory-limit = 1.5\n', 8, 1, "number of MiB"),
        ('sources = ["s"]\nouts = "o"\n', 7, 1, "unknown key 'outs'"),
        ('sources = ["s"]\nout = "o"\nb-shift = [[1, "some"]]\n', 8, 1, "'all'"),
        ('sources = ["s"]\nout = "o"\nbind-register = [["x1", 0, 0, 0]]\n', 8, 1, "b0, t3"),
        (
            'sources = ["s"]\nout = "o"\n[tool.oneshader.entry-points]\n'
            '"a.hlsl" = [{ name = "m", stage = "geometry" }]\n',
            9,  # the file's entry, not the table header
            1,
            "stage",
        ),
        (
            'sources = ["s"]\nout = "o"\n[tool.oneshader.entry-points]\n'
            '"gone.hlsl" = [{ name = "m", stage = "cs" }]\n',
            9,
            1,
            "entry points for 'gone.hlsl', which is not a file",
        ),
    ],
)
def test_bad_pyproject_values_are_positioned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, line: int, col: int, fragment: str
) -> None:
    monkeypatch.chdir(tmp_path)  # messages name files relative to the cwd
    write_project(tmp_path, table)
    with pytest.raises(UserError) as info:
        load_config(build_args(), cwd=tmp_path)
    (diag,) = info.value.diagnostics
    assert diag.file == "pyproject.toml"
    assert (diag.line, diag.column) == (line, col)
    assert fragment in diag.message
    assert diag.excerpt  # the offending line is shown


def test_invalid_toml_is_positioned(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.oneshader]\nout = "x\n', encoding="utf-8")
    with pytest.raises(UserError) as info:
        load_config(build_args(), cwd=tmp_path)
    (diag,) = info.value.diagnostics
    assert diag.line == 2 and diag.column > 0 and "invalid TOML" in diag.message


def test_a_pyproject_that_is_not_utf8_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.oneshader]\nout = "\xff"\n')
    with pytest.raises(UserError) as info:
        load_config(build_args(), cwd=tmp_path)
    (diag,) = info.value.diagnostics
    assert diag.file.endswith("pyproject.toml") and diag.message == "not UTF-8 text"


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--targets", "spirv,vulkan"], "--targets"),
        (["-D", "1X=2"], "-D expects"),
        (["-j", "0"], "-j must be"),
        (["--fvk-t-shift", "x", "0"], "--fvk-t-shift"),
        (["--fvk-bind-register", "t0", "0", "-1", "0"], "--fvk-bind-register"),
    ],
)
def test_bad_command_line_values(tmp_path: Path, argv: list[str], fragment: str) -> None:
    with pytest.raises(UserError) as info:
        load_config(build_args("a.hlsl", "-o", "out", *argv), cwd=tmp_path)
    assert fragment in info.value.diagnostics[0].message


def test_missing_sources_and_out_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no shader sources"):
        load_config(build_args("-o", "out"), cwd=tmp_path)
    with pytest.raises(UserError, match="no output folder"):
        load_config(build_args("a.hlsl"), cwd=tmp_path)


def test_parse_targets() -> None:
    assert parse_targets("wgsl, SPIRV") == (Target.SpirV, Target.Wgsl)
    assert parse_targets("metal") == (Target.Msl,)
    assert parse_targets("") is None
    assert parse_targets("spirv,hlsl") is None
    assert parse_targets("spirv,,wgsl") is None  # a mistake, not two targets
    assert parse_targets(",") is None


@pytest.mark.parametrize(
    "args",
    [
        ["--targets", ""],
        ["--targets", "spirv,,wgsl"],
        ["--fvk-b-shift", "-1", "all"],
        ["--fvk-t-shift", "4294967296", "0"],
        ["--fvk-u-shift", "1", "4294967296"],
        ["--fvk-bind-register", "t4294967296", "0", "1", "0"],
        ["--fvk-bind-register", "t0", "0", "-1", "0"],
        ["--fvk-bind-register", "t0", "0", "1", "4294967296"],
    ],
)
def test_numbers_and_targets_out_of_range_are_usage_errors(
    project: Path, build: BuildRun, args: list[str]
) -> None:
    """Caught on the command line (exit 2, OS2002), never passed to the compiler (an OS9002
    internal error it was), nor read as "all targets"."""
    status, _, err = build(*args)
    assert status == 2, err
    assert err.startswith("oneshader build: error OS2002:"), err
    assert not (project / "out").exists()


def test_the_largest_numbers_are_accepted(project: Path) -> None:
    args = ["--fvk-b-shift", "4294967295", "4294967295"]
    config = load_config(build_args(*args), cwd=project)
    assert config.shifts == (RegisterShift("b", 2**32 - 1, 2**32 - 1),)


def test_discovery_mirrors_the_tree_and_names_sources_from_the_project(tmp_path: Path) -> None:
    shaders = tmp_path / "shaders"
    (shaders / "ui").mkdir(parents=True)
    (shaders / ".hidden").mkdir()
    for rel in ["ui/Sprite.hlsl", "Blit.hlsl", "common.hlsli", ".hidden/X.hlsl", "notes.txt"]:
        (shaders / rel).write_text("//\n")
    single = tmp_path / "extra" / "One.hlsl"
    single.parent.mkdir()
    single.write_text("//\n")
    cfg = load_config(build_args("shaders", "extra/One.hlsl", "-o", "out"), cwd=tmp_path)
    jobs = discover(cfg)
    assert [(j.stem, j.source_name) for j in jobs] == [
        ("Blit", "shaders/Blit.hlsl"),
        ("ui/Sprite", "shaders/ui/Sprite.hlsl"),
        ("One", "extra/One.hlsl"),
    ]
    assert all(j.options.source_name == j.source_name for j in jobs)
    assert len({j.key for j in jobs}) == 3  # the source name is part of the key


def test_options_change_the_key_but_not_the_project_location(tmp_path: Path) -> None:
    def key(root: Path, *extra: str) -> str:
        (root / "s").mkdir(parents=True, exist_ok=True)
        (root / "s" / "A.hlsl").write_text("//\n")
        (root / "inc").mkdir(exist_ok=True)
        return discover(load_config(build_args("s", "-o", "o", "-I", "inc", *extra), root))[0].key

    base = key(tmp_path / "p1")
    assert key(tmp_path / "p2") == base
    assert key(tmp_path / "p1", "-D", "X=1") != base
    assert key(tmp_path / "p1", "--targets", "spirv") != base
    assert key(tmp_path / "p1", "--fvk-s-shift", "3", "all") != base
    assert key(tmp_path / "p1", "-Zpr") != base
    assert key(tmp_path / "p1", "-Zpc") == base  # the default, spelled out


def test_row_major_matrices_from_pyproject_and_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DXC's -Zpr: ``matrix-layout`` in [tool.oneshader], -Zpr/-Zpc on the command line (the
    later layer wins), handed to every shader's compile options."""
    write_project(tmp_path, 'sources = ["s"]\nout = "o"\nmatrix-layout = "row-major"\n')
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "A.hlsl").write_text("//\n")
    cfg = load_config(build_args(), cwd=tmp_path)
    assert cfg.row_major and discover(cfg)[0].options.row_major
    assert not load_config(build_args("-Zpc"), cwd=tmp_path).row_major
    write_project(tmp_path, 'sources = ["s"]\nout = "o"\n')
    assert not load_config(build_args(), cwd=tmp_path).row_major
    assert load_config(build_args("-Zpr"), cwd=tmp_path).row_major
    monkeypatch.chdir(tmp_path)
    write_project(tmp_path, 'sources = ["s"]\nout = "o"\nmatrix-layout = "rows"\n')
    with pytest.raises(UserError) as info:
        load_config(build_args(), cwd=tmp_path)
    (diag,) = info.value.diagnostics
    assert (diag.file, diag.line) == ("pyproject.toml", 8)
    assert "'matrix-layout' must be" in diag.message and "-Zpr" in diag.message


def test_sixteen_bit_types_from_pyproject_and_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DXC's -enable-16bit-types: ``enable-16bit-types`` in [tool.oneshader] or the option as
    DXC spells it, handed to every shader's compile options and its key."""
    write_project(tmp_path, 'sources = ["s"]\nout = "o"\nenable-16bit-types = true\n')
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "A.hlsl").write_text("//\n")
    cfg = load_config(build_args(), cwd=tmp_path)
    assert cfg.enable_16bit_types and discover(cfg)[0].options.enable_16bit_types
    on = discover(cfg)[0].key
    write_project(tmp_path, 'sources = ["s"]\nout = "o"\n')
    cfg = load_config(build_args(), cwd=tmp_path)
    assert not cfg.enable_16bit_types and discover(cfg)[0].key != on
    cfg = load_config(build_args("-enable-16bit-types"), cwd=tmp_path)
    assert cfg.enable_16bit_types and discover(cfg)[0].key == on
    monkeypatch.chdir(tmp_path)
    write_project(tmp_path, 'sources = ["s"]\nout = "o"\nenable-16bit-types = "yes"\n')
    with pytest.raises(UserError) as info:
        load_config(build_args(), cwd=tmp_path)
    (diag,) = info.value.diagnostics
    assert (diag.file, diag.line) == ("pyproject.toml", 8)
    assert "'enable-16bit-types' must be true or false" in diag.message


def test_missing_source_and_colliding_outputs_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match="no such file or folder: nope"):
        discover(load_config(build_args("nope", "-o", "out"), cwd=tmp_path))
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "Same.hlsl").write_text("//\n")
    with pytest.raises(UserError, match="would both write"):
        discover(load_config(build_args("a", "b", "-o", "out"), cwd=tmp_path))


def test_compile_limits_have_defaults_and_come_from_pyproject(tmp_path: Path) -> None:
    write_project(tmp_path, 'sources = ["s"]\nout = "o"\n')
    assert load_config(build_args(), cwd=tmp_path).limits == CompileLimits(60.0, 2048)
    write_project(tmp_path, 'sources = ["s"]\nout = "o"\ntime-limit = 2.5\nmemory-limit = 512\n')
    limits = load_config(build_args(), cwd=tmp_path).limits
    assert limits == CompileLimits(2.5, 512) and limits.memory_bytes == 512 << 20


def test_placement_is_auto_unless_dxc_is_asked_for(tmp_path: Path) -> None:
    """``placement = "dxc"`` (``--placement dxc``) is DXC's placement exactly; the default
    shifts colliding register classes apart (tests/compiler/test_auto_placement.py)."""
    write_project(tmp_path, 'sources = ["a.hlsl"]\nout = "o"\n')
    (tmp_path / "a.hlsl").write_text("")
    (job,) = discover(load_config(build_args(), cwd=tmp_path))
    assert job.options.dxc_placement is False
    (dxc,) = discover(load_config(build_args("--placement", "dxc"), cwd=tmp_path))
    assert dxc.options.dxc_placement is True and dxc.key != job.key
    write_project(tmp_path, 'sources = ["a.hlsl"]\nout = "o"\nplacement = "dxc"\n')
    assert load_config(build_args(), cwd=tmp_path).dxc_placement is True
    assert load_config(build_args("--placement", "auto"), cwd=tmp_path).dxc_placement is False
    write_project(tmp_path, 'sources = ["a.hlsl"]\nout = "o"\nplacement = "exact"\n')
    with pytest.raises(UserError, match='must be "auto"'):
        load_config(build_args(), cwd=tmp_path)
