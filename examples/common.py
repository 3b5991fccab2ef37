"""What both examples share: command-line paths, importing the generated bindings, a device on
whatever adapter the machine has (a software one on a CPU-only machine), and a PNG writer."""

from __future__ import annotations

import argparse
import importlib
import struct
import sys
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent


def arguments(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", type=Path, default=HERE / "out", help="oneshader build's -o folder")
    p.add_argument(
        "--bindings", type=Path, default=HERE / "generated", help="the --bindings folder"
    )
    return p


def bindings(folder: Path, module: str) -> ModuleType:
    """Import ``module`` from the generated bindings package ``folder``."""
    if not (folder / f"{module}.py").is_file():
        sys.exit(
            f"{folder / (module + '.py')} is missing: run\n"
            "  oneshader build examples/shaders -o examples/out --bindings examples/generated"
        )
    sys.path.insert(0, str(folder.resolve().parent))
    return importlib.import_module(f"{folder.name}.{module}")


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
