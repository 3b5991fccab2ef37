"""The binding policy: DXC's SPIR-V bindings, computed by oneshader (docs/compiler.md).

In order of precedence, for each resource in declaration order:

1. ``[[vk::binding(b, s)]]``: set ``s`` (0 when omitted), binding ``b``; never shifted.
2. ``-fvk-bind-register xN SPACE BINDING SET`` for the resource's register: that set and binding.
   As with DXC, once any bind-register is given every resource with a register must have one.
3. ``register(xN, spaceM)``: set M, binding N plus the shift given for class x in space M (a shift
   for "all" spaces applies where no space-specific one is given). A
   ``[[vk::combinedImageSampler]]`` sampler takes the t shift, as the texture it combines with.
4. No binding at all: the lowest binding of set 0 (of set M for DXC's ``register(spaceM)``)
   that no explicit binding took, in declaration order (without explicit bindings anywhere that
   is simply declaration order). Where a global struct of resources is flattened, an array of
   N resources takes N bindings here, as in DXC.

Without any shift, bind-register or ``[[vk::binding]]`` (``CompileOptions.dxc_placement`` off,
the default), a space whose register classes would share bindings (``b0``, ``t0`` and ``u0``:
DXC's OS3001 until the user learns its shift options) gets its classes one after another
instead, as ``-fvk-{t,s,u}-shift`` would place them: b from 0, t after the highest b, s after
the highest t, u after the highest s (``auto_shifts``). A space whose classes do not collide
(a texture and a sampler on one number are DXC's combined pair, no collision) keeps DXC's
numbers, so a shader that built before builds the same.

Hidden counters (append/consume buffers, RW buffers using their counter) take
``[[vk::counter_binding(n)]]`` in their buffer's set, else the lowest free binding of that set
once every resource is placed, in the order DXC creates them (append/consume at the declaration,
RW at the first use of the counter). Clashes are judged
afterwards, per target, by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from oneshader.compiler.api import BindRegister, RegisterShift
from oneshader.compiler.source.scanner import Declaration
from oneshader.compiler.source.sourceset import SourceSet
from oneshader.diagnostics import Code, Collector

__all__ = ["Placement", "auto_shifts", "place"]

_CLASS_ORDER = "btsu"


@dataclass(frozen=True)
class Placement:
    bindings: dict[str, tuple[int, int]]  # resource name -> (set, binding)
    counters: dict[str, tuple[int, int]]  # resource name -> (set, binding) of its counter


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


def _shift_class(d: Declaration, cls: str) -> str:
    # DXC shifts a [[vk::combinedImageSampler]] sampler as the texture it combines with.
    return "t" if cls == "s" and d.attribute("vk::combinedImageSampler") else cls


def auto_shifts(
    resources: list[Declaration], used: set[str] | None = None
) -> tuple[RegisterShift, ...]:
    """Per space whose register classes share a number (but a texture and a sampler, DXC's
    combined pair) among resources some entry point reads (``used``; None: all), the shifts
    that lay its classes out one after another (b, t, s, u); none for a shader with a
    ``[[vk::binding]]`` (it places itself, as Vulkan code does). A clash with an unread
    resource is left as DXC has it (the resource is dropped with OS3010), so every shader that
    built with DXC's placement builds the same."""
    if any(d.attribute("vk::binding") is not None for d in resources):
        return ()
    numbers: dict[int, dict[str, set[int]]] = {}
    read: dict[int, dict[str, set[int]]] = {}
    for d in resources:
        if d.register is not None:
            cls, number, space = d.register
            numbers.setdefault(space, {}).setdefault(_shift_class(d, cls), set()).add(number)
            if used is None or d.name in used:
                read.setdefault(space, {}).setdefault(_shift_class(d, cls), set()).add(number)
    out: list[RegisterShift] = []
    for space, per_class in sorted(numbers.items()):
        classes = [c for c in _CLASS_ORDER if c in per_class]
        seen = read.get(space, {})
        collide = any(
            seen.get(a, set()) & seen.get(b, set())
            for i, a in enumerate(classes)
            for b in classes[i + 1 :]
            if {a, b} != {"t", "s"}
        )
        if not collide:
            continue
        start = 0
        for cls in classes:
            if start:
                out.append(RegisterShift(cls, start, space))
            start += max(per_class[cls]) + 1
    return tuple(out)


def place(
    src: SourceSet,
    resources: list[Declaration],
    declared_counters: set[str],
    used_counters: list[str],
    shifts: tuple[RegisterShift, ...],
    bind_registers: tuple[BindRegister, ...],
    problems: Collector,
    *,
    dxc_placement: bool = True,
    read: set[str] | None = None,
) -> Placement:
    """``declared_counters``: buffers whose counter exists with the buffer (append/consume);
    ``used_counters``: RW buffers whose counter the code uses, in order of first use. A
    declaration the options cannot place is an error added to ``problems``. Without
    ``dxc_placement``, shifts or bind-registers, colliding register classes are shifted apart
    (``auto_shifts``; ``read`` the resources some entry point reads)."""
    if not dxc_placement and not shifts and not bind_registers:
        shifts = auto_shifts(resources, read)
    bindings: dict[str, tuple[int, int]] = {}
    counters: dict[str, tuple[int, int]] = {}
    mapped = {(b.register.lower(), b.space): (b.set, b.binding) for b in bind_registers}
    for d in resources:
        attr = d.attribute("vk::binding")
        if attr is not None and attr.args:
            binding = _int(attr.args[0])
            dset = _int(attr.args[1]) if len(attr.args) > 1 else 0
            bindings[d.name] = (dset, binding)
        elif d.register is not None:
            cls, number, space = d.register
            key = (f"{cls}{number}", space)
            shift_cls = _shift_class(d, cls)
            if not bind_registers:
                bindings[d.name] = (space, number + _shift(shifts, shift_cls, space))
            elif key in mapped:
                bindings[d.name] = mapped[key]
            else:
                problems.add(
                    src.at_decl(
                        d,
                        f"'{d.name}' has register({cls}{number}, space{space}) but no "
                        f"--fvk-bind-register (bind-register in [tool.oneshader]) maps it "
                        f"(every register needs one once any is given, as with DXC)",
                        Code.REGISTER_NOT_BOUND,
                    )
                )
                bindings[d.name] = (space, number)
    by_name = {d.name: d for d in resources}
    for name in (*sorted(declared_counters), *used_counters):
        attr = by_name[name].attribute("vk::counter_binding")
        if attr is not None and attr.args and name in bindings:
            counters[name] = (bindings[name][0], _int(attr.args[0]))
    used = set(bindings.values()) | set(counters.values())

    def lowest(dset: int, count: int = 1) -> tuple[int, int]:
        """The lowest binding of ``dset`` with ``count`` free bindings from it, now taken."""
        n = 0
        while any((dset, n + i) in used for i in range(count)):
            n += 1
        used.update((dset, n + i) for i in range(count))
        return dset, n

    # With a global struct of resources (flattened to x.field), DXC gives an array of N
    # resources N bindings in this pass (as it does the struct's fields), not one.
    flattening = any("." in d.name for d in resources)
    # One pass in DXC's creation order: each resource, then its counter if it has one now.
    for d in resources:
        if d.name not in bindings:
            count = max(d.array or 1, 1) if flattening else 1
            bindings[d.name] = lowest(d.space or 0, count)
        if d.name in declared_counters and d.name not in counters:
            counters[d.name] = lowest(bindings[d.name][0])
    for name in used_counters:
        if name not in counters:
            counters[name] = lowest(bindings[name][0])
    return Placement(bindings, counters)
