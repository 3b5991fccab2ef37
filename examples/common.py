"""What the examples share: command-line paths, making the generated bindings importable, a device
on whatever adapter the machine has (a software one on a CPU-only machine), and a PNG writer."""

from __future__ import annotations

import argparse
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def arguments(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", type=Path, default=HERE / "out", help="where to write results")
    p.add_argument(
        "--bindings",
        type=Path,
        default=HERE / "generated",
        help="the --bindings folder (a package named 'generated')",
    )
    return p


def use_bindings(folder: Path) -> None:
    """Make the generated bindings package ``folder`` importable as ``generated`` (the modules
    carry their compiled code, so nothing else of the build is needed)."""
    if folder.name != "generated" or not (folder / "__init__.py").is_file():
        sys.exit(
            f"{folder} is not a generated bindings package named 'generated': run\n"
            "  oneshader build examples/shaders -o examples/out --bindings examples/generated"
        )
    sys.path.insert(0, str(folder.resolve().parent))


def device() -> Any:
    import wgpu

    adapter = wgpu.gpu.request_adapter_sync(power_preference="low-power")
    if adapter is None:
        sys.exit("no GPU adapter found (not even a software one)")
    info = adapter.info
    print(f"adapter: {info.get('device', '?')} ({info.get('backend_type', '?')})")
    return adapter.request_device_sync()


def write_png(path: Path, rgba: bytes, width: int, height: int) -> None:
    """An 8-bit RGBA PNG, no filtering: what zlib and struct can write."""
    rows = b"".join(b"\x00" + rgba[y * width * 4 : (y + 1) * width * 4] for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png + chunk(b"IEND", b""))
