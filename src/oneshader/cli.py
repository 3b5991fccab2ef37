"""Command-line parsing only: each command hands its arguments to one function of a package.

Exit status: 0 success, 1 a file or shader failed, 2 bad usage or configuration. A
:class:`~oneshader.diagnostics.UserError` escaping a command is printed without a traceback.
Imports happen inside the commands so that ``oneshader generate`` never loads the compiler,
and a ``oneshader build`` with nothing to do answers before anything but the standard library's
basics is imported (``buildtask.noop``).
"""

from __future__ import annotations

import sys

from oneshader import __version__

TYPE_CHECKING = False  # typing's import costs a no-op more than its whole check
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence


def _reflection_check(args: argparse.Namespace) -> int:
    from oneshader.reflection import tools

    return tools.check(args.files, args.reporter)


def _reflection_format(args: argparse.Namespace) -> int:
    from oneshader.reflection import tools

    return tools.format_files(args.files, check=args.check, write=args.write, report=args.reporter)


def _reflection_show(args: argparse.Namespace) -> int:
    from oneshader.reflection import tools

    return tools.show(args.file, as_json=args.json, report=args.reporter)


def _reflection_diff(args: argparse.Namespace) -> int:
    from oneshader.reflection import tools

    return tools.diff(args.old, args.new, as_json=args.json, report=args.reporter)


def _build(args: argparse.Namespace) -> int:
    from oneshader.buildtask.command import build_command

    return build_command(args)


def _generate(args: argparse.Namespace) -> int:
    from oneshader.codegen.command import generate_command

    return generate_command(args.files, args.output, check=args.check, report=args.reporter)


def _prove_layouts(args: argparse.Namespace) -> int:
    from oneshader.buildtask.config import parse_targets
    from oneshader.diagnostics import UserError
    from oneshader.prove import prove_paths
    from oneshader.reflection.model import Target

    targets = parse_targets(args.targets or "wgsl,spirv")
    if targets is None or not set(targets) <= {Target.Wgsl, Target.SpirV}:
        raise UserError.at("<command line>", 0, 0, "--targets: wgpu runs wgsl and spirv only")
    defines = []
    for text in args.defines:
        name, _, value = text.partition("=")
        defines.append((name, value if "=" in text else "1"))
    return prove_paths(args.paths, include_dirs=args.include_dirs, defines=defines, targets=targets)


def _add_preprocessor_arguments(p: argparse.ArgumentParser, *, configured: bool) -> None:
    """DXC's -I and -D; ``configured``: the command reads [tool.oneshader] too, and says how
    the two combine."""
    p.add_argument(
        "-I",
        dest="include_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="search DIR for #include files"
        + (" (before the configured include-dirs)" if configured else ""),
    )
    p.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="define a macro (NAME alone means NAME=1)"
        + ("; replaces a configured one of that name" if configured else ""),
    )


def _add_build_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="shader files or folders (*.hlsl, *.vsh, *.psh, *.csh)",
    )
    p.add_argument(
        "-E",
        "--entry",
        metavar="NAME",
        help="the entry point of the files given, as DXC (default: main; needs -T)",
    )
    p.add_argument(
        "-T",
        "--profile",
        metavar="PROFILE",
        help="their stage as DXC's profile: vs_6_0, ps_6_0, cs_6_0 (any shader model)",
    )
    p.add_argument("-o", "--output", metavar="OUT", help="output folder (mirrors the sources)")
    p.add_argument("--targets", help="comma-separated: spirv,msl,wgsl")
    _add_preprocessor_arguments(p, configured=True)
    p.add_argument("-j", "--jobs", type=int, metavar="N", help="worker processes (default: CPUs)")
    p.add_argument("--force", action="store_true", help="rebuild everything")
    p.add_argument("--watch", action="store_true", help="rebuild on every change until ^C")
    p.add_argument("--bindings", metavar="DIR", help="also generate Python bindings into DIR")
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress lines: only diagnostics and the summary",
    )
    p.add_argument(
        "--cache",
        metavar="URL",
        help="a shared cache of compiled shaders: a folder or an fsspec URL such as "
        "s3://bucket/prefix (also ONESHADER_CACHE, [tool.oneshader] cache)",
    )
    p.add_argument(
        "--cache-mode",
        choices=("read", "write", "readwrite"),
        help="read hits only, write (publish) only, or both (the default)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="compile on a Dask cluster: its scheduler's tcp:// or tls:// address (also "
        "ONESHADER_SCHEDULER, [tool.oneshader] scheduler)",
    )
    p.add_argument(
        "--no-server",
        action="store_true",
        help="no compile server kept for later builds (also ONESHADER_SERVER=0; off in CI)",
    )
    for cls in "btsu":
        p.add_argument(
            f"--fvk-{cls}-shift",
            dest=f"{cls}_shift",
            nargs=2,
            action="append",
            default=[],
            metavar=("N", "SPACE"),
            help=f"shift {cls}-registers by N in SPACE (a number or 'all'), as DXC",
        )
    p.add_argument(
        "--fvk-bind-register",
        dest="bind_register",
        nargs=4,
        action="append",
        default=[],
        metavar=("xN", "SPACE", "BINDING", "SET"),
        help="bind register xN of SPACE to BINDING in SET, as DXC",
    )
    p.add_argument(
        "-enable-16bit-types",
        dest="enable_16bit_types",
        action="store_const",
        const=True,
        help="min16float/min16int/min16uint are the 16-bit types they stand for, as DXC's "
        "-enable-16bit-types (they are 32-bit without it)",
    )
    p.add_argument(
        "--placement",
        choices=("auto", "dxc"),
        help="auto (default): register classes that would share bindings (b0, t0, u0) are "
        "laid out one after another; dxc: DXC's bindings exactly (placement in pyproject)",
    )
    layout = p.add_mutually_exclusive_group()
    layout.add_argument(
        "-Zpr",
        dest="row_major",
        action="store_const",
        const=True,
        help="matrices without row_major/column_major are row-major, as DXC's -Zpr",
    )
    layout.add_argument(
        "-Zpc",
        dest="row_major",
        action="store_const",
        const=False,
        help="they are column-major (HLSL's default; overrides matrix-layout in pyproject)",
    )
    p.add_argument(
        "--depfile",
        metavar="FILE",
        help="write the inputs (source and includes) of every output to FILE, in the make "
        "syntax that make, ninja and CMake read",
    )


