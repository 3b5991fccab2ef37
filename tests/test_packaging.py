"""oneshader's own wheel and sdist: the MIT licence text and the typing marker ship in them."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_and_sdist_carry_the_license(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(
        ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info")
    )
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path / "dist")],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = (tmp_path / "dist").glob("oneshader-*.whl")
    (sdist,) = (tmp_path / "dist").glob("oneshader-*.tar.gz")
    license_text = (ROOT / "LICENSE").read_text()
    assert license_text.startswith("MIT License")
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        (lic,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert whl.read(lic).decode() == license_text
        assert "oneshader/py.typed" in names
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        assert "License-Expression: MIT" in whl.read(metadata).decode()
    with tarfile.open(sdist) as tar:
        (lic_member,) = [m for m in tar.getnames() if m.endswith("/LICENSE")]
        member = tar.extractfile(lic_member)
        assert member is not None and member.read().decode() == license_text


def _section(doc: str, heading: str) -> str:
    start = doc.index(heading)
    end = doc.find("\n#", start + len(heading))
    return doc[start : end if end >= 0 else len(doc)]


def test_the_docs_say_what_a_user_package_needs() -> None:
    """README: the compiler needs Linux. docs/bindings.md: generated bindings make oneshader a
    run-time dependency (naming exactly the packages a generated module imports) and a user
    package needs py.typed."""
    install = _section((ROOT / "README.md").read_text(), "## Install")
    assert "Linux" in install
    shipping = _section(
        (ROOT / "docs" / "bindings.md").read_text(), "## Shipping generated bindings"
    )
    assert "run-time dependency" in shipping and "py.typed" in shipping
    from oneshader.codegen import render_module
    from oneshader.reflection.format import ReflectionFormat

    golden = ROOT / "tests" / "reflection" / "golden" / "sprite.reflection"
    module = ast.parse(render_module(ReflectionFormat.read_file(golden), "sprite"))
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in module.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    } - {"__future__", "typing"}
    assert imported == {"numpy", "oneshader.bindings", "oneshader.reflection"}
    for name in sorted(imported):
        assert f"`{name}`" in shipping, name
