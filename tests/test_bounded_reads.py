"""Every file oneshader reads is read one way (fsutil.read_regular): a regular file, within a
size bound. A link to /dev/zero, a FIFO or a huge file given to the reflection tools, the
generator or the runtime is refused at once with a message, neither hanging nor eating memory."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from oneshader import fsutil
from oneshader.cli import main
from oneshader.diagnostics import UserError
from oneshader.reflection.format import ReflectionFormat
from oneshader.reflection.model import ShaderReflection, Target

COMMANDS = [
    ["reflection", "check"],
    ["reflection", "show"],
    ["reflection", "format"],
    ["generate", "-o", "gen"],
]


def _special(folder: Path, kind: str, name: str) -> Path:
    path = folder / name
    if kind == "zero":
        os.symlink("/dev/zero", path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:  # 300 MiB of holes: larger than any file oneshader reads, and no disk spent
        with open(path, "wb") as f:
            f.truncate(300 << 20)
    return path


_SAID = {"zero": "a device, not a regular file", "fifo": "a FIFO", "huge": "larger than 256 MiB"}


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command in a process of its own, with 200 MiB of address space over what Python needs
    and a time-out: reading /dev/zero would hit the first, a FIFO the second."""
    code = (
        "import resource, sys\n"
        "from oneshader.cli import main\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, hard))\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("kind", ["zero", "fifo", "huge"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[-1] if c[0] != "generate" else "gen")
def test_a_special_or_huge_reflection_is_refused(
    tmp_path: Path, kind: str, command: list[str]
) -> None:
    _special(tmp_path, kind, "x.reflection")
    result = _run(tmp_path, *command, "x.reflection")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    assert result.stderr.startswith("x.reflection: error"), result.stderr
    assert _SAID[kind] in result.stderr


def _reflection(folder: Path) -> Path:
    path = folder / "s.reflection"
    model = ShaderReflection(source="s.hlsl", targets=(Target.Wgsl,))
    path.write_bytes(ReflectionFormat.write(model))
    return path


@pytest.mark.parametrize("kind", ["zero", "fifo", "huge"])
def test_special_code_beside_a_reflection_is_refused(tmp_path: Path, kind: str) -> None:
    _reflection(tmp_path)
    _special(tmp_path, kind, "s.wgsl")
    result = _run(tmp_path, "generate", "s.reflection", "-o", "gen")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert _SAID[kind] in result.stderr and "s.wgsl" in result.stderr


@pytest.mark.parametrize("kind", ["zero", "fifo"])
def test_bindings_load_refuses_special_files(tmp_path: Path, kind: str) -> None:
    from oneshader import bindings

    path = _special(tmp_path, kind, "x.reflection")
    with pytest.raises(UserError) as err:
        bindings.load(path)
    assert _SAID[kind] in str(err.value.diagnostics[0].message)


def test_a_file_that_grows_past_the_bound_is_cut_off(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert fsutil.read_regular(path, limit=100)[0] == b"x" * 100
    with pytest.raises(fsutil.FileTooLarge):
        fsutil.read_regular(path, limit=99)


@pytest.mark.invalid_modules("stand-in code: only the reading is checked")
def test_generate_waits_for_a_reflection_a_build_is_rewriting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A build removes a reflection before it rewrites the code, and writes it again after:
    generate racing it finds the code without its reflection and waits for it."""
    data = _reflection(tmp_path).read_bytes()
    (tmp_path / "s.wgsl").write_text("// code\n")
    (tmp_path / "s.reflection").unlink()
    # put back as a build does: renamed into place whole (a reader never sees half of it)
    back = threading.Timer(0.03, fsutil.atomic_write, (tmp_path / "s.reflection", data))
    back.start()
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "s.reflection", "-o", "gen"]) == 0
    back.join()
    (tmp_path / "s.reflection").unlink()  # and one that never comes back: OS2005
    t0 = time.monotonic()
    assert main(["generate", "s.reflection", "-o", "gen"]) == 1
    err = capsys.readouterr().err
    assert "s.reflection: error OS2005:" in err and "a build is writing them" in err, err
    assert time.monotonic() - t0 < 5
    (tmp_path / "s.wgsl").unlink()  # no code beside: a name mistyped, said at once
    assert main(["generate", "s.reflection", "-o", "gen"]) == 1
    err = capsys.readouterr().err
    assert "cannot read: No such file or directory" in err and "OS2005" not in err
