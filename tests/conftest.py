"""Shared test setup: the shader corpus and a quiet, private Mesa for GPU-execution tests."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "corpus"

os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="oneshader-xdg-"))
os.environ.setdefault("MESA_SHADER_CACHE_DIR", tempfile.mkdtemp(prefix="oneshader-mesa-"))


@pytest.fixture
def corpus() -> Path:
    return CORPUS
