"""The no-op fast path (buildtask/noop.py), on real projects in fresh processes: a build with
nothing to do answers from the record without loading the compiler, and every change that
could matter (a source, an include, a new shader, an output, the environment, the arguments,
the toolchain, a damaged record) sends the build down the normal path, which rebuilds what
it must."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from build_helpers import kernel, make_project, summary_counts

from oneshader.buildtask.noop import NOOP_NAME

# Runs ``oneshader build`` as the script does, then says whether the compiler was loaded.
CHILD = """
import sys
from oneshader.cli import main
status = main(sys.argv[1:])
heavy = ("argparse", "json", "hashlib", "oneshader.diagnostics", "oneshader.buildtask.config")
print("HEAVY:" + ",".join(m for m in heavy if m in sys.modules), file=sys.stderr)
print("LOADED" if "oneshader.compiler" in sys.modules else "NOT-LOADED", file=sys.stderr)
sys.exit(status)
"""


def run(root: Path, *args: str, **env: str) -> tuple[int, str, bool]:
    """``oneshader build -q ARGS`` in ``root`` in a fresh process: (status, stdout, whether
    it took the fast path)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONESHADER_")}
    environ.update(CI="1", **env)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "build", "-q", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
    )
    assert "Traceback" not in done.stderr, done.stderr
    fast = done.stderr.strip().endswith("NOT-LOADED")
    return done.returncode, done.stdout, fast


