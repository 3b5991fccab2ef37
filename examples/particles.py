"""Steps a particle system on the GPU with wgpu-py and checks every particle against numpy.

Every layout, slot, buffer usage, workgroup count and override key comes from the generated
bindings (``generated/particles.py``), which also carry the compiled shader: the script never
writes an offset, a binding number, a usage flag, a padding field or a path to compiled code.
Run ``bash scripts/demo.sh`` (or build the shaders first, see common.py).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import numpy.typing as npt
from common import arguments, device, use_bindings

Columns = dict[str, npt.NDArray[Any]]


def reference(
    p: Columns, gravity: npt.NDArray[np.float32], dt: float, floor: float, drag: float
) -> Columns:
    """The shader's arithmetic in float32 numpy."""
    f = np.float32
    vel = (p["Velocity"] + gravity * f(dt)) * (f(1) - f(drag) * f(dt))
    pos = p["Position"] + vel * f(dt)
    below = pos[:, 1] < f(floor)
    pos[below, 1] = f(floor)
    vel[below, 1] = -vel[below, 1]
    return {
        "Position": pos,
        "Velocity": vel,
        "Life": p["Life"] - f(dt),
        "Bounces": p["Bounces"] + below.astype(np.uint32),
    }


def main() -> int:
    ap = arguments(__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--drag", type=float, default=0.25, help="the Drag specialization constant")
    args = ap.parse_args()
    use_bindings(args.bindings)
    from generated import particles as shader

    n, dt, floor = args.count, 1 / 60, -1.0
    gravity = np.array([0.0, -9.81, 0.0, 0.0], np.float32)
    rng = np.random.default_rng(7)
    particles = shader.Particle.array(n)
    particles.Position = np.c_[rng.uniform(-1, 1, (n, 3)), np.ones(n)]
    particles.Velocity = np.c_[rng.uniform(-2, 2, (n, 3)), np.zeros(n)]
    particles.Life = rng.uniform(1, 5, n)
    params = shader.Params(Gravity=gravity, DeltaTime=dt, Floor=floor, Count=n)

    dev = device()
    res, step = shader.resources, shader.entries.Step
    inp = res.Input.create_buffer(dev, particles)  # usage from the binding: storage, copyable
    out = res.Output.create_buffer(dev, size=particles.nbytes)
    group = shader.BindGroup0(
        dev, Params=res.Params.create_buffer(dev, params), Input=inp, Output=out
    )
    pipeline = shader.SHADER.create_compute_pipeline(
        dev, step, constants=shader.constants(Drag=args.drag)
    )
    for _ in range(args.steps):
        enc = dev.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipeline)
        group.set(cp)
        step.dispatch(cp, n)  # enough workgroups of the shader's size for n particles
        cp.end()
        enc.copy_buffer_to_buffer(out, 0, inp, 0, particles.nbytes)
        dev.queue.submit([enc.finish()])
    result = shader.ParticleArray.from_bytes(dev.queue.read_buffer(out))

    expect = {k: getattr(particles, k).copy() for k in ("Position", "Velocity", "Life", "Bounces")}
    for _ in range(args.steps):
        expect = reference(expect, gravity, dt, floor, args.drag)

    pos_err = float(np.abs(result.Position - expect["Position"]).max())
    vel_err = float(np.abs(result.Velocity - expect["Velocity"]).max())
    life_ok = np.allclose(result.Life, expect["Life"], atol=1e-5)
    # a particle within rounding of the floor may bounce one step apart on GPU and CPU
    bounce_same = result.Bounces == expect["Bounces"]
    near_floor = np.abs(expect["Position"][:, 1] - floor) < 1e-2
    bounces_ok = bool(np.all(bounce_same | near_floor))
    print(
        f"{n} particles, {args.steps} steps of {dt:.4f} s, drag {args.drag} "
        f"(override {step.spec_constants[0].key!r}), workgroup {step.workgroup}"
    )
    print(f"element: {shader.Particle.size} bytes; params: {shader.Params.size} bytes")
    print(f"max |position - numpy| = {pos_err:.2e}, max |velocity - numpy| = {vel_err:.2e}")
    bounced, expected = int(result.Bounces.sum()), int(expect["Bounces"].sum())
    print(f"bounced: {bounced} times in total (numpy: {expected})")
    for i in range(3):
        print(f"  particle {i}: {result[i]}")
    ok = pos_err < 1e-3 and vel_err < 1e-2 and life_ok and bounces_ok
    print("results match numpy" if ok else "MISMATCH against numpy")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
