"""Renders a textured, tinted sprite offscreen with wgpu-py into a PNG, and checks its pixels.

The constant buffer (with its 4x4 matrix, set in math order), the vertex buffer layout (stride,
attribute formats, offsets and locations), the bind group (by resource name, with its layout and
index), the compiled shader and every slot come from the generated bindings
(``generated/sprite.py``); the script writes no binding number, offset, usage flag or path to
compiled code. Run ``bash scripts/demo.sh``; the PNG lands in examples/out/sprite.png.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt
from common import arguments, device, use_bindings, write_png

SIZE = 64
CLEAR = (0.1, 0.2, 0.3, 1.0)
TINT = (1.0, 0.5, 1.0, 1.0)
# a 4x4 texture: every texel its own colour
TEXELS = np.array(
    [[[40 * x + 20, 40 * y + 20, 255 - 40 * x - 10 * y, 255] for x in range(4)] for y in range(4)],
    np.uint8,
)


def transform() -> npt.NDArray[np.float64]:
    """Scale, then translate, as a math (row-major) 4x4 matrix: v' = M @ v."""
    scale = np.diag([1.2, 0.8, 1.0, 1.0])
    move = np.eye(4)
    move[0, 3], move[1, 3] = 0.25, -0.125
    return move @ scale


def expected(px: int, py: int) -> tuple[int, ...] | None:
    """The colour the pixel centre must have, or None where it lies on an edge."""
    ndc = np.array([(px + 0.5) / SIZE * 2 - 1, 1 - (py + 0.5) / SIZE * 2, 0, 1])
    local = np.linalg.solve(transform(), ndc)  # the quad is x, y in [-0.5, 0.5]
    u, v = local[0] + 0.5, 0.5 - local[1]
    margin = 0.03
    if not (-margin <= u <= 1 + margin and -margin <= v <= 1 + margin):
        return tuple(round(c * 255) for c in CLEAR)
    if min(abs(u * 4 - round(u * 4)), abs(v * 4 - round(v * 4))) < 4 * margin:
        return None  # on a texel boundary or the quad's edge
    texel = TEXELS[int(v * 4), int(u * 4)].astype(float) / 255
    return tuple(round(t * c * 255) for t, c in zip(texel, TINT, strict=True))


def check(rgba: npt.NDArray[np.uint8]) -> int:
    """Pixels that differ from what the transform, texture and tint predict (by more than 1)."""
    bad = 0
    for py in range(SIZE):
        for px in range(SIZE):
            want = expected(px, py)
            if want is not None and np.abs(rgba[py, px].astype(int) - want).max() > 1:
                bad += 1
    return bad


def main() -> int:
    ap = arguments(__doc__.splitlines()[0])
    ap.add_argument(
        "--png", type=Path, default=None, help="where to write the PNG (default: OUT/sprite.png)"
    )
    args = ap.parse_args()
    use_bindings(args.bindings)
    import wgpu
    from generated import sprite

    dev = device()
    vs, ps = sprite.entries.VSMain, sprite.entries.PSMain
    vertices = vs.vertex_buffer()  # the interleaved vertex the shader reads
    quad = vertices.zeros(6)
    corners = np.array(
        [[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]
    )
    quad["Position"] = corners
    quad["TexCoord"] = np.c_[corners[:, 0] + 0.5, 0.5 - corners[:, 1]]
    frame = sprite.Frame(Transform=transform(), Tint=TINT, Scale=1.0)

    tex = dev.create_texture(
        size=(4, 4, 1),
        format=wgpu.TextureFormat.rgba8unorm,
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )
    dev.queue.write_texture({"texture": tex}, TEXELS.tobytes(), {"bytes_per_row": 16}, (4, 4, 1))
    target = dev.create_texture(
        size=(SIZE, SIZE, 1),
        format=wgpu.TextureFormat.rgba8unorm,
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )
    # checked against the shader before wgpu sees it: stages, targets, vertex buffers
    pipeline = sprite.SHADER.create_render_pipeline(dev, vs, ps, [wgpu.TextureFormat.rgba8unorm])
    group = sprite.BindGroup0(
        dev,
        Frame=sprite.resources.Frame.create_buffer(dev, frame),
        SpriteTexture=tex.create_view(),
        SpriteSampler=dev.create_sampler(mag_filter="nearest", min_filter="nearest"),
    )

    enc = dev.create_command_encoder()
    rp = enc.begin_render_pass(
        color_attachments=[
            {
                "view": target.create_view(),
                "clear_value": CLEAR,
                "load_op": "clear",
                "store_op": "store",
            }
        ]
    )
    rp.set_pipeline(pipeline)
    group.set(rp)
    vs.set_vertex_buffer(rp, vertices.create_buffer(dev, quad))
    rp.draw(len(quad))
    rp.end()
    dev.queue.submit([enc.finish()])
    data = dev.queue.read_texture(
        {"texture": target}, {"bytes_per_row": SIZE * 4, "rows_per_image": SIZE}, (SIZE, SIZE, 1)
    )
    rgba = np.frombuffer(data, np.uint8).reshape(SIZE, SIZE, 4)
    png = args.png or args.out / "sprite.png"
    write_png(png, rgba.tobytes(), SIZE, SIZE)
    bad = check(rgba)
    print(f"Frame: {sprite.Frame.size} bytes; vertex stride {vertices.stride}: {vertices.layout}")
    shown = os.path.relpath(png) if Path.cwd() in Path(png).resolve().parents else png
    print(f"wrote {shown} ({SIZE}x{SIZE}); {bad} pixels differ from the expected sprite")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
