"""What the trial tests share: the shader table, the project layout, running the CLI."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

SHADERS = Path(__file__).parent / "shaders"

# shader -> the targets it builds for (the others refuse it; see test_trial_errors.py)
TARGETS: dict[str, tuple[str, ...]] = {
    "skinned": ("spirv", "msl", "wgsl"),
    "sprites": ("spirv", "msl", "wgsl"),
    "blur": ("spirv", "msl", "wgsl"),
    "fullscreen": ("spirv", "msl", "wgsl"),
    "tonemap": ("spirv", "msl", "wgsl"),
    "specialized": ("spirv", "msl", "wgsl"),
    "with_include": ("spirv", "msl", "wgsl"),
    "lit_mesh": ("spirv", "msl", "wgsl"),  # Metal: packed_float3 LightDir (was OS2001)
    "histogram": ("spirv", "msl"),  # WGSL: InterlockedAdd is OS1015 (use Atomic<uint>)
    "emitter": ("spirv", "msl", "wgsl"),  # AppendStructuredBuffer: a companion counter
}
ALL = ("spirv", "msl", "wgsl")

PYPROJECT = """\
[project]
name = "trialgame"
version = "0"

[tool.oneshader]
sources = [{sources}]
out = "build/shaders"
include-dirs = ["shaders/include"]
defines = {{ SCALE = 3, OFFSET = 1 }}
bindings = "gen/trialgen"
t-shift = [[10, "all"]]
s-shift = [[20, "all"]]
u-shift = [[30, "all"]]
"""


def oneshader(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oneshader.cli", *args],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@dataclass(frozen=True)
class Project:
    root: Path

    def out(self, shader: str) -> Path:
        """The OUT folder ``shader`` was built into."""
        if TARGETS[shader] == ALL:
            return self.root / "build" / "shaders"
        return self.root / "build" / shader

    def gen(self, shader: str) -> Path:
        """The bindings package folder of ``shader``."""
        return self.root / "gen" / ("trialgen" if TARGETS[shader] == ALL else f"gen_{shader}")

    def module(self, shader: str) -> ModuleType:
        """The generated bindings of ``shader``, imported as a user would."""
        gen = self.gen(shader)
        if str(gen.parent) not in sys.path:
            sys.path.insert(0, str(gen.parent))
        return importlib.import_module(f"{gen.name}.{shader}")


def make_project(root: Path) -> None:
    shutil.copytree(SHADERS, root / "shaders")
    portable = ", ".join(f'"shaders/{s}.hlsl"' for s, t in TARGETS.items() if t == ALL)
    (root / "pyproject.toml").write_text(PYPROJECT.format(sources=portable))


def begin_color_pass(enc: Any, target: Any) -> Any:
    """A render pass into ``target`` cleared to transparent black, as every trial draw uses."""
    return enc.begin_render_pass(
        color_attachments=[
            {
                "view": target.create_view(),
                "clear_value": (0, 0, 0, 0),
                "load_op": "clear",
                "store_op": "store",
            }
        ]
    )


def read_rgba8(gpu_device: Any, target: Any, size: int) -> Any:
    """The square rgba8unorm ``target`` read back as a (size, size, 4) uint8 array."""
    import numpy as np

    data = gpu_device.queue.read_texture(
        {"texture": target}, {"bytes_per_row": size * 4, "rows_per_image": size}, (size, size, 1)
    )
    return np.frombuffer(data, np.uint8).reshape(size, size, 4)


def dispatch(
    gpu_device: Any, pipeline: Any, group: int, bind: Any, workgroups: tuple[int, ...]
) -> None:
    """One compute pass of ``pipeline`` with one bind group, submitted."""
    enc = gpu_device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipeline)
    cp.set_bind_group(group, bind)
    cp.dispatch_workgroups(*workgroups)
    cp.end()
    gpu_device.queue.submit([enc.finish()])
