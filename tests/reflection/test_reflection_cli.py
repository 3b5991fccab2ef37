"""oneshader reflection check|format|show, through the CLI's main() and one real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from reflection_strategies import rich_model

from oneshader.cli import main
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import ScalarKind, StructMember, TypeKind, TypeLayout

GOLDEN = Path(__file__).parent / "golden" / "sprite.reflection"
Capture = pytest.CaptureFixture[str]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.reflection"
    good.write_bytes(GOLDEN.read_bytes())
    bad = tmp_path / "bad.reflection"
    bad.write_bytes(GOLDEN.read_bytes().replace(b"count=1", b"count=-1"))
    messy = tmp_path / "messy.reflection"  # valid, not canonical
    text = (
        GOLDEN.read_text()
        .replace('name="Frame"', "name=Frame")
        .replace("slot target=SpirV set=0", "slot set=0 target=SpirV future=1")
    )
    messy.write_text(text)
    return {"good": good, "bad": bad, "messy": messy, "missing": tmp_path / "missing.reflection"}


def test_check(files: dict[str, Path], capsys: Capture) -> None:
    assert main(["reflection", "check", str(files["good"]), str(files["messy"])]) == 0
    assert capsys.readouterr().err == ""
    status = main(
        ["reflection", "check", str(files["bad"]), str(files["good"]), str(files["missing"])]
    )
    assert status == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{files['bad']}:4:49: error: count: expected an unsigned")
    assert err[1] == f"{files['missing']}: error: cannot read: No such file or directory"
    assert len(err) == 2


def test_format_prints_the_canonical_form(
    files: dict[str, Path], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["reflection", "format", str(files["messy"])]) == 0
    assert capsysbinary.readouterr().out == GOLDEN.read_bytes()
    assert main(["reflection", "format", str(files["bad"])]) == 1
    out = capsysbinary.readouterr()
    assert out.out == b"" and b":4:49: error:" in out.err
    assert main(["reflection", "format", str(files["missing"])]) == 1
    missing = f"{files['missing']}: error: cannot read: No such file or directory\n"
    assert capsysbinary.readouterr().err == missing.encode()


def test_format_check(files: dict[str, Path], capsys: Capture) -> None:
    assert main(["reflection", "format", "--check", str(files["good"])]) == 0
    assert main(["reflection", "format", "--check", str(files["good"]), str(files["messy"])]) == 1
    assert capsys.readouterr().err == f"{files['messy']}: not in canonical form\n"
    assert files["messy"].read_bytes() != GOLDEN.read_bytes()  # --check never writes


def test_format_write(files: dict[str, Path], capsys: Capture) -> None:
    before = files["good"].stat().st_mtime_ns
    assert main(["reflection", "format", "--write", str(files["messy"]), str(files["good"])]) == 0
    assert files["messy"].read_bytes() == GOLDEN.read_bytes()
    assert files["good"].stat().st_mtime_ns == before  # canonical files are left alone
    assert capsys.readouterr().err == f"{files['messy']}: reformatted\n"
    assert main(["reflection", "format", "--write", str(files["bad"])]) == 1
    assert b"count=-1" in files["bad"].read_bytes()  # an invalid file is not touched


def test_show(files: dict[str, Path], tmp_path: Path, capsys: Capture) -> None:
    rich = tmp_path / "rich.reflection"
    ReflectionFormat.write_file(rich, rich_model())
    assert main(["reflection", "show", str(rich)]) == 0
    out = capsys.readouterr().out
    assert "resource Scene: ConstantBuffer (ConstantBuffer), stages Vertex, Pixel" in out
    for slot in ("slot SpirV set 1 binding 2", "slot Msl index 2", "slot Wgsl group 1 binding 2"):
        assert slot in out
    assert "counter Msl index 2" in out
    # The Light[8] array shows its element's members and their padding, then the matrix.
    assert "lights[0].pos" in out and "lights[0].color" in out
    table = [line.split() for line in out.splitlines()]
    assert ["0", "256", "16", "lights", "Light[8]", "stride", "32"] in table
    assert ["28", "4", "(padding)"] in table  # after color (16 + 12) up to the size 32
    assert ["12", "4", "4", "lights[0].power", "float"] in table
    assert "entry VSMain: Vertex, vertex stride 28" in out
    # A name with a control character is shown escaped, on its one row.
    assert ["256", "48", "16", '"tint\\n"', "half3x4", "RowMajor", "mstride", "16"] in table
    assert "spec Quality: id 7, Float, default bits 1065353216 (1.0)" in out
    assert "entry CSMain: Compute, workgroup 8x8x1" in out
    assert "features Float16, InputOutput16" in out
    assert main(["reflection", "show", str(files["missing"])]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_console_command_in_a_subprocess(files: dict[str, Path]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "reflection", "check", str(files["bad"])],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"{files['bad']}:4:49: error:")
    assert "Traceback" not in proc.stderr


def test_show_of_a_deep_layout_does_not_recurse(tmp_path: Path, capsys: Capture) -> None:
    from reflection_strategies import deep_array, deep_struct

    from oneshader.reflection import Resource, ResourceKind, ResourceTypeKind, ShaderReflection

    for layout in (deep_struct(1500), deep_array(1500)):
        model = ShaderReflection(
            "deep",
            resources=(
                Resource("B", ResourceKind.ConstantBuffer, ResourceTypeKind.ConstantBuffer,
                         layout=layout),
            ),
        )  # fmt: skip
        path = tmp_path / "deep.reflection"
        ReflectionFormat.write_file(path, model)
        assert main(["reflection", "show", str(path)]) == 0
        out = capsys.readouterr().out
        if layout.kind.name == "Struct":
            assert out.rstrip().endswith(".m1.m0  uint")  # the innermost member, fully named
            assert len(out.splitlines()) > 1500
        else:
            assert "float" + "[1]" * 1500 in out


def test_format_of_several_files_concatenates(
    files: dict[str, Path], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["reflection", "format", str(files["good"]), str(files["messy"])]) == 0
    assert capsysbinary.readouterr().out == GOLDEN.read_bytes() * 2


@pytest.mark.parametrize(
    ("old", "new", "line", "column", "message"),
    [
        (  # a float at a byte offset no float can have
            'member name="Weights" offset=80',
            'member name="Weights" offset=81',
            10,
            36,
            "Frame.Weights: offset 81 is not aligned to its scalar type Float (a multiple of 4)",
        ),
        (  # an array whose stride is smaller than its element
            "length=3 stride=16",
            "length=3 stride=2",
            11,
            92,
            "array stride 2 is smaller than its element",
        ),
        ("count=1", "count=2000000", 4, 49, "count=2000000 is out of range"),
        (  # an unsized array whose stride is smaller than its element (numpy cannot hold it)
            "length=3 stride=16",
            "length=0 stride=2",
            11,
            92,
            "Frame.Weights: array stride 2 is smaller than its element (4 bytes)",
        ),
        (  # floats at 80, 86, 92: every element after the first misaligned
            "length=3 stride=16",
            "length=3 stride=6",
            11,
            92,
            "Frame.Weights: array stride 6 is not a multiple of 4, the alignment of its "
            "element's scalars",
        ),
    ],
)
def test_check_and_generate_refuse_a_bad_layout_at_the_same_place(
    tmp_path: Path, capsys: Capture, old: str, new: str, line: int, column: int, message: str
) -> None:
    """One positioned validation for both: ``reflection check`` no longer accepts a layout
    that ``generate`` refuses, and both name the record's line and the attribute's column."""
    bad = tmp_path / "bad.reflection"
    text = GOLDEN.read_text()
    assert old in text
    bad.write_text(text.replace(old, new, 1))
    assert main(["reflection", "check", str(bad)]) == 1
    checked = capsys.readouterr().err
    assert checked.startswith(f"{bad}:{line}:{column}: error: ")
    assert message in checked
    assert main(["generate", str(bad), "-o", str(tmp_path / "gen")]) == 1
    generated = capsys.readouterr().err
    assert generated.splitlines()[0] == checked.splitlines()[0]
    assert not (tmp_path / "gen").exists()


def test_a_struct_member_at_an_offset_its_floats_cannot_have_is_refused(
    tmp_path: Path, capsys: Capture
) -> None:
    """A struct holding a float, placed at offset 18: the float is misaligned though the
    member's own type is a struct (the check used to look at scalar members only)."""
    from dataclasses import replace

    model = ReflectionFormat.read(GOLDEN.read_bytes())
    frame = model.resources[0].layout
    assert frame is not None
    inner = TypeLayout(
        TypeKind.Struct,
        name="Inner",
        size=4,
        align=4,
        members=(StructMember("X", 0, TypeLayout(TypeKind.Scalar, ScalarKind.Float, size=4)),),
    )
    layout = replace(frame, members=(*frame.members, StructMember("In", 66, inner)))
    bad = tmp_path / "bad.reflection"
    bad.write_bytes(
        ReflectionFormat.write(
            replace(model, resources=(replace(model.resources[0], layout=layout),))
        )
    )
    assert main(["reflection", "check", str(bad)]) == 1
    assert capsys.readouterr().err == (
        f"{bad}:14:31: error: Frame.In: offset 66 is not aligned to the largest scalar of "
        "Inner (a multiple of 4)\n"
    )
