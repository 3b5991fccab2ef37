"""Steps a particle system on the GPU with wgpu-py and checks every particle against numpy.

Every layout, slot, workgroup size and override key comes from the generated bindings
(``generated/particles.py``): the script never writes an offset, a binding number or a padding
field. Run ``bash scripts/demo.sh`` (or build the shaders first, see common.py).
"""

from __future__ import annotations

import sys

import numpy as np
from common import arguments, bindings, device


def reference(p: dict[str, np.ndarray], gravity: np.ndarray, dt: float, floor: float, drag: float):
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
    shader = bindings(args.bindings, "particles")
    import wgpu

    n, dt, floor = args.count, 1 / 60, -1.0
    gravity = np.array([0.0, -9.81, 0.0, 0.0], np.float32)
    rng = np.random.default_rng(7)
    particles = shader.Particle.array(n)
    particles.Position = np.c_[rng.uniform(-1, 1, (n, 3)), np.ones(n)]
    particles.Velocity = np.c_[rng.uniform(-2, 2, (n, 3)), np.zeros(n)]
    particles.Life = rng.uniform(1, 5, n)
    params = shader.Params(Gravity=gravity, DeltaTime=dt, Floor=floor, Count=n)

    dev = device()
    S = shader.SHADER
    res = shader.resources
    storage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    uniform = dev.create_buffer_with_data(data=params.bytes_view(), usage=wgpu.BufferUsage.UNIFORM)
    inp = dev.create_buffer_with_data(data=particles.bytes_view(), usage=storage)
    out = dev.create_buffer(size=particles.nbytes, usage=storage)

    step = shader.entries.Step
    layouts = S.create_bind_group_layouts(dev)
    pipeline = dev.create_compute_pipeline(
        layout=S.create_pipeline_layout(dev, layouts),
        compute=step.stage_descriptor(
            S.create_shader_module(dev, args.out),
            shader.constants(Drag=args.drag),
        ),
    )
    group = res.Params.wgsl.set
    bind = S.create_bind_group(
        dev, layouts[group], {res.Params: uniform, res.Input: inp, res.Output: out}
    )
    groups = -(-n // step.workgroup[0])
    for _ in range(args.steps):
        enc = dev.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipeline)
        cp.set_bind_group(group, bind)
        cp.dispatch_workgroups(groups, 1, 1)
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