def run_heavy(root: Path) -> str:
    """The heavy modules a ``oneshader build -q`` in ``root`` loaded (comma-separated)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONESHADER_")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "build", "-q"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**environ, "CI": "1"},
    )
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("HEAVY:")]
    return line[len("HEAVY:") :]


def age(root: Path) -> None:
    """Date every file and folder of the project a minute back: what a build records must not
    have changed within the last moments (an edit in the same mtime tick could go unseen)."""
    past = time.time_ns() - 60 * 10**9
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "out"]
        for name in filenames:
            os.utime(os.path.join(dirpath, name), ns=(past, past))
    for dirpath, _, _ in os.walk(root, topdown=False):
        if "out" not in Path(dirpath).relative_to(root).parts:
            os.utime(dirpath, ns=(past, past))


def built_then_recorded(root: Path, *args: str, **env: str) -> None:
    """Build, and check that the build after it takes the fast path."""
    age(root)
    status, out, fast = run(root, *args, **env)
    assert status == 0, out
    assert (root / "out" / NOOP_NAME).is_file()
    status, out, fast = run(root, *args, **env)
    assert (status, fast) == (0, True), out
    assert summary_counts(out)[0] == 0


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = make_project(tmp_path / "proj")
    built_then_recorded(root)
    return root


def digests(out: Path) -> dict[str, str]:
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith(".oneshader")  # the record, the state, the lock
    }


def test_a_no_op_takes_the_fast_path_and_says_what_the_normal_one_says(proj: Path) -> None:
    before = digests(proj / "out")
    status, fast_out, fast = run(proj)
    assert (status, fast) == (0, True)
    assert run_heavy(proj) == ""  # nor anything else the normal path needs
    assert str(proj).encode() not in (proj / "out" / NOOP_NAME).read_bytes()
    status, slow_out, fast = run(proj, ONESHADER_NOOP="0")
    assert (status, fast) == (0, False)

    def words(text: str) -> list[str]:
        return text.split()[:-1]  # all but the seconds

    assert words(fast_out) == words(slow_out)
    assert summary_counts(fast_out) == (0, 5, 0)
    assert digests(proj / "out") == before


def test_outputs_are_the_same_with_and_without_the_record(proj: Path, tmp_path: Path) -> None:
    other = make_project(tmp_path / "other")
    assert run(other, ONESHADER_NOOP="0")[0] == 0
    assert not (other / "out" / NOOP_NAME).exists()
    assert digests(other / "out") == digests(proj / "out")


def test_an_edited_source_is_rebuilt(proj: Path) -> None:
    (proj / "shaders" / "K0.hlsl").write_text(kernel("K0", 7))
    status, out, fast = run(proj)
    assert (status, fast, summary_counts(out)) == (0, False, (1, 4, 0))


def test_an_edited_include_is_rebuilt(proj: Path) -> None:
    header = next((proj / "shaders" / "ui" / "inc").rglob("*.hlsli"))
    header.write_text(header.read_text() + "\n// edited\n")
    status, out, fast = run(proj)
    assert (status, fast) == (0, False)
    assert summary_counts(out)[0] >= 1


def test_a_new_shader_in_a_source_folder_is_built(proj: Path) -> None:
    (proj / "shaders" / "ui" / "New.hlsl").write_text(kernel("New"))
    status, out, fast = run(proj)
    assert (status, fast, summary_counts(out)) == (0, False, (1, 5, 0))
    assert (proj / "out" / "ui" / "New.spv").is_file()


@pytest.mark.parametrize("how", ["deleted", "changed"])
def test_an_output_deleted_or_changed_is_rebuilt(proj: Path, how: str) -> None:
    spv = proj / "out" / "K1.spv"
    good = spv.read_bytes()
    if how == "deleted":
        spv.unlink()
    else:
        spv.write_bytes(bytes(len(good)))
    status, out, fast = run(proj)
    assert (status, fast, summary_counts(out)) == (0, False, (1, 4, 0))
    assert spv.read_bytes() == good


def test_another_environment_or_command_line_takes_the_normal_path(proj: Path) -> None:
    status, out, fast = run(proj, ONESHADER_SERVER="0")
    assert (status, fast) == (0, False)
    status, out, fast = run(proj, "-j", "1")
    assert (status, fast, summary_counts(out)) == (0, False, (0, 5, 0))
    status, out, fast = run(proj, "-DSCALE=4")
    assert (status, fast, summary_counts(out)) == (0, False, (5, 0, 0))


def test_an_edited_pyproject_takes_the_normal_path(proj: Path) -> None:
    pyproject = proj / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('SCALE = "3"', 'SCALE = "5"'))
    status, out, fast = run(proj)
    assert (status, fast, summary_counts(out)) == (0, False, (5, 0, 0))


def test_a_nearer_pyproject_takes_the_normal_path(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    shaders = root / "shaders"  # built from there: the configuration is found above
    age(root)
    assert run(shaders)[0] == 0
    assert run(shaders)[2] is True
    # the same OUT, so only the record's stamps can tell
    (shaders / "pyproject.toml").write_text('[tool.oneshader]\nout = "../out"\n')
    status, _, fast = run(shaders)
    assert (status, fast) == (2, False)  # that project names no sources


def _reseal(path: Path, edit: object) -> None:
    """Rewrite the record with ``edit(lines)`` applied and a valid checksum (as a build would)."""
    lines = path.read_bytes().partition(b"\n")[2].decode().split("\n")
    edit(lines)  # type: ignore[operator]
    body = "\n".join(lines).encode()
    path.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)


def _entry(lines: list[str], anchor: str, folder_ends: str, name: str) -> int:
    """The index of the line of ``name`` in the first folder of ``anchor`` that ends so."""
    group = ""
    for i, line in enumerate(lines):
        fields = line.split("\t")
        if len(fields) == 2:
            group = line
        elif (
            group.startswith(f"@{anchor}\t") and group.endswith(folder_ends) and (fields[0] == name)
        ):
            return i
    raise AssertionError(f"no {name} under {anchor}")


def _bump(lines: list[str], i: int, field: int) -> None:
    fields = lines[i].split("\t")
    fields[field] = str(int(fields[field]) - 1)
    lines[i] = "\t".join(fields)


def test_a_changed_toolchain_takes_the_normal_path(proj: Path) -> None:
    record = proj / "out" / NOOP_NAME
    _reseal(record, lambda lines: None)  # resealed as is: still the fast path
    assert run(proj)[2] is True

    def upgrade(lines: list[str]) -> None:  # as if pip had put another slangpy's there
        _bump(lines, _entry(lines, "slangpy", ".dist-info", "METADATA"), 1)

    _reseal(record, upgrade)
    status, out, fast = run(proj)
    assert (status, fast, summary_counts(out)) == (0, False, (0, 5, 0))

    def edit_code(lines: list[str]) -> None:  # as if oneshader's compiler had been edited
        _bump(lines, _entry(lines, "oneshader", "\tcompiler", "api.py"), 2)

    built_then_recorded(proj)
    _reseal(record, edit_code)
    assert run(proj)[2] is False


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "folder"])
def test_a_damaged_record_takes_the_normal_path(proj: Path, damage: str) -> None:
    record = proj / "out" / NOOP_NAME
    raw = record.read_bytes()
    if damage == "truncated":
        record.write_bytes(raw[: len(raw) // 2])
    elif damage == "garbage":
        record.write_bytes(raw[:64] + b"\nnot a record")
    elif damage == "empty":
        record.write_bytes(b"")
    else:
        record.unlink()
        record.mkdir()
    status, out, fast = run(proj)
    assert (status, fast, summary_counts(out)) == (0, False, (0, 5, 0))
    if damage == "folder":
        shutil.rmtree(record)
    else:
        assert record.is_file()  # the normal path wrote a good one
        assert run(proj)[2] is True


def test_a_failed_build_leaves_no_record(proj: Path) -> None:
    (proj / "shaders" / "K0.hlsl").write_text("this is not HLSL")
    age(proj)
    assert run(proj)[0] == 1
    assert not (proj / "out" / NOOP_NAME).exists()
    status, _, fast = run(proj)
    assert (status, fast) == (1, False)
