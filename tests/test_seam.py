"""The seam: model, format, generator and bindings never load the compiler."""

from __future__ import annotations

import subprocess
import sys

import pytest

NO_COMPILER_MODULES = [
    "oneshader.reflection",
    "oneshader.reflection.tools",
    "oneshader.codegen",
    "oneshader.bindings",
    "oneshader.bindings.probe",  # prove-layouts' planning and checking; oneshader.prove compiles
    "oneshader.reflection.abi",
    "oneshader.cli",
]


@pytest.mark.parametrize("module", NO_COMPILER_MODULES)
def test_module_does_not_load_compiler(module: str) -> None:
    code = (
        f"import importlib, sys; importlib.import_module({module!r}); "
        "bad = sorted(m for m in sys.modules if m.startswith(('slangpy', 'oneshader.compiler', "
        "'oneshader.buildtask'))); print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} loaded {out.stdout.strip()}"


def test_runtime_imports_load_neither_reader_nor_generator() -> None:
    """Generated modules import the model and the runtime on every program start; the format
    reader and the generator are lazy, yet still one attribute away."""
    code = (
        "import sys; import oneshader.bindings.runtime; from oneshader.reflection import model; "
        "print(','.join(sorted(m for m in sys.modules if m in ("
        "'oneshader.reflection.format', 'oneshader.reflection.errors', "
        "'oneshader.codegen.render', 'oneshader.codegen.files')))); "
        "import oneshader.reflection as r; print(r.ReflectionFormat.__module__, "
        "r.ReflectionFormatError.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, resolved = out.stdout.splitlines()
    assert loaded == ""
    assert resolved == "oneshader.reflection.format oneshader.reflection.errors"
