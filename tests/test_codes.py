"""The diagnostic codes: one named constant each (``diagnostics.Code``), each documented, and no
code literal left in the source outside that one home."""

from __future__ import annotations

import re
from pathlib import Path

from oneshader.diagnostics import Code

ROOT = Path(__file__).resolve().parent.parent
_LITERAL = re.compile(r"\"OS\d{4}\"")


def _codes() -> dict[str, str]:
    return {name: value for name, value in vars(Code).items() if name.isupper()}


def test_every_code_is_documented() -> None:
    docs = (ROOT / "docs" / "compiler.md").read_text() + (ROOT / "docs" / "build.md").read_text()
    missing = sorted({v for v in _codes().values() if v not in docs})
    assert missing == []


def test_every_code_means_one_thing() -> None:
    """A code printed to a user names one kind of error (the build's bad configuration once
    shared OS2001 with the compiler's non-portable layout)."""
    names_of: dict[str, list[str]] = {}
    for name, value in _codes().items():
        names_of.setdefault(value, []).append(name)
    shared = {value: names for value, names in names_of.items() if len(names) > 1}
    assert shared == {}


def test_no_code_is_spelled_as_a_literal_outside_its_home() -> None:
    home = ROOT / "src" / "oneshader" / "diagnostics.py"
    spelled = [
        f"{path.relative_to(ROOT)}: {m.group()}"
        for path in sorted((ROOT / "src").rglob("*.py"))
        if path != home
        for m in _LITERAL.finditer(path.read_text())
    ]
    assert spelled == []
