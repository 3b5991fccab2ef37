"""The examples, end to end, on the software adapter: build the shaders and their bindings into a
temporary folder, run both scripts, and check the PNG's pixels and the particle results."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("examples")
    result = subprocess.run(
        [sys.executable, "-m", "oneshader.cli", "build", "examples/shaders", "-q",
         "-o", str(folder / "out"), "--bindings", str(folder / "generated")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert (folder / "generated" / "sprite.py").is_file()
    assert (folder / "generated" / "particles.py").is_file()
    return folder


def run(script: str, folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--out", str(folder / "out"),
         "--bindings", str(folder / "generated"), *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def read_png(path: Path) -> np.ndarray:
    """RGBA8 pixels of a PNG written without filtering (what the example writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack_from(">I", data, pos)
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        assert struct.unpack_from(">I", data, pos + 8 + length)[0] == zlib.crc32(kind + body)
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack_from(">IIBB", body)
            assert (depth, color) == (8, 6)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    rows = [raw[y * (1 + 4 * width) : (y + 1) * (1 + 4 * width)] for y in range(height)]
    assert all(r[0] == 0 for r in rows)
    return np.frombuffer(b"".join(r[1:] for r in rows), np.uint8).reshape(height, width, 4)


def test_sprite_renders_the_texture_through_the_matrix(built: Path) -> None:
    png = built / "sprite.png"
    result = run("sprite.py", built, "--png", str(png))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 pixels differ" in result.stdout
    pixels = read_png(png)
    assert pixels.shape == (64, 64, 4)
    clear = np.round(np.array([0.1, 0.2, 0.3, 1.0]) * 255)
    for y, x in [(0, 0), (63, 63), (0, 63), (63, 0)]:
        assert np.abs(pixels[y, x] - clear).max() <= 1
    # the centre of texel (i, j) of the quad [-0.5, 0.5]^2, moved by M = T(0.25, -0.125) S(1.2, 0.8)
    for j in range(4):
        for i in range(4):
            u, v = (i + 0.5) / 4, (j + 0.5) / 4
            ndc_x = 1.2 * (u - 0.5) + 0.25
            ndc_y = 0.8 * (0.5 - v) - 0.125
            px, py = int((ndc_x + 1) / 2 * 64), int((1 - ndc_y) / 2 * 64)
            texel = np.array([40 * i + 20, 40 * j + 20, 255 - 40 * i - 10 * j, 255])
            want = np.round(texel * np.array([1.0, 0.5, 1.0, 1.0]))
            assert np.abs(pixels[py, px] - want).max() <= 1, (i, j, pixels[py, px], want)


@pytest.mark.parametrize("drag", ["0.5", "0.1"])
def test_particles_match_numpy_with_the_specialization_constant(built: Path, drag: str) -> None:
    result = run("particles.py", built, "--count", "3000", "--steps", "20", "--drag", drag)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "results match numpy" in result.stdout
    assert f"drag {drag} (override '0'), workgroup (64, 1, 1)" in result.stdout
    assert "element: 48 bytes; params: 32 bytes" in result.stdout


USE_BAD = """\
from typing import Any

from generated import particles, sprite


def misuse(dev: Any, buf: Any) -> None:
    sprite.Frame(Transfrom=sprite.Frame().Transform)
    particles.Params(Count=1.5)
    sprite.BindGroup0(dev, Frame=buf, SpriteTexture=buf)
    particles.Particle.array(4).Lfie = 1
    p: particles.Params = particles.Particle()
"""


def test_examples_are_mypy_strict_clean_and_misuse_is_caught(built: Path, tmp_path: Path) -> None:
    """User code against the generated bindings, type-checked: the examples pass ``mypy
    --strict``, and a misspelt constructor keyword, a float for a uint, a missing resource of a
    bind group, a misspelt field and a wrong struct type are each an error on its own line."""
    (tmp_path / "use_bad.py").write_text(USE_BAD)
    result = subprocess.run(
        [str(Path(sys.executable).parent / "mypy"), "--strict", "--no-incremental",
         str(EXAMPLES / "sprite.py"), str(EXAMPLES / "particles.py"), str(tmp_path / "use_bad.py")],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "MYPYPATH": str(built)},
    )  # fmt: skip
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert all("use_bad.py:" in line for line in errors), result.stdout
    assert sorted({int(line.split(":")[1]) for line in errors}) == [7, 8, 9, 10, 11], result.stdout
