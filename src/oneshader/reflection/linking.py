"""Whether a pixel stage reads what a vertex stage writes, as WebGPU requires of a render
pipeline: every located pixel input has a vertex output at its location with the same type and
interpolation (a wider output does not do). The compiler reports mismatches within one file at
the declaration; the bindings check a pair of entries from any two files."""

from __future__ import annotations

from dataclasses import dataclass

from oneshader.reflection.model import (
    BuiltIn,
    EntryPoint,
    Interpolation,
    ScalarKind,
    StageVariable,
)

__all__ = ["StageMismatch", "interpolation", "stage_mismatches"]


_FLOATS = (ScalarKind.Float, ScalarKind.Float16, ScalarKind.Float64)


def interpolation(v: StageVariable) -> Interpolation:
    """How the value really travels: HLSL's ``linear`` is its default, perspective-correct
    interpolation, and integers are never interpolated (WGSL declares them flat, written or not)."""
    if v.scalar not in _FLOATS:
        return Interpolation.Flat
    return Interpolation.Default if v.interp is Interpolation.Linear else v.interp


@dataclass(frozen=True)
class StageMismatch:
    """A pixel input and the vertex output at its location (None: the vertex stage writes
    nothing there)."""

    input: StageVariable
    output: StageVariable | None

    @property
    def types_agree(self) -> bool:
        """Only the interpolation differs."""
        out = self.output
        return (
            out is not None
            and out.scalar is self.input.scalar
            and out.components == self.input.components
        )


def stage_mismatches(vertex: EntryPoint, pixel: EntryPoint) -> list[StageMismatch]:
    """The pixel inputs of ``pixel`` that ``vertex`` does not feed as WebGPU requires."""
    written = {v.location: v for v in vertex.outputs if v.location is not None}
    out = []
    for v in pixel.inputs:
        if v.location is None or v.builtin is not BuiltIn.None_:
            continue
        w = written.get(v.location)
        if (
            w is None
            or w.scalar is not v.scalar
            or w.components != v.components
            or interpolation(w) is not interpolation(v)
        ):
            out.append(StageMismatch(v, w))
    return out
