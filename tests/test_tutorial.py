"""docs/tutorial.md runs as written: every code block whose first line names a file is written
to that file, every command of the ``sh`` blocks (but ``pip install``: the suite runs in the
installed project) runs in order in a fresh folder, and the programs must finish with their
checks passed."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

TUTORIAL = Path(__file__).resolve().parent.parent / "docs" / "tutorial.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
NAMED = re.compile(r"^(?://|#) (\S+\.(?:hlsl|py))\n")


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(TUTORIAL.read_text("utf-8"))]


def test_the_tutorial_has_its_files_and_commands() -> None:
    named = [NAMED.match(text) for _, text in blocks()]
    files = {m.group(1) for m in named if m}
    assert files == {"shaders/scale.hlsl", "shaders/triangle.hlsl", "compute.py", "render.py"}
    readme = (TUTORIAL.parent.parent / "README.md").read_text("utf-8")
    first_screen = "\n".join(readme.splitlines()[:30])
    assert "docs/tutorial.md" in first_screen


def _host_lines(text: str) -> int:
    """Lines of a program that are code (not blank, not a comment)."""
    lines = [line.strip() for line in text.splitlines()]
    return sum(1 for line in lines if line and not line.startswith("#"))


def test_the_tutorial_runs(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(tmp_path), CI="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    ran = []
    for lang, text in blocks():
        named = NAMED.match(text)
        if named:
            path = tmp_path / named.group(1)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            continue
        if lang != "sh":
            continue
        for line in text.splitlines():
            command = line.split("#", 1)[0].strip()
            if not command or command.startswith("pip "):
                continue
            argv = shlex.split(command)
            if argv[0] == "python":
                argv[0] = sys.executable
            done = subprocess.run(
                argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
            )
            assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
            ran.append((command, done.stdout))
    outputs = dict(ran)
    assert "compute: ok" in outputs["python compute.py"]
    assert "render: ok" in outputs["python render.py"]
    # the figures of the report: lines of host code of the two programs
    programs = ("compute.py", "render.py")
    counts = {name: _host_lines((tmp_path / name).read_text()) for name in programs}
    print(f"host code lines: {counts}")
    assert all(n < 60 for n in counts.values()), counts


@pytest.mark.parametrize("name", ["compute.py", "render.py"])
def test_the_programs_write_no_binding_number(name: str) -> None:
    named = {m.group(1): t for _, t in blocks() if (m := NAMED.match(t))}
    text = named[name]
    assert not re.search(r"\"binding\"|binding=|set_bind_group\(\d", text)