def _common_options() -> argparse.ArgumentParser:
    """The options every command takes (after its name)."""
    import argparse

    from oneshader.diagnostics import DIAGNOSTIC_FORMATS

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--diagnostics-format",
        choices=DIAGNOSTIC_FORMATS,
        default="gcc",
        help="gcc: FILE:LINE:COL: error CODE: ... (the default); msvc: FILE(LINE,COL): ...; "
        "json: one JSON object per line (docs/build.md)",
    )
    return common


def make_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="oneshader",
        description="HLSL once; SPIR-V, MSL and WGSL with host bindings that agree with them.",
    )
    parser.add_argument("--version", action="version", version=f"oneshader {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    common = [_common_options()]

    refl = sub.add_parser("reflection", help="check, format and show reflection files")
    rsub = refl.add_subparsers(dest="reflection_command", required=True)
    p = rsub.add_parser("check", help="validate reflection files", parents=common)
    p.add_argument("files", nargs="+", metavar="FILE", help="reflection files")
    p.set_defaults(func=_reflection_check)
    p = rsub.add_parser("format", help="print or write the canonical form", parents=common)
    p.add_argument("files", nargs="+", metavar="FILE", help="reflection files")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if a file is not canonical")
    mode.add_argument("--write", action="store_true", help="rewrite files in place")
    p.set_defaults(func=_reflection_format)
    p = rsub.add_parser("show", help="a readable summary, or the model as JSON", parents=common)
    p.add_argument("file", metavar="FILE", help="a reflection file")
    p.add_argument(
        "--json",
        action="store_true",
        help="the model as JSON, for tools in other languages (docs/reflection-format.md)",
    )
    p.set_defaults(func=_reflection_show)
    p = rsub.add_parser(
        "diff",
        help="the changes between two builds' reflections, breaking or compatible",
        parents=common,
    )
    p.add_argument("old", metavar="OLD", help="a reflection file, or a folder of them")
    p.add_argument("new", metavar="NEW", help="the same shader(s) rebuilt")
    p.add_argument("--json", action="store_true", help="the changes as JSON, for tools")
    p.set_defaults(func=_reflection_diff)

    p = sub.add_parser(
        "build", help="compile shaders, write targets and reflection files", parents=common
    )
    _add_build_arguments(p)
    p.set_defaults(func=_build)

    p = sub.add_parser("generate", help="Python bindings from reflection files", parents=common)
    p.add_argument("files", nargs="+", metavar="FILE.reflection", help="reflection files")
    p.add_argument(
        "-o", "--output", required=True, metavar="DIR", help="folder for the generated modules"
    )
    p.add_argument("--check", action="store_true", help="exit 1 if DIR is not up to date")
    p.set_defaults(func=_generate)

    p = sub.add_parser(
        "prove-layouts",
        help="run probes of every buffer struct on the device against the generated bindings",
        parents=common,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="shader files or folders (*.hlsl)")
    _add_preprocessor_arguments(p, configured=False)
    p.add_argument("--targets", help="what wgpu runs: wgsl,spirv (the default; SPIR-V by naga)")
    p.set_defaults(func=_prove_layouts)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from oneshader.buildtask.noop import up_to_date

    given = list(sys.argv[1:] if argv is None else argv)
    done = up_to_date(given)
    if done is not None:
        return done
    from oneshader.buildtask import early

    zygote = early.start(given)  # a cold build's compiler, warming while the rest loads
    try:
        return _run(given, zygote)
    finally:
        if zygote is not None:  # closed by the build's pool when adopted: nothing left then
            zygote.abandon()


def _run(given: list[str], zygote: object) -> int:
    from oneshader.diagnostics import Reporter, UserError

    args = make_parser().parse_args(given)
    args.noop_argv = given
    args.early_zygote = zygote
    args.reporter = Reporter.for_stream(args.diagnostics_format, sys.stderr)
    try:
        status: int = args.func(args)
    except UserError as err:
        args.reporter.print(err.diagnostics, sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
