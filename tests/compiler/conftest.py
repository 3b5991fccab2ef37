"""Fixtures of the compiler's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from oneshader.compiler.slang import library


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Slang's compiles, counted (one per request): what a shared request saves is requests."""
    lib = library()
    calls: list[int] = []
    real = lib.__dict__["spCompile"]

    def counted(handle: int) -> int:
        calls.append(handle)
        return int(real(handle))

    monkeypatch.setitem(lib.__dict__, "spCompile", counted)
    yield calls
