"""The binding policy: DXC's SPIR-V bindings, computed by oneshader (docs/compiler.md).

In order of precedence, for each resource in declaration order:

1. ``[[vk::binding(b, s)]]``: set ``s`` (0 when omitted), binding ``b``; never shifted.
2. ``-fvk-bind-register xN SPACE BINDING SET`` for the resource's register: that set and binding.
   As with DXC, once any bind-register is given every resource with a register must have one.
3. ``register(xN, spaceM)``: set M, binding N plus the shift given for class x in space M (a shift
   for "all" spaces applies where no space-specific one is given).
4. No binding at all: the lowest binding of set 0 that no explicit binding took, in declaration
   order (without explicit bindings anywhere that is simply declaration order).

Hidden counters (append/consume buffers) take ``[[vk::counter_binding(n)]]`` in their buffer's
set, else the lowest free binding of that set once every resource is placed. Clashes are judged
afterwards, per target, by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from oneshader.compiler.api import BindRegister, RegisterShift
from oneshader.compiler.source import Declaration

__all__ = ["Placement", "place"]


@dataclass(frozen=True)
class Placement:
    bindings: dict[str, tuple[int, int]]  # resource name -> (set, binding)
    counters: dict[str, tuple[int, int]]  # resource name -> (set, binding) of its counter
    problems: list[tuple[Declaration, str]]  # declarations the options cannot place


def _shift(shifts: tuple[RegisterShift, ...], cls: str, space: int) -> int:
    specific = [s.shift for s in shifts if s.register_class == cls and s.space == space]
    if specific:
        return specific[-1]
    general = [s.shift for s in shifts if s.register_class == cls and s.space is None]
    return general[-1] if general else 0


def _int(text: str, default: int = 0) -> int:
    try:
        return int(text, 0)
    except ValueError:
        return default


def place(
    resources: list[Declaration],
    counted: set[str],
    shifts: tuple[RegisterShift, ...],
    bind_registers: tuple[BindRegister, ...],
) -> Placement:
    bindings: dict[str, tuple[int, int]] = {}
    problems: list[tuple[Declaration, str]] = []
    mapped = {(b.register.lower(), b.space): (b.set, b.binding) for b in bind_registers}
    implicit: list[Declaration] = []
    for d in resources:
        attr = d.attribute("vk::binding")
        if attr is not None and attr.args:
            binding = _int(attr.args[0])
            dset = _int(attr.args[1]) if len(attr.args) > 1 else 0
            bindings[d.name] = (dset, binding)
        elif d.register is not None:
            cls, number, space = d.register
            key = (f"{cls}{number}", space)
            if bind_registers:
                if key in mapped:
                    bindings[d.name] = mapped[key]
                else:
                    problems.append(
                        (
                            d,
                            f"'{d.name}' has register({cls}{number}, space{space}) but no "
                            f"--fvk-bind-register maps it (every register needs one once any is "
                            f"given, as with DXC)",
                        )
                    )
                    bindings[d.name] = (space, number)
            else:
                bindings[d.name] = (space, number + _shift(shifts, cls, space))
        else:
            implicit.append(d)
    used = set(bindings.values())
    for d in implicit:
        n = 0
        while (0, n) in used:
            n += 1
        bindings[d.name] = (0, n)
        used.add((0, n))
    counters: dict[str, tuple[int, int]] = {}
    for d in resources:
        if d.name in counted:
            attr = d.attribute("vk::counter_binding")
            if attr is not None and attr.args:
                counters[d.name] = (bindings[d.name][0], _int(attr.args[0]))
                used.add(counters[d.name])
    for d in resources:
        if d.name in counted and d.name not in counters:
            dset = bindings[d.name][0]
            n = 0
            while (dset, n) in used:
                n += 1
            counters[d.name] = (dset, n)
            used.add((dset, n))
    return Placement(bindings, counters, problems)
